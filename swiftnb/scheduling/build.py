"""From a Config to the run's executor: sites, providers, policy, throttles, clock.

``build_executor(config, bus, ...)`` is the one place a run's executor is made; ``swiftnb
run``, the notebook kernel and the ``%%swift`` magic all come here.  A run with a single
local site gets the lean :class:`~swiftnb.scheduling.single.SingleSiteExecutor` (no
scores to keep: the local provider's throughput is the point), ``-dryrun`` a
:class:`~swiftnb.scheduling.single.DryRunExecutor`, every other run the
:class:`~swiftnb.scheduling.scheduler.Scheduler` over its sites.

Each enabled site's provider is made by the factory its ``execution.type`` names: one
given to :func:`register_provider`, swiftnb's own (``BUILT_IN``), or one another package
declares in the ``swiftnb.providers`` entry-point group (read only for a type that is
none of these: scanning the installed packages' metadata costs a tenth of a start).  A
factory is ``make_provider(site: SiteConfig, ctx: BuildContext) -> Provider``; it reads
the site's options through the provider's typed options class.  The imports are made
when a run needs them: a provider whose optional dependency is missing is reported as
such, not as an unknown type.

If every enabled site is simulated, the run gets a :class:`VirtualClock` and the event
bus is switched to it (``bus.clock``), so the events and the log carry simulated times and
the run takes seconds.  Sim sites mixed with real ones run in real time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.config.model import Config, ConfigError, SiteConfig
from swiftnb.engine.task import Executor
from swiftnb.events import EventBus
if TYPE_CHECKING:
    from swiftnb.execution.cdm import CdmPolicy

from swiftnb.scheduling.apps import AppCatalogue
from swiftnb.scheduling.clock import Clock, RealClock, VirtualClock
from swiftnb.config.types import flatten_options
from swiftnb.scheduling.options import OptionsError
from swiftnb.scheduling.provider import Provider, foreign_option
from swiftnb.scheduling.errors import SchedulerError
from swiftnb.scheduling.sites import Site
from swiftnb.nearest import close_matches

__all__ = ["build_executor", "build_sites", "register_provider", "BuildContext",
           "provider_factory", "check_sites"]

#: the entry-point group of provider factories
ENTRY_POINT_GROUP = "swiftnb.providers"


@dataclass(frozen=True)
class BuildContext:
    """What a provider factory may need besides its site's configuration."""

    config: Config
    bus: EventBus
    clock: Clock
    site_run: str = "run"
    keep_site_dir: bool = False
    cdm: CdmPolicy | None = None     # -cdm.file: the run's CDM rules

    def keep(self, site: SiteConfig) -> bool:
        """keepSiteDir for ``site``: the run's (-keepSiteDir) or the site's own."""
        return self.keep_site_dir or site.keep_site_dir

    def where(self, site: SiteConfig) -> str:
        return f"site.{site.name}.execution.options"

    def warn(self, text: str) -> None:
        """Say ``text`` once, on the console and in the log: a setting Swift 0.96 took
        that has no effect on this site (see :func:`warn`)."""
        warn(self.config, self.bus, text)

    def origin(self, site: SiteConfig) -> Callable[[str], str]:
        """key -> where it was written (``swift.conf:12``), for option messages."""
        def origin(key: str) -> str:
            found = self.config.origin_detail(f"{self.where(site)}.{key}")
            return found.location() if found is not None else ""

        return origin


ProviderFactory = Callable[[SiteConfig, BuildContext], Provider]
_REGISTERED: dict[str, ProviderFactory] = {}

