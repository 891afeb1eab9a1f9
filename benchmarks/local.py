"""Benchmark (issue 3, engine benchmark part b): 2,000 local app calls of ``echo`` to files.

Measures tasks per second of swiftnb's local execution path and the ratio to
``xargs -P <cores>`` doing the same work (one ``echo N > out/N.txt`` per call, through
``sh -c`` since xargs cannot redirect otherwise) in the same run.  Target ratio >= 0.5.

Three swiftnb figures are printed:

* ``engine``: the script ``foreach i in [1:N] { f[i] = echo(i); }`` through
  ``swiftnb run`` called in this process (``cli.main``: config, run directory, log
  writer, restart log, engine, SingleSiteExecutor, LocalProvider, wrapper) with
  ``maxParallelTasks`` = cores and the default configuration, which (as 0.96's
  distributed swift.conf) keeps a ``JOBID-info`` record of every call;
* the same with ``alwaysTransferWrapperLog: false`` (records of failed calls only);
* ``executor``: N Tasks submitted straight to SingleSiteExecutor(LocalProvider) (the
  part of the path this benchmark is about, without the dataflow engine).

Run: ``.venv/bin/python benchmarks/local.py [N [ROUNDS]]`` (default 2000 calls, 5 rounds;
the figures are medians over the rounds, each ratio taken within its round).  A run of
20 calls first warms the process up (the imports and caches a ``swiftnb`` command pays
once at start-up, about 0.4 s, printed but not counted), so that every round measures
the same steady state.
"""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.engine.task import Task  # noqa: E402
from swiftnb.events import EventBus  # noqa: E402
from swiftnb.execution.local import LocalProvider  # noqa: E402
from swiftnb.scheduling.single import SingleSiteExecutor  # noqa: E402
from workloads import ECHO_BAG  # noqa: E402  (benchmarks/workloads.py)


def bench_xargs(n: int, cores: int, workdir: str) -> float:
    out = os.path.join(workdir, "out")
    os.makedirs(out)
    numbers = "".join(f"{i}\n" for i in range(1, n + 1)).encode()
    t0 = time.perf_counter()
    subprocess.run(["xargs", "-P", str(cores), "-I{}", "sh", "-c", "echo {} > out/{}.txt"],
                   input=numbers, cwd=workdir, check=True)
    elapsed = time.perf_counter() - t0
    assert len(os.listdir(out)) == n
    return elapsed


def bench_executor(n: int, cores: int, workdir: str) -> float:
    os.makedirs(os.path.join(workdir, "out"))
    bus = EventBus()
    events = [0]

    def count(_e):  # a cheap subscriber, as the log writer would be
        events[0] += 1

    bus.subscribe(count)

    async def main() -> None:
        ex = SingleSiteExecutor(LocalProvider(site_run="bench-run001"), bus, max_parallel=cores)
        tasks = [Task(jobid=f"echo-{i:06d}", tr="echo", args=[str(i)], base_dir=workdir,
                      run_dir=os.path.join(workdir, "run001"), stdout=f"out/{i}.txt",
                      outputs=[f"out/{i}.txt"]) for i in range(1, n + 1)]
        try:
            results = await asyncio.gather(*(ex.submit(t) for t in tasks))
        finally:
            await ex.close()
        bad = [r for r in results if not r.ok]
        assert not bad, bad[0].message

    t0 = time.perf_counter()
    asyncio.run(main())
    elapsed = time.perf_counter() - t0
    assert len(os.listdir(os.path.join(workdir, "out"))) == n
    return elapsed


def bench_engine(n: int, cores: int, workdir: str, info: bool = True) -> float | None:
    """The whole `swiftnb run` in this process: config, run dir, log, restart log, engine.

    ``info=False`` sets ``alwaysTransferWrapperLog: false``: no ``JOBID-info`` record per
    successful call (0.96's distributed swift.conf, and so swiftnb's default, keeps one)."""
    try:
        from swiftnb import cli, lang
    except ImportError:
        return None
    if not hasattr(lang, "load"):
        return None
    os.makedirs(workdir)
    script = os.path.join(workdir, "bench.swift")
    with open(script, "w") as fh:
        fh.write(ECHO_BAG.format(n=n))
    with open(os.path.join(workdir, "swift.conf"), "w") as fh:
        fh.write(f"sites: local\n{'' if info else 'alwaysTransferWrapperLog: false'}\n"
                 f"site.local {{\n  execution {{ type: local }}\n"
                 f"  workDirectory: swiftwork\n  maxParallelTasks: {cores}\n"
                 f"  initialParallelTasks: {cores}\n}}\n")
    lang.load(script)  # build the parser outside the timing (one-off per process)
    old = os.getcwd()
    os.chdir(workdir)
    real_out, real_err = sys.stdout, sys.stderr
    sink = open(os.devnull, "w")
    try:
        sys.stdout = sys.stderr = sink
        t0 = time.perf_counter()
        code = cli.main(["run", "-ui", "none", "bench.swift"])
        elapsed = time.perf_counter() - t0
    finally:
        sys.stdout, sys.stderr = real_out, real_err
        sink.close()
        os.chdir(old)
    made = len(os.listdir(os.path.join(workdir, "out"))) if os.path.isdir(
        os.path.join(workdir, "out")) else 0
    if code != 0 or made != n:
        print(f"engine run exited {code} and produced {made} of {n} files; not counted")
        return None
    return elapsed


