"""Batch benchmark (issue 13): a bag of short tasks on a real Slurm, one job per task
against coaster blocks, in the same run.

    .venv/bin/python benchmarks/batch.py [--tasks 500] [--rounds 3]

Starts a one-node Slurm 22.05 of its own (tests/slurm.py's, in a temporary directory on
free ports: needs root and Debian's slurm-wlm and munge; 8 slots), then, in interleaved
rounds, runs a foreach of N ``echo`` apps (each one's stdout staged back) on

1. an ``execution.type: "slurm"`` site: one batch job per task, maxParallelTasks N so
   that Slurm's 8 slots, not swiftnb, are the limit, squeue every 0.5 s at first (timed
   as a whole ``swiftnb run`` process only: a run of a minute gains nothing from leaving
   out 1-2 s of start; the reference measured 100 trivial jobs in 10-12 s on this
   cluster, about 9 jobs/s, with sbatch alone);
2. an ``execution.type: "coaster"`` site with ``jobManager: "local:slurm"``: at most
   ``--blocks`` blocks of one node, ``--per-node`` tasks each (the same 8 slots), timed as
   a whole ``swiftnb run`` process and in this process through ``swiftnb.start_run``.

and prints the medians over the rounds: tasks/s of each, the ratio coasters / one job
per task (target >= 20), and from the runs' logs the time from a block's submission
(BLOCK_REQUESTED) to BLOCK_ACTIVE and to its first task's start (TASK_STATUS_CHANGE
status=2 on one of its workers), median over the blocks of every coaster run, next to a
batch job's time from its submission (status=1) to its start (status=2).

Exits 0 with "skipped: ..." where no Slurm can run.  Everything it starts is stopped by
its PID at the end (the cluster's ``stop``: scancel, the daemons, leftover slurmstepd).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import clusters as test_clusters  # noqa: E402  (free ports, as the tests choose them)
import slurm as test_slurm  # noqa: E402  (the tests' Slurm, started the same way)

SCRIPT = """
type file;
app (file o) echo (int i) {{ echo i stdout=@o; }}
file outs[] <simple_mapper; prefix="o/", suffix=".txt">;
foreach i in [0:{last}] {{ outs[i] = echo(i); }}
"""


@dataclass
class Figures:
    """What the rounds measured: seconds per run, and latencies read from the logs."""

    runs: dict[str, list[float]] = field(default_factory=dict)
    to_active: list[float] = field(default_factory=list)      # block requested -> active
    to_first: list[float] = field(default_factory=list)       # block requested -> 1st task
    blocks_per_run: list[int] = field(default_factory=list)   # blocks requested
    job_wait: list[float] = field(default_factory=list)       # batch job submitted -> running
    first_job_wait: list[float] = field(default_factory=list)  # the same, a run's first job

    def add(self, name: str, seconds: float) -> None:
        self.runs.setdefault(name, []).append(seconds)


def start_cluster() -> test_slurm.Slurm:
    reason = test_slurm.unavailable()
    if reason:
        print(f"skipped: cannot start a Slurm here: {reason}")
        sys.exit(0)
    d = Path(tempfile.mkdtemp(prefix="swiftnb-bench-slurm-"))
    ctld, slurmd = test_clusters.free_ports(2)
    try:
        return test_slurm.start_cluster(d, ctld, slurmd)
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise


def batch_conf(work: Path, n: int) -> str:
    return f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{ type: "slurm", options {{ pollInterval: 0.5 }} }}
    workDirectory: "{work}/swiftwork"
    staging: "swift"
    maxParallelTasks: {n}
    initialParallelTasks: {n}
    app.ALL {{ executable: "*" }}
}}
jobSubmitThrottle: off
hostJobSubmitThrottle: off
"""