_BATCH = "swiftnb.execution.batch.provider:make_provider"
#: swiftnb's own providers by execution type ("module:factory", imported when used): the
#: entry points pyproject.toml registers in ENTRY_POINT_GROUP, read from here so that a run
#: of a built-in type does not scan every installed package (tests/scheduling/
#: test_provider_entry_points.py keeps the two the same)
BUILT_IN: dict[str, str] = {
    "local": "swiftnb.execution.local:make_provider",
    "sim": "swiftnb.execution.sim:make_provider",
    "ssh": "swiftnb.execution.ssh:make_provider",
    "ssh-cl": "swiftnb.execution.ssh:make_provider",
    "coaster": "swiftnb.coasters:make_provider",
    "coaster-persistent": "swiftnb.coasters:make_provider",
    **{lrm: _BATCH for lrm in ("slurm", "sge", "pbs", "pbslocal", "lsf", "condor",
                               "condorlocal", "cobalt", "cobaltlocal", "moab")},
}


def register_provider(exec_type: str, factory: ProviderFactory) -> None:
    """Make ``execution.type: exec_type`` sites use providers built by ``factory``
    (before the entry points: a notebook may try a provider of its own)."""
    _REGISTERED[exec_type] = factory


def provider_factory(exec_type: str) -> ProviderFactory:
    """The factory of an execution type; SchedulerError says why there is none."""
    factory = _REGISTERED.get(exec_type)
    if factory is not None:
        return factory
    target = BUILT_IN.get(exec_type)
    if target is None:
        from importlib import metadata  # only here: a scan of every installed package

        points = {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}
        point = points.get(exec_type)
        if point is None:
            available = ", ".join(sorted(set(points) | set(_REGISTERED) | set(BUILT_IN)))
            raise SchedulerError(
                f'execution type "{exec_type}" has no provider in this version of swiftnb '
                f"(available: {available})")
        target = f"{point.module}:{point.attr}"
    try:  # one path for swiftnb's own entry points (BUILT_IN) and a package's
        module, _, name = target.partition(":")
        found: Any = importlib.import_module(module)
        for part in name.split("."):
            found = getattr(found, part)
        factory = found
    except ModuleNotFoundError as exc:
        missing = exc.name or str(exc)
        raise SchedulerError(
            f'execution type "{exec_type}" needs the Python package {missing}, which is not '
            f"installed here (pip install {missing.split('.')[0]})") from None
    _REGISTERED[exec_type] = factory
    return factory  # type: ignore[no-any-return]  # an entry point's make_provider


def _site_attributes(site: SiteConfig) -> dict[str, Any]:
    attrs = dict(site.execution.options)
    attrs.update(site.resources)
    return attrs


def _apps_of(config: Config, site: SiteConfig) -> frozenset[str] | None:
    if site.type == "sim" and not site.apps:
        return None  # a simulated site runs any app
    names = set(site.apps) | set(config.apps)
    if "ALL" in names:
        return None
    return frozenset(names)


def _make_provider(sc: SiteConfig, ctx: BuildContext) -> Provider:
    try:
        factory = provider_factory(sc.type)
    except SchedulerError as exc:
        raise SchedulerError(f"site.{sc.name}.execution.type: {exc}") from None
    try:
        provider = factory(sc, ctx)
    except SchedulerError:
        raise
    except (ValueError, ConfigError) as exc:  # a provider refusing its options; a
        # TypeError or any other error is a bug of the provider and reads as one
        text = str(exc)
        raise SchedulerError(text if sc.name in text else f"site {sc.name}: {text}") from None
    if not provider.takes_app_job_options:
        _refuse_app_job_options(sc, ctx)
    return provider


#: app option keys every site reads: the task's walltime and the brokerage policy's
#: requirements (seed 004)
_EVERY_SITE_APP_OPTIONS = frozenset({"maxwalltime", "maxWallTime", "cores", "coreCount",
                                     "memory", "ramCount", "architecture", "gpu"})


