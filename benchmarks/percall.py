"""Benchmark (issues 30 and 26): what one app call costs the engine and the scheduling
layer, in CPU and in memory.

Two workloads, each ``foreach i in [1:N] { f[i] = echo(i); }`` with ``f`` mapped to a
file per call (the bag of benchmarks/local.py and memo.py):

* ``dryrun``: ``swiftnb run -dryrun`` of N calls (default 100,000): the engine makes
  every call and runs none, so this is the engine's own cost per call, the floor under
  issue 26's "100,000 reused calls in under 10 s";
* ``real``: ``swiftnb run`` of N calls (default 20,000) on a local site of as many slots
  as cores: the engine, the scheduling layer, the local provider and the log.  Its peak
  holds the calls waiting for a slot, which the engine's call gate keeps to some 1,024
  (engine/callgate.py; before it, up to maxForeachThreads, 16,384, at ~3.7 KB each).

Each run is a child process of its own (``swiftnb run`` in it, as a user would run it),
so that its peak resident memory (``ru_maxrss``) is its own.  Printed per run: wall
time, CPU time (the child's own; the apps' separately), peak RSS, peak RSS per call (the
whole peak divided by N, as issue 30 counts it) and the growth per call (the peak less
the process's size just before the run started, divided by N).

``--baseline PATH`` runs the same workloads with another checkout's swiftnb (a git
worktree of the code before a change: ``git worktree add /tmp/base HEAD``), alternating
the order each round, and prints the ratio of each figure (this tree / baseline; below
1 is better).  Without it, each figure is shown beside its goal (issue 30: peak RSS at
most 0.5 KB per call; issue 26: 100,000 calls reused in under 10 s, which the dry run
must beat first).  On a machine whose cores other jobs share, wall times vary by 2x and
more: compare the CPU figures and the ratios of one invocation.

Run: ``.venv/bin/python benchmarks/percall.py [--dry N] [--real N] [--rounds R]
[--baseline PATH] [--only dryrun|real]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import NamedTuple
from workloads import ECHO_BAG  # noqa: E402  (benchmarks/workloads.py)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: issue 30: a million calls on a local coaster block at most 0.5 KB of peak RSS each
GOAL_RSS_PER_CALL = 512
#: issue 26: 100,000 unchanged calls re-run (reused) in under 10 s
GOAL_REUSED_100K_S = 10.0


class Figures(NamedTuple):
    """One run's figures, as the child measured them."""

    wall: float          # s
    cpu: float           # s, the child's own process (all its threads)
    apps_cpu: float      # s, the processes it started and waited for
    peak_rss: int        # bytes
    start_rss: int       # bytes: the child's peak just before the run started
    calls: int

    @property
    def rss_per_call(self) -> float:
        return self.peak_rss / self.calls

    @property
    def growth_per_call(self) -> float:
        return (self.peak_rss - self.start_rss) / self.calls


def child(mode: str, n: int, workdir: str) -> None:
    """In the child: one ``swiftnb run`` of the bag in ``workdir``; its figures as JSON
    on stdout's last line."""
    from swiftnb import cli, lang

    os.makedirs(workdir)
    os.chdir(workdir)
    with open("bench.swift", "w") as fh:
        fh.write(ECHO_BAG.format(n=n))
    cores = os.cpu_count() or 1
    with open("swift.conf", "w") as fh:
        fh.write(f"sites: local\nsite.local {{\n  execution {{ type: local }}\n"
                 f"  workDirectory: swiftwork\n  maxParallelTasks: {cores}\n"
                 f"  initialParallelTasks: {cores}\n}}\n")
    lang.load("bench.swift")  # the parser's tables, outside the figures
    start_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    real_out = sys.stdout
    with open(os.devnull, "w") as sink:
        sys.stdout = sys.stderr = sink
        before = os.times()
        t0 = time.perf_counter()
        code = cli.main(["run", "-ui", "none", *(["-dryrun"] if mode == "dryrun" else []),
                         "bench.swift"])
        wall = time.perf_counter() - t0
        after = os.times()
        sys.stdout = real_out
    if code != 0:
        raise SystemExit(f"swiftnb run exited {code}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(Figures(
        wall, after.user + after.system - before.user - before.system,
        after.children_user + after.children_system
        - before.children_user - before.children_system, peak, start_rss, n)._asdict()))


