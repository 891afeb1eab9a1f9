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

#: the sample lists that are a batch queue's waits (drawn by the day, whatever the sites)
QUEUE_LISTS = ("block_queue", "job_queue")


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
    #: ``run_startup`` / ``run_shutdown`` -> the calibrated run of each sample
    runs: dict[str, list[int]] = field(default_factory=dict)

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
                  memory: float = QUEUE_MEMORY, sites: int | None = None) -> Model:
        """A bootstrap copy for one simulated run: the samples of one calibrated log,
        drawn again with replacement.

        A real run's start-ups, service start and task durations come from one run, and
        runs differ from each other more than the samples of one run do; so each copy
        takes every sample list from one log (the interval then holds the run-to-run
        spread, not only the spread within a run).  With ``at`` (epoch seconds), queue
        waits (``block_queue``, ``job_queue``) are those of one log drawn among all, the
        likelier the nearer it ran to ``at`` (e-fold every ``memory`` seconds: a queue
        stays busy or quiet for days); without, all logs' alike.  The other lists are
        the drawn log's if it used ``sites`` sites, else those of a log drawn the same way
        among the logs that did (two coaster services start slower than one).  A list the
        drawn log has no sample of is taken from another log drawn the same way among
        those that have; a model that does not say its samples' runs is resampled whole."""
        every = list(range(len(self.run_starts)))
        alike = self._candidates(sites)
        queue_log = self._choose(every, rng, at, memory)
        run_log = queue_log if queue_log in alike else self._choose(alike, rng, at, memory)

        def again(samples: Samples, runs: list[int] | None, queue: bool = False) -> Samples:
            mine = samples
            pooled = queue and at is None
            if runs is not None and len(runs) == len(samples) and samples and not pooled:
                log, pool = (queue_log, every) if queue else (run_log, alike)
                mine = [s for s, r in zip(samples, runs) if r == log]
                if not mine:
                    seen = set(runs)
                    other = self._choose(sorted(seen & set(pool)) or sorted(seen & set(every)),
                                         rng, at, memory)
                    mine = [s for s, r in zip(samples, runs) if r == other] or samples
            return [rng.choice(mine) for _ in mine] if mine else []

        copies = {}
        for name, site in self.sites.items():
            lists: dict[str, Any] = {
                k: again(v, site.runs.get(k), k in QUEUE_LISTS)
                for k, v in vars(site).items() if isinstance(v, list)}
            apps = {app: AppModel(again(a.samples, a.runs), a.argument)
                    for app, a in site.apps.items()}
            copies[name] = replace(site, **lists, limits=dict(site.limits), apps=apps, runs={})
        return Model(copies, again(self.run_startup, self.runs.get("run_startup")),
                     again(self.run_shutdown, self.runs.get("run_shutdown")),
                     list(self.sources), list(self.run_starts), list(self.run_sites))

    def _candidates(self, sites: int | None) -> list[int]:
        """The calibrated runs a copy may take its samples from."""
        every = list(range(len(self.run_starts)))
        if sites is None or len(self.run_sites) != len(every):
            return every
        return [r for r in every if self.run_sites[r] == sites] or every

    def _choose(self, candidates: list[int], rng: random.Random, at: float | None,
                memory: float) -> int | None:
        """One of ``candidates``: alike, or the likelier the nearer it ran to ``at``."""
        if not candidates:
            return None
        if at is None:
            return rng.choice(candidates)
        distance = [abs(self.run_starts[r] - at) for r in candidates]
        weights = [math.exp(-(d - min(distance)) / memory) for d in distance]  # nearest: 1
        return rng.choices(candidates, weights)[0]

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
            return cls(sites, doc.get("run_startup", []), doc.get("run_shutdown", []),
                       doc.get("sources", []), doc.get("run_starts", []),
                       doc.get("run_sites", []), doc.get("runs", {}))
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