def _refuse_app_job_options(sc: SiteConfig, ctx: BuildContext) -> None:
    """An app's job options (``count``, ``jobType``, ``jobQueue``, ``mpi.*``, LRM keys)
    on a site that runs no job per task would be dropped: refuse them, with their line.
    (Not a warning: Swift 0.96's coasters ran an app of ``jobType`` MPI as one, which
    these sites cannot, so the app would run otherwise than its author asked.)"""
    apps = [(f"app.{name}", app) for name, app in ctx.config.apps.items()]
    apps += [(f"site.{sc.name}.app.{name}", app) for name, app in sc.apps.items()]
    for path, app in apps:
        for key in flatten_options(app.options):
            if key in _EVERY_SITE_APP_OPTIONS:
                continue
            found = (ctx.config.origin_detail(f"{path}.options.{key}")
                     or ctx.config.origin_detail(f"{path}.options"))
            place = f"{found.location()}: " if found is not None else ""
            foreign = foreign_option(key)
            if foreign is not None:  # another distribution's key: Swift/K took any key
                ctx.warn(f"{place}{path}.options.{key} has no effect on site {sc.name}: "
                         f"{foreign}; ignored")
                continue
            raise SchedulerError(
                f"{place}{path}.options.{key} has no effect on site {sc.name} (execution type "
                f"\"{sc.type}\"): only batch sites (slurm, sge, pbs, lsf, condor, cobalt) run "
                f"an app as a job of its own; give it to those sites' apps "
                f"(site.NAME.app.{path.rsplit('.', 1)[-1]}) or remove it")


def check_sites(config: Config) -> list[str]:
    """What is wrong with the sites' execution types and options (each site's provider
    reads its own), without starting anything: one message per site.  ``swiftnb
    check-config`` shows them; a run refuses them for the sites it uses.  What has no
    effect on a site joins ``config.warnings`` instead."""
    ctx = BuildContext(config, EventBus(), RealClock())
    problems = []
    for sc in config.sites.values():
        try:
            _make_provider(sc, ctx)
        except (SchedulerError, OptionsError) as exc:
            problems.append(str(exc))
    return problems


def build_sites(config: Config, bus: EventBus, clock: Clock, *, site_run: str = "run",
                keep_site_dir: bool = False,
                providers: Mapping[str, Provider] | None = None,
                cdm: CdmPolicy | None = None) -> list[Site]:
    """The Site objects of the enabled sites (``providers`` may supply ready providers)."""
    ctx = BuildContext(config, bus, clock, site_run, keep_site_dir, cdm)
    sites = []
    for sc in config.enabled_sites:
        provider = (providers or {}).get(sc.name) or _make_provider(sc, ctx)
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
        if sc.max_submit_rate:
            site.max_submit_rate = float(sc.max_submit_rate)
        if sc.job_throttle is not None:  # sites.xml karajan:jobThrottle
            site.job_throttle = float(sc.job_throttle)
        if sc.initial_score is not None:  # sites.xml karajan:initialScore
            site.score = float(sc.initial_score)
        site.refresh_limit()
        sites.append(site)
    return sites


def _check_policy_options(policy_name: str, options: Mapping[str, Any]) -> None:
    """``siteSelectionOptions`` keys the chosen policy does not take: name the key, the
    policy and what it does take (and the nearest), not a Python TypeError."""
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
            near = close_matches(key, known)
            raise SchedulerError(
                f"siteSelectionOptions.{key}: not an option of siteSelectionPolicy "
                f"\"{policy_name}\" ("
                + (f"it takes {', '.join(known)}" if known else "it takes none")
                + (f"; did you mean {near[0]}?" if near else ")")
                + (")" if near else ""))


def warn(config: Config, bus: EventBus, text: str) -> None:
    """A warning about the configuration, once: the CLI prints the configuration's
    warnings after its header (``swiftnb check-config`` after the tree), and the log has
    it as a WARNING line.

    What Swift 0.96's schema accepted but has no effect on a site (a batch queue on a
    coaster site whose blocks are local processes, PBS keys on a Slurm site, coaster keys
    on a batch site) is such a warning, not an error: a configuration written for Swift
    runs unchanged, and its author is told what is ignored and where."""
    if text in config.warnings:
        return
    config.warnings.append(text)
    bus.emit("WARNING", {}, text=f"Warning: {text}")


