"""A configuration's sites as ``sim`` sites that behave as a what-if model says.

The configuration keeps everything else (throttles, retries, replication, the site
selection policy); each selected site becomes a simulated one with the model's samples
for its name.  A coaster site keeps its block planning limits (``maxJobs``,
``tasksPerNode`` x ``maxNodesPerJob``, ``maxJobTime`` less the reserve), read by the
coaster settings; the model fills in what the configuration does not say.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from swiftnb.coasters.settings import UNLIMITED_NODES, CoasterSettings
from swiftnb.config.model import Config, SiteConfig
from swiftnb.forecast.model import Model, ModelError, SiteModel

__all__ = ["simulated_config", "sim_options"]

COASTER_TYPES = ("coaster", "coaster-persistent")


def _empirical(samples: list[float]) -> str | float:
    return "empirical:" + ",".join(f"{s:g}" for s in samples) if samples else 0.0


def sim_options(name: str, model: SiteModel, site: SiteConfig | None, seed: int) -> dict[str, Any]:
    """The ``execution.options`` of the sim site standing for ``name``."""
    options: dict[str, Any] = {
        "seed": seed,
        "failureProbability": model.failure_probability,
        "stageInTime": _empirical(model.stage_in),
        "taskDuration": {"ALL": _empirical(_all_durations(model)) or 1.0,
                         **{app: _empirical(a.samples) for app, a in model.apps.items()}},
        "durationArgument": {app: a.argument for app, a in model.apps.items()
                             if a.argument is not None},
        "writeOutputs": True,
    }
    own = site.execution.options if site is not None else {}
    coaster = site is None and model.has_blocks or site is not None and (
        site.execution.type in COASTER_TYPES
        or site.execution.type == "sim" and int(own.get("blockSlots", 0) or 0) > 0)
    if not coaster:
        queue = model.job_queue or [q + s for q, s in zip(model.block_queue, model.block_startup)]
        options["queueTime"] = _empirical(queue)
        # the site's own limits are in its queue waits: the configuration's throttles
        # (maxParallelTasks) bound what runs at once, as seen when none is given
        running = int(model.limits.get("running", 0)) or 1
        options["slots"] = site.max_parallel_tasks if site is not None else running
        return options
    if not model.has_blocks:
        raise ModelError(f"site {name} is a coaster site, but the logs of the model show no "
                         "blocks for it: calibrate on a log of a coaster run there")
    limits = model.limits
    settings = CoasterSettings.from_options(own) \
        if site is not None and site.execution.type in COASTER_TYPES else None
    seen = {"maxBlocks": int(limits.get("blocks", 1)),
            "blockSlots": int(limits.get("block_slots", 1)),
            "blockWalltime": limits.get("block_walltime", 0.0)}
    if settings is None:  # a sim site with blocks keeps its own limits, else as seen
        options.update(seen)
        options.update({k: own[k] for k in seen if k in own})
    else:
        nodes = settings.max_nodes if settings.max_nodes != UNLIMITED_NODES else 1
        width = settings.jobs_per_node * nodes
        options.update(maxBlocks=settings.slots, blockSlots=width,
                       blockWalltime=settings.max_block_walltime)
        for key, coaster_key in (("blockWalltime", "maxJobTime"), ("blockSlots", "tasksPerNode"),
                                 ("maxBlocks", "maxJobs")):
            if coaster_key not in own:
                options[key] = seen[key]
    # an idle block lingers as long as the logs show; with no block idle before its run
    # ended there, as long as the coaster settings let a worker idle
    idle = model.block_idle or [settings.max_worker_idle_time if settings else 0.0]
    options.update(blockQueueTime=_empirical(model.block_queue),
                   blockStartup=_empirical(model.block_startup),
                   blockSubmitTime=_empirical(model.block_submit),
                   serviceStartTime=_empirical(model.service_start),
                   blockIdleTime=_empirical(idle))
    return options


def _all_durations(model: SiteModel) -> list[float]:
    """Durations of apps the model has not seen: those of the apps it has, in seconds."""
    return [s for a in model.apps.values() if a.argument is None for s in a.samples]


def simulated_config(config: Config, model: Model, seed: int, *, as_seen: bool = False) -> Config:
    """``config`` with each selected site a sim site (ModelError: a site the model lacks);
    ``as_seen``: the sites' limits are the model's (the config is :func:`model_config_text`).

    ``seed`` also seeds the site selection policy: unseeded, the scheduler's choice
    between two sites came from the operating system's entropy, and one seed gave
    predictions 3-16% apart from one call to the next (docs/whatif.md, "Repeatable")."""
    names = config.selected_sites or list(config.sites)
    sites = dict(config.sites)
    for index, name in enumerate(names):
        site = config.sites.get(name)
        if site is None:
            continue  # the loader reports a selected site that is not configured
        options = sim_options(name, model.site(name), None if as_seen else site,
                              seed * 1000 + index)
        execution = dataclasses.replace(site.execution, type="sim", job_manager=None,
                                        options=options)
        sites[name] = dataclasses.replace(site, execution=execution)
    selection = {**config.site_selection_options, "seed": seed}
    return dataclasses.replace(config, sites=sites, site_selection_options=selection)


def model_config_text(model: Model) -> str:
    """A swift.conf of the model's sites as they were seen (when none is given)."""
    lines = [f"sites: [{', '.join(model.sites)}]"]
    for name, site in model.sites.items():
        width = int(site.limits.get("running", 0)) or 1000
        lines.append(f'site.{name} {{\n  execution {{ type: "sim" }}\n'
                     f'  maxParallelTasks: {width}\n  initialParallelTasks: {width}\n}}')
    return "\n".join(lines) + "\n"
