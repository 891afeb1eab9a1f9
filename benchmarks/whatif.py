"""Accuracy of ``swiftnb whatif`` (issue 28): leave-one-out on the AIMES Stampede runs.

For each of the four real Swift 0.96 runs in tests/data/aimes (N = 8, 32, 256, 2048
``sleep 900`` tasks), calibrate a model on the other three logs, predict the run with
examples/aimes/stampede.conf (a coaster site over slurm named as in the log) and
examples/aimes/bag_of_tasks.swift (-N, -sleep from metadata.json), and compare the
predicted time to completion with the log's.

Figures printed: per run, the actual TTC, the predicted median and 10-90% interval, the
absolute percentage error of the median and whether the actual time is inside; then the
median absolute percentage error (target: at most 10%) and how often the actual time is
inside the interval (target: at least 70%).

Run: ``.venv/bin/python benchmarks/whatif.py [RUNS]`` (default 10 simulated runs each).
"""

from __future__ import annotations

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.logs.frame import LogFrame  # noqa: E402
from swiftnb.forecast import calibrate, whatif  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DATA = os.path.join(ROOT, "tests", "data", "aimes")
EXAMPLE = os.path.join(ROOT, "examples", "aimes")


def _metadata(path: str) -> tuple[int, int]:
    """(N, sleep seconds) of an AIMES metadata.json (its ``{[32, 900]}`` is not JSON)."""
    text = open(path, encoding="utf-8").read()
    n_tasks = int(re.search(r'"n_tasks":\s*(\d+)', text).group(1))  # type: ignore[union-attr]
    durations = text[text.index('"durations"'):]
    sleep = int(re.search(r"\[\s*\d+\s*,\s*(\d+)\s*\]", durations).group(1))  # type: ignore[union-attr]
    return n_tasks, sleep


def leave_one_out(runs: int = 10) -> list[dict]:
    names = sorted(d for d in os.listdir(DATA) if d.startswith("stampede-exp-"))
    frames = {n: LogFrame.read(os.path.join(DATA, n, "swift.log.bz2")) for n in names}
    rows = []
    for name in names:
        n_tasks, sleep = _metadata(os.path.join(DATA, name, "metadata.json"))
        model = calibrate([frames[o] for o in names if o != name])
        t0 = time.monotonic()
        table = whatif(os.path.join(EXAMPLE, "bag_of_tasks.swift"), model,
                       config=os.path.join(EXAMPLE, "stampede.conf"),
                       args=[f"-N={n_tasks}", f"-sleep={sleep}"], runs=runs)
        actual = float(frames[name].run["ttc"])
        median, p10, p90 = (float(table.loc["TTC", k]) for k in ("median", "p10", "p90"))
        rows.append({"run": name, "N": n_tasks, "actual": actual, "median": median,
                     "p10": p10, "p90": p90, "ape": abs(median - actual) / actual * 100,
                     "inside": p10 <= actual <= p90, "seconds": time.monotonic() - t0})
    return rows


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    rows = leave_one_out(runs)
    print(f"leave-one-out on the AIMES Stampede runs, {runs} simulated runs each")
    print(f"{'run':<18} {'N':>5} {'actual s':>9} {'median s':>9} {'p10':>8} {'p90':>8} "
          f"{'error':>7}  inside  wall")
    for r in rows:
        print(f"{r['run']:<18} {r['N']:>5} {r['actual']:>9.1f} {r['median']:>9.1f} "
              f"{r['p10']:>8.1f} {r['p90']:>8.1f} {r['ape']:>6.1f}%  {'yes' if r['inside'] else 'no':<6}"
              f"  {r['seconds']:.0f} s")
    errors = sorted(r["ape"] for r in rows)
    mid = len(errors) // 2
    mdape = errors[mid] if len(errors) % 2 else (errors[mid - 1] + errors[mid]) / 2
    inside = sum(r["inside"] for r in rows) / len(rows) * 100
    print(f"median absolute percentage error of the median: {mdape:.1f}% (target <= 10%)")
    print(f"actual inside the 10-90% interval: {inside:.0f}% of the runs (target >= 70%)")


if __name__ == "__main__":
    main()