def coaster_conf(work: Path, n: int, cluster: test_slurm.Slurm, blocks: int,
                 per_node: int) -> str:
    return f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{
        type: "coaster", jobManager: "local:slurm"
        options {{ maxJobs: {blocks}, tasksPerNode: {per_node}, maxNodesPerJob: 1,
                   maxJobTime: "00:10:00", jobQueue: "{cluster.partition}" }}
    }}
    workDirectory: "{work}/swiftwork"
    staging: "swift"
    maxParallelTasks: {n}
    initialParallelTasks: {n}
    app.ALL {{ executable: "*", maxWallTime: "00:01:00" }}
}}
jobSubmitThrottle: off
hostJobSubmitThrottle: off
"""


def prepare(work: Path, conf: str, n: int) -> None:
    work.mkdir()
    (work / "wf.swift").write_text(SCRIPT.format(last=n - 1))
    (work / "swift.conf").write_text(conf)


def check(work: Path, n: int, cluster: test_slurm.Slurm) -> Path:
    """The outputs are all there and nothing is left in Slurm; the run's log."""
    outs = sorted((work / "o").iterdir())
    assert len(outs) == n, f"{len(outs)} outputs of {n}"
    for i in (0, n // 2, n - 1):
        assert outs[i].read_text() == f"{i}\n", outs[i]
    live = cluster.run(["squeue", "-h", "-t", "PENDING,RUNNING,COMPLETING,CONFIGURING",
                        "-o", "%i"]).stdout.split()
    assert not live, f"jobs left in Slurm after a run: {live}"
    return next(work.glob("run*/*.log"))


def swiftnb_run(work: Path, cluster: test_slurm.Slurm, n: int) -> float:
    began = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"], cwd=work,
                       env=cluster.env(), capture_output=True, text=True,
                       timeout=120 + 2 * n)
    took = time.perf_counter() - began
    if r.returncode != 0:
        sys.exit(f"swiftnb run in {work} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    return took


async def in_process(work: Path) -> float:
    """The same workflow through the library API, in this process (SLURM_CONF is in
    this process's environment)."""
    from swiftnb.runner import start_run

    began = time.perf_counter()
    handle = start_run(str(work / "wf.swift"), config_file="swift.conf", base_dir=str(work))
    outcome = await handle
    took = time.perf_counter() - began
    if handle.run.canceled or not outcome.ok:
        sys.exit(f"the in-process run in {work} failed: {outcome}")
    return took


def block_latencies(log: Path, figures: Figures) -> None:
    """Each block's time from BLOCK_REQUESTED to BLOCK_ACTIVE and to the first task that
    started (status=2) on one of its workers (``workerid=BLOCK:WORKER``)."""
    from swiftnb.logs.reader import read_log

    assert re.search(r"block \S+ is slurm job \d+", log.read_text()), \
        f"{log}: no block ran as a Slurm job"
    frame = read_log(log)
    requested = frame[frame["kind"] == "BLOCK_REQUESTED"]
    active = frame[frame["kind"] == "BLOCK_ACTIVE"]
    started = frame[(frame["kind"] == "TASK_STATUS_CHANGE") & (frame["status"] == 2)]
    block_of = started["workerid"].astype(str).str.split(":").str[0]
    assert len(requested), f"{log}: no BLOCK_REQUESTED line"
    figures.blocks_per_run.append(len(requested))
    for block, t_req in zip(requested["id"], requested["time"]):
        up = active[active["id"] == block]["time"]
        first = started[block_of == block]["time"]
        if len(up):
            figures.to_active.append(float(up.min()) - float(t_req))
        if len(first):
            figures.to_first.append(float(first.min()) - float(t_req))


def job_latencies(log: Path, figures: Figures) -> None:
    """Each batch job's time from its submission (status=1) to its start (status=2)."""
    from swiftnb.logs.reader import read_log

    frame = read_log(log)
    changes = frame[frame["kind"] == "TASK_STATUS_CHANGE"]
    firsts = changes.groupby(["taskid", "status"], observed=True)["time"].min().unstack()
    assert 1 in firsts and 2 in firsts, f"{log}: no status=1 or status=2 lines"
    waits = (firsts[2] - firsts[1]).dropna()
    figures.job_wait.extend(float(x) for x in waits)
    figures.first_job_wait.append(float(waits[firsts[1].idxmin()]))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--blocks", type=int, default=2, help="coaster maxJobs")
    parser.add_argument("--per-node", type=int, default=4, help="coaster tasksPerNode")
    args = parser.parse_args()
    n = args.tasks
    cluster = start_cluster()
    base = Path(tempfile.mkdtemp(prefix="swiftnb-bench-batch-"))
    os.environ["SLURM_CONF"] = str(cluster.conf)   # for the in-process runs
    figures = Figures()
    try:
        print(f"a one-node Slurm with {cluster.cpus} slots in {cluster.dir}; "
              f"{n} echo tasks, {args.rounds} rounds")
        for r in range(args.rounds):
            work = base / f"jobs-{r}"
            prepare(work, batch_conf(work, n), n)
            figures.add("jobs", swiftnb_run(work, cluster, n))
            job_latencies(check(work, n, cluster), figures)
            shutil.rmtree(work, ignore_errors=True)

            for name in ("coasters", "coasters-lib"):
                work = base / f"{name}-{r}"
                prepare(work, coaster_conf(work, n, cluster, args.blocks, args.per_node), n)
                took = (asyncio.run(in_process(work)) if name == "coasters-lib"
                        else swiftnb_run(work, cluster, n))
                figures.add(name, took)
                block_latencies(check(work, n, cluster), figures)
                shutil.rmtree(work, ignore_errors=True)
            print(f"  round {r + 1}: " + ", ".join(
                f"{k} {v[-1]:.2f} s" for k, v in figures.runs.items()), flush=True)

        rate = {k: n / median(v) for k, v in figures.runs.items()}
        slots = args.blocks * args.per_node
        print(f"{n} short apps on Slurm ({cluster.cpus} slots), medians of {args.rounds} rounds:")
        for key, label in (("jobs", "one job per task, swiftnb run"),
                           ("coasters", f"coaster blocks ({args.blocks} x {args.per_node} = "
                                        f"{slots} slots), swiftnb run"),
                           ("coasters-lib", "coaster blocks, in this process")):
            print(f"  {label:<48} {median(figures.runs[key]):7.2f} s "
                  f"{rate[key]:8.1f} tasks/s")
        print(f"  ratio coasters / one job per task (both swiftnb run): "
              f"{rate['coasters'] / rate['jobs']:.1f} (target >= 20)")
        print(f"  ratio coasters in this process / one job per task:   "
              f"{rate['coasters-lib'] / rate['jobs']:.1f}")
        print(f"  block latency, medians over the {len(figures.to_active)} blocks that came "
              f"up, of {sum(figures.blocks_per_run)} requested in "
              f"{len(figures.blocks_per_run)} coaster runs:")
        print(f"    requested -> active {median(figures.to_active):.2f} s, "
              f"requested -> first task {median(figures.to_first):.2f} s")
        print(f"  one job per task, submitted -> running: a run's first job "
              f"{median(figures.first_job_wait):.2f} s (median of {args.rounds}); every job "
              f"{median(figures.job_wait):.2f} s (median of {len(figures.job_wait)}: "
              f"the queue of {n} on {cluster.cpus} slots)")
    finally:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(base, ignore_errors=True)
            shutil.rmtree(cluster.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
