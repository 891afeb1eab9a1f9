"""The four built-in site-selection policies, and the registry that names them.

* ``random`` (alias ``weighted``, the default) — Swift/K's credit scores (seed 000 section
  0.8, reference 6.1): probability proportional to the transformed score; a site whose
  score went negative is banned for ``0.1 s * delayBase ** -score`` after each use.
* ``best`` — the same scores and bans, but always the highest score (seed 001,
  "best scores selection").
* ``sitesets`` — seed 001's candidate / hibernated / overloaded sets with all their
  transitions, ``max_jobs_per_site = 1 + jobThrottle * TScore`` and queueTimeThrottle.
* ``brokerage`` — after a production brokerage (seed 004): filters (site status,
  walltime against the site's maximum, cores, memory, CPU/GPU architecture), then the
  weight ``(running + 1) / ((activated + assigned + starting + defined + 10) *
  manyAssigned)``, the best candidates kept, one drawn in proportion to its weight.
"""

from __future__ import annotations

import math
import random
import re
from collections import deque
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from swiftnb.scheduling.policy import Policy
from swiftnb.scheduling.sites import backoff
from swiftnb.nearest import close_matches

if TYPE_CHECKING:
    from swiftnb.engine.task import Task
    from swiftnb.scheduling.policy import PolicyContext
    from swiftnb.scheduling.sites import Site

__all__ = [
    "WeightedScorePolicy", "BestScorePolicy", "SiteSetPolicy", "BrokeragePolicy",
    "POLICIES", "make_policy",
]

_T = TypeVar("_T")


def _weighted_choice(rng: random.Random, items: Sequence[_T],
                     weights: Sequence[float]) -> _T | None:
    total = 0.0
    for w in weights:
        total += w
    if total <= 0:
        return None
    x = rng.random() * total
    acc = 0.0
    for item, w in zip(items, weights):
        acc += w
        if x < acc:
            return item
    return items[-1]


# ---------------------------------------------------------------------------------------
# (1) and (2): Swift's credit scores
# ---------------------------------------------------------------------------------------
class WeightedScorePolicy(Policy):
    """Weighted random by transformed score, with delayBase bans (Swift/K's ``random``).

    A site is in delay mode when its score is negative (0.96) or, saturated, it is in
    failure debt (:meth:`Site.charge`); the debt is ignored for a job that only that site
    can run, since delaying it would move the job nowhere else.
    """

    name = "random"

    def __init__(self) -> None:
        self._banned: set[str] = set()

    def bind(self, ctx: PolicyContext) -> None:
        super().bind(ctx)
        self._banned = {s.name for s in ctx.sites if s.delay_exponent() > 0}

    def _usable(self, task: Task, sites: Sequence[Site]) -> list[Site]:
        now = self.ctx.clock.now()
        with_debt = len(self.ctx.app_sites(task)) > 1
        return [s for s in sites if now >= s.permitted_at(with_debt)]

    def select(self, task: Task, sites: Sequence[Site]) -> Site | None:
        usable = self._usable(task, sites)
        if not usable:
            return None
        if len(usable) == 1:
            return usable[0]
        now = self.ctx.clock.now()
        return _weighted_choice(self.ctx.rng, usable, [s.weight(now) for s in usable])

    def next_wakeup(self) -> float | None:
        if not self._banned:  # no site in delay mode: nothing to wait for
            return None
        now = self.ctx.clock.now()
        times = [t for t in (s.permitted_at() for s in self.ctx.sites) if t > now]
        return min(times) if times else None

    def on_score_changed(self, site: Site, old: float, new: float) -> None:
        self._follow(site)

    def on_finished(self, site: Site, task: Task, ok: bool, message: str,
                    queue_time: float | None) -> None:
        self._follow(site)  # the scheduler charged the site's debt before this

    def _follow(self, site: Site) -> None:
        """SITE_SET banned / candidate when the site enters or leaves delay mode."""
        exponent = site.delay_exponent()
        if exponent > 0 and site.name not in self._banned:
            self._banned.add(site.name)
            cause = (f"score {site.score:.3f} < 0" if site.score < 0
                     else f"failure debt {site.debt:.3f} at a saturated score")
            self.ctx.emit("SITE_SET", {
                "host": site.name, "set": "banned",
                "reason": f"{cause}, back-off {backoff(0.1, site.delay_base, exponent):.2f}s per use",
            })
        elif exponent <= 0 and site.name in self._banned:
            self._banned.discard(site.name)
            cause = (f"score {site.score:.3f} >= 0" if not site.saturated
                     else "failure debt paid off")
            self.ctx.emit("SITE_SET", {"host": site.name, "set": "candidate", "reason": cause})

    def state(self) -> dict[str, Any]:
        return {"banned": sorted(self._banned)}


