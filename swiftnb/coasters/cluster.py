"""Coaster blocks as batch jobs: ``local:slurm``, ``ssh-cl:slurm``, ``ssh-cl:pbs``...

A block is one job of the cluster's batch system (an :class:`~swiftnb.execution.batch.lrm.LRM`
adapter) whose script starts one worker per node (a
:class:`~swiftnb.execution.batch.launchers.Launcher`); the workers connect back to this
run's coaster service and take tasks.  The BOOT part of ``jobManager`` names the shell the
batch commands go through: ``local`` runs ``sbatch`` here (this machine is the login
node), ``ssh-cl`` runs it on the login node named by ``execution.URL`` over SSH.

Where the workers connect (docs/design.md "Remote execution", docs/coasters.md):

* ``local:``: to the service itself (``internalHostName``, else ``hostName``, else the
  service's address), as Swift 0.96 did.
* ``ssh-cl:``: the cluster's nodes cannot be assumed to reach this machine, so nothing
  connects here directly.  The SSH connection carries a remote port forward back to the
  service, and a relay (``relay.py``, stdlib-only) started on the login node through the
  same connection listens where the nodes can reach it (the login node's address, or
  ``internalHostName``, in ``TCPPortRange``) and pipes each worker into the forward.

The block's lifecycle comes from the batch system's job states, polled in one query per
round for all blocks (:class:`~swiftnb.execution.batch.lrm.JobPoller`): PENDING is the
requested block, RUNNING makes it active (BLOCK_ACTIVE), an end we did not ask for fails
it (BLOCK_FAILED, with the batch system's words and the tail of the job's stderr) and the
service runs its tasks again elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import shlex
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from swiftnb.coasters import relay as relay_module
from swiftnb.coasters.blocks import BlockHandle, BlockProvider, BlockRequest, ExitCallback
from swiftnb.engine.task import FailureKind
from swiftnb.events import EventBus
from swiftnb.remote.payload import PAYLOAD_NAME, payload_file
from swiftnb.execution.batch.launchers import Launcher, launcher_for
from swiftnb.execution.batch.lrm import LRM, JobPoller, JobState, JobStatus, Resources
from swiftnb.scheduling.waiting import emit_waiting
from swiftnb.execution.shell import CommandResult, Process, Shell, ShellError, Tunnel
from swiftnb.execution.sitedir import prepare_site_dir, remote_work_dir
from swiftnb.jsonobject import json_object
from swiftnb.config.types import flatten_options
from swiftnb.scheduling.background import FailureHandler, internal_error, start_background
from swiftnb.scheduling.options import ProviderOptions, option
from swiftnb.scheduling.provider import ProviderError

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig

__all__ = ["ClusterOptions", "ClusterBlockProvider", "ClusterBlock", "make_block_provider"]

#: how much of a failed block's stderr file its BLOCK_FAILED message quotes
_STDERR_TAIL = 2000


def _job_options(raw: Any) -> dict[str, str]:
    """``jobOptions`` as flat string keys (``pbs { aprun: true }`` is ``pbs.aprun``)."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ValueError("expected an object of LRM options ({ ppn: 8, \"slurm.mem\": \"4G\" })")
    return flatten_options(raw)


@dataclass(frozen=True)
class ClusterOptions(ProviderOptions):
    """The ``execution.options`` a coaster site with batch-job blocks reads beside the
    planner's (``CoasterSettings``): the block jobs' queue, project and LRM options, how
    they start workers, and for ``ssh-cl`` how to log in to the login node."""

    jobQueue: str | None = None
    jobProject: str | None = None
    jobOptions: Mapping[str, str] | None = option(None, convert=_job_options)
    launcher: str | None = None           # srun, mpiexec, aprun, ssh, plain
    python: str = "python3"               # the cluster's Python 3 (workers and relay)
    # ssh-cl: the login node (execution.URL), as an ssh site's options
    user: str | None = None
    port: int | None = None
    identityFile: str | None = None
    knownHosts: str | None = None
    acceptNewHostKeys: bool = False
    connectTimeout: float = 30.0
    reconnectTimeout: float = 120.0

    def check(self) -> Iterator[tuple[str, str]]:
        if self.connectTimeout <= 0:
            yield "connectTimeout", "must be greater than 0"
        if self.reconnectTimeout < 0:
            yield "reconnectTimeout", "must not be negative"

    @property
    def ssh_keys(self) -> tuple[str, ...]:
        return ("user", "port", "identityFile", "knownHosts", "acceptNewHostKeys",
                "connectTimeout", "reconnectTimeout")


#: ClusterOptions' own keys (the rest of a site's options are the planner's)
CLUSTER_KEYS = frozenset(f.name for f in dataclasses.fields(ClusterOptions))


@dataclass(eq=False)
class ClusterBlock(BlockHandle):
    """One block's batch job, as the service holds it."""

    provider: ClusterBlockProvider
    request: BlockRequest
    job_id: str
    on_active: Callable[[], None]
    on_exit: ExitCallback
    active: bool = False
    stopping: bool = False
    ended: bool = False
    _cancel: asyncio.Task[None] | None = field(default=None, repr=False)

    def pids(self) -> list[int]:
        return []  # its processes are the batch system's, on the cluster's nodes

    def stop(self, grace: float = 5.0) -> None:
        """End the block: its workers were told to shut down and the job normally ends by
        itself; after ``grace`` seconds it is cancelled in the batch system."""
        if self.stopping or self.ended:
            return
        self.stopping = True
        self._cancel = self.provider.spawn(self._cancel_after(grace))

    async def _cancel_after(self, grace: float) -> None:
        if grace > 0:
            await asyncio.sleep(grace)
        if not self.ended:
            with contextlib.suppress(ProviderError):
                await self.provider.lrm.cancel([self.job_id])
            self.provider.poller.poke()


class ClusterBlockProvider(BlockProvider):
    """Blocks as jobs of a batch system reached through a shell (see the module docstring)."""

    def __init__(self, lrm: LRM, launcher: Launcher, *, boot: str, work_dir: str,
                 site_run: str, options: ClusterOptions, site: str = "coaster",
                 internal_host: str | None = None, port_range: str | None = None,
                 log_level: str | None = None, log_dir: str | None = None,
                 bus: EventBus | None = None, poll_interval: float = 1.0) -> None:
        self.lrm = lrm
        self.shell: Shell = lrm.shell
        self.launcher = launcher
        self.boot = boot
        self.name = f"{boot}:{lrm.name}"
        self.work_dir = work_dir
        self.site_run = site_run
        self.options = options
        self.site = site
        self.internal_host = internal_host
        self.port_range = port_range
        self.log_level = log_level
        self.log_dir = log_dir
        self.bus = bus if bus is not None else EventBus()
        self.poller = JobPoller(lrm, interval=poll_interval, on_error=self._warn)
        self.site_dir: str | None = None      # WORKDIR/SITE_RUN on the cluster, absolute
        self.blocks: dict[str, ClusterBlock] = {}
        self._prepared: asyncio.Lock | None = None
        self._secret_written: str | None = None
        self._tunnel: Tunnel | None = None
        self._relay: Process | None = None
        self._contact: tuple[str, int] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._opening = asyncio.Lock()   # blocks of one round share one relay

    def spawn(self, coro: Coroutine[Any, Any, None],
              on_failure: FailureHandler | None = None) -> asyncio.Task[None]:
        """Run ``coro`` as a task the provider holds (and ends at close); an exception it
        raises goes to ``on_failure``, else is a warning (never dropped)."""
        return start_background(coro, self._tasks, on_failure or (lambda exc: self._warn(
            internal_error("in a block's background task", exc))))

    # -- messages ---------------------------------------------------------------------------
    def where(self) -> str:
        return f"coaster site {self.site} ({self.name} on {self.shell.name})"

    def _warn(self, text: str) -> None:
        self.bus.emit("WARNING", {}, text=f"{self.where()}: {text}")

    def _shell_error(self, exc: ShellError, doing: str) -> ProviderError:
        kind = (FailureKind.CONNECTION_LOST if exc.retryable else FailureKind.SUBMIT_REFUSED)
        return ProviderError(kind, f"{self.where()}: {doing}: {exc}")

    # -- set-up on the cluster --------------------------------------------------------------
    async def prepare(self) -> str:
        """Check the cluster's Python, make the site run directory and put the
        zipapp of worker and wrapper and the relay in its ``shared/`` (once); returns the
        site directory's absolute path (the same steps, and messages, as an ssh site's:
        ``execution/sitedir.py``)."""
        if self._prepared is None:
            self._prepared = asyncio.Lock()
        async with self._prepared:
            if self.site_dir is None:
                work_dir = await remote_work_dir(self._run, python=self.options.python,
                                                 work_dir=self.work_dir, where=self.where())
                site_dir = f"{work_dir}/{self.site_run}"
                await prepare_site_dir(self.shell, site_dir, {
                    PAYLOAD_NAME: payload_file(),
                    "_swiftrelay.py": relay_module.__file__}, where=self.where())
                try:
                    await self.shell.makedirs(f"{site_dir}/blocks")
                except ShellError as exc:
                    raise self._shell_error(exc, f"making {site_dir}/blocks") from None
                self.site_dir = site_dir
            return self.site_dir

    async def _run(self, argv: Sequence[str], doing: str) -> CommandResult:
        try:
            return await self.shell.run(argv, timeout=60)
        except ShellError as exc:
            raise self._shell_error(exc, doing) from None

    async def _contact_for(self, request: BlockRequest) -> tuple[str, int]:
        """Where the block's workers connect (see the module docstring): one way back
        for all blocks, opened by the first that needs it."""
        if self.boot != "ssh-cl":
            return request.host, request.port
        async with self._opening:
            if self._contact is not None:
                return self._contact
            return await self._open_way_back(request)

    async def _open_way_back(self, request: BlockRequest) -> tuple[str, int]:
        self._close_tunnel()
        assert self.site_dir is not None
        try:
            self._tunnel = await self.shell.reverse_tunnel(request.port)
            self._relay = await self.shell.start(
                [self.options.python, f"{self.site_dir}/shared/_swiftrelay.py",
                 "--to", f"127.0.0.1:{self._tunnel.port}",
                 "--listen", self.internal_host or "", "--ports", self.port_range or "0"])
            line = await asyncio.wait_for(self._relay.readline(), self.options.connectTimeout)
        except ShellError as exc:
            self._close_tunnel()
            raise self._shell_error(exc, "opening the way back for the workers") from None
        except TimeoutError:
            self._close_tunnel()
            raise ProviderError(FailureKind.TIMEOUT, f"{self.where()}: the relay did not start "
                                "on the login node within connectTimeout") from None
        said = json_object(line) or {}
        if said.get("op") != "listening":
            detail = said.get("message")
            if not detail and self._relay is not None:
                detail = (await self._relay.read_stderr()).strip()[-500:]
            self._close_tunnel()
            raise ProviderError(FailureKind.SUBMIT_REFUSED,
                                f"{self.where()}: the relay did not start on the login node: "
                                f"{detail or 'no answer'}")
        self._contact = (str(said["host"]), int(said["port"]))
        self.bus.emit("PLANNER", {}, text=(
            f"workers of site {self.site} connect to the relay at {self._contact[0]}:"
            f"{self._contact[1]} on {self.shell.name}, which forwards through the SSH "
            f"connection to the coaster service at 127.0.0.1:{request.port}"))
        relay = self._relay
        assert relay is not None
        self.spawn(self._watch_relay(relay))
        return self._contact

    async def _watch_relay(self, relay: Process) -> None:
        """The relay ends with the SSH connection: the next block opens a new way back."""
        with contextlib.suppress(ShellError):
            await relay.wait()
        if self._relay is relay:
            self._warn("the relay on the login node ended (the SSH connection was lost?); "
                       "the next block opens a new one")
            self._close_tunnel()

    def _close_tunnel(self) -> None:
        if self._relay is not None:
            with contextlib.suppress(Exception):
                self._relay.close_stdin()
        self._relay = None
        if self._tunnel is not None:
            with contextlib.suppress(Exception):
                self._tunnel.close()
        self._tunnel = None
        self._contact = None

    # -- BlockProvider ------------------------------------------------------------------------
    def worker_command(self, request: BlockRequest, host: str, port: int) -> str:
        assert self.site_dir is not None
        shared = f"{self.site_dir}/shared"
        argv = [self.options.python, "-I", f"{shared}/{PAYLOAD_NAME}", "worker", "--host", host,
                "--port", str(port), "--block", request.id, "--id", "auto",
                "--cores", str(request.cores), "--walltime", str(request.walltime),
                "--secret-file", f"{self.site_dir}/blocks/secret"]
        if self.log_level and self.log_level.upper() != "NONE":
            argv += ["--log-level", self.log_level.upper()]
            if self.log_dir:
                argv += ["--log-dir", self.log_dir]
        return shlex.join(argv)

    def resources(self, request: BlockRequest) -> Resources:
        assert self.site_dir is not None
        blocks = f"{self.site_dir}/blocks"
        return Resources(
            name=f"swiftnb-{request.id}", walltime=request.lrm_walltime, nodes=request.nodes,
            tasks_per_node=request.cores, queue=self.options.jobQueue,
            project=self.options.jobProject, workdir=blocks,
            stdout=f"{blocks}/{request.id}.stdout", stderr=f"{blocks}/{request.id}.stderr",
            options=self.options.jobOptions or {})

    async def submit(self, request: BlockRequest, on_active: Callable[[], None],
                     on_exit: ExitCallback) -> ClusterBlock:
        try:
            return await self._submit(request, on_active, on_exit)
        except ProviderError as exc:
            if exc.kind is not FailureKind.CONNECTION_LOST or self.boot != "ssh-cl":
                raise
        # the login node went away: wait for it (reconnectTimeout), then try once more
        try:
            await self.shell.reconnect(give_up_after=self.options.reconnectTimeout)
        except ShellError as exc:
            raise ProviderError(FailureKind.CONNECTION_LOST, (
                f"{self.where()}: the login node did not answer again within "
                f"reconnectTimeout ({self.options.reconnectTimeout:g} s): {exc}")) from None
        return await self._submit(request, on_active, on_exit)

    async def _submit(self, request: BlockRequest, on_active: Callable[[], None],
                      on_exit: ExitCallback) -> ClusterBlock:
        await self.prepare()
        assert self.site_dir is not None
        if self._secret_written != request.secret:
            await self.lrm.write_file(f"{self.site_dir}/blocks/secret", request.secret)
            self._secret_written = request.secret
        host, port = await self._contact_for(request)
        resources = self.resources(request)
        script = self.lrm.script(self.launcher.command(self.worker_command(request, host, port),
                                                       request.nodes), resources)
        job_id = await self.lrm.submit(script, resources)
        block = ClusterBlock(self, request, job_id, on_active, on_exit)
        self.blocks[job_id] = block
        self.bus.emit("PLANNER", {}, text=f"block {request.id} is {self.lrm.name} job {job_id}")
        self.poller.watch(job_id, self._changed, self._waits)
        return block

    def _waits(self, job_id: str, status: JobStatus) -> None:
        """Why the block's job pends (one asking for more than the partition has waits
        for ever): a WAITING event, once per reason."""
        block = self.blocks.get(job_id)
        if block is not None and not block.ended and status.waiting is not None:
            emit_waiting(self.bus, "block", block.request.id, self.site, status.waiting,
                         lrm=self.lrm.name, job=job_id)

    def _changed(self, job_id: str, status: JobStatus) -> None:
        block = self.blocks.get(job_id)
        if block is None or block.ended:
            return
        if status.state in (JobState.RUNNING, JobState.SUSPENDED) and not block.active:
            block.active = True
            block.on_active()
        if status.state.terminal:
            block.ended = True
            self.blocks.pop(job_id, None)
            self.spawn(self._ended(block, status), lambda exc: block.on_exit(
                "failed", internal_error(f"ending block {block.request.id}", exc)))

    async def _ended(self, block: ClusterBlock, status: JobStatus) -> None:
        if block.stopping:
            block.on_exit("stopped", "")
            return
        reason = "walltime" if status.state is JobState.TIMEOUT else "exited"
        words = f"{self.lrm.name} job {block.job_id} {status.state.value}"
        if status.exit_code is not None:
            words += f" with exit code {status.exit_code}"
        if status.reason:
            words += f" ({status.reason})"
        tail = await self._stderr_tail(block)
        block.on_exit(reason, words + (f"; its stderr: {tail}" if tail else ""))

    async def _stderr_tail(self, block: ClusterBlock) -> str:
        path = self.resources(block.request).stderr
        if path is None:
            return ""
        try:
            result = await self.shell.run(["tail", "-c", str(_STDERR_TAIL), path], timeout=30)
        except ShellError:
            return ""
        return result.stdout.strip() if result.returncode == 0 else ""

    async def close(self, wait: float = 15.0) -> None:
        """Cancel every block job still in the batch system and follow them to their end
        for up to ``wait`` seconds (each block's end is reported), then stop polling and
        close the way back (the service has asked the workers to stop)."""
        live = [b for b in self.blocks.values() if not b.ended]
        for block in live:
            block.stopping = True
            if block._cancel is not None:
                block._cancel.cancel()  # cancelled below, without its grace
        if live:
            with contextlib.suppress(ProviderError):
                await self.lrm.cancel([b.job_id for b in live])
            self.poller.min_interval = 0.2   # the end is near: look often
            self.poller.poke()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + wait
            while self.blocks and loop.time() < deadline:
                await asyncio.sleep(0.2)
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5.0)
        for task in list(self._tasks):
            task.cancel()
        await self.poller.close()
        self._close_tunnel()

    async def cleanup(self, keep: bool) -> None:
        """Remove the site run directory on the cluster unless keepSiteDir."""
        if self.site_dir is not None and not keep:
            with contextlib.suppress(ShellError):
                await self.shell.remove_tree(self.site_dir)


