"""CoasterProvider: the scheduler-facing provider of a ``type: "coaster"`` site.

It owns one :class:`~swiftnb.coasters.service.CoasterService` (started on first use) and
turns each ``execute(task, report)`` into a queued coaster task.  A ``coaster-persistent``
site has a :class:`~swiftnb.coasters.persistent.ServiceClient` instead, connected to the
running service at ``execution.URL``; a ``workerManager: "passive"`` site's service starts
no blocks and prints the command that starts a worker by hand.  Status reports follow a
Swift 0.96 coaster run (seed 002): 8 (submitting), 1 (submitted, queued in the service),
16 ``workerid=B:W`` (a worker began it), 2 ``workerid=B:W`` (the app started), 17 (stage
out), then 7 (completed) or 5 with a message.  A task whose worker dies is reported
``5`` with a message saying why, then ``1`` again, and runs elsewhere.

swift.conf::

    site.cluster {
        execution { type: "coaster", jobManager: "local:local",
                    options { maxJobs: 2, tasksPerNode: 2, maxJobTime: "00:10:00" } }
        workDirectory: "swiftwork"
    }
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
import os
import shutil
import sys
from typing import TYPE_CHECKING, Any

from swiftnb.coasters.appoptions import AppOption, block_job_options, mpi_problems
from swiftnb.coasters.blocks import BOOTS, BlockProvider, block_provider_for, split_job_manager
from swiftnb.coasters.cluster import CLUSTER_KEYS, ClusterBlockProvider, make_block_provider
from swiftnb.coasters.servicerecords import StageOut
from swiftnb.execution.staging import Stager
from swiftnb.coasters.mpi import MpiShape, launch_spec, mpi_shape, slots_problem
from swiftnb.coasters.persistent import ServiceAddress, ServiceClient
from swiftnb.coasters.planner import admission_error
from swiftnb.coasters.service import CoasterService, CoasterStartError
from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings
from swiftnb.config.types import flatten_options
from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.execution.joblog import InfoWriter
from swiftnb.scheduling.provider import (BlockState, Job, Provider, ProviderError, ProviderState,
                                         StatusReporter)

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.remote.wrapper import JobSpec

__all__ = ["CoasterProvider"]


def worker_log_dir(options: dict[str, Any] | None) -> str | None:
    """Where workers log (``workerLoggingLevel`` other than NONE turns it on, into
    ``workerLoggingDirectory``, default ``~/.globus/coasters`` as in Swift)."""
    options = options or {}
    level = str(options.get("workerLoggingLevel", "NONE")).upper()
    if level == "NONE":
        return None
    return os.path.expanduser(str(options.get("workerLoggingDirectory", "~/.globus/coasters")))


def _warn_on(bus: EventBus, text: str) -> None:
    """A warning about a site built without a run's configuration (a notebook's dict)."""
    bus.emit("WARNING", {}, text=f"Warning: {text}")


class CoasterProvider(Provider):
    """Runs a site's tasks on coaster blocks (pilot jobs) through a block provider."""

    #: apps' options are read here: MPI keys by the task, batch keys of app.ALL by the
    #: blocks, the rest warned of (:mod:`swiftnb.coasters.appoptions`)
    takes_app_job_options = True

    def __init__(
        self,
        name: str = "coaster",
        options: dict[str, Any] | None = None,
        *,
        bus: EventBus | None = None,
        job_manager: str | None = "local:local",
        work_dir: str | None = None,
        site_run: str | None = None,
        keep: bool = False,
        settings: CoasterSettings | None = None,
        block_provider: BlockProvider | None = None,
        log_dir: str | None = None,
        remote: ServiceAddress | None = None,
        stager: Stager | None = None,
        always_info: bool = False,
        info_per_job: bool = False,
    ) -> None:
        self.name = name
        self.settings = settings or CoasterSettings.from_options(options)
        self.bus = bus if bus is not None else EventBus()
        self.job_manager = job_manager or "local:local"
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        if log_dir is None:
            log_dir = worker_log_dir(options)
        self.log_dir = log_dir
        #: coaster-persistent: the running service this site's tasks go to (no blocks here)
        self.remote = remote
        # resolve the block provider now, so a bad jobManager fails at configuration time
        self._block_provider: BlockProvider | None = None if remote is not None else (
            block_provider or block_provider_for(self.job_manager, log_dir=log_dir,
                                                 log_level=_log_level(options)))
        #: for blocks whose nodes do not share this machine's files (ssh-cl)
        self.stager = stager
        self.service: CoasterService | ServiceClient | None = None
        self._starting: asyncio.Future[None] | None = None
        self._site_dirs: set[str] = set()
        #: alwaysTransferWrapperLog: a record of every call (else of failures only),
        #: appended to the run's jobs-info as the local and SSH sites do
        self.always_info = always_info
        self._info = InfoWriter(background=True, bus=self.bus, per_job=info_per_job)

    @classmethod
    def from_site(cls, site: SiteConfig | dict[str, Any], bus: EventBus | None = None, *,
                  keep: bool = False,
                  origin: Callable[[str], str] | None = None,
                  host_name: str | None = None,
                  port_range: tuple[int, int] | None = None,
                  cdm: CdmPolicy | None = None,
                  warn: Callable[[str], None] | None = None,
                  app_options: Sequence[AppOption] = (),
                  **kwargs: Any) -> CoasterProvider:
        """From a ``swiftnb.config`` SiteConfig or a plain dict (a notebook's).

        ``keep`` (keepSiteDir from the run) is or-ed with the site's own setting;
        ``host_name`` and ``port_range`` are swift.conf's global ``hostName`` and
        ``TCPPortRange``.  ``warn`` is told of options Swift 0.96 took that have no
        effect on this site (default: a WARNING event on ``bus``).  ``app_options`` are
        the options of the apps the site runs: the batch job options of ``app.ALL`` go to
        the blocks (:mod:`swiftnb.coasters.appoptions`).
        """
        bus = bus if bus is not None else EventBus()
        if warn is None:
            warn = functools.partial(_warn_on, bus)
        if isinstance(site, dict):
            execution = site.get("execution", {})
            name = site.get("name", "coaster")
            where = f"site.{name}.execution.options"
            if execution.get("type") == "coaster-persistent":
                return cls._persistent(name, execution.get("URL"), execution.get("jobManager"),
                                       dict(execution.get("options") or {}), where, origin,
                                       warn, bus=bus,
                                       work_dir=site.get("workDirectory"),
                                       keep=keep or bool(site.get("keepSiteDir", False)),
                                       **kwargs)
            settings = _with_globals(
                CoasterSettings.from_options(execution.get("options"), prefix=where),
                host_name, port_range)
            job_manager = execution.get("jobManager")
            if settings.passive and job_manager:
                job_manager = _passive_job_manager(job_manager.strip(), name, warn)
            return cls(name, execution.get("options"), bus=bus,
                       job_manager=job_manager,
                       work_dir=site.get("workDirectory"),
                       keep=keep or bool(site.get("keepSiteDir", False)),
                       settings=settings, **kwargs)
        execution = site.execution
        options = dict(execution.options or {})
        if site.type == "coaster-persistent":
            _blocks_options(app_options, site.name, "a coaster-persistent site (the running "
                            "service submits its own blocks)", None, warn)
            _check_mpi(app_options, site.name, None, warn)
            return cls._persistent(site.name, execution.URL, execution.job_manager, options,
                                   f"site.{site.name}.execution.options", origin, warn, bus=bus,
                                   work_dir=site.work_directory,
                                   keep=keep or site.keep_site_dir, **kwargs)
        where = f"site.{site.name}.execution.options"
        job_manager = (execution.job_manager or "local:local").strip()
        boot, lrm = split_job_manager(job_manager)
        if boot not in BOOTS:
            raise CoasterConfigError(
                f'execution.jobManager "{job_manager}": no coaster boot method \'{boot}\' '
                f"(one of {', '.join(BOOTS)}: BOOT names where the blocks are submitted from)")
        planner_options = {k: v for k, v in options.items() if k not in CLUSTER_KEYS}
        settings = _with_globals(
            CoasterSettings.from_options(planner_options, prefix=where, origin=origin),
            host_name, port_range)
        if settings.passive:
            job_manager = _passive_job_manager(job_manager, site.name, warn)
            boot, lrm = split_job_manager(job_manager)
        carried = _blocks_options(app_options, site.name, f'jobManager "{job_manager}"',
                                  None if (boot, lrm) == ("local", "local") else lrm, warn)
        written = options.get("jobOptions")
        if carried and (written is None or isinstance(written, Mapping)):
            # under the site's own jobOptions, which win
            options["jobOptions"] = {**carried, **flatten_options(written or {})}
        own = {k: v for k, v in options.items() if k in CLUSTER_KEYS}
        _check_mpi(app_options, site.name,
                   None if settings.passive else settings.max_width, warn)
        if (boot, lrm) == ("local", "local"):
            for key in sorted(own):  # Swift 0.96 took them and did nothing with them
                place = origin(key) if origin is not None else ""
                warn(f"{place + ': ' if place else ''}{where}.{key} has no effect with "
                     f'jobManager "local:local" (blocks are processes on this machine, not '
                     f"batch jobs); ignored")
        else:
            try:
                kwargs["block_provider"] = make_block_provider(
                    site, boot, lrm, own, site_run=kwargs.get("site_run") or "run",
                    bus=bus, where=where,
                    internal_host=settings.internal_hostname,
                    port_range=_range_text(port_range),
                    log_level=str(options.get("workerLoggingLevel", "NONE")),
                    log_dir=options.get("workerLoggingDirectory"), origin=origin,
                    tasks_per_node=settings.jobs_per_node, warn=warn)
            except ValueError as exc:
                raise CoasterConfigError(str(exc)) from None
            if boot == "ssh-cl":
                # the workers come back through the SSH connection's forward: the service
                # listens on this machine's loopback only (internalHostName is the relay's;
                # the global hostName is for sites whose workers reach this machine)
                if "listenAddress" in options:
                    place = origin("listenAddress") if origin is not None else ""
                    raise CoasterConfigError(
                        f"{place + ': ' if place else ''}{where}.listenAddress has no effect "
                        "with an ssh-cl jobManager: the service listens on this machine's "
                        "loopback and its workers come through the SSH connection (the relay "
                        "on the login node listens at internalHostName)")
                settings = dataclasses.replace(settings, internal_hostname=None, host_name=None,
                                               listen_address="127.0.0.1")
                blocks = kwargs["block_provider"]
                try:
                    kwargs["stager"] = Stager(
                        blocks.shell, site=site.name, host=blocks.shell.name, mode=site.staging,
                        scratch=site.scratch, cdm=cdm, keep=keep or site.keep_site_dir, bus=bus,
                        site_run=kwargs.get("site_run") or "run", provider="coaster")
                except ValueError as exc:
                    raise CoasterConfigError(str(exc)) from None
        return cls(site.name, options, bus=bus,
                   job_manager=job_manager,
                   work_dir=site.work_directory,
                   keep=keep or site.keep_site_dir,
                   settings=settings,
                   **kwargs)

    @classmethod
    def _persistent(cls, name: str, url: str | None, job_manager: str | None,
                    options: dict[str, Any], where: str,
                    origin: Callable[[str], str] | None, warn: Callable[[str], None],
                    **kwargs: Any) -> CoasterProvider:
        """A coaster-persistent site: ``execution.URL`` is the running service; only
        ``secretFile`` and ``defaultWalltime`` mean something here (the service plans
        its own blocks, or none): the others are told to ``warn`` and left out."""
        def place(key: str) -> str:
            found = origin(key) if origin is not None else ""
            return f"{found}: " if found else ""

        if not url:
            raise CoasterConfigError(f"site.{name}.execution.URL: a coaster-persistent site "
                                     "needs the running service's address (HOST:PORT)")
        # 0.96's persistent-coaster configurations name "local:local" as a matter of form
        # (a passive service ignored it): taken; a batch jobManager would not be honoured
        if job_manager and job_manager.strip() not in ("local", "local:local"):
            raise CoasterConfigError(
                f"site.{name}.execution.jobManager has no effect on a coaster-persistent "
                "site: the running service starts its own blocks (swiftnb coaster-service "
                "-jobmanager ...) or none (-passive); remove it")
        for key in [k for k in options if k not in _PERSISTENT_KEYS]:
            warn(f"{place(key)}{where}.{key} has no effect on a coaster-persistent site: "
                 "the running service has its own settings (swiftnb coaster-service "
                 f"-option {key}=...); only {', '.join(sorted(_PERSISTENT_KEYS))} apply "
                 "here; ignored")
            del options[key]
        try:
            address = ServiceAddress.from_url(url, options.get("secretFile"))
        except ValueError as exc:
            raise CoasterConfigError(f"site.{name}.{exc}") from None
        settings = CoasterSettings.from_options(
            {k: v for k, v in options.items() if k != "secretFile"}, prefix=where, origin=origin)
        return cls(name, options, settings=settings, job_manager="local:local",
                   remote=address, **kwargs)

    # -- Provider -----------------------------------------------------------------------

    async def start(self) -> None:
        if self.service is not None:
            return
        if self._starting is not None:
            await asyncio.shield(self._starting)
            return
        self._starting = asyncio.get_running_loop().create_future()
        service: CoasterService | ServiceClient
        try:
            if self.remote is not None:
                service = ServiceClient(self.remote, site=self.name)
                await service.start()
            else:
                assert self._block_provider is not None
                service = CoasterService(self.settings, self._block_provider, bus=self.bus,
                                         site=self.name)
                try:
                    await service.start()
                except CoasterStartError as exc:
                    raise ProviderError(FailureKind.SUBMIT_REFUSED, str(exc)) from None
                if self.settings.passive:
                    self._announce_passive(service)
        except BaseException as exc:
            self._starting.set_exception(exc)
            self._starting.exception()  # mark retrieved
            self._starting = None
            raise
        self.service = service
        self._starting.set_result(None)

    def _announce_passive(self, service: CoasterService) -> None:
        """Tell the person how to start workers: on the console (as the engine's own
        warnings go there) and as a WARNING event (the log, the notebook's panels)."""
        from swiftnb.remote.payload import payload_file

        path = service.write_secret_file()
        text = (f"coaster site {self.name} is passive (workerManager \"passive\"): it starts "
                f"no workers; its tasks wait until one connects.  Start a worker with:\n"
                f"    {service.worker_command()}\n"
                f"(on another machine: copy {payload_file()} and run it as "
                f"`python3 _swiftremote.pyz worker` with the same options, without "
                f"--wrapper; copy the secret file "
                f"{path} with mode 0600; each worker runs tasksPerNode = "
                f"{self.settings.jobs_per_node} task(s) at once)")
        sys.stderr.write(f"Warning: {text}\n")
        sys.stderr.flush()
        self.bus.emit("WARNING", {}, text=f"Warning: {text}", level="WARN")

    def spec(self, task: Task) -> JobSpec:
        from swiftnb.remote import wrapper

        return wrapper.spec_from_task(
            task, site=self.name, work_dir=self.work_dir, site_run=self.site_run, keep=self.keep,
            walltime=task.maxwalltime or None)

    def prepare(self, task: Task) -> Job:
        """The task's job: its wrapper spec, which names its job directory."""
        from swiftnb.remote import wrapper

        spec = self.spec(task)
        return Job(task, wrapper.job_dir_relative(spec), spec)

    async def execute(self, job: Job, report: StatusReporter) -> TaskResult:
        task = job.task
        report.status(TaskStatus.SUBMITTING)
        walltime = int(task.maxwalltime) if task.maxwalltime else self.settings.default_walltime
        error = admission_error(walltime, self.settings)
        shape: MpiShape | None = None
        if error is None:
            shape, error = self._mpi_shape(task)
        if error is not None:
            report.status(TaskStatus.FAILED, message=error)
            return TaskResult(ok=False, message=error, site=self.name,
                              failure=FailureKind.SUBMIT_REFUSED)
        if self.service is None:
            await self.start()
        assert self.service is not None
        stage_out: StageOut | None = None
        base = ""
        if self.stager is not None:
            # the blocks' nodes see the cluster's files, not this machine's: stage through
            # the login node's shell, as an ssh site does
            try:
                assert isinstance(self._block_provider, ClusterBlockProvider)
                self.stager.site_dir = await self._block_provider.prepare()
                spec, base = await self.stager.stage_in(task, report)
            except ProviderError as exc:
                report.status(TaskStatus.FAILED, message=str(exc))
                return TaskResult(ok=False, message=str(exc), site=self.name, failure=exc.kind)
            stager, staged_spec, staged_base = self.stager, spec, base

            async def stage_out(result: dict[str, Any]) -> dict[str, Any]:
                return await stager.stage_out(task, staged_spec, staged_base, result, report)
        else:
            spec = job.spec if job.spec is not None else self.spec(task)
            self._site_dirs.add(os.path.join(spec["work_dir"], spec["site_run"]))
        wire: dict[str, Any] = dict(spec)  # what the worker reads (MPI adds its keys)
        if shape is not None:
            wire = launch_spec(wire, shape)
        future = self.service.submit(task.jobid, walltime, wire, report, stage_out=stage_out,
                                     record=functools.partial(self._record, task.run_dir, spec))
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            if self.service is not None:
                self.service.cancel(future)
            report.status(TaskStatus.CANCELED)
            raise
        finally:
            if self.stager is not None and self.stager.per_job and base:
                await self.stager.forget(base)

    def _record(self, run_dir: str, spec: JobSpec, result: dict[str, Any]) -> None:
        """The -info record of a call that ran on a worker: of a failure, and of a
        success too with alwaysTransferWrapperLog (Swift 0.96 brought every job's wrapper
        log back); the worker's result carries what the record says."""
        if self.always_info or not result.get("ok"):
            self._info.write(run_dir, spec, result)

    def _mpi_shape(self, task: Task) -> tuple[MpiShape | None, str | None]:
        """(the task's MPI shape, or why it cannot run here): its slots must fit one
        block (a passive or persistent service's workers say their own)."""
        try:
            shape = mpi_shape(task.profiles, task.tr)
        except ValueError as exc:
            return None, f"site {self.name}: {exc}"
        if shape is not None and self.remote is None and not self.settings.passive:
            problem = slots_problem(self.name, task.tr, shape, self.settings.max_width)
            if problem is not None:
                return None, problem
        return shape, None

    async def shutdown(self) -> None:
        if self.service is not None:
            await self.service.shutdown()
        elif self._block_provider is not None:
            await self._block_provider.close()
        self._info.close()  # every -info record on disk before the run reports its end
        if isinstance(self._block_provider, ClusterBlockProvider):
            await self._block_provider.cleanup(self.keep)
        if not self.keep:
            for site_dir in self._site_dirs:
                shutil.rmtree(site_dir, ignore_errors=True)
                try:
                    os.rmdir(os.path.dirname(site_dir))
                except OSError:
                    pass
        self._site_dirs.clear()

    def state(self) -> ProviderState:
        detail: dict[str, object] = {"jobManager": self.job_manager}
        if self.service is None:
            return ProviderState(site=self.name, type="coaster", detail=detail)
        snap = self.service.state()
        counts = snap["counts"]
        blocks = tuple(
            BlockState(id=str(b["id"]), state=str(b["state"]), workers=int(b["connected_workers"]),
                       running=int(b["running"]), time_left=b["time_left"])
            for b in snap["blocks"])
        return ProviderState(
            site=self.name, type="coaster", submitted=int(counts.get("submitted", 0)),
            queued=snap["holding"] + snap["queued"], running=snap["running"],
            completed=int(counts.get("completed", 0)), failed=int(counts.get("failed", 0)),
            canceled=int(counts.get("canceled", 0)), blocks=blocks, detail=detail)


