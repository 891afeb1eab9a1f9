"""Batch sites: each task is one job of the cluster's batch system.

swift.conf::

    site.cluster {
        execution {
            type: "slurm"                     # sge, pbs, lsf, condor, cobalt (and 0.96's
                                              # pbslocal, condorlocal, cobaltlocal)
            URL: "login.example.org"          # the login node (a ~/.ssh/config alias);
                                              # none or localhost: the commands run here
            options { jobQueue: "debug", jobProject: "abc123", maxJobTime: "01:00:00",
                      jobOptions { "slurm.mem": "4G" } }
        }
        workDirectory: "/scratch/me/swiftwork"  # on the cluster, seen by its nodes
        staging: "swift"
        maxParallelTasks: 50                    # jobs in the batch system at once
        app.sim { executable: "/home/me/bin/sim", maxWallTime: "00:20:00",
                  options { jobType: "mpi", count: 16 } }
    }

How a run uses the cluster:

1. ``start``: the shell (:class:`~swiftnb.execution.shell.LocalShell`, or the SSH
   connection to ``execution.URL`` shared with every site naming that host), the
   remote Python check and ``WORKDIR/SCRIPT-RUNID/shared`` with the wrapper
   (:mod:`swiftnb.execution.sitedir`, as an ssh site does).
2. ``execute``: stage the inputs in (:class:`~swiftnb.execution.staging.Stager`), write the
   job's spec to ``batch/JOBID/spec.json`` and submit a job script (the LRM adapter's,
   :mod:`swiftnb.execution.batch.lrm`) that runs ``python3 -I
   shared/_swiftremote.pyz wrap < spec.json > result.json``; its shape (walltime, queue, nodes...) is
   :mod:`swiftnb.execution.batch.request`'s.  One :class:`JobPoller` per site follows
   every job in one status query per round: pending is SUBMITTED, running ACTIVE (the
   log's TASK_STATUS_CHANGE lines: a job's wait in the batch system's queue is part of
   its Tw, its run its Te).  At the end the result is read back and the outputs staged out.
3. ``shutdown``: cancel the jobs still in the batch system, run ``cleanupCommand`` on the
   site run directory unless keepSiteDir, close the shell.

The batch system, not the wrapper, enforces the walltime (as Swift's batch providers
left it to the LRM): a job killed at it fails as WALLTIME with the batch system's words.
A job the batch system refuses fails as SUBMIT_REFUSED naming the site, the queue and
sbatch's (qsub's...) own words; a job it loses, or that fails without a result (its
node died, someone cancelled it) fails as WORKER with its words, and is retried as
Swift retried any failure.  An attempt withdrawn (the run stopped, a replica won) has
its job cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.config.types import BadValue, time_to_seconds
from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.remote import wrapper
from swiftnb.remote.payload import PAYLOAD_NAME, payload_file
from swiftnb.scheduling.waiting import emit_waiting
from swiftnb.execution.batch.lrm import (LRM, JobPoller, JobState, JobStatus, Resources, hms,
                                         lrm_class)
from swiftnb.execution.batch.request import JobRequest, SiteJobs
from swiftnb.execution.joblog import InfoWriter
from swiftnb.execution.shell import CommandResult, LocalShell, Shell, ShellError
from swiftnb.execution.sitedir import prepare_site_dir, remote_work_dir
from swiftnb.execution.ssh import SSHOptions
from swiftnb.execution.staging import Stager, shell_failure_kind
from swiftnb.jsonobject import json_object
from swiftnb.config.types import flatten_options
from swiftnb.scheduling.background import internal_error, start_background
from swiftnb.scheduling.options import option
from swiftnb.scheduling.provider import (Job, Provider, ProviderError, ProviderState,
                                         StatusReporter, foreign_option, swift_job_dir)

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.scheduling.build import BuildContext

__all__ = ["BatchOptions", "BatchProvider", "make_provider", "BATCH_TYPES"]

#: the execution types of batch sites (pyproject.toml's entry points name each)
BATCH_TYPES = ("slurm", "sge", "pbs", "lsf", "condor", "cobalt", "moab", "pbslocal",
               "condorlocal", "cobaltlocal")
#: hosts that mean "this machine" in execution.URL
_THIS_MACHINE = frozenset({"localhost", "127.0.0.1", "::1"})
#: the longest pause between two status queries while no job changes (seconds)
_MAX_POLL = 3.0
#: how much of a job's stderr file a message quotes
_STDERR_TAIL = 1500
#: reading a finished job's result: tries, and the pause between them (a shared file
#: system may show the file a moment after the batch system says the job ended)
_RESULT_TRIES = 3
_RESULT_PAUSE = 0.7
#: the SSH options (from SSHOptions) that mean nothing without execution.URL
_LOGIN_KEYS = ("user", "port", "identityFile", "knownHosts", "password", "acceptNewHostKeys")


def _time(value: Any) -> int:
    """Swift's Time (``"HH:MM:SS"``, ``"HH:MM"``, ``"MM"``; a bare number is minutes)."""
    try:
        return time_to_seconds(value)
    except BadValue as exc:
        raise ValueError(str(exc)) from None


