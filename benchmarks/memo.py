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

Each figure is given as wall time and as CPU time (this process's threads, and the
wrappers' and apps' it waited for): on a machine whose cores other jobs share, the wall
times of the same run vary by 2x and more, and the CPU ratio is the steadier measure of
what memoization adds.  The order of the three runs of (a) turns from round to round.

Run: ``.venv/bin/python benchmarks/memo.py [N_REUSED [ROUNDS]]`` (rounds of (a),
default 3; the figures are medians).  N_REUSED = 100,000 takes about ten minutes on two
cores (the first run runs every call), 20,000 about two.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from typing import NamedTuple

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb import cli, lang  # noqa: E402
from workloads import ECHO_BAG  # noqa: E402  (benchmarks/workloads.py)


def prepare(workdir: str, n: int, cores: int) -> None:
    os.makedirs(workdir)
    with open(os.path.join(workdir, "bench.swift"), "w") as fh:
        fh.write(ECHO_BAG.format(n=n))
    with open(os.path.join(workdir, "swift.conf"), "w") as fh:
        fh.write(f"sites: local\nalwaysTransferWrapperLog: false\n"
                 f"site.local {{\n  execution {{ type: local }}\n"
                 f"  workDirectory: swiftwork\n  maxParallelTasks: {cores}\n"
                 f"  initialParallelTasks: {cores}\n}}\n")
    lang.load(os.path.join(workdir, "bench.swift"))  # the parser, outside the timing


class Timing(NamedTuple):
    """One run's wall time and CPU time (this process, all threads; and its children:
    the wrappers and apps).  The CPU figures are what a loaded machine (other jobs on
    the cores) cannot inflate much, unlike the wall time."""

    wall: float
    cpu: float
    children: float


def run(workdir: str, memoize: bool, dryrun: bool = False,
        extra: tuple[str, ...] = ()) -> tuple[Timing, str]:
    """One ``swiftnb run`` in this process: (its timing, its log's text)."""
    old = os.getcwd()
    os.chdir(workdir)
    real_out, real_err = sys.stdout, sys.stderr
    sink = open(os.devnull, "w")
    try:
        sys.stdout = sys.stderr = sink
        before = os.times()
        t0 = time.perf_counter()
        code = cli.main(["run", "-ui", "none", "-memoize", "true" if memoize else "false",
                         *(["-dryrun"] if dryrun else []), *extra, "bench.swift"])
        elapsed = time.perf_counter() - t0
        after = os.times()
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
    timing = Timing(elapsed, after.user + after.system - before.user - before.system,
                    after.children_user + after.children_system
                    - before.children_user - before.children_system)
    return timing, text


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def ratios(runs: list[Timing], base: list[Timing]) -> str:
    """The medians of the per-round ratios of wall time, of this process's CPU time and
    of all CPU time (with the children's)."""
    wall = median([r.wall / b.wall for r, b in zip(runs, base)])
    cpu = median([r.cpu / b.cpu for r, b in zip(runs, base)])
    total = median([(r.cpu + r.children) / (b.cpu + b.children) for r, b in zip(runs, base)])
    rounds = ", ".join(f"{r.wall / b.wall:.2f}" for r, b in zip(runs, base))
    return (f"wall ratio {wall:.2f} (rounds: {rounds}); CPU ratio: this process {cpu:.2f}, "
            f"with the apps {total:.2f}")


def figures(runs: list[Timing]) -> str:
    return (f"{median([r.wall for r in runs]):6.2f} s wall, "
            f"{median([r.cpu for r in runs]):5.2f} s CPU (+{median([r.children for r in runs]):.2f} s apps)")


def main() -> None:
    n_reused = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cores = os.cpu_count() or 1
    root = tempfile.mkdtemp(prefix="swiftnb-bench-memo-")
    try:
        prepare(os.path.join(root, "warm"), 20, cores)
        run(os.path.join(root, "warm"), True)
        off: list[Timing] = []
        on: list[Timing] = []
        bare: list[Timing] = []
        for r in range(rounds):
            a, b, c = (os.path.join(root, f"{k}{r}") for k in ("off", "on", "bare"))
            for where in (a, b, c):
                prepare(where, 2000, cores)
            # the order turns each round, so that a drift of the machine's load favours none
            order = [(a, False, (), off), (b, True, (), on),
                     (c, True, ("-memoizeCacheSize", "0"), bare)]
            for where, memoize, extra, into in order[r % 3:] + order[:r % 3]:
                into.append(run(where, memoize, extra=extra)[0])
        print(f"(a) 2,000 local calls, {cores} cores, {rounds} rounds (medians; "
              f"load average at the end {os.getloadavg()[0]:.1f}):", flush=True)
        print(f"    memoize off: {figures(off)} (baseline)", flush=True)
        print(f"    memoize on, first run: {figures(on)}; {ratios(on, off)}; goal <= 1.10")
        print(f"    memoize on, no output copies (memoizeCacheSize 0): {figures(bare)}; "
              f"{ratios(bare, off)}", flush=True)
        big = os.path.join(root, "reused")
        prepare(big, n_reused, cores)
        filled, _ = run(big, True)
        floor, _ = run(big, False, dryrun=True)
        again, log = run(big, True)
        cached = len(re.findall(r" JOB_CACHED ", log))
        print(f"(b) {n_reused:,} calls: first run (store filled) {filled.wall:.1f} s; unchanged "
              f"re-run {again.wall:.2f} s wall, {again.cpu:.2f} s CPU, {cached:,} calls reused "
              f"({n_reused / again.wall:,.0f} calls/s; goal < 10 s for 100,000)")
        print(f"    baseline: the engine alone (-dryrun of the same workflow) {floor.wall:.2f} s "
              f"wall, {floor.cpu:.2f} s CPU; re-run / dry run: wall {again.wall / floor.wall:.2f}, "
              f"CPU {again.cpu / floor.cpu:.2f}; load average {os.getloadavg()[0]:.1f}")
        if cached != n_reused:
            print(f"    NOT all reused: {cached} of {n_reused}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