#: the options of a coaster-persistent site (everything else is the service's)
_PERSISTENT_KEYS = frozenset({"secretFile", "defaultWalltime"})


def _blocks_options(app_options: Sequence[AppOption], site: str, blocks: str,
                    lrm_name: str | None, warn: Callable[[str], None]) -> dict[str, str]:
    """The batch job options of the site's ``app.ALL`` that its blocks carry (warning of
    those with no effect here); CoasterConfigError for one that cannot work."""
    from swiftnb.execution.batch.lrm import lrm_class

    lrm = None
    if lrm_name is not None:
        try:
            lrm = lrm_class(lrm_name)
        except ValueError:
            return {}  # make_block_provider names the unknown batch system
    carried, problems = block_job_options(app_options, site=site, blocks=blocks, lrm=lrm,
                                          warn=warn)
    if problems:
        raise CoasterConfigError("; ".join(problems))
    return carried


def _check_mpi(app_options: Sequence[AppOption], site: str, per_block: int | None,
               warn: Callable[[str], None]) -> None:
    """CoasterConfigError for MPI keys that cannot be read (:func:`mpi_problems`)."""
    problems = mpi_problems(app_options, site=site, per_block=per_block, warn=warn)
    if problems:
        raise CoasterConfigError("; ".join(problems))