def _job_options(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError('expected an object of batch system options ({ ppn: 8, '
                         '"slurm.mem": "4G" })')
    return flatten_options(value)


@dataclass(frozen=True)
class BatchOptions(SSHOptions):
    """``execution.options`` of a batch site: its jobs' queue, project, size and longest
    walltime, the batch system's own options, and (with ``execution.URL``) how to log in
    to the login node, as an ssh site's."""

    jobQueue: str | None = None
    jobProject: str | None = None
    maxJobTime: int | None = option(None, convert=_time)
    maxWallTime: int | None = option(None, convert=_time)
    maxTime: int | None = option(None, convert=_time)
    nodes: int = 1
    tasksPerNode: int | None = None
    jobOptions: Mapping[str, str] | None = option(None, convert=_job_options)
    pollInterval: float = 1.0          # seconds between status queries at first

    def check(self) -> Iterator[tuple[str, str]]:
        if self.nodes < 1:
            yield "nodes", "must be at least 1"
        if self.tasksPerNode is not None and self.tasksPerNode < 1:
            yield "tasksPerNode", "must be at least 1"
        if self.pollInterval <= 0:
            yield "pollInterval", "must be greater than 0"
        if self.connectTimeout <= 0:
            yield "connectTimeout", "must be greater than 0"

    def max_time(self) -> tuple[int | None, str]:
        """The longest job the site takes (seconds) and the key that says so."""
        limits = [(v, k) for k, v in (("maxJobTime", self.maxJobTime),
                                      ("maxWallTime", self.maxWallTime),
                                      ("maxTime", self.maxTime)) if v is not None]
        return min(limits) if limits else (None, "maxJobTime")


@dataclass(slots=True)
class _Job:
    """One attempt's job while the batch system has it."""

    job_id: str
    attempt: StatusReporter
    ended: asyncio.Future[JobStatus]
    shown: TaskStatus = TaskStatus.SUBMITTED   # the last status the attempt reported
    task_id: str = ""                          # the task's jobid (WAITING id=)


class BatchProvider(Provider):
    """Runs each task of a site as one batch job (see the module docstring)."""

    takes_app_job_options = True   # checked against the site's batch system (_check)

    def __init__(self, name: str, lrm: LRM, jobs: SiteJobs, *, options: BatchOptions,
                 host: str, remote: bool, work_dir: str = "swiftwork", site_run: str = "run",
                 keep: bool = False, staging: str = "swift", scratch: str | None = None,
                 cdm: CdmPolicy | None = None, always_info: bool = False,
                 info_per_job: bool = False,
                 cleanup_command: tuple[str, ...] = ("/bin/rm", "-rf"),
                 bus: EventBus | None = None) -> None:
        self.name = name
        self.lrm = lrm
        self.shell: Shell = lrm.shell
        self.jobs = jobs
        self.options = options
        self.host = host
        self.remote = remote
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        self.always_info = always_info
        self.cleanup_command = cleanup_command
        self.bus = bus if bus is not None else EventBus()
        self.stager = Stager(self.shell, site=name, host=host, mode=staging, scratch=scratch,
                             cdm=cdm, keep=keep, bus=self.bus, site_run=site_run,
                             provider=lrm.name, wrapper_walltime=False)
        self.poller = JobPoller(lrm, interval=options.pollInterval, max_interval=_MAX_POLL,
                                on_error=self._warn)
        self.site_dir: str | None = None
        self._starting: asyncio.Lock | None = None
        self._local_tmp: str | None = None
        self._in_lrm: dict[str, _Job] = {}
        self._late: set[asyncio.Task[None]] = set()   # cancels of jobs submitted too late
        self._info = InfoWriter(bus=self.bus, per_job=info_per_job)
        self.counts = {"submitted": 0, "queued": 0, "running": 0, "completed": 0, "failed": 0,
                       "canceled": 0}

    # -- messages ---------------------------------------------------------------------------
    def _where(self) -> str:
        return self.lrm.where()

    def _warn(self, text: str) -> None:
        self.bus.emit("WARNING", {}, text=f"Warning: {text}")

    def _shell_error(self, exc: ShellError, doing: str) -> ProviderError:
        return ProviderError(shell_failure_kind(exc), f"{self._where()}: {doing}: {exc}")

    # -- start --------------------------------------------------------------------------------
    async def _run(self, argv: Sequence[str], doing: str) -> CommandResult:
        try:
            return await self.shell.run(argv, timeout=60)
        except ShellError as exc:
            raise self._shell_error(exc, doing) from None

    async def start(self) -> None:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self.site_dir is not None:
                return
            where = self._where()
            work_dir = await remote_work_dir(self._run, python=self.options.python,
                                             work_dir=self.work_dir, where=where)
            site_dir = f"{work_dir}/{self.site_run}"
            await prepare_site_dir(self.shell, site_dir, {PAYLOAD_NAME: payload_file()},
                                   where=where)
            if self._local_tmp is None:
                self._local_tmp = tempfile.mkdtemp(prefix="swiftnb-batch-")
            self.site_dir = self.stager.site_dir = site_dir

    def prepare(self, task: Task) -> Job:
        return Job(task, swift_job_dir(self.site_run, task.jobid, task.attempt))

    def state(self) -> ProviderState:
        c = self.counts
        connection = None
        if self.remote:
            connection = "connected" if self.site_dir is not None else "not connected"
            if self.poller.outage is not None:
                connection = f"down: {self.poller.outage}"
        detail: dict[str, object] = {"lrm": self.lrm.name, "host": self.shell.name,
                                     "staging": self.stager.mode, "jobs": len(self._in_lrm)}
        if self.poller.outage is not None:
            detail["outage"] = self.poller.outage
        return ProviderState(site=self.name, type=self.lrm.name, submitted=c["submitted"],
                             queued=c["queued"], running=c["running"],
                             completed=c["completed"], failed=c["failed"],
                             canceled=c["canceled"], connection=connection, detail=detail)

    # -- one attempt ---------------------------------------------------------------------------
    def _failed(self, attempt: StatusReporter, kind: FailureKind, message: str) -> TaskResult:
        self.counts["failed"] += 1
        attempt.status(TaskStatus.FAILED, message=message)
        return TaskResult(ok=False, message=message, site=self.name, failure=kind)

    async def execute(self, prepared: Job, attempt: StatusReporter) -> TaskResult:
        task = prepared.task
        attempt.status(TaskStatus.SUBMITTING)
        self.counts["submitted"] += 1
        try:
            request = self.jobs.request(task)
        except ValueError as exc:
            return self._failed(attempt, FailureKind.SUBMIT_REFUSED, str(exc))
        try:
            if self.site_dir is None:
                await self.start()
            spec, base = await self.stager.stage_in(task, attempt)
            if request.launch:
                spec = _launched(spec, request.launch)
            job_dir = await self._write_spec(task, spec, attempt)
            resources = self._resources(request, job_dir)
            script = self.lrm.script(self._command(job_dir), resources)
            job = await self._submit(script, resources, attempt, task.jobid)
        except ProviderError as exc:
            return self._failed(attempt, exc.kind, self._refusal(exc, request))
        except ValueError as exc:   # an adapter refusing what it was asked to write
            return self._failed(attempt, FailureKind.SUBMIT_REFUSED,
                                f"{self._where()}: {exc}")
        self.counts["queued"] += 1
        try:
            status = await asyncio.shield(job.ended)
        except asyncio.CancelledError:
            await self._withdraw(job)
            attempt.status(TaskStatus.CANCELED)
            raise
        finally:
            self._in_lrm.pop(job.job_id, None)
            self.counts["running" if job.shown is TaskStatus.ACTIVE else "queued"] -= 1
        ran = status.state in (JobState.COMPLETED, JobState.FAILED, JobState.TIMEOUT)
        if ran and job.shown is not TaskStatus.ACTIVE:
            attempt.status(TaskStatus.ACTIVE)   # it ran between two polls
        result = await self._result(job_dir, status)
        if result is None:
            message = await self._job_failure(task, job, status, job_dir)
            kind = FailureKind.WALLTIME if status.state is JobState.TIMEOUT else FailureKind.WORKER
            await self._clean(job_dir)
            return self._failed(attempt, kind, message)
        if result.get("ok"):
            attempt.status(TaskStatus.STAGE_OUT)
            result = await self.stager.stage_out(task, spec, base, result, attempt)
        await self.stager.forget(base)
        await self._clean(job_dir)
        return self._ended(task, spec, result, attempt)

    def _refusal(self, exc: ProviderError, request: JobRequest) -> str:
        """A refused job's message names the site and the queue (the adapters' words
        name the site; the queue is added where they do not)."""
        text = str(exc)
        if self.name not in text:
            text = f"site {self.name}: {text}"
        if (exc.kind is FailureKind.SUBMIT_REFUSED and request.queue
                and request.queue not in text):
            text += f" (queue {request.queue})"
        return text

    def _command(self, job_dir: str) -> str:
        """The job script's command: the wrapper reads the spec and writes its result,
        which appears whole (renamed) or not at all."""
        assert self.site_dir is not None
        q = shlex.quote
        payload = q(f"{self.site_dir}/shared/{PAYLOAD_NAME}")
        return (f"{q(self.options.python)} -I {payload} wrap < spec.json > result.tmp && "
                f"mv result.tmp result.json")

    def _resources(self, request: JobRequest, job_dir: str) -> Resources:
        return Resources(
            name=os.path.basename(job_dir), walltime=request.walltime, nodes=request.nodes,
            tasks_per_node=request.tasks_per_node, queue=request.queue,
            project=request.project, workdir=job_dir, stdout=f"{job_dir}/job.stdout",
            stderr=f"{job_dir}/job.stderr", options=request.options)

    async def _write_spec(self, task: Task, spec: wrapper.JobSpec,
                          attempt: StatusReporter) -> str:
        """Make the attempt's batch directory (``batch/JOBID[-ATTEMPT]``) and put its spec
        there; returns the directory."""
        assert self.site_dir is not None and self._local_tmp is not None
        name = task.jobid if not task.attempt else f"{task.jobid}-{task.attempt}"
        job_dir = f"{self.site_dir}/batch/{name}"
        fd, local = tempfile.mkstemp(dir=self._local_tmp, suffix=".json")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(spec, fh)
            async with attempt.file_operation():
                await self.shell.makedirs(job_dir)
            await self.shell.put(local, f"{job_dir}/spec.json")
        except ShellError as exc:
            raise self._shell_error(exc, f"writing the job's spec in {job_dir}") from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(local)
        return job_dir

    async def _submit(self, script: str, resources: Resources,
                      attempt: StatusReporter, task_id: str = "") -> _Job:
        """Submit and start following the job.  A submission under way when the attempt
        is withdrawn is let finish and its job cancelled."""
        submitting = asyncio.ensure_future(self.lrm.submit(script, resources))
        try:
            job_id = await asyncio.shield(submitting)
        except asyncio.CancelledError:
            submitting.add_done_callback(self._cancel_late)
            raise
        job = _Job(job_id, attempt, asyncio.get_running_loop().create_future(),
                   task_id=task_id)
        self._in_lrm[job_id] = job
        attempt.status(TaskStatus.SUBMITTED)
        self.poller.watch(job_id, lambda _id, status: self._changed(job, status),
                          lambda _id, status: self._waits(job, status))
        return job

    def _waits(self, job: _Job, status: JobStatus) -> None:
        """The batch system keeps the job pending for a new reason: WAITING says why."""
        assert status.waiting is not None
        emit_waiting(self.bus, "task", job.task_id, self.name, status.waiting,
                     lrm=self.lrm.name, job=job.job_id)

    def _changed(self, job: _Job, status: JobStatus) -> None:
        """The poller saw the job's state change."""
        if status.state.terminal:
            if not job.ended.done():
                job.ended.set_result(status)
            return
        shown = status.state.task_status
        if shown is job.shown:
            return
        if shown is TaskStatus.ACTIVE:
            self.counts["queued"] -= 1
            self.counts["running"] += 1
        elif job.shown is TaskStatus.ACTIVE:
            self.counts["running"] -= 1
            self.counts["queued"] += 1
        job.shown = shown
        job.attempt.status(shown)

    def _cancel_late(self, submitting: asyncio.Future[str]) -> None:
        if submitting.cancelled() or submitting.exception() is not None:
            return
        job_id = submitting.result()
        start_background(self._cancel([job_id]), self._late, lambda exc: self._warn(
            internal_error(f"cancelling job {job_id} (submitted as its attempt was "
                           "withdrawn); it may still be in the batch system", exc)))

    async def _cancel(self, ids: list[str]) -> None:
        with contextlib.suppress(ProviderError):
            await self.lrm.cancel(ids)

    async def _withdraw(self, job: _Job) -> None:
        """The attempt was withdrawn: its job leaves the batch system."""
        self.poller.forget(job.job_id)
        self.counts["canceled"] += 1
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(self._cancel([job.job_id]))

    async def _result(self, job_dir: str, status: JobStatus) -> dict[str, Any] | None:
        """The wrapper's result, or None if the job left none."""
        if status.state not in (JobState.COMPLETED, JobState.FAILED):
            return None
        text = None
        for n in range(_RESULT_TRIES if status.state is JobState.COMPLETED else 1):
            if n:
                await asyncio.sleep(_RESULT_PAUSE)
            text = await self._read(f"{job_dir}/result.json")
            if text is not None:
                break
        return None if text is None else json_object(text)

    async def _read(self, path: str) -> str | None:
        """A small file of the cluster, or None if it cannot be read."""
        assert self._local_tmp is not None
        fd, local = tempfile.mkstemp(dir=self._local_tmp)
        os.close(fd)
        try:
            await self.shell.get(path, local)
            with open(local, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except (ShellError, OSError):
            return None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(local)

    async def _job_failure(self, task: Task, job: _Job, status: JobStatus,
                           job_dir: str) -> str:
        """Why a job left no result, in the batch system's words (and its stderr's)."""
        lrm = self.lrm.name
        words = status.reason or status.state.value
        if status.state is JobState.TIMEOUT:
            what = (f"job {job.job_id} of {task.jobid} was killed at its walltime "
                    f"({hms(self.jobs.walltime(task))})")
        elif status.state is JobState.CANCELED:
            what = (f"job {job.job_id} of {task.jobid} was cancelled outside this run "
                    f"(an administrator?)")
        elif status.state is JobState.LOST:
            what = f"{lrm} lost job {job.job_id} of {task.jobid}"
        else:
            code = "" if status.exit_code is None else f" (exit code {status.exit_code})"
            what = f"job {job.job_id} of {task.jobid} ended without a result{code}"
        message = f"{self._where()}: {what}: {words}"
        stderr = (await self._read(f"{job_dir}/job.stderr") or "").strip()
        if stderr:
            message += f"\n{lrm} job stderr:\n{stderr[-_STDERR_TAIL:]}"
        return message

    async def _clean(self, job_dir: str) -> None:
        if self.keep:
            return
        with contextlib.suppress(ShellError):
            await self.shell.remove_tree(job_dir)

    def _ended(self, task: Task, spec: wrapper.JobSpec, result: dict[str, Any],
               attempt: StatusReporter) -> TaskResult:
        return self._info.finish(task.run_dir, spec, result, attempt, site=self.name,
                                 counts=self.counts, always=self.always_info)

    # -- the end ------------------------------------------------------------------------------
    async def shutdown(self) -> None:
        left = [job.job_id for job in self._in_lrm.values() if not job.ended.done()]
        if left:
            await self._cancel(left)
        for job_id in left:
            self.poller.forget(job_id)
        await self.poller.close()
        if self._late:
            await asyncio.gather(*self._late, return_exceptions=True)
        if self.site_dir is not None and not self.keep:
            with contextlib.suppress(ShellError):
                await self.shell.run([*self.cleanup_command, self.site_dir], timeout=120)
        self.site_dir = None
        self.stager.reset()
        if self._local_tmp is not None:
            shutil.rmtree(self._local_tmp, ignore_errors=True)
            self._local_tmp = None
        await self.shell.close()


def _launched(spec: wrapper.JobSpec, launch: tuple[str, ...]) -> wrapper.JobSpec:
    """The spec with the app run under a launcher (``srun --ntasks=4 APP ARGS``)."""
    launched = spec.copy()
    launched["executable"] = launch[0]
    launched["args"] = [*launch[1:], spec.get("executable") or spec["tr"], *spec.get("args", [])]
    return launched


# -- construction ----------------------------------------------------------------------------
def _check(site: SiteConfig, ctx: BuildContext, jobs: SiteJobs) -> list[str]:
    """The site's jobOptions (less those its batch system ignores, a warning each) and the
    apps' options its batch system would not honour, each with the file and line it was
    written on."""
    problems: list[str] = []
    where = ctx.where(site)
    origin = ctx.origin(site)
    for key, value in jobs.job_options.items():
        for problem in jobs.lrm.check_options({key: value}, f"{where}.jobOptions"):
            place = origin(f"jobOptions.{key}") or origin("jobOptions")
            problems.append(f"{place + ': ' if place else ''}{problem}")
    if not problems:  # keys that do not fit together show once a job is written
        shape = jobs.lrm.check_resources(Resources(
            name="swiftnb-check", walltime=600, nodes=jobs.nodes,
            tasks_per_node=jobs.tasks_per_node or 1, queue=jobs.queue, project=jobs.project,
            options=jobs.job_options))
        if shape is not None:
            place = origin("jobOptions")
            problems.append(f"{place + ': ' if place else ''}{where}: jobs of {jobs.lrm.name} "
                            f"could not be submitted: {shape}")
    apps = [(f"app.{name}", app) for name, app in ctx.config.apps.items()]
    apps += [(f"site.{site.name}.app.{name}", app) for name, app in site.apps.items()]
    for path, app in apps:
        for part, values in (("", app.attributes), ("options.", app.options)):
            for key, value in flatten_options(values).items():
                found = (ctx.config.origin_detail(f"{path}.{part}{key}")
                         or ctx.config.origin_detail(f"{path}.{part}".rstrip(".")))
                place = found.location() if found is not None else ""
                foreign = foreign_option(key)
                if foreign is not None:  # another distribution's key: Swift/K took any key
                    ctx.warn(f"{place + ': ' if place else ''}{path}.{part}{key} has no "
                             f"effect on site {site.name}: {foreign}; ignored")
                    continue
                problem = jobs.check_option(key, value, f"{path}.{part}".rstrip("."))  # type: ignore[assignment]  # str or None: checked below
                if problem is None:
                    continue
                problems.append(f"{place + ': ' if place else ''}{problem}")
    return problems


def make_provider(site: SiteConfig, ctx: BuildContext) -> BatchProvider:
    """The provider of an ``execution.type: "slurm"`` (``"sge"``, ``"pbs"``...) site."""
    from swiftnb.execution.sshshell import shell_for

    options = BatchOptions.from_mapping(site.execution.options, where=ctx.where(site),
                                        origin=ctx.origin(site), type_name=site.type,
                                        warn=ctx.warn)
    lrm_type = lrm_class(site.type)
    url = site.execution.URL
    host = url or "localhost"
    remote = bool(url) and url not in _THIS_MACHINE and url.split(":")[0] not in _THIS_MACHINE  # type: ignore[union-attr]  # bool(url): a str
    shell: Shell
    if remote:
        assert url is not None
        if ":" in url and not url.startswith("["):  # host:port, as Swift URLs had it
            host, _, port = url.rpartition(":")
            if port.isdigit() and options.port is None:
                options = BatchOptions(**{**options.__dict__, "port": int(port)})
        shell = shell_for(host, port=options.port, user=options.user,
                          identity_files=[options.identityFile] if options.identityFile
                          else None, known_hosts=options.knownHosts,
                          accept_new_host_keys=options.acceptNewHostKeys,
                          connect_timeout=options.connectTimeout, password=options.password)
    else:
        given = [k for k in _LOGIN_KEYS if k in site.execution.options]
        if given:
            raise ValueError(f"site {site.name}: {ctx.where(site)}.{given[0]} is for logging "
                             "in to a login node, but the site has no execution.URL (its "
                             "batch commands run on this machine)")
        shell = LocalShell()
    limit, limit_key = options.max_time()
    job_options = lrm_type.honoured_options(options.jobOptions or {},
                                            f"{ctx.where(site)}.jobOptions", ctx.warn,
                                            ctx.origin(site))
    jobs = SiteJobs(site.name, lrm_type, queue=options.jobQueue, project=options.jobProject,
                    nodes=options.nodes, tasks_per_node=options.tasksPerNode,
                    job_options=job_options, max_time=limit, max_time_key=limit_key)
    problems = _check(site, ctx, jobs)
    if problems:
        raise ValueError(f"site {site.name} ({lrm_type.name}): " + "; ".join(problems))
    return BatchProvider(
        site.name, lrm_type(shell, site=site.name), jobs, options=options, host=host,
        remote=remote, work_dir=site.work_directory, site_run=ctx.site_run,
        keep=ctx.keep(site), staging=site.staging, scratch=site.scratch, cdm=ctx.cdm,
        always_info=ctx.config.always_transfer_wrapper_log,
        info_per_job=ctx.config.wrapper_log_per_job,
        cleanup_command=(site.cleanup_command, *site.cleanup_command_options), bus=ctx.bus)
