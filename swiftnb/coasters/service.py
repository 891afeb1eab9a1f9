"""The coaster service of one site: queue, periodic planner, fast dispatch to workers.

Seed 000 section 0.4: tasks submitted to the service are queued; a planner periodically
recomputes block requirements from the queue and the site's limits and starts or shuts
down blocks; dispatch is separate and fast: when a worker has a free slot it gets the
largest queued task that fits its remaining walltime (minus ``reserve``).

Queues as in Swift 0.96: ``holding`` (tasks no block has capacity for yet) and ``queued``
(tasks committed to blocks); workers take from ``queued`` first, then ``holding``.

Everything here runs on the caller's event loop: one coroutine per worker connection, one
for the planner, one per block watcher.  Tasks themselves create no coroutines here; they
are futures completed from the connection callbacks.

An MPI task of several slots (:mod:`swiftnb.coasters.mpi`) goes to one worker with the
slots free, or holds idle slots of several workers of one block at once, all or none:
the first of them starts ``mpiexec`` over the others' nodes, the others are sent nothing
on those slots until it ends (``WorkerConn.held``), and a lost one fails the task.

Connections come through :class:`~swiftnb.coasters.listener.Listener`s, which admit only a
hello carrying the service's secret (and keep what an unauthenticated peer can make the
service hold small).  A hello ``{"op": "hello"}`` is a worker's; ``{"op": "client"}`` is a
client's of a persistent service, handed to ``client_handler`` (``swiftnb coaster-service``
sets it).

``workerManager: "passive"`` (``settings.passive``): no planner and no blocks.  Workers a
person starts (:meth:`CoasterService.worker_command` is the command line) join the block
their ``--block`` names, made when its first worker connects; tasks wait in the queue
until one does.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import os
import secrets
import shlex
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from swiftnb.coasters import planner
from swiftnb.coasters.blocks import BlockProvider, BlockRequest
from swiftnb.coasters.listener import LINE_LIMIT, Handler, ListenError, Listener
from swiftnb.coasters.secretfile import default_secret_path, write_secret
from swiftnb.coasters.servicerecords import (Block, CoasterJob, RecordResult, StageOut,
                                             StatusSink, WorkerConn, stage_out_result)
from swiftnb.coasters.settings import CoasterSettings
from swiftnb.coasters.slotwaits import SlotWaits, slot_waiting
from swiftnb.coasters.walltimes import WalltimeQueue
from swiftnb.remote.worker import PROTOCOL_VERSION, encode
from swiftnb.engine.task import FailureKind, TaskResult
from swiftnb.errors import SwiftnbError
from swiftnb.execution.outcome import result_from_dict
from swiftnb.events import EventBus, TaskStatus
from swiftnb.scheduling.background import internal_error, start_background
from swiftnb.scheduling.waiting import Waiting, emit_waiting

__all__ = ["CoasterService", "CoasterJob", "StageOut", "StatusSink"]



#: blocks in a row that end before any worker connects, before queued tasks are failed
START_FAILURE_LIMIT = 3
#: seconds a running block may have no worker before a WAITING no-worker says so (at most
#: half of workerStartTimeout)
NO_WORKER_NOTICE = 20.0
NO_WORKER = "no-worker"

#: bytes read from a worker's connection at once
READ_SIZE = 1 << 16

#: automatic prefetch is on while the average task runs shorter than this (s)
AUTO_PREFETCH_BELOW = 0.5


class CoasterStartError(SwiftnbError, RuntimeError):
    """The service could not start (e.g. listenAddress is not an address of this host);
    the message is for people and names the options to check."""

class CoasterService:
    """One coaster site: accepts tasks, plans blocks, dispatches to workers."""

    def __init__(self, settings: CoasterSettings, block_provider: BlockProvider, *,
                 bus: EventBus | None = None, site: str = "coaster",
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.provider = block_provider
        self.bus = bus if bus is not None else EventBus()
        self.site = site
        self.clock = clock
        self.secret = secrets.token_hex(16)
        p = settings.parallelism
        self.holding = WalltimeQueue[CoasterJob](p)
        self.queued = WalltimeQueue[CoasterJob](p)
        self.running: dict[int, CoasterJob] = {}
        self._by_future: dict[asyncio.Future[TaskResult], CoasterJob] = {}
        self._wide = 0   # unfinished tasks of several slots: dispatch looks across workers
        self.blocks: dict[str, Block] = {}
        self.finished_blocks: deque[Block] = deque(maxlen=50)
        self.decisions: deque[dict[str, Any]] = deque(maxlen=100)
        self.counts = {"submitted": 0, "completed": 0, "failed": 0, "requeued": 0}
        self._idle: dict[WorkerConn, None] = {}
        self._next_n = 0
        self._block_seq = 0
        self._bqp_id = time.strftime("%m%d-%M%I%S", time.localtime()) + "0"
        self._listeners: list[Listener] = []
        #: serves an authenticated client of a persistent service (None: clients refused)
        self.client_handler: Handler | None = None
        self.secret_file: str | None = None   # written by write_secret_file, removed at the end
        self._planner_task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._closing = False
        self._start_failures = 0
        self._run_time: float | None = None   # moving average of task run times (s)
        self._passive_block: str | None = None
        self._staging: set[asyncio.Task[None]] = set()
        self._submitting: set[asyncio.Task[None]] = set()  # blocks' submissions under way
        self.host = settings.contact_host
        self.port = 0
        #: says when queued tasks wait for a slot (WAITING subject=queue)
        self.slot_waits = SlotWaits(self.bus, site, self._slot_waiting)

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        self._wake = asyncio.Event()
        s = self.settings
        self.port = await self.listen(s.bind_address, s.service_port, s.port_range)
        if s.passive:
            self._passive_block = self._new_block_id()
        else:
            self._planner_task = start_background(
                self._plan_loop(), self._submitting,
                lambda exc: self._fail_waiting(internal_error("planning blocks", exc)))

    async def listen(self, host: str, port: int = 0,
                     port_range: tuple[int, int] | None = None) -> int:
        """Accept workers and clients on one more address (the first call is the address
        workers are told); returns the port."""
        listener = Listener(host, port, port_range, authenticate=self._authenticate,
                            handler=self._serve, warn=self._warn)
        try:
            bound = await listener.start()
        except ListenError as exc:
            raise CoasterStartError(
                f"coaster site {self.site}: {exc}; check execution.options listenAddress / "
                "internalHostName / servicePort and swift.conf's hostName / "
                "TCPPortRange") from None
        self._listeners.append(listener)
        return bound

    def write_secret_file(self, path: str | None = None) -> str:
        """Write the secret where people's workers and clients read it (see secretfile);
        the file goes when the service shuts down."""
        self.secret_file = write_secret(path or self.settings.secret_file
                                        or default_secret_path(self.port), self.secret)
        return self.secret_file

    def worker_command(self, python: str | None = None) -> str:
        """The command line that starts a worker for this passive service by hand."""
        from swiftnb.remote import worker as worker_module
        from swiftnb.remote import wrapper as wrapper_module

        argv = [python or sys.executable, os.path.abspath(worker_module.__file__),
                "--host", self.host, "--port", str(self.port),
                "--block", self._passive_block or "passive", "--id", "auto",
                "--cores", str(self.settings.jobs_per_node),
                "--wrapper", os.path.abspath(wrapper_module.__file__)]
        if self.secret_file is not None:
            argv += ["--secret-file", self.secret_file]
        return shlex.join(argv)

    def _warn(self, text: str) -> None:
        self.bus.emit("WARNING", {}, text=f"coaster site {self.site}: {text}")

    async def shutdown(self) -> None:
        """Fail what is still queued, stop every block, close the listener."""
        if self._closing:
            return
        self._closing = True
        self.slot_waits.close()
        if self._planner_task is not None:
            self._planner_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._planner_task
        for q in (self.holding, self.queued):
            while (job := q.pop_smallest()) is not None:
                self._finish(job, TaskResult(ok=False, message="Coaster service shut down",
                                             site=self.site, failure=FailureKind.CANCELED))
        for block in list(self.blocks.values()):
            if block.live:
                self._shutdown_block(block, "service shutdown", force=True)
        for job in list(self.running.values()):
            self._finish(job, TaskResult(ok=False, message="Coaster service shut down",
                                         site=self.site, failure=FailureKind.CANCELED))
        with contextlib.suppress(Exception):
            await self.provider.close()
        for listener in self._listeners:
            with contextlib.suppress(Exception):
                await listener.close()
        if self.secret_file is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.secret_file)

    # -- tasks --------------------------------------------------------------------------

    def submit(self, taskid: str, walltime: int, spec: dict[str, Any],
               report: StatusSink, *, stage_out: StageOut | None = None,
               record: RecordResult | None = None) -> asyncio.Future[TaskResult]:
        """Queue a task; the future completes with its TaskResult (after ``stage_out``,
        if given, has brought its outputs back; the worker takes its next task meanwhile).
        ``record`` is told the worker's result of a task that ran (its -info record)."""
        loop = asyncio.get_running_loop()
        job = CoasterJob(taskid, int(walltime), spec, report, loop.create_future(),
                         stage_out=stage_out, record=record,
                         slots=max(1, int(spec.get("slots", 1))))
        job.size = job.slots * planner.job_size(job.walltime, self.settings.parallelism)
        self._next_n += 1
        job.n = self._next_n
        self.counts["submitted"] += 1
        if self._closing:
            job.future.set_result(TaskResult(ok=False, message="Coaster service shut down",
                                             site=self.site, failure=FailureKind.CANCELED))
            return job.future
        self._by_future[job.future] = job
        self._wide += job.slots > 1
        report.status(TaskStatus.SUBMITTED)
        self._enqueue(job)
        return job.future

    def cancel(self, future: asyncio.Future[TaskResult]) -> None:
        """Withdraw a task: drop it from the queues or kill it on its worker."""
        job = self._by_future.pop(future, None)
        if job is None:
            return
        self._wide -= job.slots > 1
        job.canceled = True
        if job.n in self.running:
            if job.worker is not None:
                job.worker.send({"op": "cancel", "n": job.n})
            return
        if not self.holding.remove(job):
            self.queued.remove(job)
        if self.slot_waits.said and not (len(self.holding) or len(self.queued)):
            self.slot_waits.queue_empty()

    def _enqueue(self, job: CoasterJob) -> None:
        was_empty = not len(self.holding)
        self.holding.push(job)
        if self._idle:
            for conn in list(self._idle):
                self._dispatch(conn)
                if not len(self.holding):
                    break
        # plan early when work appears after a quiet spell (else: every planInterval)
        if was_empty and len(self.holding) and self._wake is not None:
            self._wake.set()
        if len(self.holding):
            self.slot_waits.tasks_queued()

    def _slot_waiting(self) -> Waiting | None:
        """Why queued tasks wait for a slot now (coasters/slotwaits.py)."""
        if self._closing:
            return None
        return slot_waiting(self.site, len(self.holding) + len(self.queued),
                            self.blocks.values(), passive=self.settings.passive)

    def _dispatch(self, conn: WorkerConn) -> None:
        block = conn.block
        if block.suspended or block.shutdown or conn.closing:
            self._idle.pop(conn, None)
            return
        now = self.clock()
        conn.prefetch = self.prefetch()
        while conn.free > 0:
            # the task must fit what is left of the block when it can start (at once, or
            # behind a running task when prefetching).  Up to half the reserve may be used:
            # the LRM ends the block a whole reserve later, so the task still finishes, and
            # a task as long as its block (height capped by maxJobTime - reserve, or an
            # overallocation below 1) can start although its workers connected late;
            # without this such a task never fitted and its blocks came and went forever.
            limit = (block.time_left(now) - conn.start_delay(now)
                     + self.settings.reserve / 2)
            # one worker takes a task it has the slots for (now, or after a running one:
            # prefetch); a wider one holds idle slots of several workers of the block
            alone = min(conn.free, conn.cores)
            room = max(alone, self._block_room(conn)) if self._wide else alone
            job = (self.queued.pop_fitting(limit, room)
                   or self.holding.pop_fitting(limit, room))
            if job is None:
                break
            job.worker = conn
            job.dispatched = now
            job.started = None
            job.lost_part = ""
            spec = job.spec if job.slots <= alone else self._spread(job, conn)
            conn.running[job.n] = job
            self.running[job.n] = job
            block.last_used = now
            conn.send({"op": "run", "n": job.n, "spec": spec})
        if conn.free > 0:
            self._idle[conn] = None
        else:
            self._idle.pop(conn, None)
        if self.slot_waits.said and not (len(self.holding) or len(self.queued)):
            self.slot_waits.queue_empty()

    def _block_room(self, conn: WorkerConn) -> int:
        """Idle slots an MPI task started on ``conn`` may hold at once: ``conn``'s and
        those of the other workers of its block (none unless ``conn`` has one idle)."""
        if conn.idle == 0:
            return 0
        return sum(c.idle for c in conn.block.conns.values() if not c.closing)

    def _spread(self, job: CoasterJob, conn: WorkerConn) -> dict[str, Any]:
        """Hold ``job``'s slots on ``conn`` (which starts mpiexec) and on other workers of
        its block, the idlest first; the spec names their nodes (coasters/mpi.py)."""
        from swiftnb.coasters.mpi import spread_spec

        parts = [(conn, min(conn.idle, job.slots))]
        wanted = job.slots - parts[0][1]
        others = sorted((c for c in conn.block.conns.values()
                         if c is not conn and not c.closing and c.idle),
                        key=lambda c: -c.idle)
        for other in others:
            if wanted == 0:
                break
            take = min(other.idle, wanted)
            parts.append((other, take))
            wanted -= take
        assert wanted == 0, "_block_room promised the slots"
        for other, take in parts[1:]:
            job.helpers[other] = take
            other.held[job.n] = take
            if other.free == 0:
                self._idle.pop(other, None)
        self._note(f"MPI task {job.taskid} spans "
                   + ", ".join(f"{c.workerid} ({k} slot(s))" for c, k in parts))
        return spread_spec(job.spec, [(c.node or "localhost", k) for c, k in parts])

    def _release(self, job: CoasterJob) -> None:
        """Give back the slots an MPI task held on other workers, and use them."""
        helpers, job.helpers = job.helpers, {}
        for other in helpers:
            other.held.pop(job.n, None)
        for other in helpers:
            if not other.closing:
                self._dispatch(other)

    def prefetch(self) -> int:
        """Tasks a worker may hold ahead: the ``prefetch`` option, or (auto) one while tasks
        take under half a second, when the round trip between tasks matters."""
        if self.settings.prefetch is not None:
            return self.settings.prefetch
        return 1 if self._run_time is not None and self._run_time < AUTO_PREFETCH_BELOW else 0

    def _finish(self, job: CoasterJob, result: TaskResult) -> None:
        if self._by_future.pop(job.future, None) is not None and job.slots > 1:
            self._wide -= 1
        if not job.future.done():
            job.future.set_result(result)

    # -- worker connections ---------------------------------------------------------------

    def _authenticate(self, hello: dict[str, Any]) -> str | None:
        """None: admit; "" close without a word (no secret, no hint); else the reason,
        sent to a peer that knew the secret."""
        secret = str(hello.get("secret", ""))
        if not hmac.compare_digest(secret.encode(), self.secret.encode()):
            return ""
        if hello.get("version") != PROTOCOL_VERSION:
            return (f"protocol version {hello.get('version')!r}; this service speaks "
                    f"{PROTOCOL_VERSION}")
        op = hello.get("op")
        if op == "client":
            return None if self.client_handler is not None else "this service takes no clients"
        if op != "hello":
            return f"unknown hello {op!r}"
        return self._block_refusal(str(hello.get("block")))

    def _block_refusal(self, block_id: str) -> str | None:
        """Why a worker of ``block_id`` may not join, or None."""
        if self._closing:
            return "the service is shutting down"
        block = self.blocks.get(block_id)
        if block is None:
            return None if self.settings.passive else f"no block {block_id} here"
        if not block.live or block.shutdown:
            return f"block {block_id} has ended"
        return None

    async def _serve(self, hello: dict[str, Any], reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        """One authenticated connection, until it ends."""
        if hello.get("op") == "client":
            assert self.client_handler is not None
            await self.client_handler(hello, reader, writer)
            return
        conn: WorkerConn | None = None
        try:
            conn = self._register(hello, writer)
            if conn is None:
                return
            # whole chunks, split here: a worker writes a task's "done" and the next
            # one's "active" together, and one read per chunk costs less than a
            # readline per message
            partial = b""
            while True:
                data = await reader.read(READ_SIZE)
                if not data:
                    break
                lines = (partial + data).split(b"\n")
                partial = lines.pop()
                if len(partial) > LINE_LIMIT:
                    raise ValueError("a message longer than the line limit")
                for line in lines:
                    if line:
                        self._on_message(conn, json.loads(line))
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            pass  # a broken line or connection: the worker is gone
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # a service bug: drop the worker (its tasks re-run), say so
            self.bus.emit("WARNING", {}, text=f"coaster service error with worker "
                          f"{conn.workerid if conn else '?'}: {type(exc).__name__}: {exc}")
        finally:
            if conn is not None:
                self._worker_gone(conn)

    def _register(self, hello: dict[str, Any], writer: asyncio.StreamWriter) -> WorkerConn | None:
        block_id = str(hello.get("block"))
        why = self._block_refusal(block_id)
        if why is not None:  # the block ended since the hello was read
            writer.write(encode({"op": "refused", "reason": why}))
            return None
        block = self.blocks.get(block_id) or self._passive_block_for(block_id)
        wid = str(hello.get("id"))
        if wid in block.conns and block.passive:
            # the same printed command started twice: the second worker gets the next id
            taken = set(block.conns)
            wid = next(f"{i:06d}" for i in range(len(taken) + 1) if f"{i:06d}" not in taken)
        conn = WorkerConn(block, wid, str(hello.get("node", "")),
                          int(hello.get("cores", 1)), int(hello.get("pid", 0)), writer,
                          connected=self.clock(), prefetch=self.prefetch())
        block.conns[conn.id] = conn
        if block.passive:
            block.workers = sum(c.cores for c in block.conns.values())
        block.ever_connected = True
        self._start_failures = 0
        self._withdraw_no_worker(block)
        conn.send({"op": "welcome", "id": conn.id})
        if block.started is None:
            # a worker is the surest sign its job runs: the LRM's poll may come later
            self._block_active(block)
        block.last_used = max(block.last_used, self.clock())
        self.bus.emit("WORKER_ACTIVE", {"blockid": block.id, "id": conn.id,
                                        "node": conn.node, "cores": conn.cores})
        self._dispatch(conn)
        return conn

    def _passive_block_for(self, block_id: str) -> Block:
        """A passive service's block for workers started by hand (made on the first)."""
        now = self.clock()
        block = Block(block_id, 0, self.settings.max_block_walltime, now, reason="passive",
                      started=now, last_used=now, state="active", passive=True)
        self.blocks[block_id] = block
        self.bus.emit("BLOCK_ACTIVE", {"id": block_id})
        return block

    def _on_message(self, conn: WorkerConn, message: dict[str, Any]) -> None:
        op = message.get("op")
        job = conn.running.get(int(message.get("n", -1)))
        if job is None:
            return
        if op == "start":
            self._began(job, conn)
        elif op == "active":
            if job.started is None:  # no staging to speak of: "start" was left out
                self._began(job, conn)
            if not job.canceled:
                job.report.status(TaskStatus.ACTIVE, workerid=conn.workerid)
        elif op == "done":
            now = self.clock()
            del conn.running[job.n]
            self.running.pop(job.n, None)
            self._release(job)
            block = conn.block
            block.busy += (now - (job.started or now)) * job.slots
            block.last_used = now
            block.tasks_done += 1
            if job.started is not None:
                took = now - job.started
                self._run_time = took if self._run_time is None else 0.9 * self._run_time + 0.1 * took
            result = message.get("result") or {}
            if job.lost_part:  # the worker ended it when a helper's slots were lost
                result = {"ok": False, "kind": FailureKind.CONNECTION_LOST.value,
                          "message": job.lost_part}
            if job.canceled:  # the provider has reported it canceled already
                self._finish(job, TaskResult(ok=False, message="Canceled", site=self.site,
                                             failure=FailureKind.CANCELED))
                self._after_task(conn)
                return
            job.report.status(TaskStatus.STAGE_OUT)
            if job.stage_out is None:
                self._complete(job, result)
            else:
                staging = asyncio.get_running_loop().create_task(self._staged_out(job, result))
                self._staging.add(staging)
                staging.add_done_callback(self._staging.discard)
            self._after_task(conn)

    def _began(self, job: CoasterJob, conn: WorkerConn) -> None:
        """A worker slot took the task: its stage-in begins."""
        job.started = self.clock()
        if not job.canceled:
            job.report.status(TaskStatus.STAGE_IN, workerid=conn.workerid)

    async def _staged_out(self, job: CoasterJob, result: dict[str, Any]) -> None:
        assert job.stage_out is not None
        self._complete(job, await stage_out_result(job.stage_out, result))

    def _complete(self, job: CoasterJob, result: dict[str, Any]) -> None:
        """Report a finished task's end (7, or 5 with the cause) and resolve it."""
        if result.get("ok"):
            self.counts["completed"] += 1
            job.report.status(TaskStatus.COMPLETED)
        else:
            self.counts["failed"] += 1
            job.report.status(TaskStatus.FAILED,
                              message=result.get("cause") or result.get("message") or "failed")
        if job.record is not None:
            job.record(result)
        self._finish(job, result_from_dict({**result, "site": self.site}))

    def _after_task(self, conn: WorkerConn) -> None:
        block = conn.block
        if block.suspended and block.running_count() == 0 and not block.shutdown:
            self._shutdown_block(block, "suspended and its last task ended")
        else:
            self._dispatch(conn)

    def _worker_gone(self, conn: WorkerConn) -> None:
        self._idle.pop(conn, None)
        block = conn.block
        block.conns.pop(conn.id, None)
        if conn.closing:
            return
        now = self.clock()
        if block.started is not None and now >= block.started + block.walltime + self.settings.reserve - 1:
            why = "block walltime expired"
        else:
            why = "worker connection lost"
        self.bus.emit("WORKER_LOST", {"blockid": block.id, "id": conn.id})
        self._lost_parts(conn, why)
        for job in list(conn.running.values()):
            self.running.pop(job.n, None)
            self._release(job)
            block.busy += now - (job.started or now)
            if job.canceled:
                self._finish(job, TaskResult(ok=False, message="Canceled", site=self.site,
                                             failure=FailureKind.CANCELED))
                continue
            job.worker = None
            if job.started is None and not self._closing:
                # sent ahead (prefetch) but never begun: nothing failed, just run it elsewhere
                self._note(f"re-queued {job.taskid} ({job.spec.get('jobid', '')}): worker "
                           f"{conn.workerid} lost ({why}) before the task started")
                self._enqueue(job)
                continue
            message = (f"Worker lost: {conn.workerid} on {conn.node or 'unknown node'} "
                       f"({why}) while running the task")
            job.report.status(TaskStatus.FAILED, message=message)
            job.worker = None
            if job.retries < self.settings.worker_retries and not self._closing:
                job.retries += 1
                self.counts["requeued"] += 1
                self._note(f"re-queued {job.taskid} ({job.spec.get('jobid', '')}): {message}")
                job.report.status(TaskStatus.SUBMITTED)
                self._enqueue(job)
            else:
                self.counts["failed"] += 1
                self._finish(job, TaskResult(ok=False, message=message, site=self.site,
                                             failure=FailureKind.CONNECTION_LOST))
        conn.running.clear()
        conn.closing = True

    def _lost_parts(self, conn: WorkerConn, why: str) -> None:
        """``conn`` held slots of MPI tasks other workers run: their ranks there are gone,
        so each such task is ended and fails, saying so."""
        held, conn.held = conn.held, {}
        for n in held:
            job = self.running.get(n)
            if job is None or job.worker is None:
                continue
            job.helpers.pop(conn, None)
            job.lost_part = (f"Worker lost: {conn.workerid} on {conn.node or 'unknown node'} "
                             f"({why}), which held {held[n]} slot(s) of the MPI task")
            job.worker.send({"op": "cancel", "n": n})

    # -- blocks -----------------------------------------------------------------------------

    def _new_block_id(self) -> str:
        bid = f"{self._bqp_id}-{self._block_seq:06d}"
        self._block_seq += 1
        return bid

    def _start_block(self, plan: planner.BlockPlan, now: float) -> Block:
        block = Block(self._new_block_id(), plan.workers, plan.walltime, now, reason=plan.reason,
                      last_used=now)
        self.blocks[block.id] = block
        self.bus.emit("BLOCK_REQUESTED", {"id": block.id, "cores": block.workers,
                                          "coresPerWorker": 1, "walltime": block.walltime})
        request = BlockRequest(block.id, block.workers, self.settings.jobs_per_node,
                               block.walltime, block.walltime + self.settings.reserve,
                               self.host, self.port, self.secret)
        start_background(self._submit_block(block, request), self._submitting,
                         lambda exc: self._submit_broke(block, exc))
        return block

    def _submit_broke(self, block: Block, exc: BaseException) -> None:
        """The block's submission broke on a bug: the block fails (its job, if it has
        one, is stopped), as a block that could not be submitted does."""
        why = internal_error(f"submitting block {block.id}", exc)
        if block.ended is None:
            self._block_ended(block, why)
        if block.handle is not None:
            block.handle.stop(grace=0)

    async def _submit_block(self, block: Block, request: BlockRequest) -> None:
        def on_active() -> None:
            self._block_active(block)

        def on_exit(reason: str, detail: str = "") -> None:
            if block.ended is None:  # not failed already (see _submit_broke)
                self._block_ended(block, reason, detail)

        try:
            block.handle = await self.provider.submit(request, on_active, on_exit)
        except Exception as exc:  # the LRM refused the block
            self._note(f"block {block.id} could not be submitted: {exc}")
            self._block_ended(block, f"submission failed: {exc}")
            return
        if block.shutdown:
            block.handle.stop(grace=0)
            return
        started = len(block.handle.pids())
        if 0 < started < request.nodes:
            text = (f"block {block.id}: {request.nodes} workers planned, {started} started "
                    f"(the block provider's limit); set maxNodesPerJob to match")
            self._note(text)
            self.bus.emit("WARNING", {}, text=f"coaster site {self.site}: {text}")

    def _block_active(self, block: Block) -> None:
        """The block's job runs (BLOCK_ACTIVE once, whichever says so first: the block
        provider or its first worker)."""
        if block.started is not None:
            return
        if block.state == "requested":
            block.state = "active"
        block.started = self.clock()
        block.last_used = block.started
        self.bus.emit("BLOCK_ACTIVE", {"id": block.id})
        if not block.ever_connected:
            loop = asyncio.get_running_loop()
            timeout = self.settings.worker_start_timeout
            loop.call_later(min(NO_WORKER_NOTICE, timeout / 2), self._say_no_worker, block)
            loop.call_later(timeout, self._check_started, block)

    def _say_no_worker(self, block: Block) -> None:
        """A block whose job runs with no worker yet says so (WAITING no-worker) well
        before workerStartTimeout gives it up: the commonest cause is a node that cannot
        reach the service."""
        if self._closing or block.ever_connected or block.shutdown or not block.live:
            return
        block.said_no_worker = True
        waited = self.clock() - (block.started or self.clock())
        emit_waiting(self.bus, "worker", block.id, self.site, Waiting(
            NO_WORKER,
            f"block {block.id}'s job runs since {waited:.0f} s but none of its workers has "
            f"connected to the service at {self.host}:{self.port}: check that its nodes "
            f"reach that address (listenAddress, a firewall, the ssh-cl relay) and the "
            f"block's stderr; it is given up after workerStartTimeout "
            f"({self.settings.worker_start_timeout:g} s)"))

    def _withdraw_no_worker(self, block: Block) -> None:
        if block.said_no_worker:
            block.said_no_worker = False
            emit_waiting(self.bus, "worker", block.id, self.site, Waiting("", ""))

    def _check_started(self, block: Block) -> None:
        """A block whose job runs but whose workers never came (a firewall, a node that
        cannot reach the service, a worker stuck before its hello) is given up: its job
        is cancelled and it counts as a failed start."""
        if self._closing or block.ever_connected or block.shutdown or not block.live:
            return
        timeout = self.settings.worker_start_timeout
        block.given_up = (f"no worker of block {block.id} connected within {timeout:g} s of "
                          "its job starting (workerStartTimeout); its job is cancelled")
        self.bus.emit("WARNING", {}, text=f"coaster site {self.site}: {block.given_up}")
        self._shutdown_block(block, block.given_up, force=True)

    def _block_ended(self, block: Block, reason: str, detail: str = "") -> None:
        now = self.clock()
        block.ended = now
        self._withdraw_no_worker(block)
        if (block.shutdown or reason == "stopped") and not block.given_up:
            block.state = "done"
            self.bus.emit("BLOCK_DONE", {"id": block.id})
        else:
            block.state = "failed"
            why = block.given_up or (f"block {block.id} ended prematurely ({reason})"
                                     + (f": {detail}" if detail else ""))
            self._note(why)
            for conn in list(block.conns.values()):
                self._worker_gone(conn)
            self.bus.emit("BLOCK_FAILED", {"id": block.id})
            if not block.ever_connected and not self._closing:
                self._start_failures += 1
                if self._start_failures >= START_FAILURE_LIMIT:
                    self._fail_waiting(
                        f"Coaster blocks of site {self.site} failed to start "
                        f"{self._start_failures} times in a row; the last: {why}")
        self.blocks.pop(block.id, None)
        self.finished_blocks.append(block)
        if len(self.holding) or len(self.queued):
            if self._wake is not None:
                self._wake.set()

    def _fail_waiting(self, message: str) -> None:
        """Give up on the queued tasks (blocks keep failing before any worker connects)."""
        self._note(message)
        for q in (self.holding, self.queued):
            while (job := q.pop_smallest()) is not None:
                self.counts["failed"] += 1
                job.report.status(TaskStatus.FAILED, message=message)
                self._finish(job, TaskResult(ok=False, message=message, site=self.site,
                                             failure=FailureKind.SUBMIT_REFUSED))
        self._start_failures = 0
        self.slot_waits.queue_empty()

    def _shutdown_block(self, block: Block, reason: str, force: bool = False) -> None:
        if block.shutdown:
            return
        now = self.clock()
        block.shutdown = True
        block.state = "shutting down"
        self._note(f"shutting down block {block.id}: {reason}")
        self.bus.emit("BLOCK_SHUTDOWN", {"id": block.id})
        self.bus.emit("BLOCK_UTILIZATION", {"id": block.id, "u": block.utilization(now)})
        for conn in list(block.conns.values()):
            conn.closing = True
            self._idle.pop(conn, None)
            # Swift 0.96 logged both for every worker of a block it shut down
            self.bus.emit("WORKER_LOST", {"blockid": block.id, "id": conn.id})
            self.bus.emit("WORKER_SHUTDOWN", {"blockid": block.id, "id": conn.id})
            for job in list(conn.running.values()):
                self.running.pop(job.n, None)
                self._release(job)
                self._finish(job, TaskResult(ok=False, message=f"Block {block.id} shut down: {reason}",
                                             site=self.site, failure=FailureKind.CANCELED))
            conn.running.clear()
            conn.send({"op": "shutdown"})
        if block.handle is not None:
            # the workers got "shutdown" and kill their apps; the LRM-style kill follows
            block.handle.stop(grace=1.0 if force else 5.0)
        elif block.passive:  # no LRM job to wait for
            self._block_ended(block, "stopped")

    # -- planning ---------------------------------------------------------------------------

    def _note(self, text: str) -> None:
        self.decisions.append({"time": self.clock(), "text": text})
        self.bus.emit("PLANNER", {}, text=text)

    async def _plan_loop(self) -> None:
        assert self._wake is not None
        while not self._closing:
            try:
                # never 0: that would be a busy loop holding a whole core
                await asyncio.wait_for(self._wake.wait(), max(0.01, self.settings.plan_interval))
                await asyncio.sleep(0.02)  # let a burst of submissions arrive first
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                self.plan_round()
            except Exception as exc:  # keep planning; say what went wrong
                self.bus.emit("WARNING", {}, text=f"coaster planner error: {type(exc).__name__}: {exc}")

    def _running_size(self, now: float, left: bool) -> float:
        p = self.settings.parallelism
        if left:
            return sum(planner.job_size(max(0, j.walltime - (now - (j.started or now))), p)
                       for j in self.running.values())
        return sum(j.size for j in self.running.values())

    def plan_round(self) -> None:
        """One planning round (BlockQueueProcessor.updatePlan); none when passive."""
        s = self.settings
        if s.passive:
            return
        p = s.parallelism
        now = self.clock()
        live = [b for b in self.blocks.values() if b.live]
        # 1. blocks past their deadline (walltime over, or idle too long) are done
        for b in live:
            if b.shutdown or b.started is None:
                continue
            deadline = planner.block_deadline(b.started, b.walltime, b.last_used, s.max_worker_idle_time)
            if now > deadline and b.running_count() == 0:
                why = "walltime over" if now > b.started + b.walltime else \
                    f"idle for more than {s.max_worker_idle_time:g}s"
                self._shutdown_block(b, why)
            elif b.suspended and b.running_count() == 0:
                self._shutdown_block(b, "suspended and idle")
        live = [b for b in self.blocks.values() if b.live and not b.shutdown]
        # 2. capacity left in the blocks
        allocsize = sum(b.size_left(now, p) for b in live)
        running_left = self._running_size(now, left=True)
        # 3. move holding tasks that existing blocks can take to queued
        moved = 0
        while len(self.holding):
            wt = self.holding.smallest_walltime()
            assert wt is not None
            if not (allocsize - self.queued.size - running_left > planner.job_size(wt, p)
                    and any(b.fits(wt, now) for b in live)):
                break
            job = self.holding.pop_smallest()
            assert job is not None
            self.queued.push(job)
            moved += 1
        # 4. and back, while queued exceeds what the blocks can hold
        back = 0
        while len(self.queued) and allocsize - self.queued.size - running_left < 0:
            job = self.queued.pop_largest()
            assert job is not None
            self.holding.push(job)
            back += 1
        if moved or back:
            self._note(f"{moved} task(s) queued to existing blocks, {back} moved back to holding "
                       f"(capacity left {allocsize:.1f}, queued {self.queued.size:.1f}, "
                       f"running {running_left:.1f})")
        # 5. new blocks for what is still holding, or remove idle blocks
        counts = self.holding.counts()
        tsum = 0
        if counts:
            tsum = int(max(1.0, sum(planner.desired_size(w, s) * c for w, c in counts)))
        chunk = planner.new_block_count(s.slots, len(self.blocks), s.allocation_step_size)
        if tsum == 0:
            needed = self.queued.size + self._running_size(now, left=False)
            views = [planner.BlockView(b.id, b.size_left(now, p), b.last_used, b.suspended)
                     for b in live if b.started is not None]
            for bid in planner.blocks_to_suspend(views, needed, now, s.suspend_delay):
                b = self.blocks[bid]
                b.suspended = True
                b.state = "suspended"
                for conn in b.conns.values():
                    self._idle.pop(conn, None)
                self._note(f"suspending block {bid}: no work waiting, unused for more than "
                           f"{s.suspend_delay:g}s (needed {needed:.1f})")
                if b.running_count() == 0:
                    self._shutdown_block(b, "suspended and idle")
        elif chunk > 0:
            walltimes = self.holding.walltimes()
            # a block at least as wide as the widest waiting MPI task, which can only run
            # with all its slots in one block
            widest = max((j.slots for j in self._by_future.values() if j.worker is None),
                         default=1) if self._wide else 1
            plans = planner.allocate_blocks(walltimes, len(self.blocks), s, tsum,
                                            min_width=widest)
            for plan in plans:
                block = self._start_block(plan, now)
                for _ in range(plan.count):
                    job = self.holding.pop_smallest()
                    assert job is not None
                    self.queued.push(job)
                self._note(f"new block {block.id} ({block.workers} workers x {block.walltime}s) "
                           f"for {len(walltimes)} holding task(s): {plan.reason}")
        # workers may now have work they did not see (moved to queued does not change
        # what they may take, but blocks that became active might)
        for conn in list(self._idle):
            self._dispatch(conn)

    # -- state ------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """A snapshot for panels: blocks, workers, queues and the latest decisions."""
        now = self.clock()
        p = self.settings.parallelism

        def block_row(b: Block) -> dict[str, Any]:
            return {
                "id": b.id, "state": b.state, "workers": b.workers, "walltime": b.walltime,
                "nodes": -(-b.workers // self.settings.jobs_per_node),
                "requested": b.requested, "started": b.started, "ended": b.ended,
                "time_left": None if b.started is None or not b.live else max(0.0, b.time_left(now)),
                "size_left": b.size_left(now, p) if b.live else 0.0,
                "running": b.running_count(), "tasks_done": b.tasks_done,
                "connected_workers": len(b.conns), "utilization": b.utilization(now),
                "suspended": b.suspended, "reason": b.reason,
                "pids": b.handle.pids() if b.handle is not None and b.live else [],
            }

        blocks = [block_row(b) for b in self.blocks.values()]
        blocks += [block_row(b) for b in self.finished_blocks]
        workers = [
            {"block": c.block.id, "id": c.id, "workerid": c.workerid, "node": c.node,
             "cores": c.cores, "busy": len(c.running), "pid": c.pid,
             "tasks": [j.taskid for j in c.running.values()]}
            for b in self.blocks.values() for c in b.conns.values()
        ]
        return {
            "site": self.site,
            "contact": f"{self.host}:{self.port}",
            "workerManager": self.settings.worker_manager,
            "holding": len(self.holding),
            "queued": len(self.queued),
            "running": len(self.running),
            "prefetch": self.prefetch(),
            "mean_run_time": self._run_time,
            "counts": dict(self.counts),
            "blocks": blocks,
            "workers": workers,
            "decisions": list(self.decisions)[-20:],
            "settings": self.settings.as_options(),
        }
