"""Block providers: how a planned block becomes running worker processes.

Swift's ``jobManager`` for coasters is ``BOOT:LRM`` (``local:local``, ``local:slurm``,
``ssh-cl:pbs``...): the LRM part says how blocks are submitted.  The planner and service do
not care; they hand a :class:`BlockRequest` to the block provider registered for that LRM
name and get callbacks when the block starts and ends.  ``local`` runs the workers as
processes on this machine (and kills them when the block's walltime is over, as an LRM
would).  Batch and SSH block providers only need to implement :class:`BlockProvider`.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from swiftnb.remote import worker as _worker_module
from swiftnb.coasters.settings import CoasterConfigError
from swiftnb.scheduling.background import internal_error, start_background

__all__ = [
    "BlockRequest",
    "BlockHandle",
    "BlockProvider",
    "LocalBlockProvider",
    "block_provider_for",
    "register_block_provider",
    "split_job_manager",
    "BOOTS",
]


@dataclass(frozen=True, slots=True)
class BlockRequest:
    """One block to start: ``workers`` task slots as ``nodes`` workers of ``cores`` each."""

    id: str
    workers: int
    cores: int              # task slots per worker (tasksPerNode)
    walltime: int           # the block's planned height (BLOCK_REQUESTED walltime=)
    lrm_walltime: int       # what the LRM enforces: walltime + reserve
    host: str               # where workers connect
    port: int
    secret: str

    @property
    def nodes(self) -> int:
        return -(-self.workers // self.cores)


class BlockHandle(abc.ABC):
    """A submitted block, as the service holds it."""

    @abc.abstractmethod
    def stop(self, grace: float = 5.0) -> None:
        """End the block: its workers were told to shut down; whatever still runs after
        ``grace`` s is ended (processes killed, the batch job cancelled)."""

    @abc.abstractmethod
    def pids(self) -> list[int]:
        """The block's worker processes on this machine (none for a batch job's)."""


#: on_exit(reason, detail): reason "stopped" (after stop()), "walltime" (LRM limit) or
#: "exited" (on its own); detail = what the block's workers said on stderr, if anything
ExitCallback = Callable[[str, str], None]


class BlockProvider(abc.ABC):
    """How a planned block becomes running workers (module docstring); the service calls
    ``submit`` per block and ``close`` once at its end."""

    #: for messages: ``local``, ``local:slurm``, ``ssh-cl:pbs``...
    name: str

    @abc.abstractmethod
    async def submit(self, request: BlockRequest, on_active: Callable[[], None],
                     on_exit: ExitCallback) -> BlockHandle:
        """Submit the block; call ``on_active`` when it runs and ``on_exit`` (once) when
        it ends.  A refusal raises; the service counts it as a failed start."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End every block still running and release what the provider holds."""


class _LocalBlock(BlockHandle):
    def __init__(self, procs: list[asyncio.subprocess.Process]) -> None:
        self.procs = procs
        self.stopping = False
        self.watcher: asyncio.Task[None] | None = None
        self._killer: asyncio.TimerHandle | None = None

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs if p.returncode is None]

    def _signal(self, sig: int) -> None:
        for p in self.procs:
            if p.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, sig)

    def stop(self, grace: float = 5.0) -> None:
        if self.stopping:
            return
        self.stopping = True
        loop = asyncio.get_running_loop()
        if grace <= 0:
            self._signal(signal.SIGKILL)
        else:
            # workers normally exit on the service's "shutdown"; TERM, then KILL, if not
            loop.call_later(grace / 2, self._signal, signal.SIGTERM)
            self._killer = loop.call_later(grace, self._signal, signal.SIGKILL)

    def cancel_timers(self) -> None:
        if self._killer is not None:
            self._killer.cancel()


