"""The site-selection policy interface, and the context a policy sees.

A policy answers one question: of the sites that could take this job right now, which
one?  The scheduler has already removed the sites that lack the app, that are at their
parallel-task limit, or that the job must avoid (sites already holding a replica).  The
policy may refuse (return None): the job then waits in the scheduler's queue and is
offered again whenever something changes (a job ends, a throttle changes, or the time
the policy asked to be woken at, through :meth:`Policy.next_wakeup`, arrives).

Policies also hear what happens to the jobs they placed (hooks below), so they can keep
their own state: site sets, bans, brokerage counters.  Scores (Swift's credit scores) are
kept by the scheduler for every policy, since they also drive the per-site limit.

Writing your own::

    from swiftnb.scheduling.policy import Policy

    class Cheapest(Policy):
        name = "cheapest"
        def select(self, task, sites):
            return min(sites, key=lambda s: s.attributes.get("cost", 0))

    Scheduler(sites, bus, policy=Cheapest())
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swiftnb.engine.task import Task
    from swiftnb.scheduling.clock import Clock
    from swiftnb.scheduling.sites import ScoreFactors, Site

__all__ = ["Policy", "PolicyContext", "QueueStats"]


@dataclass
class QueueStats:
    """Observed queue times (SUBMITTED -> ACTIVE), for thresholds that adapt."""

    initial_mean: float = 30.0
    count: int = 0
    total: float = 0.0

    def add(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds

    @property
    def mean(self) -> float:
        return self.total / self.count if self.count else self.initial_mean


@dataclass
class PolicyContext:
    """What the scheduler shares with its policy."""

    clock: Clock
    rng: random.Random
    emit: Callable[..., Any]
    sites: Sequence[Site]
    factors: ScoreFactors
    queue_stats: QueueStats = field(default_factory=QueueStats)
    replication_enabled: bool = False
    #: the scheduler's "something changed, offer waiting jobs again" (e.g. after a revival)
    wake: Callable[[], None] = lambda: None
    #: change a site's score through the scheduler (clamped, limits and events follow)
    adjust_score: Callable[[Site, float], None] = lambda site, delta: None
    set_score: Callable[[Site, float], None] = lambda site, value: None
    #: the sites whose catalogue has every app of a task, whatever their load
    app_sites: Callable[[Task], Sequence[Site]] = lambda task: ()


class Policy:
    """Base class: every hook is optional; only :meth:`select` must be written."""

    name = "policy"
    ctx: PolicyContext

    def bind(self, ctx: PolicyContext) -> None:
        """Called once by the scheduler before the first job."""
        self.ctx = ctx

    def select(self, task: Task, sites: Sequence[Site]) -> Site | None:
        """Choose one of ``sites`` (never empty), or None to keep the job waiting."""
        raise NotImplementedError

    def task_key(self, task: Task) -> Hashable:
        """Jobs with equal keys are interchangeable for :meth:`select` (same answer).

        The scheduler uses it to skip the rest of a queue of identical jobs once one of
        them could not be placed.  Policies that look at job requirements include them.
        """
        return None

    def check(self, task: Task, sites: Sequence[Site]) -> str | None:
        """A message if ``task`` can never run on any of ``sites`` (it then fails at once)."""
        return None

    def next_wakeup(self) -> float | None:
        """A clock time at which a refused job may become placeable, if any."""
        return None

    # -- hooks -------------------------------------------------------------------------
    def on_selected(self, site: Site, task: Task) -> None:
        """The job was allocated to ``site`` (its load already counts it)."""

    def on_active(self, site: Site, task: Task, queue_time: float) -> None:
        """The job became ACTIVE after ``queue_time`` seconds in the site's queue."""

    def on_finished(
        self, site: Site, task: Task, ok: bool, message: str, queue_time: float | None
    ) -> None:
        """The job ended on ``site`` (not called for cancelled replicas)."""

    def on_replica_active(
        self, winner: Site, winner_queue_time: float, losers: list[tuple[Site, float]]
    ) -> None:
        """A replica became active on ``winner``; ``losers`` (site, time queued) are cancelled."""

    def on_score_changed(self, site: Site, old: float, new: float) -> None:
        """The scheduler changed a site's score."""

    def state(self) -> dict[str, Any]:
        """A snapshot for panels (site sets, bans...)."""
        return {}