def make_block_provider(site: SiteConfig, boot: str, lrm_name: str, options: Mapping[str, Any],
                        *, site_run: str, bus: EventBus, where: str, internal_host: str | None,
                        port_range: str | None, log_level: str | None, log_dir: str | None,
                        origin: Callable[[str], str] | None = None,
                        tasks_per_node: int = 1,
                        warn: Callable[[str], None]) -> ClusterBlockProvider:
    """The block provider of a coaster site whose jobManager is ``BOOT:LRM`` with an LRM
    other than ``local``; a wrong option is a ValueError naming the key and where, a
    ``jobOptions`` key the batch system ignores is told to ``warn`` and left out."""
    from swiftnb.execution.batch.lrm import lrm_class
    from swiftnb.execution.shell import LocalShell

    own = {k: v for k, v in options.items() if k in CLUSTER_KEYS}
    cluster = ClusterOptions.from_mapping(own, where=where, origin=origin,
                                          type_name=f"coaster ({boot}:{lrm_name})")
    lrm_cls = lrm_class(lrm_name)
    if cluster.jobOptions:
        cluster = dataclasses.replace(cluster, jobOptions=lrm_cls.honoured_options(
            cluster.jobOptions, f"{where}.jobOptions", warn, origin))
    problems = lrm_cls.check_options(cluster.jobOptions or {}, where=f"{where}.jobOptions")
    if not problems:  # a block of one node, as the planner may ask for
        shape = lrm_cls.check_resources(Resources(
            name="swiftnb-block", walltime=600, nodes=1, tasks_per_node=tasks_per_node,
            queue=cluster.jobQueue, project=cluster.jobProject, options=cluster.jobOptions or {}))
        if shape is not None:
            problems = [f"{where}: blocks of {lrm_cls.name} could not be submitted: {shape}"]
    if problems:
        place = origin("jobOptions") if origin is not None else ""
        raise ValueError((f"{place}: " if place else "") + "; ".join(problems))
    job_options = cluster.jobOptions or {}
    depth = job_options.get("depth")
    launcher = launcher_for(lrm_cls.name, cluster.launcher or lrm_cls.launcher_hint(job_options),
                            depth=int(depth) if depth and str(depth).isdigit() else None)
    shell: Shell
    if boot == "local":
        used = [k for k in cluster.ssh_keys if k in own]
        if used:
            raise ValueError(f"{where}.{used[0]}: only an ssh-cl jobManager logs in anywhere "
                             f"(this site's jobManager boots locally)")
        shell = LocalShell()
    else:
        from swiftnb.execution.sshshell import shell_for

        host = site.execution.URL
        if not host:
            raise ValueError(f"site {site.name}: missing mandatory property "
                             f"'site.{site.name}.execution.URL' (the login node of the "
                             f"{boot}:{lrm_name} cluster)")
        port = cluster.port
        if ":" in host and not host.startswith("[") and "://" not in host:
            host, _, written_port = host.rpartition(":")
            if written_port.isdigit() and port is None:
                port = int(written_port)
        shell = shell_for(host, port=port, user=cluster.user,
                          identity_files=[cluster.identityFile] if cluster.identityFile else None,
                          known_hosts=cluster.knownHosts,
                          accept_new_host_keys=cluster.acceptNewHostKeys,
                          connect_timeout=cluster.connectTimeout)
    lrm = lrm_cls(shell, site=site.name)
    return ClusterBlockProvider(lrm, launcher, boot=boot, work_dir=site.work_directory or "swiftwork",
                                site_run=site_run, options=cluster, site=site.name,
                                internal_host=internal_host, port_range=port_range,
                                log_level=log_level, log_dir=log_dir, bus=bus)
