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


class ModelError(SwiftnbError, ValueError):
    """A model that cannot be made or used (no blocks in a log, another version, a site
    the model lacks); the message is for people."""


@dataclass
class AppModel:
    """Durations of one app: seconds, or (``argument`` set) factors of that argument."""

    samples: Samples
    argument: int | None = None


@dataclass
class SiteModel:
    """What the logs showed of one site."""

    logs: int = 0                                   # how many logs it appears in
    block_queue: Samples = field(default_factory=list)     # Tq
    block_queue_run: list[int] = field(default_factory=list)  # the run of each Tq sample
    block_startup: Samples = field(default_factory=list)   # Tb
    block_submit: Samples = field(default_factory=list)    # between two block requests
    service_start: Samples = field(default_factory=list)   # first task -> first request
    block_idle: Samples = field(default_factory=list)      # last task end -> block done
    job_queue: Samples = field(default_factory=list)       # Tw on a site without blocks
    job_queue_run: list[int] = field(default_factory=list)    # the run of each Tw sample
    stage_in: Samples = field(default_factory=list)        # Tsi
    stage_out: Samples = field(default_factory=list)       # Tso
    apps: dict[str, AppModel] = field(default_factory=dict)
    attempts: int = 0
    failures: int = 0
    #: the most seen at once: blocks, workers, running tasks; a block's slots, walltime
    limits: dict[str, float] = field(default_factory=dict)

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
    #: the start (epoch seconds) of each calibrated run; a queue sample's run indexes it
    run_starts: list[float] = field(default_factory=list)

    def site(self, name: str) -> SiteModel:
        """The model of ``name`` (ModelError naming it and the known sites if absent)."""
        found = self.sites.get(name)
        if found is None:
            known = ", ".join(sorted(self.sites)) or "none"
            raise ModelError(f"site {name} is not in the model (sites in the model: {known}); "
                             "calibrate on a log of a run on it")
        return found

    def resampled(self, rng: random.Random, *, at: float | None = None,
                  memory: float = QUEUE_MEMORY) -> Model:
        """A bootstrap copy: every sample list drawn again with replacement, so that
        repeated predictions carry the uncertainty of few observations.

        With ``at`` (epoch seconds), each copy's queue waits are one log's: a log drawn
        the likelier the nearer it ran to ``at`` (e-fold every ``memory`` seconds),
        because a queue stays busy or quiet for days, for all of a run's blocks."""
        def again(samples: Samples) -> Samples:
            return [rng.choice(samples) for _ in samples] if samples else []

        sites = {}
        for name, site in self.sites.items():
            lists: dict[str, Any] = {k: again(v) for k, v in vars(site).items()
                                     if isinstance(v, list) and not k.endswith("_run")}
            for key in ("block_queue", "job_queue"):
                if at is not None:
                    lists[key] = self._by_run(getattr(site, key),
                                              getattr(site, f"{key}_run"), rng, at, memory)
                lists[f"{key}_run"] = []
            copy = replace(site, **lists, limits=dict(site.limits), apps={
                app: AppModel(again(a.samples), a.argument) for app, a in site.apps.items()})
            sites[name] = copy
        return Model(sites, again(self.run_startup), again(self.run_shutdown),
                     list(self.sources), list(self.run_starts))

    def _by_run(self, samples: Samples, runs: list[int], rng: random.Random,
                at: float, memory: float) -> Samples:
        """The samples of one log, that log drawn the likelier the nearer it ran to ``at``
        (every log alike however many samples it has), resampled within: a queue busy on
        one day is busy for all of that run's blocks.  Plain resampling when the samples
        do not say their runs."""
        if not samples or len(runs) != len(samples) \
                or any(not 0 <= r < len(self.run_starts) for r in runs):
            return [rng.choice(samples) for _ in samples] if samples else []
        seen = sorted(set(runs))
        distance = [abs(self.run_starts[r] - at) for r in seen]
        weights = [math.exp(-(d - min(distance)) / memory) for d in distance]  # nearest: 1
        chosen = rng.choices(seen, weights)[0]
        mine = [s for s, r in zip(samples, runs) if r == chosen]
        return [rng.choice(mine) for _ in mine]

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
                sites[name] = SiteModel(**raw, apps=apps)
            return cls(sites, doc.get("run_startup", []), doc.get("run_shutdown", []),
                       doc.get("sources", []), doc.get("run_starts", []))
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
