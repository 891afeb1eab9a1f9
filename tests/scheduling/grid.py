"""Helpers for the scheduling tests: a simulated grid on a virtual clock.

The sim provider is the real provider of ``execution.type: "sim"`` (not a test fake);
the tests drive the real Scheduler with synthetic Tasks, the way the engine would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

from swiftnb.engine.task import Task, TaskResult
from swiftnb.events import Event, EventBus
from swiftnb.execution.sim import SimProvider
from swiftnb.scheduling.clock import VirtualClock
from swiftnb.scheduling.scheduler import Scheduler
from swiftnb.scheduling.sites import Site

TERMINAL = (5, 6, 7)


class Grid:
    """A VirtualClock, an EventBus on it, recorded events, sim sites and a Scheduler."""

    def __init__(self, sites: dict[str, dict[str, Any]], *, max_parallel: int = 10,
                 initial_parallel: int = 2, base_dir: str = "/nonexistent",
                 site_limits: dict[str, tuple[int, int]] | None = None, **sched_kw: Any):
        self.clock = VirtualClock(start=0.0)
        self.bus = EventBus(clock=self.clock.now)
        self.events: list[Event] = []
        self.bus.subscribe(self.events.append)
        self.base_dir = base_dir
        self.sites = []
        for name, options in sites.items():
            opts = {"writeOutputs": False, **options}
            provider = SimProvider(name, opts, clock=self.clock)
            mx, init = (site_limits or {}).get(name, (max_parallel, initial_parallel))
            self.sites.append(Site(name, provider, max_parallel_tasks=mx,
                                   initial_parallel_tasks=init, attributes=dict(options)))
        self.sched = Scheduler(self.sites, self.bus, clock=self.clock, **sched_kw)
        #: the per-site (maxParallelTasks, initialParallelTasks) the run started with
        self.initial_limits = {s.name: (s.max_parallel_tasks, s.initial_parallel_tasks)
                               for s in self.sites}

    def task(self, i: int, **kw: Any) -> Task:
        kw.setdefault("tr", "sim")
        return Task(jobid=f"job-{i}", args=[str(i)], base_dir=self.base_dir,
                    run_dir=self.base_dir + "/run001", **kw)

    async def run_one(self, task: Task, retries: int = 0) -> TaskResult:
        """Like the engine: up to 1 + retries attempts, each a fresh submit, then JOB_END."""
        result = None
        for attempt in range(retries + 1):
            task.attempt = attempt
            result = await self.sched.submit(task)
            if result.ok or result.canceled:
                break
        assert result is not None
        self.bus.emit("JOB_END", {"jobid": task.jobid})
        return result

    async def run(self, n: int, retries: int = 0, **task_kw: Any) -> list[TaskResult]:
        results = await asyncio.gather(*(self.run_one(self.task(i, **task_kw), retries)
                                         for i in range(n)))
        await self.sched.close()
        return list(results)

    def kinds(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]


def task_hosts(events: Iterable[Event]) -> dict[str, str]:
    """taskid -> host, from JOB_TASK + the preceding THREAD_ASSOCIATION of each job."""
    host_of_job: dict[str, str] = {}
    hosts: dict[str, str] = {}
    for e in events:
        if e.kind == "THREAD_ASSOCIATION":
            host_of_job[e["jobid"]] = e["host"]
        elif e.kind == "JOB_TASK":
            hosts[e["taskid"]] = host_of_job[e["jobid"]]
    return hosts


def max_concurrency(events: list[Event], start_status: int | None, per_host: bool,
                    limits: dict[Any, float] | None = None) -> dict[Any, int]:
    """Peak number of tasks in a phase, overall (key None) or per host, from the stream.

    A task enters at its JOB_TASK (start_status None: it holds a site slot from then on)
    or at TASK_STATUS_CHANGE ``start_status``; it leaves at its next status (for a
    status phase) or at a terminal status (for the site-slot phase).
    """
    hosts = task_hosts(events)
    current: dict[Any, int] = {}
    peak: dict[Any, int] = {}
    inside: set[str] = set()
    for e in events:
        if e.kind == "JOB_TASK" and start_status is None:
            key = hosts[e["taskid"]] if per_host else None
            inside.add(e["taskid"])
            current[key] = current.get(key, 0) + 1
            peak[key] = max(peak.get(key, 0), current[key])
        elif e.kind == "TASK_STATUS_CHANGE":
            tid = e["taskid"]
            key = hosts[tid] if per_host else None
            status = e["status"]
            leaving = tid in inside and (status in TERMINAL if start_status is None
                                         else status != start_status)
            if leaving:
                inside.discard(tid)
                current[key] -= 1
            if start_status is not None and status == start_status:
                inside.add(tid)
                current[key] = current.get(key, 0) + 1
                peak[key] = max(peak.get(key, 0), current[key])
    return peak
