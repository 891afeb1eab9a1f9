"""One attempt of the multi-site scheduler: the attempt path of attempt.py with the
scheduler's bookkeeping, and the replicas of a replicated job.

Why apart from the scheduler: what an attempt changes as its statuses arrive (its site's
phase counters and score, the policy's view, the replication watch) is one concept;
choosing sites and queueing jobs for them is another.  An attempt reaches its scheduler
only through the scheduler's public hooks (``adjust_score``, ``attempt_queued``,
``attempt_active``, ``attempt_dequeued``).
"""

from __future__ import annotations

import asyncio
import enum
from typing import TYPE_CHECKING, Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import TaskStatus
from swiftnb.scheduling.attempt import Attempt
from swiftnb.scheduling.clock import TimerHandle
from swiftnb.scheduling.sites import Site

if TYPE_CHECKING:  # the scheduler imports this module
    from swiftnb.scheduling.scheduler import Scheduler

__all__ = ["SiteAttempt", "Phase", "Replica", "ReplicaGroup"]

_SUBMITTING = int(TaskStatus.SUBMITTING)
_SUBMITTED = int(TaskStatus.SUBMITTED)
_ACTIVE = int(TaskStatus.ACTIVE)
_STAGE_IN = int(TaskStatus.STAGE_IN)
#: failures Swift punished as "Connection refused" (-10 on top of the failure factor)
_REFUSED = (FailureKind.CONNECTION_LOST, FailureKind.SUBMIT_REFUSED)


class Phase(enum.Enum):
    """Where an attempt is on its site, which of the site's counters it is in: selected
    (``assigned``), submitted and waiting (``queued``), active (``running``), ended."""

    ASSIGNED = "assigned"
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class ReplicaGroup:
    """The replicas of one job (replication on)."""

    __slots__ = ("task", "refs", "future", "winner", "replicas", "id")

    def __init__(self, task: Task, gid: str, future: asyncio.Future[TaskResult]) -> None:
        self.task = task
        self.id = gid
        self.refs: list[Replica] = []
        self.future = future
        self.winner: SiteAttempt | None = None
        self.replicas = 0


class Replica:
    """One running copy of a replicated job: its asyncio task and, once placed, attempt."""

    __slots__ = ("atask", "att", "loser", "replica", "group")

    def __init__(self, replica: bool, group: ReplicaGroup) -> None:
        self.group = group
        self.atask: asyncio.Task[Any] | None = None
        self.att: SiteAttempt | None = None
        self.loser = False
        self.replica = replica


class SiteAttempt(Attempt):
    """One attempt on one site with the scheduler's bookkeeping: the site's phase counters
    (assigned, queued, running), its score (submission time, success, failure), the
    policy told, replication and the walltime kill."""

    __slots__ = ("s", "site", "task", "ref", "phase", "submitted_at", "active_at",
                 "t_submitting", "kill_reason", "walltime_timer")

    def __init__(self, sched: Scheduler, site: Site, task: Task, taskid: str,
                 ref: Replica | None) -> None:
        submit = site.submit_throttle
        assert submit is not None  # the scheduler gives every site one
        super().__init__(sched.bus, site.name, taskid, submit, sched.run_throttles)
        self.s = sched
        self.site = site
        self.task = task
        self.ref = ref
        self.phase = Phase.ASSIGNED
        self.submitted_at: float | None = None
        self.active_at: float | None = None
        self.t_submitting: float | None = None
        self.kill_reason: str | None = None
        self.walltime_timer: TimerHandle | None = None

    def submitting(self) -> None:
        self.t_submitting = self.s.clock.now()
        super().submitting()

    def progressed(self, prev: int, status: int) -> None:
        s = self.s
        now = s.clock.now()
        if prev == _SUBMITTING and self.t_submitting is not None:
            s.adjust_score(self.site, s.factors.submission_delta(now - self.t_submitting))
        if status == _SUBMITTED and self.phase is Phase.ASSIGNED:
            self._to_phase(Phase.QUEUED)
            self.submitted_at = now
            s.attempt_queued(self)
        elif status in (_ACTIVE, _STAGE_IN) and self.phase in (Phase.ASSIGNED, Phase.QUEUED):
            if self.submitted_at is None:
                self.submitted_at = now
            self._to_phase(Phase.RUNNING)
            self.active_at = now
            qt = now - self.submitted_at
            s.queue_stats.add(qt)
            s.policy.on_active(self.site, self.task, qt)
            s.attempt_active(self)

    def _to_phase(self, phase: Phase) -> None:
        site = self.site
        old = self.phase
        if old is Phase.ASSIGNED:
            site.assigned -= 1
        elif old is Phase.QUEUED:
            site.queued -= 1
            self.s.attempt_dequeued(self)
        elif old is Phase.RUNNING:
            site.running -= 1
        if phase is Phase.QUEUED:
            site.queued += 1
        elif phase is Phase.RUNNING:
            site.running += 1
        self.phase = phase

    def queue_time(self) -> float | None:
        if self.submitted_at is None:
            return None
        end = self.active_at if self.active_at is not None else self.s.clock.now()
        return end - self.submitted_at

    def ended(self, result: TaskResult) -> None:
        s = self.s
        site = self.site
        if self.walltime_timer is not None:
            self.walltime_timer.cancel()
        self._to_phase(Phase.DONE)
        if result.canceled:
            site.canceled += 1
            return
        f = s.factors
        if result.ok:
            site.completed += 1
            site.consecutive_failures = 0
            site.charge(f.job_success)
            s.adjust_score(site, f.job_submission + f.success)
        else:
            site.failed += 1
            site.consecutive_failures += 1
            extra = 0.0
            if result.failure in _REFUSED:
                extra = f.connection_refused
            elif result.failure is FailureKind.TIMEOUT:
                extra = f.timeout
            site.charge(f.job_failure - extra)
            s.adjust_score(site, -f.failure - extra)
        s.policy.on_finished(site, self.task, result.ok, result.message, self.queue_time())
