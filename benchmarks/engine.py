"""Engine benchmark, part (a): pure dataflow.

``foreach i in [1:N] { a[i] = i * 3 + 1; b[i] = a[i] %% 7; }`` then ``length(b)``:
no apps, only the engine's values and statements.  Prints operations per second (an
operation = one iteration start, one arithmetic operator, one array read or one array
write: 7 per iteration here) by wall clock and by process CPU time (the machine may be
shared), and the peak traced memory per element (tracemalloc), against a
baseline measured in the same run: a plain Python loop doing the same arithmetic into
two dicts.  Targets (issue 3): >= 200,000 ops/s and <= 0.5 KB per element.

Part (b), 2,000 app calls through the local provider against ``xargs -P <cores>``, is
benchmarks/local.py; this script runs it after part (a) (``--a-only`` skips it).
"""

from __future__ import annotations

import asyncio
import gc
import io
import sys
import time
import tracemalloc

N = 100_000
LAST_CPU = 0.0

SCRIPT = f"""
int a[]; int b[];
foreach i in [1:{N}] {{ a[i] = i * 3 + 1; b[i] = a[i] %% 7; }}
trace(length(b));
"""


class NoAppsExecutor:
    """Benchmark stand-in executor: the script runs no apps."""

    async def submit(self, task):  # pragma: no cover - never called
        raise RuntimeError("no apps expected")

    def app_executable(self, tr: str) -> str | None:
        return None

    async def close(self) -> None:
        pass


def run_engine(trace_memory: bool) -> tuple[float, int, str]:
    from swiftnb.engine.run import Run, RunSettings
    from swiftnb.events import EventBus
    from swiftnb.lang.parser import parse

    program = parse(SCRIPT, "bench.swift")
    out = io.StringIO()

    async def main() -> None:
        run = Run(program, NoAppsExecutor(), bus=EventBus(), settings=RunSettings(),
                  base_dir=".", run_dir="/tmp/swiftnb-bench-run", runid="bench", stdout=out)
        outcome = await run.execute()
        assert outcome.ok, outcome.errors

    gc.collect()
    if trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    c0 = time.process_time()
    asyncio.run(main())
    dt = time.perf_counter() - t0
    global LAST_CPU
    LAST_CPU = time.process_time() - c0
    peak = 0
    if trace_memory:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return dt, peak, out.getvalue().strip()


def run_baseline(trace_memory: bool) -> tuple[float, int]:
    gc.collect()
    if trace_memory:
        tracemalloc.start()
    t0 = time.perf_counter()
    a: dict[int, int] = {}
    b: dict[int, int] = {}
    for i in range(1, N + 1):
        a[i] = i * 3 + 1
        b[i] = a[i] % 7
    dt = time.perf_counter() - t0
    peak = 0
    if trace_memory:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return dt, peak


def main() -> int:
    ops = 7 * N  # per iteration: start, *, +, a[i]=, a[i], %%, b[i]=
    dt, _, line = run_engine(False)
    cpu = LAST_CPU
    _, peak, _ = run_engine(True)
    bdt, _ = run_baseline(False)
    _, bpeak = run_baseline(True)
    assert line == f"SwiftScript trace: {N}", line
    rate = ops / dt
    per_elem_kb = peak / (2 * N) / 1024  # two array elements per iteration
    print(f"engine (a) pure dataflow: {N} iterations, {ops} ops in {dt:.3f} s")
    print(f"  ops/s (wall clock) : {rate:,.0f}   (target >= 200,000)")
    print(f"  ops/s (CPU time)   : {ops / cpu:,.0f}   ({cpu:.3f} s of CPU)")
    print(f"  peak memory/element: {per_elem_kb:.3f} KB (target <= 0.5 KB; "
          f"{peak / 1e6:.1f} MB peak for {2 * N} elements)")
    print(f"  baseline (plain Python loop into dicts): {ops / bdt:,.0f} ops/s, "
          f"{bpeak / (2 * N) / 1024:.3f} KB/element")
    print(f"  ratio engine/baseline speed: {bdt / dt:.3f}")
    if "--a-only" not in sys.argv[1:]:
        print()
        print("engine (b) local app calls (benchmarks/local.py):")
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import local  # benchmarks/local.py

        sys.argv = [sys.argv[0]]  # its defaults: 2000 calls, 5 rounds
        local.main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
