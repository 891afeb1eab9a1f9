"""The ssh provider: a site whose apps run on another machine reached over SSH.

swift.conf::

    site.cluster {
        execution { type: "ssh", URL: "login.example.org"    # a host, or a ~/.ssh/config alias
                    options { user: "me" } }
        maxParallelTasks: 8
        filesystem { type: "ssh" }
        workDirectory: "/scratch/me/swiftwork"                 # on the remote machine
        staging: "swift"
    }

How a run uses the host (one SSH connection for everything, docs/design.md "Remote execution"):

1. ``start``: connect (known_hosts checked, ``~/.ssh/config`` and ``~/.ssh/auth.defaults``
   honoured: :mod:`swiftnb.execution.sshshell`), check the remote Python 3, make the site
   run directory ``WORKDIR/SCRIPT-RUNID/shared`` and copy there the zipapp of the job
   wrapper and the worker (``_swiftremote.pyz``, stdlib-only: ``remote/payload.py``), then
   start the worker on one channel: ``python3 -I _swiftremote.pyz worker --stdio``.  It runs up to
   maxParallelTasks jobs at once and speaks JSON lines (``remote/worker.py``).
2. ``execute``: stage the inputs in (by the staging mode, below), send the job spec
   to the worker, hear ``active`` and ``done``, stage the outputs back.
3. ``shutdown``: stop the worker, run ``cleanupCommand`` on the site run directory
   unless keepSiteDir, close the connection.

Jobs do not open channels of their own: a channel costs a round trip and an sshd
session, and sshd bounds them (MaxSessions).  Swift's ssh provider limited new sessions
to 6 a second, backing off on connection errors; here the sessions a site opens
(start-up, clean-up, and each worker start after a reconnect) go through the same
limiter (:class:`SessionRateLimiter`).

When the connection dies, the worker sees its stdin close and kills its apps: nothing is
left running on the host.  The attempts that were running fail with FailureKind
CONNECTION_LOST (retryable: executionRetries sends them again, and Swift's -10 score
penalty applies); the next attempt reconnects with back-off, for ``reconnectTimeout``
seconds at most, then fails naming the host and port.

Staging (the site's ``staging`` mode and CDM rules) is :mod:`swiftnb.execution.staging`,
the layer every remote provider calls: a :class:`~swiftnb.execution.staging.Stager`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.remote import worker as worker_module
from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.remote import wrapper
from swiftnb.remote.payload import PAYLOAD_NAME, payload_file
from swiftnb.execution.joblog import InfoWriter
from swiftnb.execution.shell import CommandResult, Process, Shell, ShellError
from swiftnb.execution.sitedir import prepare_site_dir, remote_work_dir
from swiftnb.execution.staging import Stager, shell_failure_kind
from swiftnb.scheduling.background import internal_error, start_background
from swiftnb.scheduling.options import ProviderOptions
from swiftnb.scheduling.provider import (Job, Provider, ProviderError, ProviderState,
                                         StatusReporter, swift_job_dir)

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.scheduling.build import BuildContext

__all__ = ["SSHOptions", "SSHProvider", "SessionRateLimiter", "make_provider"]

_SHUTDOWN_GRACE = 5.0


@dataclass(frozen=True)
class SSHOptions(ProviderOptions):
    """``execution.options`` of an ssh site (the host is ``execution.URL``)."""

    user: str | None = None            # else ~/.ssh/config, auth.defaults, then the local user
    port: int | None = None            # else ~/.ssh/config, then 22
    identityFile: str | None = None
    knownHosts: str | None = None      # else ~/.ssh/known_hosts
    password: str | None = None
    acceptNewHostKeys: bool = False    # OpenSSH's StrictHostKeyChecking=accept-new
    connectTimeout: float = 30.0
    reconnectTimeout: float = 120.0    # how long a lost host is waited for, seconds
    python: str = "python3"            # the remote Python 3


class SessionRateLimiter:
    """Swift's ssh RateLimiterQueue: new SSH sessions at most ``rate`` a second, 6 at
    first; the rate halves after a connection error (not below 0.5/s) and grows back by
    a tenth after each success."""

    def __init__(self, rate: float = 6.0) -> None:
        self.max_rate = rate
        self.rate = rate
        self._next = 0.0

    async def wait(self) -> None:
        now = time.monotonic()
        slot = max(now, self._next)
        self._next = slot + 1.0 / self.rate
        if slot > now:
            await asyncio.sleep(slot - now)

    def failed(self) -> None:
        self.rate = max(0.5, self.rate / 2.0)

    def succeeded(self) -> None:
        self.rate = min(self.max_rate, self.rate * 1.1)


class _Worker:
    """The worker process on the host and the jobs it runs for us."""

    def __init__(self, process: Process, counts: dict[str, int]) -> None:
        self.process = process
        self.counts = counts                 # the provider's: ``running`` moves here
        self.jobs: dict[int, _RemoteJob] = {}
        self.reader: asyncio.Task[None] | None = None
        self.alive = True
        self._next = 0
        self._outbox: list[bytes] = []
        self._writes: set[asyncio.Task[None]] = set()  # held: a task nobody holds may vanish

    def new_job(self, attempt: StatusReporter) -> _RemoteJob:
        self._next += 1
        job = _RemoteJob(self._next, attempt, asyncio.get_running_loop().create_future())
        self.jobs[job.n] = job
        return job

    def send(self, message: Mapping[str, Any]) -> None:
        """Queue one message; the messages of one turn of the loop go out as one write
        (one SSH packet instead of one each when many jobs are sent at once)."""
        self._outbox.append(worker_module.encode(dict(message)))
        if len(self._outbox) == 1:
            asyncio.get_running_loop().call_soon(self._flush)

    def _flush(self) -> None:
        data, self._outbox = b"".join(self._outbox), []
        if data and self.alive:
            start_background(self._write(data), self._writes, self._broken)

    def _broken(self, exc: BaseException) -> None:
        """A write to the worker broke on a bug: the jobs in flight fail, saying so (the
        worker may never have had them)."""
        self.alive = False
        self.fail_all(ProviderError(FailureKind.WORKER, internal_error(
            "sending jobs to the SSH worker", exc)))

    def fail_all(self, error: ProviderError) -> None:
        """Every job still in flight ends with ``error``."""
        for job in self.jobs.values():
            if not job.done.done():
                job.done.set_exception(error)

    async def close(self) -> None:
        """Ask the worker to stop once what is queued has gone out, and wait for it."""
        self.send({"op": "shutdown"})
        self._flush()
        if self._writes:
            await asyncio.wait(list(self._writes))
        self.process.close_stdin()
        await asyncio.wait_for(self.process.wait(), _SHUTDOWN_GRACE)

    async def _write(self, data: bytes) -> None:
        try:
            await self.process.write(data)
        except ShellError:
            self.alive = False  # the reader fails what is in flight

    async def read(self, lost: str) -> None:
        """Deliver the worker's messages until it ends; then fail what is left (with the
        error of a bug here, if one ended it: nothing is left to raise it to)."""
        error = ProviderError(FailureKind.CONNECTION_LOST, lost)
        try:
            while True:
                line = await self.process.readline()
                if not line:
                    break
                message = _json(line)
                job = self.jobs.get(int(message.get("n", -1)))
                if job is None:
                    continue
                op = message.get("op")
                if op == "active":
                    job.active = True
                    self.counts["queued"] -= 1
                    self.counts["running"] += 1
                    job.attempt.status(TaskStatus.ACTIVE)
                elif op == "done" and not job.done.done():
                    job.done.set_result(message.get("result") or {})
        except ShellError:
            pass
        except Exception as exc:  # noqa: BLE001 - not a lost connection: said as what it is
            error = ProviderError(FailureKind.WORKER, internal_error(
                "reading the SSH worker's messages", exc))
        finally:
            self.alive = False
            self.fail_all(error)


@dataclass(slots=True)
class _RemoteJob:
    n: int
    attempt: StatusReporter
    done: asyncio.Future[dict[str, Any]]
    active: bool = False


def _json(line: bytes) -> dict[str, Any]:
    import json

    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class SSHProvider(Provider):
    """Runs a site's tasks on one host over SSH (see the module docstring)."""

    def __init__(self, name: str, shell: Shell, *, host: str, options: SSHOptions,
                 work_dir: str = "swiftwork", site_run: str = "run", keep: bool = False,
                 staging: str = "swift", scratch: str | None = None, max_parallel: int = 2,
                 cdm: CdmPolicy | None = None, always_info: bool = False,
                 info_per_job: bool = False,
                 cleanup_command: tuple[str, ...] = ("/bin/rm", "-rf"),
                 bus: EventBus | None = None) -> None:
        self.name = name
        self.shell = shell
        self.host = host
        self.options = options
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        self.max_parallel = max(1, max_parallel)
        self.always_info = always_info
        self.cleanup_command = cleanup_command
        self.limiter = SessionRateLimiter()
        self.bus = bus if bus is not None else EventBus()
        self.stager = Stager(shell, site=name, host=host, mode=staging, scratch=scratch,
                             cdm=cdm, keep=keep, bus=self.bus, site_run=site_run)
        self.site_dir: str | None = None     # WORKDIR/SCRIPT-RUNID on the host, absolute
        self._worker: _Worker | None = None
        self._starting: asyncio.Lock | None = None
        # records appended in batches, on a thread: one write per batch, not per call
        self._info = InfoWriter(background=True, bus=self.bus, per_job=info_per_job)
        self._connection = "not connected"
        self.counts = {"submitted": 0, "queued": 0, "running": 0, "completed": 0, "failed": 0,
                       "canceled": 0}

    # -- messages -------------------------------------------------------------------------
    def _where(self) -> str:
        return f"site {self.name} ({self.shell.name})"

    def _error(self, exc: ShellError, doing: str) -> ProviderError:
        return ProviderError(shell_failure_kind(exc), f"{self._where()}: {doing}: {exc}")

    # -- Provider -------------------------------------------------------------------------
    async def start(self) -> None:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._worker is not None and self._worker.alive:
                return
            await self._start_worker()

    async def _session(self, argv: Sequence[str], doing: str,
                       timeout: float = 60.0) -> CommandResult:
        """One command in a new session on the host (rate-limited)."""
        await self.limiter.wait()
        try:
            result = await self.shell.run(argv, timeout=timeout)
        except ShellError as exc:
            if exc.retryable:
                self.limiter.failed()
            raise self._error(exc, doing) from None
        self.limiter.succeeded()
        return result

    def allow_parallel(self, n: int) -> None:
        """More slots on the host: the running worker starts more slot threads (it was
        started with ``--cores`` of the configured maxParallelTasks), a later one starts
        with them."""
        if n <= self.max_parallel:
            return
        self.max_parallel = n
        if self._worker is not None and self._worker.alive:
            self._worker.send({"op": "cores", "n": n})

    async def _start_worker(self) -> None:
        if self._worker is not None:  # the connection was lost: wait for the host
            self._connection = "reconnecting"
            try:
                await self.shell.reconnect(give_up_after=self.options.reconnectTimeout)
            except ShellError as exc:
                self._connection = f"down: {exc}"
                raise ProviderError(FailureKind.CONNECTION_LOST,
                                    f"{self._where()}: the host did not answer again within "
                                    f"reconnectTimeout ({self.options.reconnectTimeout:g} s): "
                                    f"{exc}") from None
        python = self.options.python
        if self.site_dir is None:
            work_dir = await remote_work_dir(self._session, python=python,
                                             work_dir=self.work_dir, where=self._where())
            site_dir = f"{work_dir}/{self.site_run}"
            await prepare_site_dir(self.shell, site_dir, {PAYLOAD_NAME: payload_file()},
                                   where=self._where())
            self.site_dir = self.stager.site_dir = site_dir
        await self.limiter.wait()
        try:
            process = await self.shell.start(
                [python, "-I", f"shared/{PAYLOAD_NAME}", "worker", "--stdio",
                 "--cores", str(self.max_parallel)], cwd=self.site_dir)
            hello = _json(await asyncio.wait_for(process.readline(), self.options.connectTimeout))
        except ShellError as exc:
            self.limiter.failed()
            raise self._error(exc, "starting the worker") from None
        except TimeoutError:
            raise ProviderError(FailureKind.TIMEOUT, f"{self._where()}: the worker did not "
                                "start within connectTimeout") from None
        if hello.get("op") != "hello":
            detail = (await process.read_stderr()).strip()[-800:]
            raise ProviderError(FailureKind.SUBMIT_REFUSED,
                                f"{self._where()}: the worker did not start: {detail}")
        self.limiter.succeeded()
        worker = _Worker(process, self.counts)
        worker.reader = asyncio.get_running_loop().create_task(worker.read(
            f"{self._where()}: connection lost while the job ran (the host's apps were "
            "stopped; the job may be retried)"))
        self._worker = worker
        self._connection = "connected"

    def prepare(self, task: Task) -> Job:
        return Job(task, swift_job_dir(self.site_run, task.jobid, task.attempt))

    def state(self) -> ProviderState:
        c = self.counts
        return ProviderState(site=self.name, type="ssh", submitted=c["submitted"],
                             queued=c["queued"], running=c["running"],
                             completed=c["completed"], failed=c["failed"],
                             canceled=c["canceled"], connection=self._connection,
                             detail={"host": self.shell.name, "staging": self.stager.mode})

    async def execute(self, prepared: Job, attempt: StatusReporter) -> TaskResult:
        task = prepared.task
        attempt.status(TaskStatus.SUBMITTING)
        self.counts["submitted"] += 1
        try:
            if self._worker is None or not self._worker.alive:
                await self.start()
            worker = self._worker
            assert worker is not None and self.site_dir is not None
            spec, base = await self.stager.stage_in(task, attempt)
        except ProviderError as exc:
            self.counts["failed"] += 1
            attempt.status(TaskStatus.FAILED, message=str(exc))
            return TaskResult(ok=False, message=str(exc), site=self.name, failure=exc.kind)
        job = worker.new_job(attempt)
        self.counts["queued"] += 1
        try:
            worker.send({"op": "run", "n": job.n, "spec": spec})
            attempt.status(TaskStatus.SUBMITTED)
            result = await asyncio.shield(job.done)
        except asyncio.CancelledError:
            await self._cancel(worker, job)
            self.counts["canceled"] += 1
            attempt.status(TaskStatus.CANCELED)
            raise
        except (ShellError, ProviderError) as exc:
            self.counts["failed"] += 1
            kind = exc.kind if isinstance(exc, ProviderError) else FailureKind.CONNECTION_LOST
            attempt.status(TaskStatus.FAILED, message=str(exc))
            return TaskResult(ok=False, message=str(exc), site=self.name, failure=kind)
        finally:
            self.counts["running" if job.active else "queued"] -= 1
            worker.jobs.pop(job.n, None)
        if result.get("ok"):
            attempt.status(TaskStatus.STAGE_OUT)
            result = await self.stager.stage_out(task, spec, base, result, attempt)
        await self.stager.forget(base)
        return self._ended(task, spec, result, attempt)

    async def _cancel(self, worker: _Worker, job: _RemoteJob) -> None:
        """Withdraw a job: the worker kills its app's process group on the host."""
        if not worker.alive:
            return
        try:
            worker.send({"op": "cancel", "n": job.n})
            await asyncio.wait_for(asyncio.shield(job.done), _SHUTDOWN_GRACE)
        except (TimeoutError, ShellError, ProviderError, asyncio.CancelledError):
            pass

    def _ended(self, task: Task, spec: wrapper.JobSpec, result: dict[str, Any],
               attempt: StatusReporter) -> TaskResult:
        return self._info.finish(task.run_dir, spec, result, attempt, site=self.name,
                                 counts=self.counts, always=self.always_info)

    # -- the end ----------------------------------------------------------------------------
    async def shutdown(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None and worker.alive:
            try:
                await worker.close()
            except (TimeoutError, ShellError):
                pass
        if worker is not None and worker.reader is not None:
            worker.reader.cancel()
        self._info.close()  # every -info record on disk before the run reports its end
        if self.site_dir is not None and not self.keep:
            try:
                await self.limiter.wait()
                await self.shell.run([*self.cleanup_command, self.site_dir], timeout=120)
            except ShellError:
                pass
        self.site_dir = None
        self.stager.reset()
        self._connection = "closed"
        await self.shell.close()


def make_provider(site: SiteConfig, ctx: BuildContext) -> SSHProvider:
    """The provider of an ``execution.type: "ssh"`` site."""
    from swiftnb.execution.sshshell import shell_for

    options = SSHOptions.from_mapping(site.execution.options, where=ctx.where(site),
                                      origin=ctx.origin(site), type_name="ssh",
                                      warn=ctx.warn)
    host = site.execution.URL
    if not host:
        raise ValueError(f"site {site.name}: missing mandatory property "
                         f"'site.{site.name}.execution.URL' (the host to reach over SSH)")
    if site.filesystem is not None and site.filesystem.type not in ("ssh", "local"):
        raise ValueError(f"site {site.name}: filesystem.type {site.filesystem.type!r} cannot "
                         "serve an ssh site (use \"ssh\")")
    if ":" in host and not host.startswith("["):  # host:port, as Swift URLs had it
        host, _, port = host.rpartition(":")
        if port.isdigit() and options.port is None:
            options = SSHOptions(**{**options.__dict__, "port": int(port)})
    shell = shell_for(host, port=options.port, user=options.user,
                      identity_files=[options.identityFile] if options.identityFile else None,
                      known_hosts=options.knownHosts,
                      accept_new_host_keys=options.acceptNewHostKeys,
                      connect_timeout=options.connectTimeout, password=options.password)
    return SSHProvider(
        site.name, shell, host=host, options=options, work_dir=site.work_directory,
        site_run=ctx.site_run, keep=ctx.keep(site), staging=site.staging,
        scratch=site.scratch, max_parallel=site.max_parallel_tasks, cdm=ctx.cdm,
        always_info=ctx.config.always_transfer_wrapper_log,
        info_per_job=ctx.config.wrapper_log_per_job,
        cleanup_command=(site.cleanup_command, *site.cleanup_command_options), bus=ctx.bus)