class BestScorePolicy(WeightedScorePolicy):
    """Always the usable site with the highest score (ties: the least loaded, then first);
    a saturated site in failure debt ranks by the score its debt stands for."""

    name = "best"

    def select(self, task: Task, sites: Sequence[Site]) -> Site | None:
        usable = self._usable(task, sites)
        if not usable:
            return None
        return max(usable, key=lambda s: (s.effective_score, -s.load))


# ---------------------------------------------------------------------------------------
# (3): seed 001's site sets
# ---------------------------------------------------------------------------------------
CANDIDATE, HIBERNATED, OVERLOADED = "candidate", "hibernated", "overloaded"


class SiteSetPolicy(Policy):
    """Candidate / hibernated / overloaded sites (seed 001), every transition a SITE_SET.

    * candidate -> hibernated: a job failed on the site ("temp failed site"), or a job's
      queue time exceeded ``queueTimeThrottle = mean queue time + queue_time_constant``
      (checked when the job completes, or, with replication, when a replica elsewhere won);
      the score drops to 0.  A site stays hibernated at least ``hibernate_time *
      delayBase ** (k - 1)`` seconds after its k-th failure in a row (the "amount of time"
      after which seed 001 gives it a new chance).
    * hibernated -> candidate: (a) no candidate can take a job: the head of the
      hibernation queue, once its time is served, comes back with score 0; (b) a temp
      failed site completes another job: it comes back with score 1.
    * candidate -> overloaded: its jobs reached ``max_jobs_per_site = 1 + jobThrottle *
      TScore`` (the scheduler's per-site limit).
    * overloaded -> candidate: a job finished and the site is below the limit again.

    Among candidates the choice is weighted random by TScore (``select="best"``: highest).
    """

    name = "sitesets"

    def __init__(
        self,
        select: str = "random",
        queue_time_constant: float = 60.0,
        hibernate_time: float = 30.0,
        max_hibernate_time: float = 3600.0,
        queue_time_factor: float = 0.5,
        hibernated: Sequence[str] = (),
    ) -> None:
        self.mode = _mode("sitesets", select, ("random", "best"))
        self.queue_time_constant = queue_time_constant
        self.hibernate_time = hibernate_time
        self.max_hibernate_time = max_hibernate_time
        self.queue_time_factor = queue_time_factor
        self.sets: dict[str, str] = {}
        self.hibernation: deque[str] = deque()
        self.wake_at: dict[str, float] = {}
        self.temp_failed: set[str] = set()
        self.failures_in_row: dict[str, int] = {}
        self.transitions = 0
        self.initially_hibernated = list(hibernated)

    def bind(self, ctx: PolicyContext) -> None:
        super().bind(ctx)
        names = {site.name for site in ctx.sites}
        unknown = [n for n in self.initially_hibernated if n not in names]
        if unknown:
            raise ValueError(f"sitesets hibernated: no site named {unknown[0]!r}")
        for site in ctx.sites:
            self.sets[site.name] = CANDIDATE
        for site in ctx.sites:  # filtered by calibration (seed 001): a chance only when needed
            if site.name in self.initially_hibernated:
                self._move(site, HIBERNATED, "initially hibernated")
                self.hibernation.append(site.name)
                self.wake_at[site.name] = -math.inf

    @property
    def queue_time_throttle(self) -> float:
        return self.ctx.queue_stats.mean + self.queue_time_constant

    def _move(self, site: Site, new: str, reason: str) -> None:
        old = self.sets.get(site.name)
        if old == new:
            return
        self.sets[site.name] = new
        self.transitions += 1
        if old == HIBERNATED:
            try:
                self.hibernation.remove(site.name)
            except ValueError:
                pass
            self.wake_at.pop(site.name, None)
        self.ctx.emit("SITE_SET", {"host": site.name, "set": new, "reason": reason})

    def _hibernate(self, site: Site, reason: str, failure: bool) -> None:
        if failure:
            k = self.failures_in_row.get(site.name, 0) + 1
            self.failures_in_row[site.name] = k
            self.temp_failed.add(site.name)
        else:
            k = 1
        if self.sets.get(site.name) == HIBERNATED:
            return
        self._move(site, HIBERNATED, reason)
        self.hibernation.append(site.name)
        delay = min(self.max_hibernate_time, backoff(self.hibernate_time, site.delay_base, k - 1))
        self.wake_at[site.name] = self.ctx.clock.now() + delay
        self.ctx.set_score(site, 0.0)

    def _refresh_overloaded(self, sites: Sequence[Site]) -> None:
        for site in sites:
            state = self.sets.get(site.name)
            if state == OVERLOADED and not site.full:
                self._move(site, CANDIDATE, "below max_jobs_per_site")
            elif state == CANDIDATE and site.full:
                self._move(site, OVERLOADED, f"load {site.load} = max_jobs_per_site {site.limit}")

    def select(self, task: Task, sites: Sequence[Site]) -> Site | None:
        self._refresh_overloaded(self.ctx.sites)
        candidates = [s for s in sites if self.sets.get(s.name) == CANDIDATE]
        if not candidates:
            # (2a) no candidate: the head of the hibernation queue gets a new chance
            now = self.ctx.clock.now()
            offered = {s.name: s for s in sites}
            for name in list(self.hibernation):
                if name in offered and self.wake_at.get(name, 0.0) <= now:
                    site = offered[name]
                    self.temp_failed.discard(name)
                    self._move(site, CANDIDATE, "no candidate sites; new chance")
                    self.ctx.set_score(site, 0.0)
                    candidates = [site]
                    break
                if name in offered:
                    break  # the head is still serving its time: wait for it
            if not candidates:
                return None
        if len(candidates) == 1:
            return candidates[0]
        if self.mode == "best":
            return max(candidates, key=lambda s: (s.score, -s.load))
        return _weighted_choice(self.ctx.rng, candidates, [s.tscore for s in candidates])

    def next_wakeup(self) -> float | None:
        now = self.ctx.clock.now()
        times = [t for t in self.wake_at.values() if t > now]
        return min(times) if times else None

    def on_selected(self, site: Site, task: Task) -> None:
        if site.full and self.sets.get(site.name) == CANDIDATE:
            self._move(site, OVERLOADED, f"load {site.load} = max_jobs_per_site {site.limit}")

    def on_finished(self, site: Site, task: Task, ok: bool, message: str,
                    queue_time: float | None) -> None:
        state = self.sets.get(site.name)
        if not ok:
            self._hibernate(site, f"job failed: {_short(message)}", failure=True)
            return
        self.failures_in_row[site.name] = 0
        if state == HIBERNATED and site.name in self.temp_failed:
            # (2b) the temp failed site finished a job: the failure was transient
            self.temp_failed.discard(site.name)
            self._move(site, CANDIDATE, "temp failed site completed a job")
            self.ctx.set_score(site, 1.0)
            self.ctx.wake()
            return
        if (
            not self.ctx.replication_enabled
            and queue_time is not None
            and queue_time > self.queue_time_throttle
            and state != HIBERNATED
        ):
            self._hibernate(
                site, f"queue time {queue_time:.1f}s > queueTimeThrottle "
                f"{self.queue_time_throttle:.1f}s", failure=False)
            return
        if state == OVERLOADED and not site.full:
            self._move(site, CANDIDATE, "job completed; below max_jobs_per_site")

    def on_replica_active(self, winner: Site, winner_queue_time: float,
                          losers: list[tuple[Site, float]]) -> None:
        threshold = self.queue_time_throttle
        for site, queued in losers:
            if queued > winner_queue_time:
                self.ctx.adjust_score(site, -self.queue_time_factor)  # queueTimeFactor
            if queued > threshold and self.sets.get(site.name) != HIBERNATED:
                self._hibernate(site, f"replica queued {queued:.1f}s > queueTimeThrottle "
                                f"{threshold:.1f}s", failure=False)

    def state(self) -> dict[str, Any]:
        return {"sets": dict(self.sets), "hibernation": list(self.hibernation)}


