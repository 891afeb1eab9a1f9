"""``swiftnb calibrate`` and ``swiftnb whatif`` (docs/whatif.md).

    swiftnb calibrate LOG... -o model.json
    swiftnb whatif -model model.json [-config swift.conf] script.swift [script args]
                   [-runs R] [-seed S] [-at EPOCH] [-format table|json]

Options are Swift's single-dash words, so ``-runs 5`` may come after the script's own
``-N=8``: a script argument is ``-name=value``, never a word followed by a value.
Problems with the input (a log with nothing to model, a model from another version, a
site the model lacks, a bad configuration) are reported as one line and exit code 1, as
configuration errors are; a script that does not compile exits with 3, a missing one
with 4 (as ``swiftnb run``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

__all__ = ["calibrate_main", "whatif_main"]

EXIT_OK, EXIT_USAGE, EXIT_COMPILE, EXIT_MISSING_SCRIPT = 0, 1, 3, 4

CALIBRATE_USAGE = "usage: swiftnb calibrate LOG... -o model.json"
WHATIF_USAGE = ("usage: swiftnb whatif -model model.json [-config swift.conf] script.swift "
                "[script args] [-runs R] [-seed S] [-at EPOCH] [-format table|json]")


def _fail(message: str, code: int = EXIT_USAGE) -> int:
    print(f"swiftnb: {message}", file=sys.stderr)
    return code


def calibrate_main(argv: Sequence[str]) -> int:
    from swiftnb.errors import SwiftnbError
    from swiftnb.forecast.calibration import calibrate

    args = list(argv)
    if any(a in ("-h", "-help", "--help") for a in args):
        print(CALIBRATE_USAGE)
        return EXIT_OK
    out = None
    logs = []
    while args:
        word = args.pop(0)
        if word in ("-o", "-output"):
            if not args:
                return _fail(f"{word} needs a file name\n{CALIBRATE_USAGE}")
            out = args.pop(0)
        else:
            logs.append(word)
    if out is None or not logs:
        return _fail(CALIBRATE_USAGE)
    try:
        model = calibrate(logs)
        model.save(out)
    except (SwiftnbError, OSError) as exc:
        return _fail(str(exc))
    for name, site in sorted(model.sites.items()):
        print(f"site {name}: {site.logs} log(s), {site.attempts} attempts, "
              f"{len(site.block_queue)} blocks, apps {', '.join(sorted(site.apps)) or '-'}")
    print(f"model written to {out}")
    return EXIT_OK


_VALUED = ("-model", "-config", "-runs", "-seed", "-at", "-format")


def whatif_main(argv: Sequence[str]) -> int:
    from swiftnb.errors import SwiftnbError
    from swiftnb.lang import CompileError
    from swiftnb.forecast.prediction import DEFAULT_RUNS, predict, summarize

    args = list(argv)
    if any(a in ("-h", "-help", "--help") for a in args):
        print(WHATIF_USAGE)
        return EXIT_OK
    values: dict[str, str] = {}
    script = None
    script_args: list[str] = []
    while args:
        word = args.pop(0)
        if word in _VALUED:
            if not args:
                return _fail(f"{word} needs a value\n{WHATIF_USAGE}")
            values[word] = args.pop(0)
        elif script is None and not word.startswith("-"):
            script = word
        else:
            script_args.append(word)
    if script is None or "-model" not in values:
        return _fail(WHATIF_USAGE)
    fmt = values.get("-format", "table")
    if fmt not in ("table", "json"):
        return _fail(f"-format {fmt}: expected table or json")
    try:
        runs, seed = int(values.get("-runs", str(DEFAULT_RUNS))), int(values.get("-seed", "0"))
    except ValueError:
        return _fail(f"-runs and -seed take whole numbers\n{WHATIF_USAGE}")
    if runs < 1:
        return _fail("-runs must be at least 1")
    try:
        at = float(values["-at"]) if "-at" in values else None
    except ValueError:
        return _fail(f"-at {values['-at']}: expected epoch seconds (the moment to predict for)")
    if not os.path.isfile(script):
        return _fail(f"script {script}: no such file", EXIT_MISSING_SCRIPT)
    try:
        per_run = predict(script, values["-model"], config=values.get("-config"),
                          args=script_args, runs=runs, seed=seed, at=at)
    except CompileError as exc:
        return _fail(str(exc), EXIT_COMPILE)
    except (SwiftnbError, OSError) as exc:
        return _fail(str(exc))
    table = summarize(per_run)
    if fmt == "json":
        doc = {"ttc": {k: round(float(table.loc["TTC", k]), 3) for k in ("median", "p10", "p90")},
               "timings": {name: {k: round(float(row[k]), 3) for k in ("median", "p10", "p90")}
                           for name, row in table.iterrows() if name != "TTC"},
               "runs": runs, "failed_runs": table.attrs["failed_runs"],
               "ttc_runs": [round(float(t), 3) for t in per_run["TTC"]]}
        print(json.dumps(doc, indent=1))
        return EXIT_OK
    print(f"predicted over {runs} simulated runs (seconds; median and 10-90% interval)")
    for name, row in table.iterrows():
        print(f"{name:<5} {row['median']:>12.1f}   [{row['p10']:.1f} .. {row['p90']:.1f}]")
    if table.attrs["failed_runs"]:
        print(f"{table.attrs['failed_runs']} of the runs failed (the model's failures "
              "outlast the configured retries)")
    return EXIT_OK