def _cpu() -> tuple[float, float]:
    """CPU seconds used so far by this process and by its waited-for children."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _measured(fn, *args):
    """(result, CPU ms per task of this process, CPU ms per task of the children)."""
    before = _cpu()
    result = fn(*args)
    after = _cpu()
    n = args[0]
    return result, (after[0] - before[0]) * 1000 / n, (after[1] - before[1]) * 1000 / n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5  # a shared VM drifts: a median of 5
    cores = os.cpu_count() or 1
    root = tempfile.mkdtemp(prefix="swiftnb-bench-local-")
    rows: dict[str, list[tuple[float, float, float]]] = {
        "xargs": [], "executor": [], "engine": [], "engine-noinfo": []}
    warm_up = None
    try:
        t0 = time.perf_counter()
        bench_executor(20, cores, os.path.join(root, "warm-executor"))
        if bench_engine(20, cores, os.path.join(root, "warm-engine")) is not None:
            warm_up = time.perf_counter() - t0
        # the three take turns, round after round, and every file stays until the end:
        # on ext4 a file created soon after many were deleted costs more (the allocator
        # skips recently freed inodes), which would otherwise favour whichever runs last
        for r in range(rounds):
            here = os.path.join(root, f"round{r}")
            rows["xargs"].append(_measured(bench_xargs, n, cores, os.path.join(here, "xargs")))
            rows["executor"].append(
                _measured(bench_executor, n, cores, os.path.join(here, "executor")))
            try:
                t_e, *cpu_e = _measured(bench_engine, n, cores, os.path.join(here, "engine"))
            except Exception as exc:  # noqa: BLE001 - the engine is optional for this figure
                print(f"engine path failed: {type(exc).__name__}: {exc}")
                t_e = None
            if t_e is not None:
                rows["engine"].append((t_e, *cpu_e))
                t_q, *cpu_q = _measured(bench_engine, n, cores, os.path.join(here, "noinfo"),
                                        False)
                if t_q is not None:
                    rows["engine-noinfo"].append((t_q, *cpu_q))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"local app calls: {n} x echo to files, {cores} cores, {rounds} rounds "
          "(median time; CPU per task: swiftnb's own process / the processes it started)")
    if warm_up is not None:
        print(f"  (warm-up, not counted: 20 calls each way in {warm_up:.2f} s, "
              "most of it first imports)")

    def median(values: list[float]) -> float:
        values = sorted(values)
        return values[len(values) // 2]

    labels = {"xargs": f"xargs -P {cores}", "executor": "swiftnb executor",
              "engine": "swiftnb engine (run)", "engine-noinfo": "  same, no -info files"}
    ratios = {}
    for key, label in labels.items():
        if not rows[key]:
            print(f"  {label + ':':22s} not available")
            continue
        t = median([row[0] for row in rows[key]])
        cpu = (median([row[1] for row in rows[key]]), median([row[2] for row in rows[key]]))
        per_round = [x[0] / row[0] for x, row in zip(rows["xargs"], rows[key])]
        ratios[key] = median(per_round)
        extra = ("(baseline)" if key == "xargs" else
                 f"ratio {ratios[key]:.2f} (rounds: {', '.join(f'{v:.2f}' for v in per_round)})")
        print(f"  {label + ':':22s} {t:6.2f} s {n / t:8.1f} tasks/s  CPU {cpu[0]:.2f} / "
              f"{cpu[1]:.2f} ms  {extra}")
    best = ratios.get("engine", ratios.get("executor", 0.0))
    print(f"ratio to xargs: {best:.2f} (target >= 0.5)")


if __name__ == "__main__":
    main()