def _short(message: str, n: int = 80) -> str:
    message = " ".join((message or "").split())
    return message if len(message) <= n else message[: n - 3] + "..."


# ---------------------------------------------------------------------------------------
# (4): brokerage after seed 004
# ---------------------------------------------------------------------------------------
def _num(value: Any, default: float | None = None) -> float | None:
    if value is None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    if ":" in text:  # HH:MM:SS or MM:SS
        secs = 0.0
        for part in text.split(":"):
            secs = secs * 60 + float(part)
        return secs
    m = re.fullmatch(r"([0-9.]+)\s*([a-zA-Z]*)", text)
    if not m:
        return default
    n = float(m.group(1))
    unit = m.group(2).lower()
    scale = {"": 1, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400,
             "mb": 1, "gb": 1024, "kb": 1 / 1024, "tb": 1024 * 1024}.get(unit, 1)
    return n * scale


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


class BrokeragePolicy(Policy):
    """Filters, then ``(running + 1) / (queued + assigned + ... + 10)``, best candidates.

    Task requirements come from its profiles: ``maxwalltime`` (Task.maxwalltime),
    ``cores``/``count``/``coreCount``, ``memory`` (MB), ``architecture`` (CPU arch,
    a regular expression allowed) and ``gpu`` (vendor, optionally ``vendor:model=REGEX``).
    Site attributes (execution options): ``status`` (online/offline/test),
    ``maxTime``/``maxWallTime``/``maxJobTime``, ``cores`` (per node), ``minMemory``/
    ``maxMemory`` (MB per job), ``arch`` (list; "excl" = only jobs asking for it),
    ``gpu`` ({vendor, model} or a vendor string; "excl" in the list = GPU jobs only),
    ``numSlots``, ``localData`` (path prefixes whose files the site holds: the weight is
    multiplied by ``(available + total) / (total * (missing / 100 + 1))`` over the job's
    input files, seed 004's data availability term).
    """

    name = "brokerage"

    def __init__(
        self,
        candidates: int = 10,
        select: str = "weighted",
        memory_compensation: float = 0.9,
        failure_threshold: int = 3,
        offline_time: float = 60.0,
    ) -> None:
        self.candidates = candidates
        self.mode = _mode("brokerage", select, ("weighted", "best"))
        self.memory_compensation = memory_compensation
        self.failure_threshold = failure_threshold
        self.offline_time = offline_time
        self.offline_until: dict[str, float] = {}
        self.skipped: dict[str, int] = {}

    # -- requirements ------------------------------------------------------------------
    @staticmethod
    def requirements(task: Task) -> tuple[Any, ...]:
        p = task.profiles or {}
        cores = _num(p.get("cores") or p.get("count") or p.get("coreCount"), 1.0)
        memory = _num(p.get("memory") or p.get("ramCount"))
        return (task.maxwalltime, cores, memory, p.get("architecture"), p.get("gpu"))

    def task_key(self, task: Task) -> Hashable:
        return self.requirements(task)

    def static_reason(self, site: Site, req: tuple[Any, ...]) -> str | None:
        """Why ``site`` can never take a job with requirements ``req`` (None: it can)."""
        walltime, cores, memory, arch, gpu = req
        a = site.attributes
        status = str(a.get("status", "online")).lower()
        if status not in ("online", "ok", "active"):
            return f"status {status}"
        maxtime = _num(a.get("maxTime") or a.get("maxWallTime") or a.get("maxJobTime"))
        if walltime is not None and maxtime is not None and walltime > maxtime:
            return f"walltime {walltime:g}s > maxtime {maxtime:g}s"
        site_cores = _num(a.get("cores") or a.get("coresPerNode"))
        if site_cores is not None and cores is not None and cores > site_cores:
            return f"cores {cores:g} > {site_cores:g}"
        if memory is not None:
            expected = memory * self.memory_compensation
            hi = _num(a.get("maxMemory"))
            lo = _num(a.get("minMemory"))
            if hi is not None and expected > hi:
                return f"memory {expected:g}MB > {hi:g}MB"
            if lo is not None and expected < lo:
                return f"memory {expected:g}MB < {lo:g}MB"
        reason = _arch_mismatch(arch, _as_list(a.get("arch")))
        if reason:
            return reason
        return _gpu_mismatch(gpu, a.get("gpu"))

    def check(self, task: Task, sites: Sequence[Site]) -> str | None:
        req = self.requirements(task)
        reasons = []
        for site in sites:
            reason = self.static_reason(site, req)
            if reason is None:
                return None
            reasons.append(f"{site.name}: {reason}")
        return "no site satisfies the job's requirements (" + "; ".join(reasons) + ")"

    # -- selection ---------------------------------------------------------------------
    def weight(self, site: Site) -> float | None:
        """The brokerage weight, or None when the site is skipped for queue depth."""
        running: float = site.running
        nbatch = site.running + site.queued
        if running < 20 and nbatch > running:
            running = max(running, min(nbatch, 20))
        slots = _num(site.attributes.get("numSlots"))
        if slots is not None and slots > 0:
            running = max(running, slots)
        activated, assigned, starting, defined = site.queued, site.assigned, 0, 0
        if activated + starting > 2 * running:
            return None
        if defined + activated + assigned + starting > 2 * running + 1:
            return None
        many = max(1.0, min(2.0, assigned / activated)) if activated else (2.0 if assigned else 1.0)
        return (running + 1) / ((activated + assigned + starting + defined + 10) * many)

    def select(self, task: Task, sites: Sequence[Site]) -> Site | None:
        req = self.requirements(task)
        now = self.ctx.clock.now()
        scored = []
        for site in sites:
            if self.offline_until.get(site.name, -math.inf) > now:
                continue
            if self.static_reason(site, req) is not None:
                continue
            w = self.weight(site)
            if w is None:
                self.skipped[site.name] = self.skipped.get(site.name, 0) + 1
                continue
            if task.inputs and site.attributes.get("localData"):
                w *= _data_weight(task.inputs, _as_list(site.attributes["localData"]))
            scored.append((w, site))
        if not scored:
            return None
        scored.sort(key=lambda ws: -ws[0])
        best = scored[: self.candidates]
        if self.mode == "best" or len(best) == 1:
            return best[0][1]
        return _weighted_choice(self.ctx.rng, [s for _, s in best], [w for w, _ in best])

    def next_wakeup(self) -> float | None:
        now = self.ctx.clock.now()
        times = [t for t in self.offline_until.values() if t > now]
        return min(times) if times else None

    def on_finished(self, site: Site, task: Task, ok: bool, message: str,
                    queue_time: float | None) -> None:
        now = self.ctx.clock.now()
        if ok:
            if site.name in self.offline_until and self.offline_until[site.name] <= now:
                del self.offline_until[site.name]
                self.ctx.emit("SITE_SET", {"host": site.name, "set": "online",
                                           "reason": "job completed"})
            return
        if site.consecutive_failures >= self.failure_threshold and \
                self.offline_until.get(site.name, -math.inf) <= now:
            k = site.consecutive_failures - self.failure_threshold
            delay = backoff(self.offline_time, site.delay_base, min(k, 6))
            self.offline_until[site.name] = now + delay
            self.ctx.emit("SITE_SET", {
                "host": site.name, "set": "offline",
                "reason": f"{site.consecutive_failures} failures in a row; for {delay:.0f}s"})

    def state(self) -> dict[str, Any]:
        now = self.ctx.clock.now()
        return {"offline": sorted(n for n, t in self.offline_until.items() if t > now)}


