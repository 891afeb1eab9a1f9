"""From a Config to a running Scheduler: sites, providers, policy, throttles, clock.

``build_executor(config, bus)`` is what ``swiftnb run`` and the notebook kernel call.
Each enabled site becomes a :class:`~swiftnb.scheduling.sites.Site` whose provider comes
from a factory registered for its ``execution.type``:

* ``local`` -> :class:`swiftnb.execution.local.LocalProvider`;
* ``sim`` -> :class:`swiftnb.execution.sim.SimProvider`;
* any other type -> ``register_provider(type, factory)``, or a module
  ``swiftnb.execution.<type>`` (``-`` read as ``_``) or, for ``coaster*`` types,
  ``swiftnb.coasters``, defining ``make_provider(site, ctx) -> Provider``.

A factory is called as ``factory(site: SiteConfig, ctx: BuildContext)``.  The imports are
made when a run needs them, so scheduling does not depend on the providers' modules.

If every enabled site is simulated, the run gets a :class:`VirtualClock` and the event
bus is switched to it (``bus.clock``), so the events and the log carry simulated times and
the run takes seconds.  Sim sites mixed with real ones run in real time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from swiftnb.engine.task import Task
from swiftnb.events import EventBus
from swiftnb.scheduling.clock import Clock, RealClock, VirtualClock
from swiftnb.scheduling.scheduler import Scheduler, SchedulerError
from swiftnb.scheduling.sites import Site

__all__ = ["build_executor", "build_sites", "register_provider", "BuildContext",
           "PROVIDER_FACTORIES"]


@dataclass
class BuildContext:
    """What a provider factory may need besides its site's configuration."""

    config: Any
    bus: EventBus
    clock: Clock
    site_run: str | None = None
    keep_site_dir: bool = False


ProviderFactory = Callable[[Any, BuildContext], Any]
PROVIDER_FACTORIES: dict[str, ProviderFactory] = {}


def register_provider(exec_type: str, factory: ProviderFactory) -> None:
    """Make ``execution.type: exec_type`` sites use providers built by ``factory``."""
    PROVIDER_FACTORIES[exec_type] = factory


def _local(site: Any, ctx: BuildContext) -> Any:
    import os

    from swiftnb.execution.local import LocalProvider

    kwargs: dict[str, Any] = {}
    scratch = getattr(site, "scratch", None)
    if scratch:  # node-local copies of inputs (LocalProvider takes an absolute path)
        kwargs["scratch"] = scratch if os.path.isabs(scratch) else os.path.abspath(scratch)
    return LocalProvider(site.name, work_dir=site.work_directory, site_run=ctx.site_run,
                         keep=ctx.keep_site_dir or bool(getattr(site, "keep_site_dir", False)),
                         always_info=bool(getattr(ctx.config, "always_transfer_wrapper_log",
                                                  False)),
                         **kwargs)


def _sim(site: Any, ctx: BuildContext) -> Any:
    from swiftnb.execution.sim import SimProvider

    return SimProvider(site.name, dict(site.execution.options), clock=ctx.clock)


register_provider("local", _local)
register_provider("sim", _sim)


def _factory_for(exec_type: str) -> ProviderFactory:
    factory = PROVIDER_FACTORIES.get(exec_type)
    if factory is not None:
        return factory
    modules = [f"swiftnb.execution.{exec_type.replace('-', '_')}"]
    if exec_type.startswith("coaster"):
        modules.insert(0, "swiftnb.coasters")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        make = getattr(module, "make_provider", None)
        if make is not None:
            PROVIDER_FACTORIES[exec_type] = make
            return make
    available = sorted(set(PROVIDER_FACTORIES) | {"coaster"})
    raise SchedulerError(
        f'execution type "{exec_type}" has no provider in this version of swiftnb '
        f"(available: {', '.join(available)})")


def _site_attributes(site: Any) -> dict[str, Any]:
    attrs = dict(getattr(site.execution, "options", {}) or {})
    attrs.update(getattr(site, "resources", {}) or {})
    return attrs


def _apps_of(config: Any, site: Any) -> frozenset[str] | None:
    if site.type == "sim" and not site.apps:
        return None  # a simulated site runs any app
    names = set(site.apps) | set(getattr(config, "apps", {}) or {})
    if "ALL" in names:
        return None
    return frozenset(names)


def build_sites(config: Any, bus: EventBus, clock: Clock, *, site_run: str | None = None,
                keep_site_dir: bool = False,
                providers: Mapping[str, Any] | None = None) -> list[Site]:
    """The Site objects of the enabled sites (``providers`` may supply ready providers)."""
    ctx = BuildContext(config, bus, clock, site_run, keep_site_dir)
    sites = []
    for sc in config.enabled_sites:
        provider = (providers or {}).get(sc.name)
        if provider is None:
            try:
                factory = _factory_for(sc.type)
            except SchedulerError as exc:
                raise SchedulerError(f"site.{sc.name}.execution.type: {exc}") from None
            try:
                provider = factory(sc, ctx)
            except SchedulerError:
                raise
            except (ValueError, TypeError) as exc:  # a provider refusing its options
                text = str(exc)
                raise SchedulerError(text if sc.name in text else f"site {sc.name}: {text}") \
                    from None
        try:
            site = Site(
                sc.name, provider,
                max_parallel_tasks=sc.max_parallel_tasks,
                initial_parallel_tasks=sc.initial_parallel_tasks,
                delay_base=float(sc.delay_base),
                apps=_apps_of(config, sc),
                attributes=_site_attributes(sc),
            )
        except ValueError as exc:
            raise SchedulerError(f"site '{sc.name}': {exc}") from None
        if getattr(sc, "max_submit_rate", None):
            site.max_submit_rate = float(sc.max_submit_rate)
        if getattr(sc, "job_throttle", None) is not None:  # sites.xml karajan:jobThrottle
            site.job_throttle = float(sc.job_throttle)
        if getattr(sc, "initial_score", None) is not None:  # sites.xml karajan:initialScore
            site.score = float(sc.initial_score)
        site.refresh_limit()
        sites.append(site)
    return sites