class LocalBlockProvider(BlockProvider):
    """``local:local``: a block is a set of worker processes on this machine."""

    name = "local"

    #: worker processes per block at most: the planner sizes blocks for clusters (with
    #: default options a block can be thousands of nodes wide), this is one machine
    MAX_WORKERS = 32

    def __init__(self, *, python: str | None = None, worker_script: str | None = None,
                 wrapper_path: str | None = None, log_dir: str | None = None,
                 max_workers: int | None = None, log_level: str | None = None) -> None:
        self.max_workers = max_workers or self.MAX_WORKERS
        self.python = python or sys.executable
        self.worker_script = worker_script or os.path.abspath(_worker_module.__file__)
        if wrapper_path is None:
            from swiftnb.remote import wrapper as _wrapper

            wrapper_path = os.path.abspath(_wrapper.__file__)
        self.wrapper_path = wrapper_path
        self.log_dir = log_dir
        # workerLoggingLevel: the workers write their own logs into log_dir
        self.log_level = (log_level or ("INFO" if log_dir else "NONE")).upper()
        self._blocks: list[_LocalBlock] = []
        self._watching: set[asyncio.Task[None]] = set()

    async def submit(self, request: BlockRequest, on_active: Callable[[], None],
                     on_exit: ExitCallback) -> BlockHandle:
        env = dict(os.environ)
        env[_worker_module.SECRET_ENV] = request.secret
        procs: list[asyncio.subprocess.Process] = []
        for i in range(min(request.nodes, self.max_workers)):
            wid = f"{i:06d}"
            logging = ([] if self.log_level == "NONE" or not self.log_dir else
                       ["--log-level", self.log_level, "--log-dir", self.log_dir])
            proc = await asyncio.create_subprocess_exec(
                self.python, self.worker_script, "--host", request.host,
                "--port", str(request.port), "--block", request.id, "--id", wid,
                "--cores", str(request.cores), "--walltime", str(request.walltime),
                "--wrapper", self.wrapper_path, *logging,
                # stderr: a worker writes there only when it fails
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True)
            procs.append(proc)
        block = _LocalBlock(procs)
        self._blocks.append(block)
        on_active()
        block.watcher = start_background(
            self._watch(block, request, on_exit), self._watching,
            lambda exc: on_exit("failed", internal_error(f"watching block {request.id}", exc)))
        return block

    async def _watch(self, block: _LocalBlock, request: BlockRequest, on_exit: ExitCallback) -> None:
        reason = "exited"
        errors: list[bytes] = []

        async def wait(p: asyncio.subprocess.Process) -> None:
            if p.stderr is not None:
                errors.append(await p.stderr.read())
            await p.wait()

        try:
            await asyncio.wait_for(asyncio.gather(*(wait(p) for p in block.procs)),
                                   timeout=request.lrm_walltime)
            if block.stopping:
                reason = "stopped"
        except TimeoutError:
            # as an LRM does at the walltime: TERM (the workers kill their apps), then KILL
            reason = "walltime"
            block._signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(asyncio.gather(*(p.wait() for p in block.procs)), 2.0)
            except TimeoutError:
                block._signal(signal.SIGKILL)
                await asyncio.gather(*(p.wait() for p in block.procs))
        finally:
            block.cancel_timers()
            with contextlib.suppress(ValueError):
                self._blocks.remove(block)
        detail = b"".join(errors).decode("utf-8", "replace").strip()[-2000:]
        if not detail and self.log_dir:
            detail = f"worker logs in {self.log_dir}"
        on_exit(reason, detail)

    async def close(self) -> None:
        blocks = list(self._blocks)
        for b in blocks:
            b.stop(grace=2.0)
        watchers = [b.watcher for b in blocks if b.watcher is not None]
        if watchers:
            await asyncio.wait(watchers, timeout=5.0)
        for b in blocks:
            b._signal(signal.SIGKILL)


_PROVIDERS: dict[str, Callable[..., BlockProvider]] = {"local": LocalBlockProvider}


def register_block_provider(lrm: str, factory: Callable[..., BlockProvider]) -> None:
    """Make ``jobManager: "BOOT:<lrm>"`` submit blocks through ``factory(**kwargs)``."""
    _PROVIDERS[lrm] = factory


def block_provider_for(job_manager: str | None, **kwargs: Any) -> BlockProvider:
    """The block provider for a ``local:<lrm>`` jobManager registered here (``local:local``
    by default).  Blocks that are batch jobs (``local:slurm``, ``ssh-cl:pbs``) are made by
    ``coasters.cluster.make_block_provider`` from the site's configuration instead."""
    jm = (job_manager or "local:local").strip()
    boot, lrm = split_job_manager(jm)
    factory = _PROVIDERS.get(lrm) if boot == "local" else None
    if factory is None:
        known = ", ".join(f"local:{k}" for k in sorted(_PROVIDERS))
        raise CoasterConfigError(
            f"invalid value '{jm}' for property 'execution.jobManager': no block provider "
            f"for it here (available: {known}, or BOOT:LRM with a batch system)")
    return factory(**kwargs)


#: the BOOT parts of a jobManager: the shell the batch commands go through
BOOTS = ("local", "ssh-cl")


def split_job_manager(job_manager: str) -> tuple[str, str]:
    """``BOOT:LRM`` -> (BOOT, LRM); a bare ``LRM`` boots locally, as Swift's did."""
    if ":" not in job_manager:
        return "local", job_manager
    boot, _, lrm = job_manager.partition(":")
    return boot.strip(), lrm.strip()
