"""A site as the scheduler sees it: its provider, its score, its load and its limits.

The score arithmetic is Swift/K 0.96's ``WeightedHost`` (reference section 6.1):

* ``tscore = exp(B * atan(C * score))`` with ``T = 100``, ``B = 2 ln(T) / pi``, ``C = 0.2``,
  so the transformed score lies in (1/T, T) and score 0 gives tscore 1;
* ``maxLoad = jobThrottle * tscore + 1`` concurrent jobs, ``jobThrottle =
  (maxParallelTasks - 1) / T``, and the initial score is chosen so that ``maxLoad`` starts
  at ``initialParallelTasks``: ``score0 = tan(ln(T (initial - 1) / (max - 1)) / B) / C``;
* scores never fall below ``MINWEIGHT = -10``; a site with a negative score is in "delay
  mode": it may be used again only ``0.1 s * delayBase ** -score`` after its last use.

Not in 0.96: a *saturated* site (``initialParallelTasks == maxParallelTasks``, whose score
is effectively infinite) also keeps a failure ``debt``: each job that ends moves it by
the net change the job would have made to a 0.96 score that starts at 0 and cannot rise
above it (+0.6 per failure, +10 more refused, +20 more timed out, -0.2 per success),
within [0, -MINWEIGHT].  The debt puts the site in delay mode like a negative score
would, so a failing saturated site loses its share (docs/scheduling.md, "Differences
from Swift/K 0.96").

A site runs at most ``limit`` jobs at once: the number of loads ``n`` with ``n < maxLoad``,
capped by ``maxParallelTasks``.  That limit is the per-site parallel-task throttle; it
grows from initialParallelTasks towards maxParallelTasks as the score rises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from swiftnb.scheduling.provider import Provider
from swiftnb.scheduling.throttles import Throttle

__all__ = [
    "T", "B", "C", "MINWEIGHT", "SATURATED", "Site", "ScoreFactors", "tscore", "initial_score",
    "job_throttle_for",
]

T = 100.0
B = 2.0 * math.log(T) / math.pi
C = 0.2
MINWEIGHT = -10.0
#: the score of a site whose initialParallelTasks equals maxParallelTasks (tscore -> T)
SATURATED = 1e9
#: Swift's siteScoreThrottlingFactor: jobThrottle of a site without maxParallelTasks
DEFAULT_JOB_THROTTLE = 0.2


def tscore(score: float) -> float:
    """Swift's transformed score, in (1/T, T)."""
    return math.exp(B * math.atan(C * score))


def job_throttle_for(max_parallel_tasks: float) -> float:
    return (max_parallel_tasks - 1.0) / T


def initial_score(initial_parallel_tasks: float, max_parallel_tasks: float) -> float:
    """The score at which maxLoad equals initialParallelTasks (Swift's convertThrottleSettings).

    ``initial == max`` gives an effectively infinite score (tscore -> T); ``initial == 1``
    (tscore 0, which no finite score reaches) is taken as score 0, the score of a fresh site.
    """
    if max_parallel_tasks < 1 or initial_parallel_tasks < 1:
        raise ValueError("parallel task limits must be at least 1")
    if initial_parallel_tasks > max_parallel_tasks:
        raise ValueError(
            f"initialParallelTasks ({initial_parallel_tasks:g}) is greater than "
            f"maxParallelTasks ({max_parallel_tasks:g})"
        )
    if max_parallel_tasks == 1:
        return 0.0
    t0 = T * (initial_parallel_tasks - 1.0) / (max_parallel_tasks - 1.0)
    if t0 <= 1.0 / T:
        return 0.0
    angle = math.log(t0) / B
    if angle >= math.pi / 2 - 1e-12:
        return SATURATED  # initial == max: the ceiling is reached at once
    return math.tan(angle) / C


@dataclass(slots=True)
class ScoreFactors:
    """Swift's score deltas (reference 6.1); changeable per run."""

    job_submission: float = 0.2      # jobSubmissionTaskLoadFactor, taken at submit, returned on success
    success: float = 0.1             # successFactor, on success and again on release (delayedDelta)
    failure: float = 0.5             # failureFactor
    connection_refused: float = 10.0
    timeout: float = 20.0
    max_submission_time: float = 20.0  # seconds at which the submission delta reaches -successFactor
    base_submission_time: float = 0.1

    @property
    def job_success(self) -> float:
        """The net score change of a completed job: the load factor taken at selection
        comes back, plus successFactor on completion and again on release (delayedDelta)."""
        return 2.0 * self.success

    @property
    def job_failure(self) -> float:
        """The net score change of a failed job (before the refused/timeout extras): the
        load factor is kept, failureFactor taken, delayedDelta given on release."""
        return -self.job_submission - self.failure + self.success

    def submission_delta(self, seconds: float) -> float:
        factor = -self.success / (self.max_submission_time - self.base_submission_time)
        bias = -self.base_submission_time * factor
        return bias + factor * seconds


def backoff(seconds: float, base: float, exponent: float) -> float:
    """``seconds * base ** exponent``, infinite where the power leaves the floats (a site
    that failed a thousand times in a row waits for ever, it does not crash the run)."""
    try:
        delay: float = seconds * base ** exponent
        return delay
    except OverflowError:
        return math.inf