def app_resolver(config: Any) -> Callable[[Site, Task], Task]:
    """Fill a task's executable, env and walltime from the app definition on its site."""
    cache: dict[tuple[str, str], Any] = {}

    def resolve(site: Site, task: Task) -> Task:
        key = (site.name, task.tr)
        app = cache.get(key, cache)
        if app is cache:
            app = cache[key] = config.app_for(site.name, task.tr)
        if app is None:
            return task
        changes: dict[str, Any] = {}
        executable = app.executable_for(task.tr)
        if task.executable is None and executable != task.tr:
            changes["executable"] = executable
        if app.env:
            changes["env"] = {**app.env, **task.env}
        if task.maxwalltime is None and app.max_wall_time:
            changes["maxwalltime"] = float(app.max_wall_time)
        return replace(task, **changes) if changes else task

    return resolve


def _check_policy_options(policy_name: str, options: Mapping[str, Any]) -> None:
    """``siteSelectionOptions`` keys the chosen policy does not take: name the key, the
    policy and what it does take (and the nearest), not a Python TypeError."""
    import difflib
    import inspect

    from swiftnb.scheduling.policies import POLICIES

    cls = POLICIES.get(str(policy_name).lower())
    if cls is None or not options:
        return
    params = inspect.signature(cls.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    known = [n for n in params if n != "self"]
    for key in options:
        if key not in known:
            near = difflib.get_close_matches(key, known, n=1)
            raise SchedulerError(
                f"siteSelectionOptions.{key}: not an option of siteSelectionPolicy "
                f"\"{policy_name}\" ("
                + (f"it takes {', '.join(known)}" if known else "it takes none")
                + (f"; did you mean {near[0]}?" if near else ")")
                + (")" if near else ""))


def _warn_mixed_sim(config: Any, bus: EventBus) -> None:
    """Simulated sites next to real ones cannot use virtual time: their queue and run
    times pass on the wall clock.  Say so once (console and log), or a run with a
    ``queueTime: 3600`` sim site looks hung."""
    sim = [sc.name for sc in config.enabled_sites if sc.type == "sim"]
    if not sim:
        return
    real = [sc.name for sc in config.enabled_sites if sc.type != "sim"]
    text = (f"simulated site{'s' if len(sim) > 1 else ''} {', '.join(sim)} run{'' if len(sim) > 1 else 's'} in real time "
            f"(not virtual time) because {', '.join(real)} {'are' if len(real) > 1 else 'is'} "
            "real; see docs/scheduling.md")
    warnings = getattr(config, "warnings", None)
    if isinstance(warnings, list) and text not in warnings:
        warnings.append(text)  # the CLI prints the configuration's warnings after its header
    bus.emit("WARNING", {}, text=f"Warning: {text}")


def build_executor(
    config: Any,
    bus: EventBus,
    *,
    site_run: str | None = None,
    keep_site_dir: bool = False,
    providers: Mapping[str, Any] | None = None,
    clock: Clock | None = None,
    seed: int | None = None,
) -> Scheduler:
    """The run's Scheduler, from the configuration (policy, throttles, sites, clock)."""
    if clock is None:
        all_sim = bool(config.enabled_sites) and all(
            sc.type == "sim" for sc in config.enabled_sites)
        if all_sim:
            clock = VirtualClock()
            bus.clock = clock.now
        else:
            clock = RealClock()
            _warn_mixed_sim(config, bus)
    sites = build_sites(config, bus, clock, site_run=site_run, keep_site_dir=keep_site_dir,
                        providers=providers)
    options = dict(getattr(config, "site_selection_options", {}) or {})
    if seed is None and "seed" in options:
        seed = int(options.pop("seed"))
    options.pop("seed", None)
    policy_name = getattr(config, "site_selection_policy", "weighted") or "weighted"
    from swiftnb.scheduling.policies import make_policy

    _check_policy_options(policy_name, options)
    try:
        policy = make_policy(policy_name, **options)
    except (ValueError, TypeError) as exc:
        raise SchedulerError(f"siteSelectionPolicy: {exc}") from None
    clustering = None
    if getattr(config, "clustering_enabled", False):
        from swiftnb.scheduling.clustering import ClusteringSettings

        clustering = ClusteringSettings(True, float(config.clustering_min_time),
                                        float(config.clustering_queue_delay))
    sched = Scheduler(
        sites, bus, policy=policy, clock=clock, seed=seed,
        job_submit_throttle=config.job_submit_throttle,
        host_job_submit_throttle=config.host_job_submit_throttle,
        file_transfers_throttle=config.file_transfers_throttle,
        file_operations_throttle=config.file_operations_throttle,
        replication_enabled=config.replication_enabled,
        replication_min_queue_time=config.replication_min_queue_time,
        replication_limit=config.replication_limit,
        clustering=clustering,
        site_run=site_run,
    )
    sched.resolve_app = app_resolver(config)
    return sched
