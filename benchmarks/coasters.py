"""Benchmark (issue 5): N short tasks through a local coaster site with 2 workers.

Each task is ``echo I`` with stdout mapped to ``out/I.txt`` (job directory, wrapper,
output moved into place).  Three ways, in the same run, on the same machine:

* ``coaster``: CoasterProvider with ``jobManager: local:local`` and one block of 2 worker
  processes (maxJobs 1, maxNodesPerJob 2, tasksPerNode 1); the time includes planning the
  block, starting the workers and their connecting back;
* ``local``: swiftnb's plain LocalProvider, at most 2 tasks at a time (the baseline the
  coaster path must stay close to on one machine; coasters pay off on clusters, where a
  batch submission per task costs seconds to minutes);
* ``xargs -P 2``: ``sh -c 'echo I > out/I.txt'`` per task, no swiftnb at all;
* ``coaster pf0``: the same coaster site with ``prefetch: 0`` (Swift's behaviour: a
  worker gets its next task only after reporting the last one); ``coaster`` uses the
  default ``prefetch: auto`` (one task held ahead while tasks are short).

Prints tasks/s for each (interleaved rounds, best of each, since the machine is shared and
its load drifts) and the coaster figures' ratios to the other two.

Run: ``.venv/bin/python benchmarks/coasters.py [N [ROUNDS]]`` (default 5000 tasks, 2 rounds).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.coasters.provider import CoasterProvider  # noqa: E402
from swiftnb.engine.task import Task  # noqa: E402
from swiftnb.events import EventBus  # noqa: E402
from swiftnb.scheduling.provider import RecordingReporter


def tasks(base: str, n: int) -> list[Task]:
    return [Task(jobid=f"echo-{i}", tr="echo", args=[str(i)], base_dir=base,
                 run_dir=os.path.join(base, "run001"), stdout=f"out/{i}.txt",
                 outputs=[f"out/{i}.txt"], maxwalltime=60) for i in range(n)]


def check(base: str, n: int) -> None:
    for i in (0, n // 2, n - 1):
        with open(os.path.join(base, "out", f"{i}.txt")) as fh:
            assert fh.read() == f"{i}\n", i


async def run_provider(provider, base: str, n: int) -> float:
    report = RecordingReporter()

    await provider.start()
    limit = asyncio.Semaphore(2)

    async def one(task: Task):
        async with limit:
            return await provider.execute(task, report)

    start = time.perf_counter()
    if isinstance(provider, CoasterProvider):
        results = await asyncio.gather(*(provider.execute(t, report) for t in tasks(base, n)))
    else:
        results = await asyncio.gather(*(one(t) for t in tasks(base, n)))
    elapsed = time.perf_counter() - start
    await provider.shutdown()
    bad = [r for r in results if not r.ok]
    assert not bad, bad[0].message
    check(base, n)
    return elapsed


def coaster(base: str, n: int, prefetch: int | str = 0) -> float:
    options = {"maxJobs": 1, "maxNodesPerJob": 2, "tasksPerNode": 1, "allocationStepSize": 1,
               "planInterval": 0.05, "prefetch": prefetch}
    provider = CoasterProvider("coast", options, bus=EventBus())
    elapsed = asyncio.run(run_provider(provider, base, n))
    blocks = provider.service.state()["blocks"]
    assert len(blocks) == 1 and blocks[0]["workers"] == 2, blocks
    return elapsed


def local(base: str, n: int) -> float | None:
    try:
        from swiftnb.execution.local import LocalProvider
    except ImportError:
        return None
    return asyncio.run(run_provider(LocalProvider("local"), base, n))


def xargs(base: str, n: int) -> float:
    os.makedirs(os.path.join(base, "out"), exist_ok=True)
    numbers = "".join(f"{i}\n" for i in range(n)).encode()
    start = time.perf_counter()
    subprocess.run(["xargs", "-P", "2", "-I{}", "sh", "-c", "echo {} > out/{}.txt"],
                   input=numbers, cwd=base, check=True)
    elapsed = time.perf_counter() - start
    check(base, n)
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    runs = (("xargs -P 2", xargs), ("local", local), ("coaster pf0", coaster),
            ("coaster", lambda base, n: coaster(base, n, prefetch="auto")))
    # interleaved rounds, best of each: the machine is shared, its load drifts
    best: dict[str, float | None] = {}
    for r in range(rounds):
        for name, fn in runs:
            base = tempfile.mkdtemp(prefix=f"swiftnb-bench-{name.split()[0]}-")
            try:
                elapsed = fn(base, n)
            finally:
                shutil.rmtree(base, ignore_errors=True)
            rate = None if elapsed is None else n / elapsed
            if rate is not None and (best.get(name) is None or rate > best[name]):
                best[name] = rate
            elif name not in best:
                best[name] = rate
            shown = "n/a (LocalProvider missing)" if elapsed is None else \
                f"{n / elapsed:8.1f} tasks/s ({elapsed:.2f} s)"
            print(f"round {r + 1}  {name:12s} {n} tasks: {shown}", flush=True)
    print(f"best of {rounds}:")
    for name, _ in runs:
        print(f"  {name:12s} {best[name] or 0:8.1f} tasks/s")
    for name in ("coaster pf0", "coaster"):
        c = best[name]
        for base_name in ("local", "xargs -P 2"):
            b = best[base_name]
            if c and b:
                print(f"ratio {name} / {base_name}: {c / b:.2f}")


if __name__ == "__main__":
    main()
