"""The simplest scheduler: every task goes to one provider, at most ``max_parallel`` at once.

It implements the engine's Executor interface (``submit``/``close``) and emits the
per-attempt scheduling events of a Swift 0.96 run on one site, in Swift's order::

    JOB_SITE_SELECT jobid=J
    THREAD_ASSOCIATION jobid=J thread=T host=local replicationGroup=null
    JOB_START jobid=J tr=TR arguments=[a, b] tmpdir=SCRIPT-RUNID/jobs/X/J host=local
    JOB_TASK jobid=J taskid=urn:... exec=... dir=... args=...
    TASK_STATUS_CHANGE taskid=urn:... status=8 / 1 / 2 / 7 (or 5 + message)

The multi-site scheduler (sites, scores, replication) replaces it behind the same
interface, and both run an attempt through the one path of attempt.py (the provider
prepares the job, it is announced, the submit throttles are held, the provider executes
it, the attempt finishes).  One ``submit`` is one attempt: the engine counts attempts
(``executionRetries``) and sets ``Task.attempt``.

Its throttles are live, with the scheduler's contract (``set_throttle``, ``throttles()``,
``state()``, ``providers()``: :class:`~swiftnb.scheduling.throttles.ThrottleControl`), so
the notebook's sliders steer the default local site too: ``maxParallelTasks`` (jobs
held at once, from the slot to the end), ``hostJobSubmitThrottle`` and
``jobSubmitThrottle`` (held while SUBMITTING, as the scheduler holds them),
``fileTransfersThrottle`` and ``fileOperationsThrottle``.  Each change is a ``THROTTLE``
event, and a change of the site's limit a ``THROTTLE name=parallelTasks`` one, as on the
scheduler.  The site has no score to keep: it is always the one chosen and holds
``maxParallelTasks`` jobs from the start, which is the scheduler's site whose
initialParallelTasks equals maxParallelTasks (a saturated score, tscore T = 100);
``state()`` reports it so.
"""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus
from swiftnb.scheduling.apps import AppCatalogue
from swiftnb.scheduling.attempt import Attempt, RunThrottles, TaskIds
from swiftnb.scheduling.provider import Provider
from swiftnb.scheduling.errors import SchedulerError
from swiftnb.scheduling.sites import SATURATED, tscore
from swiftnb.scheduling.throttles import (Throttle, ThrottleControl, parse_throttle,
                                          shown_limit, throttle_name)
from swiftnb.scheduling.waiting import SiteWaits

__all__ = ["SingleSiteExecutor", "DryRunExecutor"]