def _data_weight(inputs: Sequence[str], prefixes: list[str]) -> float:
    """Seed 004: weight x (availableSize + totalSize) / (totalSize x (nMissing / 100 + 1))."""
    total = len(inputs)
    available = sum(1 for path in inputs if any(path.startswith(p) for p in prefixes))
    missing = total - available
    return (available + total) / (total * (missing / 100.0 + 1.0))


def _arch_mismatch(wanted: Any, site_arch: list[str]) -> str | None:
    """Seed 004's rule: a site lists accepted values; "excl" means only jobs asking for one."""
    excl = "excl" in site_arch
    values = [v for v in site_arch if v != "excl"]
    if wanted in (None, ""):
        return "site takes only jobs that ask for its architecture" if excl else None
    if not values or values == [""]:
        return None
    pattern = re.compile(str(wanted), re.IGNORECASE)
    if any(pattern.fullmatch(v) for v in values):
        return None
    return f"architecture {wanted} not in {values}"


def _gpu_mismatch(wanted: Any, site_gpu: Any) -> str | None:
    if isinstance(site_gpu, str):
        site_gpu = {"vendor": _as_list(site_gpu)}
    site_gpu = dict(site_gpu or {})
    vendors = _as_list(site_gpu.get("vendor"))
    excl = "excl" in vendors or bool(site_gpu.get("excl"))
    vendors = [v for v in vendors if v != "excl"]
    if wanted in (None, ""):
        return "site takes only GPU jobs" if excl else None
    if not vendors:
        return "site has no GPU"
    parts = str(wanted).split(":")
    vendor = parts[0].lstrip("&")
    if vendor not in ("*", "") and not any(re.fullmatch(vendor, v, re.IGNORECASE) for v in vendors):
        return f"GPU vendor {vendor} not in {vendors}"
    for part in parts[1:]:
        m = re.fullmatch(r"model(!?=)(.*)", part)
        if not m:
            continue
        models = _as_list(site_gpu.get("model"))
        hit = any(re.match(m.group(2), model, re.IGNORECASE) for model in models)
        if m.group(1) == "=" and not hit:
            return f"GPU model {m.group(2)} not in {models}"
        if m.group(1) == "!=" and hit:
            return f"GPU model excluded by {m.group(2)}"
    return None


