"""Benchmark (issues 5, 16): N short tasks through a local coaster block of 2 workers.

Each task is ``echo I`` with stdout mapped to a file.  Five ways, in the same run, on the
same machine, in interleaved rounds (the machine is shared and its load drifts):

* ``xargs -P 2``: ``sh -c 'echo I > out/I.txt'`` per task, no swiftnb at all;
* ``local``: swiftnb's LocalProvider driven directly, at most 2 tasks at a time;
* ``coaster``: CoasterProvider with ``jobManager: local:local`` and one block of 2 worker
  processes (maxJobs 1, maxNodesPerJob 2, tasksPerNode 1); the time includes planning the
  block, starting the workers and their connecting back;
* ``run local`` and ``run coaster``: the whole ``swiftnb run`` command on the script
  ``foreach i in [1:N] { f[i] = echo(i); }``, on the default local site and on a site
  with the coaster block above (start-up, compilation and logs included): issue 16's
  figure, which wants the coaster site at >= 1.2x the local one.

Prints tasks/s for each round, then the medians, the CPU each used per task (``self``:
this process, for the provider runs; ``children``: the workers and apps, or the whole
``swiftnb run`` process tree), and the coaster figures' ratios to the local ones.

Run: ``.venv/bin/python benchmarks/coasters.py [N [ROUNDS]]`` (default 2000 tasks, 3 rounds).
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.coasters.provider import CoasterProvider  # noqa: E402
from swiftnb.engine.task import Task  # noqa: E402
from swiftnb.events import EventBus  # noqa: E402
from swiftnb.execution.local import LocalProvider  # noqa: E402
from swiftnb.scheduling.provider import Provider, RecordingReporter  # noqa: E402
from workloads import COASTER_CONF, ECHO_BAG  # noqa: E402  (benchmarks/workloads.py)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

#: one block of 2 single-slot workers on this machine
COASTER_OPTIONS = {"maxJobs": 1, "maxNodesPerJob": 2, "tasksPerNode": 1,
                   "allocationStepSize": 1}


@dataclass
class Measure:
    """One timed run: wall seconds, CPU seconds of this process and of its children."""

    elapsed: float
    own_cpu: float
    child_cpu: float


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def measured(fn: Callable[[], float]) -> Measure:
    """``fn``'s own timing (its return value) and the CPU spent meanwhile."""
    own, child = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    elapsed = fn()
    return Measure(elapsed, _cpu(resource.RUSAGE_SELF) - own,
                   _cpu(resource.RUSAGE_CHILDREN) - child)


def tasks(base: str, n: int) -> list[Task]:
    return [Task(jobid=f"echo-{i}", tr="echo", args=[str(i)], base_dir=base,
                 run_dir=os.path.join(base, "run001"), stdout=f"out/{i}.txt",
                 outputs=[f"out/{i}.txt"], maxwalltime=60) for i in range(n)]


def check(base: str, n: int, name: str = "{}.txt", first: int = 0) -> None:
    for i in (first, first + n // 2, first + n - 1):
        with open(os.path.join(base, "out", name.format(i))) as fh:
            assert fh.read() == f"{i}\n", i


async def run_provider(provider: Provider, base: str, n: int) -> float:
    report = RecordingReporter()
    await provider.start()
    limit = asyncio.Semaphore(2)

    async def one(task: Task):
        async with limit:
            return await provider.execute(provider.prepare(task), report)

    start = time.perf_counter()
    if isinstance(provider, CoasterProvider):
        results = await asyncio.gather(*(provider.execute(provider.prepare(t), report)
                                         for t in tasks(base, n)))
    else:
        results = await asyncio.gather(*(one(t) for t in tasks(base, n)))
    elapsed = time.perf_counter() - start
    await provider.shutdown()
    bad = [r for r in results if not r.ok]
    assert not bad, bad[0].message
    check(base, n)
    return elapsed


def coaster(base: str, n: int) -> float:
    provider = CoasterProvider("coast", {**COASTER_OPTIONS, "planInterval": 0.05},
                               bus=EventBus())
    elapsed = asyncio.run(run_provider(provider, base, n))
    assert provider.service is not None
    blocks = provider.service.state()["blocks"]
    assert len(blocks) == 1 and blocks[0]["workers"] == 2, blocks
    return elapsed


def local(base: str, n: int) -> float:
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


def command(base: str, n: int, conf: str | None) -> float:
    """The whole ``swiftnb run`` (its process and everything it starts)."""
    with open(os.path.join(base, "bag.swift"), "w") as fh:
        fh.write(ECHO_BAG.format(n=n))
    argv = [*SWIFTNB, "run", "-ui", "none"]
    if conf is not None:
        with open(os.path.join(base, "coaster.conf"), "w") as fh:
            fh.write(conf)
        argv += ["-config", "coaster.conf"]
    start = time.perf_counter()
    done = subprocess.run([*argv, "bag.swift"], cwd=base, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    check(base, n, "f{:04d}.txt", first=1)  # simple_mapper pads indices to 4 digits
    return elapsed


RUNS: tuple[tuple[str, Callable[[str, int], float]], ...] = (
    ("xargs -P 2", xargs),
    ("local", local),
    ("coaster", coaster),
    ("run local", lambda base, n: command(base, n, None)),
    ("run coaster", lambda base, n: command(base, n, COASTER_CONF)),
)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    seen: dict[str, list[Measure]] = {name: [] for name, _ in RUNS}
    for r in range(rounds):
        for name, fn in RUNS:
            base = tempfile.mkdtemp(prefix="swiftnb-bench-coasters-")
            try:
                m = measured(lambda: fn(base, n))
            finally:
                shutil.rmtree(base, ignore_errors=True)
            seen[name].append(m)
            print(f"round {r + 1}  {name:12s} {n} tasks: {n / m.elapsed:8.1f} tasks/s "
                  f"({m.elapsed:.2f} s)", flush=True)
    print(f"medians of {rounds} (CPU per task: self = this process, children = workers "
          "and apps, or the whole swiftnb run):")
    rate: dict[str, float] = {}
    for name, _ in RUNS:
        ms = seen[name]
        rate[name] = n / statistics.median(m.elapsed for m in ms)
        own = 1000 * statistics.median(m.own_cpu for m in ms) / n
        child = 1000 * statistics.median(m.child_cpu for m in ms) / n
        print(f"  {name:12s} {rate[name]:8.1f} tasks/s   self {own:5.2f} ms/task   "
              f"children {child:5.2f} ms/task")
    for name, base_name in (("coaster", "local"), ("coaster", "xargs -P 2"),
                            ("run coaster", "run local")):
        print(f"ratio {name} / {base_name}: {rate[name] / rate[base_name]:.2f}")


if __name__ == "__main__":
    main()