def _with_globals(settings: CoasterSettings, host_name: str | None,
                  port_range: tuple[int, int] | None) -> CoasterSettings:
    """The site's settings with swift.conf's hostName and TCPPortRange."""
    return dataclasses.replace(settings, host_name=host_name, port_range=port_range)


def _passive_job_manager(job_manager: str, site: str, warn: Callable[[str], None]) -> str:
    """The jobManager a passive site uses.  Swift 0.96 took any jobManager with
    ``workerManager: "passive"``: its service starts no blocks, the user starts workers by
    hand, so a batch system named there is not used (``local:slurm`` is told to ``warn``
    and the site runs as ``local:local``).  An ``ssh-cl`` service here listens on this
    machine's loopback for workers that come through the SSH connection its blocks open,
    which a passive site never opens: refused, with what to write instead."""
    boot, lrm = split_job_manager(job_manager)
    if (boot, lrm) == ("local", "local"):
        return job_manager
    if boot != "local":
        raise CoasterConfigError(
            f'site.{site}.execution.jobManager "{job_manager}" with workerManager "passive": '
            f"an {boot} service listens on this machine's loopback for workers that come "
            "through the SSH connection of its blocks, and a passive site starts none; use "
            'jobManager "local:local" (workers started by hand reach this machine) or '
            'workerManager "block"')
    warn(f'site.{site}.execution.jobManager "{job_manager}" has no effect with '
         'workerManager "passive": the service starts no blocks (workers are started by '
         "hand); ignored")
    return "local:local"


def _log_level(options: dict[str, Any] | None) -> str | None:
    """workerLoggingLevel, if the options say (a log directory alone means INFO)."""
    level = (options or {}).get("workerLoggingLevel")
    return None if level is None else str(level)


def _range_text(port_range: tuple[int, int] | None) -> str | None:
    """TCPPortRange as the relay's --ports takes it."""
    return None if port_range is None else f"{port_range[0]},{port_range[1]}"
