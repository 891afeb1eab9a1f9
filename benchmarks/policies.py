"""Compare the four site-selection policies on one simulated grid (seed 001's comparison).

The grid (virtual time, ``sim`` sites) mixes what seed 001 worries about:

* six ordinary sites (queue times of a minute or two, 2% failures),
* two fast sites (short queues, faster CPUs),
* a site with a very long queue (``exp:1800``) but many slots,
* a "black hole" that fails 60% of its jobs after a short queue,
* a site that goes down from t=600 s to t=1500 s,
* a small site (4 slots).

Each policy runs the same 3,000 jobs (executionRetries = 3) with replication off and on
(replicationMinQueueTime 120 s, replicationLimit 2), over two seeds, in two workloads:

* ``burst``: every job is ready at t=0 (a big foreach).  The queue stays saturated, so
  every site is always at its parallel-task limit and a freed slot is the only candidate:
  the limits (which follow the scores) decide where work goes, not the selection rule;
* ``stream``: jobs become ready one by one (exponential gaps, mean 1 s), so several
  sites usually have room and the selection rule matters.  Printed per
policy: time to completion (virtual makespan), failed attempts, jobs failed for good,
replicas started, replicas that won, and the share of attempts sent to the black hole
and to the long-queue site; then the wall time of each simulation.

Run: ``.venv/bin/python benchmarks/policies.py [JOBS] [SEEDS]``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from swiftnb.engine.task import Task  # noqa: E402
from swiftnb.events import EventBus  # noqa: E402
from swiftnb.execution.sim import SimProvider  # noqa: E402
from swiftnb.scheduling.clock import VirtualClock  # noqa: E402
from swiftnb.scheduling.scheduler import Scheduler  # noqa: E402
from swiftnb.scheduling.sites import Site  # noqa: E402

POLICIES = ["random", "best", "sitesets", "brokerage"]
RETRIES = 3


def grid_options(seed: int) -> dict[str, dict]:
    sites = {}
    for i in range(6):
        sites[f"ordinary{i}"] = {"slots": 16 + 4 * i, "queueTime": f"exp:{30 + 15 * i}",
                                 "taskDuration": "uniform:60:180",
                                 "failureProbability": 0.02}
    for i in range(2):
        sites[f"fast{i}"] = {"slots": 16, "queueTime": "exp:10", "speed": 1.5,
                             "taskDuration": "uniform:60:180", "failureProbability": 0.02}
    sites["longqueue"] = {"slots": 64, "queueTime": "exp:1800",
                          "taskDuration": "uniform:60:180", "failureProbability": 0.02}
    sites["blackhole"] = {"slots": 32, "queueTime": "exp:5",
                          "taskDuration": "uniform:10:30", "failureProbability": 0.6}
    sites["outage"] = {"slots": 24, "queueTime": "exp:20", "outages": "600+900",
                       "taskDuration": "uniform:60:180", "failureProbability": 0.02}
    sites["small"] = {"slots": 4, "queueTime": "exp:20",
                      "taskDuration": "uniform:60:180", "failureProbability": 0.02}
    for n, opts in enumerate(sites.values()):
        opts.update(seed=seed * 100 + n, writeOutputs=False)
    return sites


def simulate(policy: str, replication: bool, seed: int, jobs: int, workload: str) -> dict:
    clock = VirtualClock(start=0.0)
    bus = EventBus(clock=clock.now)
    sent: Counter[str] = Counter()
    bus.subscribe(lambda e: sent.update([e.fields["host"]]) if e.kind == "CONTACT_SELECTED"
                  else None)
    sites = [Site(name, SimProvider(name, opts, clock=clock), max_parallel_tasks=32,
                  initial_parallel_tasks=16)
             for name, opts in grid_options(seed).items()]
    sched = Scheduler(sites, bus, clock=clock, seed=seed, policy=policy,
                      replication_enabled=replication, replication_min_queue_time=120,
                      replication_limit=2)

    import random

    rng = random.Random(f"arrivals:{seed}")
    arrivals, t = [], 0.0
    for _ in range(jobs):
        arrivals.append(t if workload == "stream" else 0.0)
        t += rng.expovariate(1.0)

    async def one(i: int):
        if arrivals[i] > 0:
            await clock.sleep(arrivals[i])
        task = Task(jobid=f"job-{i}", tr="sim", args=[str(i)], base_dir="/nonexistent",
                    run_dir="/nonexistent/run", maxwalltime=600.0)
        result = None
        for attempt in range(RETRIES + 1):
            task.attempt = attempt
            result = await sched.submit(task)
            if result.ok:
                break
        return result

    async def main():
        results = await asyncio.gather(*(one(i) for i in range(jobs)))
        await sched.close()
        return results

    t0 = time.perf_counter()
    results = asyncio.run(main())
    wall = time.perf_counter() - t0
    failed_attempts = sum(s.failed for s in sites)
    total_sent = sum(sent.values()) or 1
    return {
        "makespan": clock.elapsed(),
        "failed_attempts": failed_attempts,
        "failed_jobs": sum(not r.ok for r in results),
        "replicas": sched.stats["replicas"],
        "replica_wins": sched.stats["replica_wins"],
        "blackhole": sent["blackhole"] / total_sent,
        "longqueue": sent["longqueue"] / total_sent,
        "wall": wall,
    }


def main() -> int:
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    print(f"policies on one simulated grid: {jobs} jobs, 12 sites, executionRetries={RETRIES},"
          f" {seeds} seeds (means)")
    header = (f"{'workload':8} {'policy':10} {'repl':4} {'makespan s':>10} {'failed att':>10} "
              f"{'failed jobs':>11} {'replicas':>8} {'won':>5} {'to bhole':>8} "
              f"{'to longq':>8} {'wall s':>6}")
    print(header)
    print("-" * len(header))
    total_wall = 0.0
    for workload in ("burst", "stream"):
        for replication in (False, True):
            for policy in POLICIES:
                runs = [simulate(policy, replication, seed, jobs, workload)
                        for seed in range(1, seeds + 1)]
                m = {k: statistics.mean(r[k] for r in runs) for k in runs[0]}
                total_wall += sum(r["wall"] for r in runs)
                print(f"{workload:8} {policy:10} {'on' if replication else 'off':4} "
                      f"{m['makespan']:10.0f} {m['failed_attempts']:10.0f} "
                      f"{m['failed_jobs']:11.1f} {m['replicas']:8.0f} "
                      f"{m['replica_wins']:5.0f} {m['blackhole']:8.1%} "
                      f"{m['longqueue']:8.1%} {m['wall']:6.2f}")
    print(f"total wall time {total_wall:.1f} s for {4 * len(POLICIES) * seeds} simulations")
    print("makespan: virtual seconds until the last job ended; failed att: failed attempts; "
          "failed jobs: jobs that failed all attempts;\nreplicas/won: replicas started / "
          "replicas that became active first; to bhole / to longq: share of attempts sent "
          "to the failing site / the long-queue site")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
