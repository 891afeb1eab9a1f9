"""The what-if model: per site, the observed samples of every wait and duration.

Samples, not fitted parameters: a prediction resamples what the logs showed (a queue
that is usually 30 s and sometimes 40 minutes stays so).  The JSON document carries a
format name and version, so that a model written by another version is refused with a
message instead of being misread.
"""

from __future__ import annotations

import json
import math
import os
import random
import statistics
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from swiftnb.atomicfile import write_atomically
from swiftnb.errors import SwiftnbError

__all__ = ["Model", "SiteModel", "AppModel", "ModelError", "FORMAT", "VERSION"]

FORMAT = "swiftnb-whatif-model"
VERSION = 1

Samples = list[float]

#: how fast the weight of a log's queue waits falls with its distance in time from the
#: moment predicted for (``at``): e-fold in one day (queues stay busy or quiet for days)
QUEUE_MEMORY = 86400.0

#: how fast a log's weight falls with the difference between its run's size (tasks) and
#: the predicted one's: a log of a run half or twice as large weighs half (how many
#: blocks waited, idled and started in a run decides what its lists hold)
SIZE_BASE = 2.0

#: the sample lists that are a batch queue's waits (drawn by the day, whatever the sites)
QUEUE_LISTS = ("block_queue", "job_queue")

#: the power the drift (the ratio of two logs' queue levels) is raised to: the ratio a / b
#: of two independent draws has twice the log-variance of one (var(log a - log b) =
#: 2 sigma^2), so the bare ratio would add twice the day-to-day spread it stands for;
#: to the power 1 / sqrt(2) it adds one draw's
DRIFT_EXPONENT = 1 / math.sqrt(2)


class ModelError(SwiftnbError, ValueError):
    """A model that cannot be made or used (no blocks in a log, another version, a site
    the model lacks); the message is for people."""


@dataclass
class AppModel:
    """Durations of one app: seconds, or (``argument`` set) factors of that argument;
    ``runs``: the calibrated run of each sample (see :attr:`Model.run_starts`)."""

    samples: Samples
    argument: int | None = None
    runs: list[int] = field(default_factory=list)


@dataclass
class SiteModel:
    """What the logs showed of one site."""

    logs: int = 0                                   # how many logs it appears in
    block_queue: Samples = field(default_factory=list)     # Tq
    block_startup: Samples = field(default_factory=list)   # Tb
    block_submit: Samples = field(default_factory=list)    # between two block requests
    service_start: Samples = field(default_factory=list)   # first task -> first request
    block_idle: Samples = field(default_factory=list)      # last task end -> block done
    job_queue: Samples = field(default_factory=list)       # Tw on a site without blocks
    stage_in: Samples = field(default_factory=list)        # Tsi
    stage_out: Samples = field(default_factory=list)       # Tso
    apps: dict[str, AppModel] = field(default_factory=dict)
    attempts: int = 0
    failures: int = 0
    #: the most seen at once: blocks, workers, running tasks; a block's slots, walltime
    limits: dict[str, float] = field(default_factory=dict)
    #: sample list name -> the calibrated run of each of its samples
    runs: dict[str, list[int]] = field(default_factory=dict)

    def add(self, key: str, samples: Samples, run: int) -> None:
        """Append ``samples`` of calibrated run ``run`` to the list ``key``."""
        getattr(self, key).extend(samples)
        self.runs.setdefault(key, []).extend([run] * len(samples))

    @property
    def failure_probability(self) -> float:
        return self.failures / self.attempts if self.attempts else 0.0

    @property
    def has_blocks(self) -> bool:
        return bool(self.block_queue)


