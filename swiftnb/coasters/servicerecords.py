"""The coaster service's records: a task inside it (:class:`CoasterJob`), a connected
worker (:class:`WorkerConn`) and a planned block (:class:`Block`), with the slot
arithmetic dispatch reads from them.  Plain data with small derived properties; the
service (:mod:`swiftnb.coasters.service`) changes them."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from swiftnb.coasters import planner
from swiftnb.coasters.blocks import BlockHandle
from swiftnb.engine.task import FailureKind, TaskResult
from swiftnb.events import TaskStatus
from swiftnb.remote.worker import encode

__all__ = ["StatusSink", "StageOut", "stage_out_result", "CoasterJob", "WorkerConn", "Block"]


class StatusSink(Protocol):
    """Where a task's status changes go: the scheduler's reporter of the attempt, or a
    persistent service's client connection."""

    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None: ...


#: a provider's stage-out of a finished task (its outputs brought back from the cluster):
#: the worker's result dict in, the result once the outputs are in place out
StageOut = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

#: what a provider does with the result of a task that ended on a worker (after any
#: stage-out), besides resolving it: it writes the task's ``-info`` record
RecordResult = Callable[[dict[str, Any]], None]


async def stage_out_result(stage_out: StageOut, result: dict[str, Any]) -> dict[str, Any]:
    """``stage_out(result)``; a stager's bug makes the task fail, saying so, instead of
    escaping into the service."""
    try:
        return await stage_out(result)
    except Exception as exc:
        return {"ok": False, "kind": FailureKind.STAGE_OUT.value,
                "message": f"stage out failed: {type(exc).__name__}: {exc}"}


@dataclass(eq=False, slots=True)
class CoasterJob:
    """A task inside the service: its spec for the worker and how to report back."""

    taskid: str
    walltime: int
    spec: dict[str, Any]
    report: StatusSink
    future: asyncio.Future[TaskResult]
    n: int = 0
    retries: int = 0
    worker: WorkerConn | None = None
    dispatched: float = 0.0
    started: float | None = None   # when the worker began it (stage in)
    size: float = 0.0
    canceled: bool = False
    stage_out: StageOut | None = None
    #: told the result of the task's end on a worker (its -info record is written)
    record: RecordResult | None = None
    slots: int = 1                 # worker slots it holds (an MPI task: several)
    #: an MPI task spread over several workers: the slots it holds on the others
    helpers: dict[WorkerConn, int] = field(default_factory=dict)
    lost_part: str = ""            # why a helper's slots were lost while it ran

    @property
    def share(self) -> int:
        """The slots it holds on the worker that runs it."""
        return self.slots - sum(self.helpers.values())


@dataclass(eq=False)
class WorkerConn:
    """A connected worker: ``cores`` task slots on one node of a block."""

    block: Block
    id: str
    node: str
    cores: int
    pid: int
    writer: asyncio.StreamWriter
    running: dict[int, CoasterJob] = field(default_factory=dict)
    connected: float = 0.0
    closing: bool = False
    prefetch: int = 0
    #: slots held for MPI tasks that other workers run (task number -> slots)
    held: dict[int, int] = field(default_factory=dict)

    @property
    def idle(self) -> int:
        """Slots nothing runs on or is held for."""
        return max(0, self.cores - sum(j.share for j in self.running.values())
                   - sum(self.held.values()))

    @property
    def free(self) -> int:
        """Slots a task may be sent to: the idle ones, and the prefetch ones unless slots
        are held here (the worker knows nothing of those, so it must get no more tasks
        than it has idle slots)."""
        if self.held:
            return self.idle
        return self.cores + self.prefetch - sum(j.share for j in self.running.values())

    def start_delay(self, now: float) -> float:
        """How long a task sent now may wait in the worker before a slot takes it: 0 while
        a slot is free, else the expected end of the running task it queues behind."""
        waiting = len(self.running) - self.cores
        if waiting < 0:
            return 0.0
        ends = sorted(max(0.0, j.walltime - (now - (j.started or now))) for j in self.running.values())
        return ends[min(waiting, len(ends) - 1)]

    @property
    def workerid(self) -> str:
        return f"{self.block.id}:{self.id}"

    def send(self, message: dict[str, Any]) -> None:
        if not self.writer.is_closing():
            self.writer.write(encode(message))


@dataclass(eq=False)
class Block:
    """A planned block: its shape, lifecycle and usage (the LRM side is ``handle``).

    ``started`` is when its LRM job started; its usable time ends ``walltime`` s later and
    the LRM kills it ``reserve`` s after that.
    """

    id: str
    workers: int
    walltime: int
    requested: float
    reason: str = ""
    started: float | None = None
    last_used: float = 0.0
    state: str = "requested"   # requested, active, suspended, shutting down, done, failed
    suspended: bool = False
    shutdown: bool = False
    handle: BlockHandle | None = None
    conns: dict[str, WorkerConn] = field(default_factory=dict)
    busy: float = 0.0          # core-seconds spent on tasks
    ever_connected: bool = False
    given_up: str = ""         # why it was given up before any worker came
    said_no_worker: bool = False  # a WAITING no-worker was emitted (withdrawn on the first)
    ended: float | None = None
    tasks_done: int = 0
    passive: bool = False      # made for workers started by hand; no LRM job

    @property
    def live(self) -> bool:
        return self.state not in ("done", "failed")

    def running_count(self) -> int:
        return sum(len(c.running) for c in self.conns.values())

    def time_left(self, now: float) -> float:
        """Usable time left for new tasks (the reserve already excluded)."""
        if self.started is None:
            return float(self.walltime)
        return self.started + self.walltime - now

    def size_left(self, now: float, p: float) -> float:
        if self.state == "failed" or self.shutdown:
            return 0.0
        return planner.area(self.workers, int(max(0.0, self.time_left(now))), p)

    def fits(self, walltime: int, now: float) -> bool:
        return not self.suspended and not self.shutdown and walltime <= self.time_left(now)

    def utilization(self, now: float) -> float:
        if self.started is None:
            return 0.0
        span = ((self.ended or now) - self.started) * self.workers
        return round(100.0 * self.busy / span, 2) if span > 0 else 0.0