def _warn_mixed_sim(config: Config, bus: EventBus) -> None:
    """Simulated sites next to real ones cannot use virtual time: their queue and run
    times pass on the wall clock.  Say so once (console and log), or a run with a
    ``queueTime: 3600`` sim site looks hung."""
    sim = [sc.name for sc in config.enabled_sites if sc.type == "sim"]
    if not sim:
        return
    real = [sc.name for sc in config.enabled_sites if sc.type != "sim"]
    text = (f"simulated site{'s' if len(sim) > 1 else ''} {', '.join(sim)} "
            f"run{'' if len(sim) > 1 else 's'} in real time "
            f"(not virtual time) because {', '.join(real)} {'are' if len(real) > 1 else 'is'} "
            "real; see docs/scheduling.md")
    warn(config, bus, text)


def _single_local_site(config: Config) -> SiteConfig | None:
    """The one local site of a run that needs no scheduler, or None."""
    sites = config.enabled_sites
    if (len(sites) != 1 or sites[0].type != "local" or config.clustering_enabled
            or config.replication_enabled):
        return None
    if sites[0].initial_parallel_tasks < sites[0].max_parallel_tasks:
        return None  # it starts lower and grows with its score: the scheduler's job
    return sites[0]


def build_executor(
    config: Config,
    bus: EventBus,
    *,
    site_run: str = "run",
    keep_site_dir: bool = False,
    providers: Mapping[str, Provider] | None = None,
    clock: Clock | None = None,
    seed: int | None = None,
    dryrun: bool = False,
    cdm: CdmPolicy | None = None,
) -> Executor:
    """The run's executor, from the configuration (policy, throttles, sites, clock)."""
    from swiftnb.scheduling.single import DryRunExecutor, SingleSiteExecutor

    if dryrun:
        return DryRunExecutor(bus)
    if not config.enabled_sites:
        raise SchedulerError("No sites enabled")
    local = _single_local_site(config) if not providers else None
    if local is not None:
        ctx = BuildContext(config, bus, clock or RealClock(), site_run, keep_site_dir, cdm)
        return SingleSiteExecutor(
            _make_provider(local, ctx), bus, max_parallel=local.max_parallel_tasks,
            job_submit=config.job_submit_throttle,
            host_job_submit=config.host_job_submit_throttle,
            file_transfers=config.file_transfers_throttle,
            file_operations=config.file_operations_throttle,
            apps=AppCatalogue(config))
    if clock is None:
        all_sim = all(sc.type == "sim" for sc in config.enabled_sites)
        if all_sim:
            clock = VirtualClock()
            bus.clock = clock.now
        else:
            clock = RealClock()
            _warn_mixed_sim(config, bus)
    sites = build_sites(config, bus, clock, site_run=site_run, keep_site_dir=keep_site_dir,
                        providers=providers, cdm=cdm)
    options = dict(config.site_selection_options)
    if seed is None and "seed" in options:
        seed = int(options.pop("seed"))
    options.pop("seed", None)
    policy_name = config.site_selection_policy or "weighted"
    from swiftnb.scheduling.policies import make_policy

    _check_policy_options(policy_name, options)
    try:
        policy = make_policy(policy_name, **options)
    except (ValueError, TypeError) as exc:
        raise SchedulerError(f"siteSelectionPolicy: {exc}") from None
    clustering = None
    if config.clustering_enabled:
        from swiftnb.scheduling.clustering import ClusteringSettings

        clustering = ClusteringSettings(True, float(config.clustering_min_time),
                                        float(config.clustering_queue_delay))
    from swiftnb.scheduling.scheduler import Scheduler  # (a one-site run never needs it)

    return Scheduler(
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
        apps=AppCatalogue(config),
    )

