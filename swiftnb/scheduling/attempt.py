"""One attempt of a job on one site: the path every executor's ``submit`` takes.

Why one path: the single local site, the multi-site scheduler and its clusters of short
jobs all run an attempt alike, and Swift's log shows it alike, so the events, the task
ids and the submission throttles are written here once.  The steps are the provider
contract's (provider.py):

1. prepare: the executor asks ``Provider.prepare`` for the attempt's Job;
2. :meth:`Attempt.announce` it: ``THREAD_ASSOCIATION``, ``REPLICA_START`` for a
   replica, ``JOB_START``, ``JOB_TASK``;
3. :meth:`Attempt.hold_submit`: hostJobSubmitThrottle, then jobSubmitThrottle, held from
   SUBMITTING (status 8) to the provider's next status (or the attempt's end);
4. :meth:`Attempt.execute` (or :meth:`Attempt.execute_cluster`): SUBMITTING, then the
   provider runs the job; a site that refuses it (ProviderError) or a provider's bug end
   it as a result of their kind, not an exception;
5. :meth:`Attempt.finish`: the last status where the provider did not report it, the
   throttles given back.

An executor that keeps more (the scheduler's site scores and phases) extends
:meth:`Attempt.progressed` and :meth:`Attempt.ended`.
"""

from __future__ import annotations

import itertools
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from swiftnb.engine.task import FailureKind, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.scheduling.provider import Job, Provider, ProviderError, StatusReporter
from swiftnb.scheduling.throttles import Throttle

__all__ = ["Attempt", "RunThrottles", "TaskIds"]

_SUBMITTING = int(TaskStatus.SUBMITTING)
_COMPLETED = int(TaskStatus.COMPLETED)
_FAILED = int(TaskStatus.FAILED)
_CANCELED = int(TaskStatus.CANCELED)
_TERMINAL = frozenset({_COMPLETED, _FAILED, _CANCELED})


@dataclass(frozen=True, slots=True)
class RunThrottles:
    """The run-wide throttles every attempt of an executor shares (each site adds its own
    hostJobSubmitThrottle)."""

    job_submit: Throttle
    file_transfers: Throttle
    file_operations: Throttle


class TaskIds:
    """Swift's task ids, ``urn:R-N-EPOCHMS``: N counts the executor's attempts, EPOCHMS is
    when it was made (on its clock: virtual time on simulated sites)."""

    def __init__(self, epoch: float) -> None:
        self._numbers = itertools.count(1)
        self._epoch_ms = int(epoch * 1000)

    def next(self) -> str:
        return f"urn:R-{next(self._numbers)}-{self._epoch_ms}"


