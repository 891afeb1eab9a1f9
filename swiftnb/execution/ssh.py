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

How a run uses the host (one SSH connection for everything, DESIGN.md "Remote execution"):

1. ``start``: connect (known_hosts checked, ``~/.ssh/config`` and ``~/.ssh/auth.defaults``
   honoured: :mod:`swiftnb.execution.sshshell`), check the remote Python 3, make the site
   run directory ``WORKDIR/SCRIPT-RUNID/shared`` and copy there the job wrapper
   (``_swiftwrap.py``) and the worker (``_swiftworker.py``), both stdlib-only, then start
   the worker on one channel: ``python3 _swiftworker.py --stdio``.  It runs up to
   maxParallelTasks jobs at once and speaks JSON lines (``coasters/worker.py``).
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

Staging modes (the site's ``staging``, else the global one):

* ``swift`` (default): each input is copied once per run into ``shared/<path>`` (the
  site's cache), the wrapper links it into the job directory, the outputs are moved to
  ``shared/`` and copied back.  An absolute path ``/d/f`` is staged as
  ``shared/__root__/d/f`` and the app's arguments name it so.
* ``local``, ``service-local`` (provider staging): the inputs are copied into a
  directory of the job's own (``stage/JOBID``), and nothing is shared between jobs.
* ``direct``: nothing is copied: the host sees this machine's paths (a shared file
  system); the wrapper links them in.
* ``shared-fs``: likewise on a shared file system, but the wrapper copies the inputs
  into the job directory.
* ``wrapper``: the wrapper stages from the shared file system into the site's
  ``scratch``, which it needs (``missing required site property: 'scratch'``).

CDM rules (``-cdm.file fs.data``) apply in every mode: an input the policy marks
DIRECT or LOCAL is not staged (the wrapper finds it where the rule says), an
output marked DIRECT or GATHER stays on the host.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.coasters import worker as worker_module
from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.execution import wrapper
from swiftnb.execution.joblog import InfoWriter
from swiftnb.execution.outcome import result_from_dict
from swiftnb.execution.shell import CommandResult, Process, Shell, ShellError, ShellFailure
from swiftnb.scheduling.options import ProviderOptions
from swiftnb.scheduling.provider import (Provider, ProviderError, ProviderState,
                                         StatusReporter, swift_job_dir)

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.scheduling.build import BuildContext

__all__ = ["SSHOptions", "SSHProvider", "SessionRateLimiter", "make_provider",
           "MIN_REMOTE_PYTHON", "STAGING_MODES"]

#: The oldest remote Python the wrapper and the worker run on.
MIN_REMOTE_PYTHON = (3, 8)
STAGING_MODES = ("swift", "local", "service-local", "direct", "shared-fs", "wrapper")
#: Where an absolute path /d/f lives under shared/ (swift and provider staging).
ROOT_PREFIX = "__root__"
_SHUTDOWN_GRACE = 5.0
#: outputs up to this size come back on the worker's done message, not by SFTP
INLINE_LIMIT = 64 * 1024
#: the start-up probe's exit status when the remote Python is not on the PATH (not 127,
#: which a missing `timeout` or `sh` would give too)
_NO_PYTHON = 97


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


def _kind_of(error: ShellError) -> FailureKind:
    if error.kind is ShellFailure.TIMEOUT:
        return FailureKind.TIMEOUT
    if error.kind in (ShellFailure.UNREACHABLE, ShellFailure.CONNECTION_LOST):
        return FailureKind.CONNECTION_LOST
    return FailureKind.SUBMIT_REFUSED  # host key, authentication, config: the site refuses


def remote_relpath(path: str) -> str:
    """Where a mapped path lives under the remote base directory: relative paths as
    they are (``..`` as Swift's ``__parent__``), absolute ones under ``__root__``."""
    if os.path.isabs(path):
        return ROOT_PREFIX + os.path.normpath(path)
    return wrapper.in_job(path)


def local_path(base_dir: str, rel: str) -> str:
    """The local path of a path relative to the remote base directory."""
    if rel == ROOT_PREFIX or rel.startswith(ROOT_PREFIX + "/"):
        return rel[len(ROOT_PREFIX):]
    parts = [".." if part == wrapper.PARENT else part for part in rel.split("/")]
    return os.path.normpath(os.path.join(base_dir, *parts))


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

    def new_job(self, attempt: StatusReporter) -> "_RemoteJob":
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
            write = asyncio.get_running_loop().create_task(self._write(data))
            self._writes.add(write)
            write.add_done_callback(self._writes.discard)

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
        """Deliver the worker's messages until it ends; then fail what is left."""
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
        finally:
            self.alive = False
            for job in self.jobs.values():
                if not job.done.done():
                    job.done.set_exception(ProviderError(FailureKind.CONNECTION_LOST, lost))


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
                 cleanup_command: tuple[str, ...] = ("/bin/rm", "-rf"),
                 bus: EventBus | None = None) -> None:
        if staging not in STAGING_MODES:
            raise ValueError(f"site {name}: unknown staging mode {staging!r} "
                             f"(one of {', '.join(STAGING_MODES)})")
        if staging == "wrapper" and not scratch:
            raise ValueError(f"{name}: missing required site property: 'scratch' "
                             "(wrapper staging copies inputs into the site's scratch directory)")
        self.name = name
        self.shell = shell
        self.host = host
        self.options = options
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        self.staging = staging
        self.scratch = scratch
        self.max_parallel = max(1, max_parallel)
        self.cdm = cdm
        self.always_info = always_info
        self.cleanup_command = cleanup_command
        self.limiter = SessionRateLimiter()
        self.bus = bus if bus is not None else EventBus()
        self.site_dir: str | None = None     # WORKDIR/SCRIPT-RUNID on the host, absolute
        self._worker: _Worker | None = None
        self._starting: asyncio.Lock | None = None
        self._staged: dict[str, tuple[float, int]] = {}   # shared/ cache: path -> (mtime, size)
        self._uploading: dict[str, asyncio.Future[None]] = {}  # path -> its copy under way
        self._dirs: set[str] = set()                       # remote directories made
        self._info = InfoWriter()
        self._connection = "not connected"
        self.counts = {"submitted": 0, "queued": 0, "running": 0, "completed": 0, "failed": 0,
                       "canceled": 0}

    # -- messages -------------------------------------------------------------------------
    def _where(self) -> str:
        return f"site {self.name} ({self.shell.name})"

    def _error(self, exc: ShellError, doing: str) -> ProviderError:
        return ProviderError(_kind_of(exc), f"{self._where()}: {doing}: {exc}")

    # -- Provider -------------------------------------------------------------------------
    async def start(self) -> None:
        if self._starting is None:
            self._starting = asyncio.Lock()
        async with self._starting:
            if self._worker is not None and self._worker.alive:
                return
            await self._start_worker()

    async def _session(self, argv: list[str], doing: str,
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
            probe = ("import os,sys;print('%d.%d'%sys.version_info[:2]);"
                     "print(os.path.abspath(os.path.expanduser(sys.argv[1])))")
            probe_run = await self._session(
                ["sh", "-c", f'command -v {shlex.quote(python)} >/dev/null || exit {_NO_PYTHON}; '
                 f'exec {shlex.quote(python)} -c "$0" "$1"', probe, self.work_dir],
                "checking the remote Python")
            if probe_run.returncode == _NO_PYTHON:
                raise ProviderError(FailureKind.SUBMIT_REFUSED, (
                    f"{self._where()}: no remote Python 3 ({python!r} is not on the "
                    "host's PATH); install python3 there or set the site's "
                    "execution.options.python to its path"))
            if probe_run.returncode != 0:
                raise ProviderError(FailureKind.SUBMIT_REFUSED, (
                    f"{self._where()}: checking the remote Python failed (exit code "
                    f"{probe_run.returncode}): {probe_run.stderr.strip()[-500:]}"))
            out = probe_run.stdout
            version, work_dir = (out.splitlines() + ["", ""])[:2]
            if tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) < MIN_REMOTE_PYTHON:
                raise ProviderError(FailureKind.SUBMIT_REFUSED, (
                    f"{self._where()}: the remote {python} is Python {version}; swiftnb's "
                    f"wrapper needs {'.'.join(map(str, MIN_REMOTE_PYTHON))} or newer (set "
                    "execution.options.python to a newer one)"))
            site_dir = f"{work_dir.rstrip('/')}/{self.site_run}"
            try:
                await self.shell.makedirs(f"{site_dir}/shared")
                await self.shell.put(wrapper.__file__, f"{site_dir}/shared/_swiftwrap.py")
                await self.shell.put(worker_module.__file__, f"{site_dir}/shared/_swiftworker.py")
            except ShellError as exc:
                raise self._error(exc, f"preparing the work directory {site_dir} (is "
                                       "workDirectory writable there, with room left?)") from None
            self.site_dir = site_dir
        await self.limiter.wait()
        try:
            process = await self.shell.start(
                [python, "shared/_swiftworker.py", "--stdio", "--cores", str(self.max_parallel),
                 "--wrapper", "shared/_swiftwrap.py"], cwd=self.site_dir)
            hello = _json(await asyncio.wait_for(process.readline(), self.options.connectTimeout))
        except ShellError as exc:
            self.limiter.failed()
            raise self._error(exc, "starting the worker") from None
        except asyncio.TimeoutError:
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

    def job_dir(self, task: Task) -> str:
        return swift_job_dir(self.site_run, task.jobid, task.attempt)

    def state(self) -> ProviderState:
        c = self.counts
        return ProviderState(site=self.name, type="ssh", submitted=c["submitted"],
                             queued=c["queued"], running=c["running"],
                             completed=c["completed"], failed=c["failed"],
                             canceled=c["canceled"], connection=self._connection,
                             detail={"host": self.shell.name, "staging": self.staging})

    async def execute(self, task: Task, attempt: StatusReporter) -> TaskResult:
        attempt.status(TaskStatus.SUBMITTING)
        self.counts["submitted"] += 1
        try:
            if self._worker is None or not self._worker.alive:
                await self.start()
            worker = self._worker
            assert worker is not None and self.site_dir is not None
            spec, base = await self._stage_in(task, attempt)
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
            result = await self._stage_out(task, spec, base, result, attempt)
        if self.staging in ("local", "service-local"):
            await self._forget(base)
        return self._ended(task, spec, result, attempt)

    async def _cancel(self, worker: _Worker, job: _RemoteJob) -> None:
        """Withdraw a job: the worker kills its app's process group on the host."""
        if not worker.alive:
            return
        try:
            worker.send({"op": "cancel", "n": job.n})
            await asyncio.wait_for(asyncio.shield(job.done), _SHUTDOWN_GRACE)
        except (ShellError, ProviderError, asyncio.TimeoutError, asyncio.CancelledError):
            pass

    def _ended(self, task: Task, spec: dict[str, Any], result: dict[str, Any],
               attempt: StatusReporter) -> TaskResult:
        outcome = result_from_dict(result, self.name)
        if outcome.ok:
            self.counts["completed"] += 1
            attempt.status(TaskStatus.COMPLETED)
            if self.always_info:
                self._info.write(task.run_dir, spec, result)
        else:
            self.counts["failed"] += 1
            self._info.write(task.run_dir, spec, result)
            attempt.status(TaskStatus.FAILED, message=result.get("cause") or outcome.message)
        return outcome

    # -- staging --------------------------------------------------------------------------
    def _base_for(self, task: Task) -> str:
        """The remote directory the job's relative paths resolve in."""
        assert self.site_dir is not None
        if self.staging == "swift":
            return f"{self.site_dir}/shared"
        if self.staging in ("local", "service-local"):
            name = task.jobid if not task.attempt else f"{task.jobid}-{task.attempt}"
            return f"{self.site_dir}/stage/{name}"
        return os.path.abspath(task.base_dir)  # the shared file system's own path

    def _copies(self) -> bool:
        return self.staging in ("swift", "local", "service-local")

    def _spec(self, task: Task, base: str) -> dict[str, Any]:
        cdm = self.cdm.directives(task.inputs, task.outputs) if self.cdm is not None else None
        spec = wrapper.spec_from_task(
            task, site=self.name, work_dir=os.path.dirname(self.site_dir or ""),
            site_run=self.site_run, keep=self.keep, walltime=task.maxwalltime or None,
            scratch=self.scratch, cdm=cdm or None)
        spec["base_dir"] = base
        if self._copies():
            spec["inline_limit"] = INLINE_LIMIT
        if self.staging == "shared-fs":
            spec["copy_inputs"] = True
        if not self._copies():
            return spec
        # absolute paths are staged under __root__ and ../ under __parent__: the job and
        # its arguments use those names
        moved = {p: remote_relpath(p) for p in (*task.inputs, *task.outputs, task.stdin or "",
                                                task.stdout or "", task.stderr or "")
                 if p and remote_relpath(p) != p}
        if moved:
            for key in ("inputs", "outputs"):
                spec[key] = [moved.get(p, p) for p in spec[key]]
            for key in ("stdin", "stdout", "stderr"):
                if spec[key] in moved:
                    spec[key] = moved[spec[key]]
            spec["args"] = [moved.get(a, a) for a in spec["args"]]
            if cdm:
                spec["cdm"] = {moved.get(p, p): rule for p, rule in cdm.items()}
        return spec

    def _skipped(self, path: str, kinds: tuple[str, ...]) -> bool:
        """Whether the CDM policy takes ``path`` out of staging."""
        if self.cdm is None:
            return False
        rule = self.cdm.rule_for(path)
        return rule is not None and rule.kind.name in kinds

    async def _stage_in(self, task: Task, attempt: StatusReporter) -> tuple[dict[str, Any], str]:
        base = self._base_for(task)
        spec = self._spec(task, base)
        if not self._copies():
            return spec, base
        names = [p for p in (*task.inputs, task.stdin or "") if p]
        for path in dict.fromkeys(names):
            if self._skipped(path, ("DIRECT", "LOCAL")):  # BROADCAST copies from shared/
                continue
            source = path if os.path.isabs(path) else os.path.join(task.base_dir, path)
            rel = remote_relpath(path)
            try:
                if os.path.isdir(source):
                    for root, _dirs, files in os.walk(source):
                        for name in files:
                            full = os.path.join(root, name)
                            await self._put(full, os.path.join(rel, os.path.relpath(full, source)),
                                            base, attempt, task.jobid)
                elif os.path.exists(source):
                    await self._put(source, rel, base, attempt, task.jobid)
                # a missing input: the wrapper says so ("Could not locate input file")
            except ShellError as exc:
                raise ProviderError(
                    FailureKind.STAGE_IN if exc.kind is ShellFailure.REMOTE else _kind_of(exc),
                    f"{self._where()}: staging in {path}: {exc}") from None
        return spec, base

    def _stage_event(self, kind: str, jobid: str, src: str, src_host: str, dest: str,
                     dest_host: str, *, end: bool = False) -> None:
        """Swift's FILE_STAGE_IN/OUT_START and _END lines, around each copy while it
        holds its fileTransfersThrottle slot (so the log shows the throttle at work)."""
        self.bus.emit(f"{kind}_END" if end else f"{kind}_START", {
            "jobid": jobid, "srchost": src_host, "srcdir": os.path.dirname(src),
            "srcname": os.path.basename(src), "desthost": dest_host,
            "destdir": os.path.dirname(dest), "provider": "ssh"})

    async def _put(self, source: str, rel: str, base: str, attempt: StatusReporter,
                   jobid: str) -> None:
        """Copy one input into place on the host, once per version: jobs that need the
        same file while it is on its way wait for that one copy (a second copy of the
        same path would truncate the file under the first job's app)."""
        st = os.stat(source)
        key = f"{base}/{rel}"
        version = (st.st_mtime, st.st_size)
        while True:
            if self._staged.get(key) == version:
                return  # already in the site's cache this run
            pending = self._uploading.get(key)
            if pending is None:
                break
            await asyncio.shield(pending)  # its failure is its own job's; look again
        done = asyncio.get_running_loop().create_future()
        self._uploading[key] = done
        try:
            directory = os.path.dirname(key)
            if directory not in self._dirs:
                async with attempt.file_operation():
                    await self.shell.makedirs(directory)
                self._dirs.add(directory)
            async with attempt.file_transfer():
                self._stage_event("FILE_STAGE_IN", jobid, source, "localhost", key, self.host)
                await self.shell.put(source, key)
                self._stage_event("FILE_STAGE_IN", jobid, source, "localhost", key, self.host,
                                  end=True)
            self._staged[key] = version
        finally:
            del self._uploading[key]
            done.set_result(None)

    async def _stage_out(self, task: Task, spec: dict[str, Any], base: str,
                         result: dict[str, Any], attempt: StatusReporter) -> dict[str, Any]:
        if not self._copies():
            return result
        inline = result.get("inline") or {}
        try:
            for rel in result.get("staged_out") or ():
                if self._skipped(local_path(".", rel), ("DIRECT", "GATHER")):
                    continue
                target = local_path(task.base_dir, rel)
                parent = os.path.dirname(target)
                if parent:
                    os.makedirs(parent, exist_ok=True)
                async with attempt.file_transfer():
                    remote = f"{base}/{rel}"
                    self._stage_event("FILE_STAGE_OUT", task.jobid, remote, self.host, target,
                                      "localhost")
                    if rel in inline:  # it came back on the done message
                        _write_atomically(target, base64.b64decode(inline[rel]))
                    else:
                        await self.shell.get(remote, target)
                    self._stage_event("FILE_STAGE_OUT", task.jobid, remote, self.host, target,
                                      "localhost", end=True)
                self._staged.pop(f"{base}/{rel}", None)  # a new version on the host
        except (ShellError, OSError) as exc:
            kind = (_kind_of(exc) if isinstance(exc, ShellError)
                    and exc.kind is not ShellFailure.REMOTE else FailureKind.STAGE_OUT)
            cause = f"Could not stage out the outputs of {task.jobid} from {self.shell.name}: {exc}"
            return {**result, "ok": False, "kind": kind.value, "cause": cause,
                    "message": f"Exception in {task.tr}:\n    Host: {self.name}\n"
                               f"Caused by: {cause}"}
        return result

    async def _forget(self, base: str) -> None:
        """Provider staging: the job's own directory goes once its outputs are back."""
        if self.keep:
            return
        self._staged = {k: v for k, v in self._staged.items() if not k.startswith(base + "/")}
        try:
            await self.shell.remove_tree(base)
        except ShellError:
            pass

    # -- the end ----------------------------------------------------------------------------
    async def shutdown(self) -> None:
        worker, self._worker = self._worker, None
        if worker is not None and worker.alive:
            try:
                await worker.close()
            except (ShellError, asyncio.TimeoutError):
                pass
        if worker is not None and worker.reader is not None:
            worker.reader.cancel()
        if self.site_dir is not None and not self.keep:
            try:
                await self.limiter.wait()
                await self.shell.run([*self.cleanup_command, self.site_dir], timeout=120)
            except ShellError:
                pass
        self.site_dir = None
        self._staged.clear()
        self._dirs.clear()
        self._connection = "closed"
        await self.shell.close()


def _write_atomically(path: str, data: bytes) -> None:
    """A file in its place whole or not at all (a temporary name beside it, renamed)."""
    tmp = f"{path}.swiftnb-{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def make_provider(site: SiteConfig, ctx: BuildContext) -> SSHProvider:
    """The provider of an ``execution.type: "ssh"`` site."""
    from swiftnb.execution.sshshell import shell_for

    options = SSHOptions.from_mapping(site.execution.options, where=ctx.where(site),
                                      origin=ctx.origin(site), type_name="ssh")
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
        cleanup_command=(site.cleanup_command, *site.cleanup_command_options), bus=ctx.bus)
