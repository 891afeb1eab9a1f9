"""Benchmark (issue 26, memoized calls): what memoization costs when nothing is reused,
and how fast an unchanged workflow re-runs when everything is.

* (a) the 2,000-call local bag of benchmarks/local.py (``echo i`` to a file per call)
  through ``swiftnb run`` in this process, memoization off and on (the first run: a
  fresh store, every call digested, recorded and its output kept in the content store);
  the ratio on/off is taken within each round, goal at most 1.10;
* (b) the same bag of ``N`` calls (default 100,000; the first argument changes it) run
  once with memoization on to fill the store (not timed as a figure, printed), then
  re-run unchanged: every call reused; goal under 10 s for 100,000.  Its baseline is a
  ``-dryrun`` of the same workflow (the engine making every call, running none): the
  ratio is what deciding and recording the reuse adds to the engine's own cost.

Run: ``.venv/bin/python benchmarks/memo.py [N_REUSED [ROUNDS]]`` (rounds of (a),
default 3; the figures are medians).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb import cli, lang  # noqa: E402

SCRIPT = """\
type file;
app (file o) echo (int i) {
    echo i stdout=@filename(o);
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:{n}] {
    f[i] = echo(i);
}
"""


def prepare(workdir: str, n: int, cores: int) -> None:
    os.makedirs(workdir)
    with open(os.path.join(workdir, "bench.swift"), "w") as fh:
        fh.write(SCRIPT.replace("{n}", str(n)))
    with open(os.path.join(workdir, "swift.conf"), "w") as fh:
        fh.write(f"sites: local\nalwaysTransferWrapperLog: false\n"
                 f"site.local {{\n  execution {{ type: local }}\n"
                 f"  workDirectory: swiftwork\n  maxParallelTasks: {cores}\n"
                 f"  initialParallelTasks: {cores}\n}}\n")
    lang.load(os.path.join(workdir, "bench.swift"))  # the parser, outside the timing


def run(workdir: str, memoize: bool, dryrun: bool = False,
        extra: tuple[str, ...] = ()) -> tuple[float, str]:
    """One ``swiftnb run`` in this process: (seconds, its log's text)."""
    old = os.getcwd()
    os.chdir(workdir)
    real_out, real_err = sys.stdout, sys.stderr
    sink = open(os.devnull, "w")
    try:
        sys.stdout = sys.stderr = sink
        t0 = time.perf_counter()
        code = cli.main(["run", "-ui", "none", "-memoize", "true" if memoize else "false",
                         *(["-dryrun"] if dryrun else []), *extra, "bench.swift"])
        elapsed = time.perf_counter() - t0
    finally:
        sys.stdout, sys.stderr = real_out, real_err
        sink.close()
        os.chdir(old)
    if code != 0:
        raise RuntimeError(f"swiftnb run exited {code} in {workdir}")
    logs = sorted((os.path.join(workdir, d) for d in os.listdir(workdir) if d.startswith("run")),
                  key=os.path.getmtime)
    text = ""
    for name in os.listdir(logs[-1]):
        if name.endswith(".log"):
            with open(os.path.join(logs[-1], name)) as fh:
                text = fh.read()
    return elapsed, text


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> None:
    n_reused = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cores = os.cpu_count() or 1
    root = tempfile.mkdtemp(prefix="swiftnb-bench-memo-")
    try:
        prepare(os.path.join(root, "warm"), 20, cores)
        run(os.path.join(root, "warm"), True)
        off: list[float] = []
        on: list[float] = []
        bare: list[float] = []
        for r in range(rounds):
            a, b, c = (os.path.join(root, f"{k}{r}") for k in ("off", "on", "bare"))
            for where in (a, b, c):
                prepare(where, 2000, cores)
            off.append(run(a, False)[0])
            on.append(run(b, True)[0])
            bare.append(run(c, True, extra=("-memoizeCacheSize", "0"))[0])
        ratios = [x / y for x, y in zip(on, off)]
        bare_ratios = [x / y for x, y in zip(bare, off)]
        print(f"(a) 2,000 local calls, {cores} cores, {rounds} rounds (median):", flush=True)
        print(f"    memoize off: {median(off):6.2f} s (baseline)", flush=True)
        print(f"    memoize on, first run: {median(on):6.2f} s  ratio {median(ratios):.2f} "
              f"(rounds: {', '.join(f'{v:.2f}' for v in ratios)}; goal <= 1.10)")
        print(f"    memoize on, no output copies (memoizeCacheSize 0): {median(bare):6.2f} s  "
              f"ratio {median(bare_ratios):.2f} "
              f"(rounds: {', '.join(f'{v:.2f}' for v in bare_ratios)})")
        big = os.path.join(root, "reused")
        prepare(big, n_reused, cores)
        filled, _ = run(big, True)
        floor, _ = run(big, False, dryrun=True)
        again, log = run(big, True)
        cached = len(re.findall(r" JOB_CACHED ", log))
        print(f"(b) {n_reused:,} calls: first run (store filled) {filled:.1f} s; unchanged "
              f"re-run {again:.2f} s, {cached:,} calls reused "
              f"({n_reused / again:,.0f} calls/s; goal < 10 s for 100,000)")
        print(f"    baseline: the engine alone (-dryrun of the same workflow) {floor:.2f} s; "
              f"re-run / dry run {again / floor:.2f}")
        if cached != n_reused:
            print(f"    NOT all reused: {cached} of {n_reused}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