POLICIES: dict[str, type[Policy]] = {
    "random": WeightedScorePolicy,
    "weighted": WeightedScorePolicy,
    "best": BestScorePolicy,
    "sitesets": SiteSetPolicy,
    "brokerage": BrokeragePolicy,
}


def make_policy(spec: str | Policy | dict[str, Any] | None, **options: Any) -> Policy:
    """A policy from its name (``"random"``, ``"best"``, ``"sitesets"``, ``"brokerage"``),
    a ``{"name": ..., options...}`` mapping, a ``"package.module:Class"`` path, or an
    instance (returned as is)."""
    if spec is None:
        spec = "random"
    if isinstance(spec, Policy):
        return spec
    if isinstance(spec, dict):
        options = {**{k: v for k, v in spec.items() if k not in ("name", "type")}, **options}
        spec = str(spec.get("name") or spec.get("type") or "random")
    if ":" in spec:
        import importlib

        module, _, attr = spec.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        return cls(**options)  # type: ignore[no-any-return]  # the class the spec names
    cls = POLICIES.get(spec.lower())
    if cls is None:
        near = close_matches(spec.lower(), POLICIES)
        hint = f"; did you mean \"{near[0]}\"?" if near else ""
        raise ValueError(
            f"unknown site selection policy \"{spec}\" (expected one of "
            f"{', '.join(sorted(POLICIES))}){hint}")
    return cls(**options)


def _mode(policy: str, select: str, modes: tuple[str, str]) -> str:
    """A policy's ``select`` option, one of its two ``modes``; ValueError names them."""
    if select not in modes:
        raise ValueError(f'{policy} select: expected "{modes[0]}" or "{modes[1]}", '
                         f"got {select!r}")
    return select