class Attempt(StatusReporter):
    """One attempt on one site (one job, or one cluster of jobs under one task id); the
    StatusReporter its provider reports to."""

    __slots__ = ("bus", "host", "taskid", "host_submit", "throttles", "code", "holds_submit",
                 "finished")

    def __init__(self, bus: EventBus, host: str, taskid: str, host_submit: Throttle,
                 throttles: RunThrottles) -> None:
        self.bus = bus
        self.host = host  # the site's name
        self.taskid = taskid
        self.host_submit = host_submit
        self.throttles = throttles
        self.code = -1                   # the last status reported
        self.holds_submit = False
        self.finished = False

    # -- what providers see -----------------------------------------------------------
    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        code = int(status)
        if self.finished or code == self.code:
            return
        payload: dict[str, object] = {"taskid": self.taskid, "status": code}
        if workerid is not None:
            payload["workerid"] = workerid
        if message is not None and code == _FAILED:
            payload["message"] = message
        prev = self.code
        self.code = code
        self.bus.emit("TASK_STATUS_CHANGE", payload)
        if code in _TERMINAL or code == _SUBMITTING:
            return  # the end's bookkeeping happens in finish
        self.release_submit()
        self.progressed(prev, code)

    def file_transfer(self) -> AbstractAsyncContextManager[None]:
        return self.throttles.file_transfers.slot()

    def file_operation(self) -> AbstractAsyncContextManager[None]:
        return self.throttles.file_operations.slot()

    # -- the steps ----------------------------------------------------------------------
    def announce(self, job: Job, *, group: str | None = None, replica: bool = False) -> None:
        """Step 2: the job's THREAD_ASSOCIATION (``group``: its replication group),
        REPLICA_START (a replica), JOB_START and JOB_TASK, as Swift logged them."""
        emit = self.bus.emit
        task = job.task
        jobid = task.jobid
        emit("THREAD_ASSOCIATION", {"jobid": jobid, "thread": task.thread or "R",
                                    "host": self.host, "replicationGroup": group})
        if replica:
            emit("REPLICA_START", {"jobid": jobid, "taskid": self.taskid, "host": self.host})
        args = [str(a) for a in task.args]
        emit("JOB_START", {"jobid": jobid, "tr": task.tr,
                           "arguments": task.log_arguments() if task.more_commands else args,
                           "tmpdir": job.dir, "host": self.host})
        emit("JOB_TASK", {"jobid": jobid, "taskid": self.taskid,
                          "exec": task.executable or task.tr, "dir": job.dir,
                          "args": " ".join(args)})

    async def hold_submit(self) -> None:
        """Step 3: take the site's submit throttle, then the run's (given back at the
        provider's first status after SUBMITTING, or at the end)."""
        if not self.host_submit.try_acquire():  # free slots are taken without a wait
            await self.host_submit.acquire()
        job_submit = self.throttles.job_submit
        if not job_submit.try_acquire():
            try:
                await job_submit.acquire()
            except BaseException:
                self.host_submit.release()
                raise
        self.holds_submit = True

    def release_submit(self) -> None:
        if self.holds_submit:
            self.holds_submit = False
            self.host_submit.release()
            self.throttles.job_submit.release()

    def submitting(self) -> None:
        """The job goes to the provider now (status 8)."""
        self.status(_SUBMITTING)

    async def execute(self, provider: Provider, job: Job) -> TaskResult:
        """Step 4: SUBMITTING, then ``provider`` runs ``job``; how it ended, as a result."""
        self.submitting()
        try:
            result = await provider.execute(job, self)
        except ProviderError as exc:  # the site could not take it (unreachable, refused...)
            result = self._refused(exc)
        except Exception as exc:  # a provider's bug: its type named, the run goes on
            result = TaskResult(ok=False, failure=FailureKind.WORKER,
                                message=f"site {self.host}: {type(exc).__name__}: {exc}")
        if not result.site:
            result.site = self.host
        return result

    async def execute_cluster(self, provider: Provider, jobs: list[Job]) -> list[TaskResult]:
        """Step 4 for a cluster: one submission; the provider runs the jobs as one where it
        can (``runs_clusters``), else one after the other, each member's statuses but its
        end standing for the cluster's."""
        self.submitting()
        try:
            if provider.runs_clusters:
                results = list(await provider.execute_cluster(jobs, self))
            else:
                results = [await self._member(provider, job) for job in jobs]
        except ProviderError as exc:
            results = [self._refused(exc) for _ in jobs]
        for result in results:
            if not result.site:
                result.site = self.host
        return results

    async def _member(self, provider: Provider, job: Job) -> TaskResult:
        try:
            return await provider.execute(job, _MemberReport(self))
        except Exception as exc:
            return TaskResult(ok=False, message=f"{type(exc).__name__}: {exc}",
                              failure=FailureKind.WORKER)

    def _refused(self, exc: ProviderError) -> TaskResult:
        text = str(exc)
        return TaskResult(ok=False, failure=exc.kind, message=(
            text if self.host in text else f"site {self.host}: {text}"))

    def finish(self, result: TaskResult) -> None:
        """Step 5: the attempt ended with ``result`` (once; later calls do nothing)."""
        if self.finished:
            return
        self.release_submit()
        if result.canceled:
            if self.code != _CANCELED:
                self.status(_CANCELED)
        elif result.ok:
            if self.code != _COMPLETED:
                self.status(_COMPLETED)
        elif self.code != _FAILED:
            self.status(_FAILED, message=result.message or "failed")
        self.finished = True
        self.ended(result)

    # -- what an executor that keeps more extends ----------------------------------------
    def progressed(self, prev: int, status: int) -> None:
        """The provider reported ``status`` (neither SUBMITTING nor an end) after
        ``prev``; the submission throttles are already given back."""

    def ended(self, result: TaskResult) -> None:
        """The attempt ended with ``result``; its last status is on the stream."""


class _MemberReport(StatusReporter):
    """Forwards a cluster member's statuses to the cluster's attempt, except its end."""

    __slots__ = ("attempt",)

    def __init__(self, attempt: Attempt) -> None:
        self.attempt = attempt

    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        if int(status) not in _TERMINAL:
            self.attempt.status(status, message=message, workerid=workerid)

    def file_transfer(self) -> AbstractAsyncContextManager[None]:
        return self.attempt.file_transfer()

    def file_operation(self) -> AbstractAsyncContextManager[None]:
        return self.attempt.file_operation()
