"""Accuracy of ``swiftnb whatif`` (issue 28): leave-one-out on the AIMES Swift runs.

The 32 real Swift 0.96 runs of the AIMES experiments' strategy 1 in examples/aimes/data
(README there: where they come from): 16 on Stampede alone and 16 on Stampede and Gordon
together, bags of N = 8, 32, 256, 2048 ``sleep 900`` tasks.  For each run, calibrate a
model on the other 31 logs, predict the run with the experiment's configuration
(examples/aimes/swift.conf, ``sites:`` as the run used) and examples/aimes/bag_of_tasks.swift
(-N, -sleep from its metadata.json), asked at the run's own start (``at``: queue waits are
drawn from the logs nearest that moment; ``-at none``: from any log alike; each simulated
run's other samples are one log's, of a run on as many sites), and compare the predicted
time to completion with the log's.

The baseline in the same run is the naive prediction: the median time of the training runs
with the same task count and sites.

Figures printed: per run, the actual TTC, the predicted median and 10-90% interval, the
absolute percentage errors of the median and of the naive prediction, whether the actual
time is inside the interval; then per group (one site, two sites) the median absolute
percentage error of both and how often the actual time is inside the interval.
Targets: one site <= 10%; inside >= 70% of all runs; two sites below the naive error.

Run: ``.venv/bin/python benchmarks/whatif.py [RUNS] [-at start|none] [-why] [-only NAME...]``
(default 20 simulated runs each, ``-at start``; ``-why``: under each run, which training
logs its simulated runs took their lists and their queue waits from, ``NNN x count``).
"""

from __future__ import annotations

import os
import re
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.forecast import calibrate, whatif  # noqa: E402
from swiftnb.forecast.prediction import DRAWN  # noqa: E402
from swiftnb.logs.frame import LogFrame  # noqa: E402
from swiftnb.runner import load_run_config  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
EXAMPLE = os.path.join(ROOT, "examples", "aimes")
DATA = os.path.join(EXAMPLE, "data")


def metadata(path: str) -> tuple[int, int]:
    """(N, sleep seconds) of an AIMES metadata.json (its ``{[32, 900]}`` is not JSON)."""
    text = open(path, encoding="utf-8").read()
    n_tasks = re.search(r'"n_tasks":\s*(\d+)', text)
    durations = re.search(r'"durations".*?\[\s*\d+\s*,\s*(\d+)\s*\]', text, re.S)
    if n_tasks is None or durations is None:
        raise ValueError(f"{path}: no n_tasks or durations")
    return int(n_tasks.group(1)), int(durations.group(1))


def sites_of(name: str) -> list[str]:
    """The sites a run used, from its folder name (``stampede_gordon-exp-040``)."""
    return name.split("-exp-")[0].split("_")


def mdape(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _drawn_from(per_run: Any, training: list[str]) -> dict[str, str]:
    """Which training logs the simulated runs took their lists and their queue waits
    from, as ``NNN x count`` by log (the model's runs are the training logs, in order)."""
    out = {}
    for what in ("run", "queue"):
        column = per_run.get(f"{DRAWN}{what}")
        counts = column.dropna().astype(int).value_counts() if column is not None else {}
        out[what] = " ".join(f"{training[i][-3:]}x{n}" for i, n in sorted(counts.items()))
    return out


def leave_one_out(runs: int = 10, at_start: bool = True, only: list[str] | None = None,
                  why: bool = False) -> list[dict[str, Any]]:
    names = sorted(d for d in os.listdir(DATA) if "-exp-" in d)
    frames = {n: LogFrame.read(os.path.join(DATA, n, "swift.log.xz")) for n in names}
    meta = {n: metadata(os.path.join(DATA, n, "metadata.json")) for n in names}
    rows = []
    for name in only or names:
        n_tasks, sleep = meta[name]
        sites = sites_of(name)
        training = [o for o in names if o != name]
        model = calibrate([frames[o] for o in training])
        same = [float(frames[o].run["ttc"]) for o in training
                if meta[o][0] == n_tasks and sites_of(o) == sites]
        config = load_run_config(os.path.join(EXAMPLE, "swift.conf"), sites=sites,
                                 base_dir=EXAMPLE)
        t0 = time.monotonic()
        table = whatif(os.path.join(EXAMPLE, "bag_of_tasks.swift"), model, config=config,
                       args=[f"-N={n_tasks}", f"-sleep={sleep}"], runs=runs,
                       at=float(frames[name].run["start"]) if at_start else None)
        actual = float(frames[name].run["ttc"])
        median, p10, p90 = (float(table.loc["TTC", k]) for k in ("median", "p10", "p90"))
        drawn = _drawn_from(table.attrs["per_run"], training)
        naive = statistics.median(same)
        rows.append({"run": name, "sites": len(sites), "N": n_tasks, "actual": actual,
                     "median": median, "p10": p10, "p90": p90,
                     "ape": abs(median - actual) / actual * 100,
                     "naive_ape": abs(naive - actual) / actual * 100,
                     "inside": p10 <= actual <= p90, "seconds": time.monotonic() - t0,
                     "drawn": drawn})
        r = rows[-1]
        print(f"{r['run']:<24} {r['N']:>5} {r['actual']:>9.0f} {r['median']:>9.0f} "
              f"{r['p10']:>9.0f} {r['p90']:>9.0f} {r['ape']:>6.1f}% {r['naive_ape']:>6.1f}%  "
              f"{'yes' if r['inside'] else 'no':<6} {r['seconds']:.0f} s", flush=True)
        if why:
            print(f"    lists from {drawn['run']}; queue waits from {drawn['queue']}", flush=True)
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    for sites, label in ((1, "one site (Stampede)"), (2, "two sites (Stampede+Gordon)")):
        group = [r for r in rows if r["sites"] == sites]
        if not group:
            continue
        inside = sum(r["inside"] for r in group) / len(group) * 100
        print(f"{label}: {len(group)} runs, median abs. % error of the median "
              f"{mdape([r['ape'] for r in group]):.1f}% (naive "
              f"{mdape([r['naive_ape'] for r in group]):.1f}%), actual inside p10-p90 "
              f"{inside:.0f}%")
    inside = sum(r["inside"] for r in rows) / len(rows) * 100
    print(f"all {len(rows)} runs: actual inside the 10-90% interval {inside:.0f}% "
          "(target >= 70%)")


def main(argv: list[str]) -> None:
    runs, at_start, only, why = 20, True, None, False
    args = list(argv)
    while args:
        word = args.pop(0)
        if word == "-why":
            why = True
        elif word == "-at":
            at_start = args.pop(0) == "start"
        elif word == "-only":
            only, args = args, []
        else:
            runs = int(word)
    print(f"leave-one-out on the AIMES Swift runs, {runs} simulated runs each, queue waits "
          f"{'of the logs nearest each run' if at_start else 'of any log alike'}")
    print(f"{'run':<24} {'N':>5} {'actual s':>9} {'median s':>9} {'p10':>9} {'p90':>9} "
          f"{'error':>7} {'naive':>7}  inside wall")
    report(leave_one_out(runs, at_start, only, why))


if __name__ == "__main__":
    main(sys.argv[1:])