@dataclass(eq=False)
class Site:
    """One site: provider, Swift score state, live counters, and attributes for policies.

    ``attributes`` carries what the brokerage filters look at (maxTime, cores, memory,
    arch, gpu, status), taken from the site's execution options.  ``apps`` is the set of
    app names the site can run (None: any).
    """

    name: str
    provider: Provider
    max_parallel_tasks: float | None = 2
    initial_parallel_tasks: float | None = 2
    delay_base: float = 2.0
    apps: frozenset[str] | None = None
    attributes: dict[str, Any] = field(default_factory=dict)

    score: float = 0.0
    job_throttle: float = DEFAULT_JOB_THROTTLE
    load: int = 0
    last_used: float = -math.inf
    limit_override: int | None = None
    started: bool = False
    # live counters (what the dashboard and the brokerage look at)
    assigned: int = 0      # selected, not yet past submission
    queued: int = 0        # submitted, not yet active
    running: int = 0       # active
    completed: int = 0
    failed: int = 0
    canceled: int = 0
    consecutive_failures: int = 0
    #: a saturated site's failure debt (module docstring); always 0 for other sites
    debt: float = 0.0
    submit_throttle: Throttle | None = None
    #: maxSubmitRate: at most this many submissions per second (None: no limit)
    max_submit_rate: float | None = None
    next_submit_at: float = -math.inf
    #: jobs this site may hold at once now (the per-site parallel-task throttle); kept
    #: up to date by configure() / refresh_limit() after every score change
    limit: int = 0

    def __post_init__(self) -> None:
        self.configure(self.max_parallel_tasks, self.initial_parallel_tasks, reset_score=True)

    # -- limits ----------------------------------------------------------------------
    def configure(
        self, max_parallel: float | None, initial_parallel: float | None, *, reset_score: bool
    ) -> None:
        """Apply maxParallelTasks / initialParallelTasks (Swift's convertThrottleSettings)."""
        self.max_parallel_tasks = max_parallel
        self.initial_parallel_tasks = initial_parallel
        if reset_score:
            self.debt = 0.0
        if max_parallel is None:
            self.job_throttle = DEFAULT_JOB_THROTTLE
            if reset_score:
                self.score = 0.0
        else:
            self.job_throttle = job_throttle_for(max_parallel)
            if reset_score:
                init = max_parallel if initial_parallel is None else min(initial_parallel, max_parallel)
                self.score = initial_score(init, max_parallel)
        self.limit = self.compute_limit()

    @property
    def tscore(self) -> float:
        return tscore(self.score)

    @property
    def max_load(self) -> float:
        return self.job_throttle * tscore(self.score) + 1.0

    def compute_limit(self) -> int:
        if self.limit_override is not None:
            return self.limit_override
        n = max(1, math.ceil(self.max_load - 1e-9))
        if self.max_parallel_tasks is not None:
            n = min(n, int(self.max_parallel_tasks))
        return n

    def refresh_limit(self) -> tuple[int, int]:
        """Recompute the limit after a score change; returns (old, new)."""
        old = self.limit
        self.limit = self.compute_limit()
        return old, self.limit

    @property
    def full(self) -> bool:
        return self.load >= self.limit

    # -- delay mode ------------------------------------------------------------------
    @property
    def saturated(self) -> bool:
        """Whether the score is the effectively infinite one of initial == max."""
        return self.score >= SATURATED / 2

    def charge(self, job_delta: float) -> None:
        """Move a saturated site's debt by a job's net score change (``job_delta``)."""
        if self.saturated:
            self.debt = min(-MINWEIGHT, max(0.0, self.debt - job_delta))
        else:
            self.debt = 0.0

    @property
    def effective_score(self) -> float:
        """The score, or for a saturated site in debt the negative score it stands for."""
        return -self.debt if self.debt > 0 else self.score

    def delay_exponent(self, with_debt: bool = True) -> float:
        """How deep in delay mode the site is: -score (0.96), or its debt if larger."""
        return max(-self.score, self.debt if with_debt else 0.0)

    def permitted_at(self, with_debt: bool = True) -> float:
        """When a site in delay mode (score < 0, or in debt) may be used again.

        ``with_debt=False``: the debt is left out (the site is the only one for the job,
        so delaying it would shift no share anywhere).
        """
        exponent = self.delay_exponent(with_debt)
        if exponent <= 0:
            return -math.inf
        return self.last_used + backoff(0.1, self.delay_base, exponent)

    def weight(self, now: float) -> float:
        """Swift's getTScore for weighting: tscore if >= 1, else 1 when usable, 0 when not."""
        ts = tscore(self.score)
        if ts >= 1.0:
            return ts
        return 1.0 if now >= self.permitted_at() and not self.full else 0.0

    def snapshot(self) -> dict[str, Any]:
        return {
            "site": self.name, "score": round(self.score, 3), "tscore": round(self.tscore, 3),
            "load": self.load, "limit": self.limit, "assigned": self.assigned,
            "queued": self.queued, "running": self.running, "completed": self.completed,
            "failed": self.failed, "canceled": self.canceled, "debt": round(self.debt, 3),
        }
