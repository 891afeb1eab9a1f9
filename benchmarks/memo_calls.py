"""Benchmark (issue 26): what memoization itself costs an app call, without the engine.

benchmarks/memo.py measures whole runs, whose CPU time on a shared, loaded machine
varies by 30% between identical runs, more than the bound it checks.  Here StoreMemo
is driven directly for N calls of that benchmark's shape (``echo i`` to one output
file, no input): a first run (each call decided "no earlier call", its output written
and digested as the app and the wrapper would, outside the timing, then remembered,
recorded and kept in the content store) and a re-run in a new StoreMemo (each call
reused).  It prints the CPU time of all the process's threads per call.

Run: ``.venv/bin/python benchmarks/memo_calls.py [N [ROUNDS]]`` (default 2,000 and 3);
``PYTHONPATH`` of another tree (a worktree of an earlier commit) measures that one.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.environ.get("PYTHONPATH") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.engine.task import Task, TaskResult  # noqa: E402
from swiftnb.store import RunRecord, RunStore  # noqa: E402
from swiftnb.store.digests import file_digest  # noqa: E402
from swiftnb.store.memo import StoreMemo  # noqa: E402


def tasks(root: str, n: int, tag: str) -> list[Task]:
    return [Task(jobid=f"echo-{tag}{i}", tr="echo", args=[str(i)], base_dir=root,
                 run_dir=root, stdout=f"out/f{i}.txt", outputs=[f"out/f{i}.txt"])
            for i in range(n)]


async def first_run(memo: StoreMemo, calls: list[Task], digests: dict[str, str]) -> None:
    decisions = await asyncio.gather(*(memo.decide(task) for task in calls))
    assert not any(d.reuse for d in decisions)
    for task, decision in zip(calls, decisions):
        result = TaskResult(ok=True, exit_code=0, site="local",
                            output_digests={task.outputs[0]: digests[task.outputs[0]]})
        await memo.remember(task, result, decision, 1.0, 2.0)


async def re_run(memo: StoreMemo, calls: list[Task], digests: dict[str, str]) -> None:
    decisions = await asyncio.gather(*(memo.decide(task) for task in calls))
    assert all(d.reuse for d in decisions), decisions[0].reason


def one_round(n: int) -> dict[str, float]:
    """CPU ms a call of a first run and of a re-run."""
    root = tempfile.mkdtemp(prefix="swiftnb-bench-memo-calls-")
    try:
        os.makedirs(os.path.join(root, "out"))
        digests: dict[str, str] = {}
        for i in range(n):  # what the apps and the wrapper did
            path = f"out/f{i}.txt"
            with open(os.path.join(root, path), "w") as fh:
                fh.write(f"{i}\n")
            digests[path] = file_digest(os.path.join(root, path))
        figures: dict[str, float] = {}
        for phase, body in (("first run", first_run), ("re-run", re_run)):
            before = time.process_time()
            store = RunStore.open(os.path.join(root, ".swiftnb"))
            store.begin_run(RunRecord(f"run-{phase}", "bench.swift"))  # as a run does
            memo = StoreMemo(store, f"run-{phase}", app_executable=lambda tr: "/bin/echo")
            asyncio.run(body(memo, tasks(root, n, phase[0]), digests))
            memo.close()
            store.close()
            figures[phase] = 1e3 * (time.process_time() - before) / n
        return figures
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    results = [one_round(n) for _ in range(rounds)]
    for phase in ("first run", "re-run"):
        values = ", ".join(f"{r[phase]:.3f}" for r in results)
        print(f"{phase}: CPU a call {values} ms ({n:,} calls; load average "
              f"{os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
