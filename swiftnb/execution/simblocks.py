"""Coaster blocks of a ``sim`` site: pilot jobs that queue, start, serve tasks, end.

A real coaster site runs tasks on the workers of blocks it requests from a batch
system; a task's wait is mostly its block's.  A sim site with ``blockSlots`` set
simulates that, in the same clock as everything else: tasks wait in the site's queue;
when the queued tasks outnumber what blocks already requested will provide, it requests
more blocks (at most ``maxBlocks`` alive at once, one request after the other, each
taking ``blockSubmitTime``; the first after ``serviceStartTime``).  A block waits
``blockQueueTime`` in the batch queue (``BLOCK_ACTIVE``), its worker takes
``blockStartup`` to connect (``WORKER_ACTIVE``), then it runs tasks on ``blockSlots``
slots, each only if the task's walltime fits in what is left of ``blockWalltime`` (as
the coaster planner does).  A block with nothing to run for ``blockIdleTime`` shuts down
(``BLOCK_DONE``), which frees its place under ``maxBlocks``.  The block events are the
coaster service's, so a simulated run's log has the AIMES timings Tq and Tb.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from swiftnb.config.types import Distribution
from swiftnb.scheduling.clock import Clock, TimerHandle

__all__ = ["SimBlocks", "SimBlock"]

Emit = Callable[[str, dict[str, Any]], object]


@dataclass
class SimBlock:
    """One simulated block: its id, slots and the clock times of its states."""

    id: str
    slots: int
    walltime: float
    started: float | None = None    # BLOCK_ACTIVE: the batch job runs
    ready: float | None = None      # WORKER_ACTIVE: its slots take tasks
    running: int = 0
    done: bool = False
    timers: list[TimerHandle] = field(default_factory=list)
    idle: TimerHandle | None = None

    @property
    def worker(self) -> str:
        return f"{self.id}:000000"

    def fits(self, need: float, now: float) -> bool:
        """Whether a task of walltime ``need`` may start here now."""
        if self.ready is None or self.done or self.running >= self.slots:
            return False
        assert self.started is not None
        return self.walltime <= 0 or self.started + self.walltime - now >= need


@dataclass(frozen=True)
class BlockTimes:
    """The drawn durations of a site's blocks (sim options)."""

    queue: Distribution
    startup: Distribution
    submit: Distribution
    service_start: Distribution
    idle: Distribution


class SimBlocks:
    """The blocks of one sim site and the tasks waiting for their slots."""

    def __init__(self, site: str, *, slots: int, max_blocks: int, walltime: float,
                 times: BlockTimes, clock: Clock, rng: random.Random, emit: Emit) -> None:
        self.site = site
        self.slots = slots
        self.max_blocks = max_blocks
        self.walltime = walltime
        self.times = times
        self.clock = clock
        self.rng = rng
        self.emit = emit
        self.blocks: list[SimBlock] = []
        self.waiting: deque[tuple[float, asyncio.Future[SimBlock]]] = deque()
        self._submitter_free: float | None = None   # None: the service has not started
        self._seq = 0

    async def acquire(self, need: float) -> SimBlock:
        """A slot of a block for a task of walltime ``need`` (waits for one)."""
        future: asyncio.Future[SimBlock] = asyncio.get_running_loop().create_future()
        self.waiting.append((need, future))
        self._plan()
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release(future.result())
            raise

    def release(self, block: SimBlock) -> None:
        block.running -= 1
        self._plan()

    def close(self) -> None:
        for block in self.blocks:
            self._cancel(block)
        for _need, future in self.waiting:
            future.cancel()
        self.waiting.clear()

    # -- planning ----------------------------------------------------------------------
    def _plan(self) -> None:
        now = self.clock.now()
        ready = [b for b in self.blocks if b.ready is not None and not b.done]
        # only blocks with a free slot are searched, and the queue only until none is
        # left: a release costs what it starts, not the queue's length times the blocks
        free = [b for b in ready if b.running < b.slots]
        if free:
            self.waiting = self._start_waiting(free, now)
        alive = [b for b in self.blocks if not b.done]
        if len(alive) < self.max_blocks:
            coming = sum(b.slots for b in alive if b.ready is None)
            uncovered = sum(not f.done() for _need, f in self.waiting) - coming
            while uncovered > 0 and len(alive) < self.max_blocks:
                alive.append(self._request(now))
                uncovered -= self.slots
        for block in ready:
            if block.running == 0 and block.idle is None:
                block.idle = self.clock.call_later(self.times.idle.sample(self.rng),
                                                   self._finish, block)

    def _start_waiting(self, free: list[SimBlock], now: float
                       ) -> deque[tuple[float, asyncio.Future[SimBlock]]]:
        """Start waiting tasks, in order, on the ``free`` blocks they fit; the rest."""
        left: deque[tuple[float, asyncio.Future[SimBlock]]] = deque()
        refused = math.inf  # the least walltime no free block had left for
        pending = iter(self.waiting)
        for need, future in pending:
            if future.done():
                continue
            block = next((b for b in free if b.fits(need, now)), None) \
                if need < refused else None
            if block is None:
                refused = min(refused, need)
                left.append((need, future))
                continue
            block.running += 1
            if block.idle is not None:
                block.idle.cancel()
                block.idle = None
            future.set_result(block)
            if block.running >= block.slots:
                free.remove(block)
                if not free:
                    break
        left.extend(pending)
        return left

    def _request(self, now: float) -> SimBlock:
        self._seq += 1
        block = SimBlock(f"{self.site}-{self._seq:06d}", self.slots, self.walltime)
        self.blocks.append(block)
        if self._submitter_free is None:  # the first request, once the service is up
            at = now + self.times.service_start.sample(self.rng)
        else:
            at = max(now, self._submitter_free) + self.times.submit.sample(self.rng)
        self._submitter_free = at
        block.timers.append(self.clock.call_later(at - now, self._requested, block))
        return block

    # -- a block's life ------------------------------------------------------------------
    def _requested(self, block: SimBlock) -> None:
        self.emit("BLOCK_REQUESTED", {"id": block.id, "cores": block.slots,
                                      "coresPerWorker": 1, "walltime": int(block.walltime)})
        block.timers.append(self.clock.call_later(self.times.queue.sample(self.rng),
                                                  self._active, block))

    def _active(self, block: SimBlock) -> None:
        block.started = self.clock.now()
        self.emit("BLOCK_ACTIVE", {"id": block.id})
        if block.walltime > 0:
            block.timers.append(self.clock.call_later(block.walltime, self._finish, block))
        block.timers.append(self.clock.call_later(self.times.startup.sample(self.rng),
                                                  self._worker, block))

    def _worker(self, block: SimBlock) -> None:
        block.ready = self.clock.now()
        self.emit("WORKER_ACTIVE", {"blockid": block.id, "id": "000000",
                                    "node": f"{self.site}-node{self._seq}",
                                    "cores": block.slots})
        self._plan()

    def _finish(self, block: SimBlock) -> None:
        if block.done:
            return
        self._cancel(block)
        block.done = True
        if block.ready is not None:
            self.emit("WORKER_SHUTDOWN", {"blockid": block.id, "id": "000000"})
        self.emit("BLOCK_SHUTDOWN", {"id": block.id})
        self.emit("BLOCK_DONE", {"id": block.id})
        self._plan()

    def _cancel(self, block: SimBlock) -> None:
        for timer in block.timers:
            timer.cancel()
        block.timers.clear()
        if block.idle is not None:
            block.idle.cancel()
            block.idle = None