@dataclass
class Model:
    """Sites by name, and the run's own start-up and wind-down around its tasks."""

    sites: dict[str, SiteModel] = field(default_factory=dict)
    run_startup: Samples = field(default_factory=list)    # run start -> first submission
    run_shutdown: Samples = field(default_factory=list)   # last task end -> run finish
    sources: list[str] = field(default_factory=list)
    #: the start (epoch seconds) of each calibrated run; a sample's run indexes it
    run_starts: list[float] = field(default_factory=list)
    #: how many sites each calibrated run used (a run of two coaster sites starts two
    #: services: its start-up is not a one-site run's)
    run_sites: list[int] = field(default_factory=list)
    #: how many tasks (app calls) each calibrated run had
    run_tasks: list[int] = field(default_factory=list)
    #: ``run_startup`` / ``run_shutdown`` -> the calibrated run of each sample
    runs: dict[str, list[int]] = field(default_factory=dict)
    #: of a bootstrap copy (:meth:`resampled`): the calibrated run its lists came from
    #: (``"run"``) and its queue waits (``"queue"``); empty in a calibrated model
    drawn: dict[str, int] = field(default_factory=dict)

    def add(self, key: str, samples: Samples, run: int) -> None:
        """Append ``samples`` of calibrated run ``run`` to ``run_startup``/``run_shutdown``."""
        getattr(self, key).extend(samples)
        self.runs.setdefault(key, []).extend([run] * len(samples))

    def site(self, name: str) -> SiteModel:
        """The model of ``name`` (ModelError naming it and the known sites if absent)."""
        found = self.sites.get(name)
        if found is None:
            known = ", ".join(sorted(self.sites)) or "none"
            raise ModelError(f"site {name} is not in the model (sites in the model: {known}); "
                             "calibrate on a log of a run on it")
        return found

    def resampled(self, rng: random.Random, *, at: float | None = None,
                  memory: float = QUEUE_MEMORY, sites: int | None = None,
                  tasks: int | None = None) -> Model:
        """A bootstrap copy for one simulated run: the samples of one calibrated log,
        drawn again with replacement.

        A real run's start-ups, service start and task durations come from one run, and
        runs differ from each other more than the samples of one run do; so each copy
        takes every sample list from one log (the interval then holds the run-to-run
        spread, not only the spread within a run).  With ``at`` (epoch seconds), queue
        waits (``block_queue``, ``job_queue``) are those of one log drawn among all, the
        likelier the nearer it ran to ``at`` (e-fold every ``memory`` seconds: a queue
        stays busy or quiet for days), and scaled by how much the queue's level may have
        moved since (:meth:`_drift`); without, all logs' alike.  The other lists are
        those of a log drawn the same way among the logs that used ``sites`` sites (two
        coaster services start slower than one), and with ``tasks`` (the predicted run's
        number of tasks) the likelier the nearer its run's size (:data:`SIZE_BASE`: how
        many blocks started, waited and idled decides what a log's lists hold).  A list
        the drawn log has no sample of is taken from another log drawn the same way among
        those that have; a model that does not say its samples' runs is resampled whole."""
        every = list(range(len(self.run_starts)))
        alike = self._candidates(sites)
        queue_log = self._choose(every, rng, at, memory)
        run_log = self._choose(alike, rng, at, memory, tasks)

        def again(samples: Samples, runs: list[int] | None, queue: bool = False) -> Samples:
            mine = samples
            pooled = queue and at is None
            if runs is not None and len(runs) == len(samples) and samples and not pooled:
                log, pool, size = (queue_log, every, None) if queue else (run_log, alike, tasks)
                mine = [s for s, r in zip(samples, runs) if r == log]
                if not mine:
                    seen = set(runs)
                    other = self._choose(sorted(seen & set(pool)) or sorted(seen & set(every)),
                                         rng, at, memory, size)
                    mine = [s for s, r in zip(samples, runs) if r == other] or samples
                if queue:
                    # drifted, a wait stays within the longest the site's queue showed
                    drift, longest = self._drift(samples, runs, rng, at, memory), max(samples)
                    return [round(min(rng.choice(mine) * drift, longest), 3) for _ in mine]
            return [rng.choice(mine) for _ in mine] if mine else []

        copies = {}
        for name, site in self.sites.items():
            lists: dict[str, Any] = {
                k: again(v, site.runs.get(k), k in QUEUE_LISTS)
                for k, v in vars(site).items() if isinstance(v, list)}
            apps = {app: AppModel(again(a.samples, a.runs), a.argument)
                    for app, a in site.apps.items()}
            copies[name] = replace(site, **lists, limits=dict(site.limits), apps=apps, runs={})
        return Model(sites=copies,
                     run_startup=again(self.run_startup, self.runs.get("run_startup")),
                     run_shutdown=again(self.run_shutdown, self.runs.get("run_shutdown")),
                     sources=list(self.sources), run_starts=list(self.run_starts),
                     run_sites=list(self.run_sites), run_tasks=list(self.run_tasks),
                     drawn={k: v for k, v in (("run", run_log), ("queue", queue_log))
                            if v is not None})

    def _drift(self, samples: Samples, runs: list[int], rng: random.Random,
               at: float | None, memory: float) -> float:
        """A factor for one simulated run's queue waits: the ratio of the levels (median
        waits) of two logs drawn as the queue's log is (by nearness to ``at``), to the
        power :data:`DRIFT_EXPONENT` (one day's spread, not a ratio's two).

        One log's waits show the queue of one day; the day predicted for differs from
        it as much as the logs around it differ from each other (on Stampede, 20 s to
        30 s from one January run to the next, 23 s to 800 s within one February hour).
        Without that spread a day unlike its neighbours falls outside the interval.  (A
        drifted wait is bounded by the longest one seen: the drift moves a day's level,
        it does not make a busy day's longest wait a thousand times longer.)"""
        levels = {run: statistics.median(s for s, r in zip(samples, runs) if r == run)
                  for run in set(runs)}
        logs = sorted(levels)
        one, other = self._choose(logs, rng, at, memory), self._choose(logs, rng, at, memory)
        if one is None or other is None:
            return 1.0
        ratio = max(levels[one], 1.0) / max(levels[other], 1.0)  # a wait under 1 s: 1 s
        return float(ratio ** DRIFT_EXPONENT)

    def _candidates(self, sites: int | None) -> list[int]:
        """The calibrated runs a copy may take its samples from."""
        every = list(range(len(self.run_starts)))
        if sites is None or len(self.run_sites) != len(every):
            return every
        return [r for r in every if self.run_sites[r] == sites] or every

    def _choose(self, candidates: list[int], rng: random.Random, at: float | None,
                memory: float, tasks: int | None = None) -> int | None:
        """One of ``candidates``: alike, or the likelier the nearer it ran to ``at`` and
        (``tasks``) the nearer its number of tasks."""
        if not candidates:
            return None
        weights = [1.0] * len(candidates)
        if at is not None:
            distance = [abs(self.run_starts[r] - at) for r in candidates]
            weights = [math.exp(-(d - min(distance)) / memory) for d in distance]  # nearest: 1
        if tasks is not None and tasks > 0 and len(self.run_tasks) == len(self.run_starts):
            weights = [w * self._size_weight(self.run_tasks[r], tasks)
                       for w, r in zip(weights, candidates)]
        return rng.choices(candidates, weights)[0]

    @staticmethod
    def _size_weight(seen: int, predicted: int) -> float:
        """1 for a run of the predicted size, 1/SIZE_BASE for half or twice as many tasks."""
        if seen <= 0:
            return SIZE_BASE ** -8  # a log without tasks: a last resort
        return SIZE_BASE ** -abs(math.log(seen / predicted, SIZE_BASE))

    # -- JSON ----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        return {"format": FORMAT, "version": VERSION, **doc}

    @classmethod
    def from_json(cls, doc: Any, where: str = "model") -> Model:
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ModelError(f"{where}: not a swiftnb what-if model (no \"format\": "
                             f"\"{FORMAT}\"); make one with swiftnb calibrate")
        if doc.get("version") != VERSION:
            raise ModelError(f"{where}: model format version {doc.get('version')!r}, this "
                             f"swiftnb reads version {VERSION}; calibrate again")
        try:
            sites = {}
            for name, raw in doc["sites"].items():
                apps = {app: AppModel(**a) for app, a in raw.pop("apps", {}).items()}
                runs = raw.pop("runs", {})
                for key in ("block_queue", "job_queue"):  # the first models' spelling
                    if f"{key}_run" in raw:
                        runs[key] = raw.pop(f"{key}_run")
                sites[name] = SiteModel(**raw, apps=apps, runs=runs)
            return cls(sites=sites, run_startup=doc.get("run_startup", []),
                       run_shutdown=doc.get("run_shutdown", []),
                       sources=doc.get("sources", []), run_starts=doc.get("run_starts", []),
                       run_sites=doc.get("run_sites", []),
                       run_tasks=doc.get("run_tasks", []), runs=doc.get("runs", {}),
                       drawn=doc.get("drawn", {}))
        except (KeyError, TypeError, AttributeError) as exc:
            raise ModelError(f"{where}: damaged model ({exc})") from None

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the model whole or not at all (an earlier model at ``path`` survives a
        full disk); an error names the file."""
        text = json.dumps(self.to_json(), indent=1) + "\n"
        try:
            write_atomically(os.fspath(path), text.encode("utf-8"))
        except OSError as exc:
            raise ModelError(f"{path}: cannot write the model: {exc.strerror or exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Model:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except OSError as exc:
            raise ModelError(f"{path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ModelError(f"{path}: not JSON ({exc})") from None
        return cls.from_json(doc, str(path))
