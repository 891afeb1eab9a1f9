"""Clustering of short jobs (User Guide section 17).

A job is eligible when it has a maxwalltime (seconds here) below ``clustering.min.time``.
Eligible jobs wait in a clustering queue that is processed every
``clustering.queue.delay`` seconds: compatible jobs (same app, same environment and
profiles) are grouped into clusters whose summed walltime does not exceed twice
``clustering.min.time``, and each cluster is submitted as one job: one site selection,
one slot of the site's parallel-task limit, one pass through the submission throttles,
one task id whose status changes (8, 1, 2, 7/5) cover the whole cluster.  Each member
still gets its own JOB_SITE_SELECT, THREAD_ASSOCIATION, JOB_START and JOB_TASK (with the
cluster's task id), and its own result.

The cluster's attempt is the scheduler's (:meth:`Scheduler.run_cluster`, the one attempt
path of attempt.py).  A provider may run a cluster natively with ``execute_cluster(jobs,
report) -> list[TaskResult]`` (the sim provider queues once and runs the members back to
back in one slot); otherwise the members run one after the other through ``execute``.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.scheduling.clock import TimerHandle

if TYPE_CHECKING:
    from swiftnb.scheduling.scheduler import Scheduler

__all__ = ["ClusteringSettings", "Clusterer"]


@dataclass
class ClusteringSettings:
    enabled: bool = False
    min_time: float = 60.0      # clustering.min.time (seconds)
    queue_delay: float = 4.0    # clustering.queue.delay (seconds)


class Clusterer:
    """The clustering queue of one scheduler."""

    def __init__(self, sched: Scheduler, settings: ClusteringSettings) -> None:
        self.s = sched
        self.settings = settings
        self.queue: list[tuple[Task, asyncio.Future[TaskResult]]] = []
        self.timer: TimerHandle | None = None
        self.ids = itertools.count(1)
        self.clusters = 0
        self._tasks: set[asyncio.Task[Any]] = set()

    def eligible(self, task: Task) -> bool:
        return task.maxwalltime is not None and 0 < task.maxwalltime < self.settings.min_time

    async def submit(self, task: Task) -> TaskResult:
        self.s.bus.emit("JOB_SITE_SELECT", {"jobid": task.jobid})
        future: asyncio.Future[TaskResult] = asyncio.get_running_loop().create_future()
        self.queue.append((task, future))
        if self.timer is None:
            self.timer = self.s.clock.call_later(self.settings.queue_delay, self._process)
        return await future

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        for t in self._tasks:
            t.cancel()

    def _process(self) -> None:
        self.timer = None
        queue, self.queue = self.queue, []
        groups: dict[Any, list[tuple[Task, asyncio.Future[TaskResult]]]] = {}
        for task, future in queue:
            if future.done():
                continue
            key = (task.tr, tuple(sorted(task.env.items())), tuple(sorted(
                (k, str(v)) for k, v in task.profiles.items())))
            groups.setdefault(key, []).append((task, future))
        limit = 2.0 * self.settings.min_time
        loop = asyncio.get_running_loop()
        for members in groups.values():
            cluster: list[tuple[Task, asyncio.Future[TaskResult]]] = []
            total = 0.0
            for task, future in members:
                wt = float(task.maxwalltime or 0.0)
                if cluster and total + wt > limit:
                    self._launch(loop, cluster)
                    cluster, total = [], 0.0
                cluster.append((task, future))
                total += wt
            if cluster:
                self._launch(loop, cluster)

    def _launch(self, loop: asyncio.AbstractEventLoop,
                members: list[tuple[Task, asyncio.Future[TaskResult]]]) -> None:
        self.clusters += 1
        t = loop.create_task(self._run(members))
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)

    async def _run(self, members: list[tuple[Task, asyncio.Future[TaskResult]]]) -> None:
        try:
            results = await self._run_cluster([t for t, _ in members])
        except asyncio.CancelledError:
            for _, future in members:
                if not future.done():
                    future.set_result(TaskResult(ok=False, failure=FailureKind.CANCELED))
            raise
        except Exception as exc:  # keep the members' futures from hanging
            results = [TaskResult(ok=False, message=f"cluster failed: {exc}")] * len(members)
        for (_, future), result in zip(members, results):
            if not future.done():
                future.set_result(result)

    async def _run_cluster(self, tasks: list[Task]) -> list[TaskResult]:
        first = tasks[0]
        head = Task(
            jobid=f"cluster-{next(self.ids)}", tr=first.tr, args=[], base_dir=first.base_dir,
            run_dir=first.run_dir, profiles=dict(first.profiles), env=dict(first.env),
            maxwalltime=sum(float(t.maxwalltime or 0.0) for t in tasks),
        )
        return await self.s.run_cluster(head, tasks)