def measure(tree: str, mode: str, n: int, root: str) -> Figures:
    """One run of ``mode`` with the swiftnb of checkout ``tree``, in a child process."""
    workdir = tempfile.mkdtemp(prefix=f"{mode}-", dir=root)
    os.rmdir(workdir)
    env = {**os.environ, "PYTHONPATH": tree}
    try:
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", mode, str(n), workdir],
            env=env, cwd=tree, capture_output=True, text=True, timeout=3600, check=False)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(f"{mode} with {tree} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return Figures(**json.loads(done.stdout.strip().splitlines()[-1]))


def median(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def describe(runs: list[Figures]) -> str:
    return (f"{median([r.wall for r in runs]):7.2f} s wall, "
            f"{median([r.cpu for r in runs]):6.2f} s CPU "
            f"({median([r.cpu / r.calls for r in runs]) * 1e6:5.1f} us a call) "
            f"(+{median([r.apps_cpu for r in runs]):.2f} s apps), peak RSS "
            f"{median([r.peak_rss for r in runs]) / 2**20:6.1f} MB = "
            f"{median([r.rss_per_call for r in runs]):6.0f} B/call "
            f"(growth {median([r.growth_per_call for r in runs]):5.0f} B/call)")


def ratios(runs: list[Figures], base: list[Figures]) -> str:
    """Medians of the per-round ratios this tree / baseline."""
    def ratio(pick: str) -> float:
        return median([getattr(r, pick) / getattr(b, pick) for r, b in zip(runs, base)])

    return (f"ratio to baseline: wall {ratio('wall'):.2f}, CPU {ratio('cpu'):.2f}, "
            f"peak RSS {ratio('peak_rss'):.2f}, growth per call "
            f"{ratio('growth_per_call'):.2f}")


def to_goal(mode: str, runs: list[Figures]) -> str:
    rss = median([r.rss_per_call for r in runs])
    text = f"peak RSS per call / goal ({GOAL_RSS_PER_CALL} B): {rss / GOAL_RSS_PER_CALL:.2f}"
    if mode == "dryrun":
        calls = runs[0].calls
        wall = median([r.wall for r in runs]) * 100_000 / calls
        text += (f"; dry run scaled to 100,000 calls {wall:.1f} s / the reuse goal "
                 f"({GOAL_REUSED_100K_S:.0f} s): {wall / GOAL_REUSED_100K_S:.2f}")
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry", type=int, default=100_000, help="calls of the dry run")
    parser.add_argument("--real", type=int, default=20_000, help="calls of the real run")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline", help="another checkout to compare with (its root)")
    parser.add_argument("--only", choices=("dryrun", "real"))
    parser.add_argument("--child", nargs=3, metavar=("MODE", "N", "WORKDIR"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]), args.child[2])
        return
    cores = os.cpu_count() or 1
    trees = [("this tree", HERE)]
    if args.baseline:
        trees.append(("baseline", os.path.abspath(args.baseline)))
    root = tempfile.mkdtemp(prefix="swiftnb-bench-percall-")
    try:
        for mode, n in (("dryrun", args.dry), ("real", args.real)):
            if args.only and mode != args.only:
                continue
            runs: dict[str, list[Figures]] = {label: [] for label, _ in trees}
            for r in range(args.rounds):
                # the order turns each round, so that a drift of the load favours neither
                for label, tree in trees[r % 2:] + trees[:r % 2]:
                    runs[label].append(measure(tree, mode, n, root))
            title = (f"-dryrun of {n:,} calls" if mode == "dryrun"
                     else f"{n:,} echo calls on the local site ({cores} slots)")
            print(f"{title}, {args.rounds} round(s), medians; load average "
                  f"{os.getloadavg()[0]:.1f}:", flush=True)
            for label, _ in trees:
                print(f"  {label:9s}: {describe(runs[label])}", flush=True)
            if args.baseline:
                print(f"  {ratios(runs['this tree'], runs['baseline'])}", flush=True)
            print(f"  {to_goal(mode, runs['this tree'])}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