class SingleSiteExecutor(ThrottleControl):
    """Executor over a single provider with live throttles (maxParallelTasks and the
    submission and file throttles)."""

    def __init__(
        self,
        provider: Provider,
        bus: EventBus,
        max_parallel: int = 2,
        *,
        job_submit: float | str | None = 4,
        host_job_submit: float | str | None = 2,
        file_transfers: float | str | None = 4,
        file_operations: float | str | None = 8,
        apps: AppCatalogue | None = None,
    ) -> None:
        """``apps`` holds the site's app definitions: an app it does not list is not
        available (default: any app runs the program of its name, Swift's
        ``app.ALL { executable: "*" }``)."""
        self.provider = provider
        self.name = provider.name
        self.apps = apps
        self.bus = bus
        #: jobs the site holds at once (the site's parallel-task limit, maxParallelTasks)
        self.parallel = Throttle("maxParallelTasks", max(1, int(max_parallel)), host=self.name)
        self.job_submit = Throttle("jobSubmitThrottle", parse_throttle(job_submit))
        self.host_submit = Throttle("hostJobSubmitThrottle", parse_throttle(host_job_submit),
                                    host=self.name)
        self.file_transfers = Throttle("fileTransfersThrottle", parse_throttle(file_transfers))
        self.file_operations = Throttle("fileOperationsThrottle",
                                        parse_throttle(file_operations))
        self.counts = {"completed": 0, "failed": 0, "canceled": 0}
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self.run_throttles = RunThrottles(self.job_submit, self.file_transfers,
                                          self.file_operations)
        self.task_ids = TaskIds(time.time())
        self.closed = False
        #: says (WAITING) when calls queue behind maxParallelTasks
        self.waits = SiteWaits(bus)

    async def _ensure_started(self) -> None:
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if not self._started:
                await self.provider.start()
                self._started = True

    def _stopped(self) -> TaskResult:
        """A call the stopped run will not start: canceled, as Swift's status 6."""
        return TaskResult(ok=False, message="Canceled: the run was stopped",
                          site=self.name, failure=FailureKind.CANCELED)

    async def submit(self, task: Task) -> TaskResult:
        """Run one attempt of a task on the provider; returns when it has ended."""
        if self.closed:  # the run stopped before this call reached the site
            return self._stopped()
        self.bus.emit("JOB_SITE_SELECT", {"jobid": task.jobid})
        if self.apps is not None:
            missing = self.apps.missing(self.name, task)
            if missing is not None:  # the site must have every app of the job
                return TaskResult(
                    ok=False, failure=FailureKind.NOT_EXECUTABLE,
                    message=f'The application "{missing}" is not available on any of the sites')
            task = self.apps.resolve(self.name, task)
        if not self._started:
            await self._ensure_started()
        if not self.parallel.try_acquire():
            self.waits.full(self.name, self.parallel.limit)
            turn = self.parallel.queue()  # awaited here: no coroutine per waiting call
            try:
                await turn
            except asyncio.CancelledError:
                self.parallel.withdraw(turn)
                raise
        try:
            if self.closed:  # the run stopped while this call waited for a slot
                return self._stopped()
            attempt = Attempt(self.bus, self.name, self.task_ids.next(), self.host_submit,
                              self.run_throttles)
            job = self.provider.prepare(task)
            attempt.announce(job)
            try:
                await attempt.hold_submit()
                result = await attempt.execute(self.provider, job)
            except asyncio.CancelledError:  # the run was stopped: status 6 on the log
                attempt.finish(TaskResult.cancel(self.name))
                raise
            attempt.finish(result)
        finally:
            self.parallel.release()
            if not self.parallel.waiting:
                self.waits.clear(self.name)
        self._count(result)
        return result

    def capacity(self) -> float:
        """maxParallelTasks, as it is now (the engine's call gate reads it)."""
        return self.parallel.limit

    def app_executable(self, tr: str) -> str | None:
        """The program the site runs for app ``tr`` (its name where no app definitions
        were given), for memoization's app fingerprint; None when the site lacks it."""
        return self.apps.executable(self.name, tr) if self.apps is not None else tr

    def _count(self, result: TaskResult) -> None:
        if result.ok:
            self.counts["completed"] += 1
        elif result.canceled:
            self.counts["canceled"] += 1
        else:
            self.counts["failed"] += 1

    # ------------------------------------------------------------ live throttles
    def set_throttle(self, name: str, value: object, site: str | None = None) -> None:
        """Change a throttle while the run goes (the notebook's sliders call this).

        Raising a limit lets waiting jobs in at once; lowering one never preempts.  The
        names are the scheduler's; those about choosing among sites or growing a score
        (initialParallelTasks, delayBase, maxSubmitRate, replication*) are refused, since
        this executor has one site and no score.
        """
        try:
            name = throttle_name(name)
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        if site is not None and site != self.name:
            raise SchedulerError(f"unknown site {site!r}; this run has one site, {self.name!r}")
        throttle = {"jobSubmitThrottle": self.job_submit,
                    "hostJobSubmitThrottle": self.host_submit,
                    "fileTransfersThrottle": self.file_transfers,
                    "fileOperationsThrottle": self.file_operations,
                    "maxParallelTasks": self.parallel}.get(name)
        if throttle is None:
            raise SchedulerError(
                f"{name} has no effect on a run whose only site is {self.name!r} (it has no "
                "score and no other site; its limit is maxParallelTasks from the start): "
                "change maxParallelTasks, or set it in the configuration of a run with "
                "several sites")
        try:
            new = self._limit_value(name, value)
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        old = throttle.limit
        throttle.set_limit(new)
        self.bus.emit("THROTTLE", {"name": name, "host": throttle.host,
                                   "old": shown_limit(old), "new": shown_limit(new)})
        if name == "maxParallelTasks" and old != new:
            self.bus.emit("THROTTLE", {"name": "parallelTasks", "host": self.name,
                                       "old": shown_limit(old), "new": shown_limit(new)})

    @staticmethod
    def _limit_value(name: str, value: object) -> float:
        limit = parse_throttle(value, name)
        if name == "maxParallelTasks":
            if limit == float("inf"):
                raise ValueError(f'maxParallelTasks: expected a whole number, got {value!r}')
            return float(int(limit))
        return limit

    def throttles(self) -> dict[str, Any]:
        """Current throttle values, in the scheduler's shape (one site)."""
        return {
            "jobSubmitThrottle": shown_limit(self.job_submit.limit),
            "fileTransfersThrottle": shown_limit(self.file_transfers.limit),
            "fileOperationsThrottle": shown_limit(self.file_operations.limit),
            "sites": {self.name: {
                "hostJobSubmitThrottle": shown_limit(self.host_submit.limit),
                "maxParallelTasks": shown_limit(self.parallel.limit),
                "parallelTasks": shown_limit(self.parallel.limit),
            }},
        }

    def state(self) -> dict[str, Any]:
        """A snapshot in the scheduler's shape: the one site, always chosen, holding up to
        maxParallelTasks jobs, is a saturated site (score effectively infinite, tscore
        T = 100), as the scheduler's site with initialParallelTasks == maxParallelTasks."""
        limit = shown_limit(self.parallel.limit)
        return {
            "policy": "single site",
            "waiting": self.parallel.waiting,
            "sites": [{"site": self.name, "score": SATURATED, "tscore": round(tscore(SATURATED), 3),
                       "load": self.parallel.used, "limit": limit, "debt": 0.0,
                       **self.counts}],
        }

    def providers(self) -> list[Provider]:
        return [self.provider]

    async def close(self) -> None:
        """Shut the provider down (kills what still runs, removes site dirs)."""
        if self.closed:
            return
        self.closed = True
        await self.provider.shutdown()



class DryRunExecutor:
    """``-dryrun``: the script runs, apps do not (Guide 4.1: "without submitting any jobs").

    Each call is reported as selected and completed at once, without a process or files,
    so a dry run still shows the call graph (``-pgraph``) and the log's job lines.
    """

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.submitted = 0

    async def submit(self, task: Task) -> TaskResult:
        self.submitted += 1
        self.bus.emit("JOB_SITE_SELECT", {"jobid": task.jobid})
        return TaskResult(ok=True, exit_code=0, site="dryrun")

    def capacity(self) -> float:
        """Any number: a dry-run call never waits."""
        return math.inf

    def app_executable(self, tr: str) -> str | None:
        """None: a dry run has no site, so no app has a program (nothing is memoized)."""
        return None

    async def close(self) -> None:
        return None
