"""Clocks for the scheduler and the simulated grid: real time, or virtual time.

Everything in scheduling that waits (delay-mode back-off, the replication sweeper, the
clustering queue) and everything the ``sim`` provider simulates (queue times, task
durations, outages) asks a clock, never ``time`` or ``asyncio.sleep`` directly.  With a
:class:`RealClock` that is ordinary asyncio time.  With a :class:`VirtualClock` time
jumps: when the event loop has nothing else to do, the clock advances straight to the
next simulated deadline and wakes whoever waits for it.  The engine does not notice: it
awaits ``Executor.submit`` as always, and a 10,000-task grid "runs" in seconds.

The virtual clock works inside a loop that is already running (Jupyter's, or the one the
CLI starts): it needs no custom loop and never calls ``asyncio.run``.  It finds out that
the loop is idle by looking at the loop's ready queue (asyncio's ``_ready``, present in
CPython's event loops including the one Jupyter uses); on a loop without it, it falls back
to letting a few loop iterations pass before advancing.  Real I/O the loop may be waiting
for (sockets, subprocesses of a real site in the same run) does not hold virtual time back.
"""

from __future__ import annotations

import asyncio
import heapq
import time as _time
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["Clock", "RealClock", "VirtualClock", "TimerHandle"]


class TimerHandle:
    """A scheduled callback that can be cancelled (like asyncio.TimerHandle)."""

    __slots__ = ("when", "callback", "args", "cancelled", "_real")

    def __init__(self, when: float, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        self.when = when
        self.callback = callback
        self.args = args
        self.cancelled = False
        self._real: asyncio.TimerHandle | None = None

    def cancel(self) -> None:
        self.cancelled = True
        if self._real is not None:
            self._real.cancel()

    def __lt__(self, other: TimerHandle) -> bool:  # heap tie-break is the seq tuple
        return self.when < other.when


class Clock(Protocol):
    """What scheduling and simulated providers need of time."""

    virtual: bool

    def now(self) -> float:
        """Seconds since the epoch (virtual or real)."""

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        """Run ``callback(*args)`` after ``delay`` seconds of this clock's time."""

    async def sleep(self, delay: float) -> None:
        """Wait ``delay`` seconds of this clock's time."""


class RealClock:
    """Wall-clock time through the running asyncio loop."""

    virtual = False

    def now(self) -> float:
        return _time.time()

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        handle = TimerHandle(self.now() + delay, callback, args)
        handle._real = asyncio.get_running_loop().call_later(max(0.0, delay), callback, *args)
        return handle

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(max(0.0, delay))


class VirtualClock:
    """Simulated time that jumps to the next deadline whenever the loop is idle.

    ``start`` is the virtual epoch (default: the wall-clock time at creation, so that log
    lines carry plausible dates).  ``now()`` is safe to pass as an EventBus clock.
    """

    virtual = True

    #: after this many consecutive busy looks, advance anyway (a neighbour that polls with
    #: ``await asyncio.sleep(0)`` forever must not freeze simulated time)
    MAX_BUSY_LOOKS = 10000

    def __init__(self, start: float | None = None) -> None:
        self._now = _time.time() if start is None else float(start)
        self.start = self._now
        self._heap: list[tuple[float, int, TimerHandle]] = []
        self._seq = 0
        self._scheduled = False
        self._busy_looks = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        #: how many times time jumped (for benchmarks and tests)
        self.advances = 0

    # -- the Clock interface -------------------------------------------------------------
    def now(self) -> float:
        return self._now

    def elapsed(self) -> float:
        """Virtual seconds since the clock was created."""
        return self._now - self.start

    def call_later(self, delay: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        return self.call_at(self._now + max(0.0, delay), callback, *args)

    def call_at(self, when: float, callback: Callable[..., Any], *args: Any) -> TimerHandle:
        handle = TimerHandle(max(when, self._now), callback, args)
        self._seq += 1
        heapq.heappush(self._heap, (handle.when, self._seq, handle))
        self._wake()
        return handle

    async def sleep(self, delay: float) -> None:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        handle = self.call_later(delay, _resolve, future)
        try:
            await future
        finally:
            handle.cancel()

    def pending(self) -> int:
        """Timers not yet fired (cancelled ones included until they are popped)."""
        return len(self._heap)

    # -- advancing -------------------------------------------------------------------
    def _wake(self) -> None:
        loop = asyncio.get_running_loop()
        if self._scheduled and self._loop is loop:
            return
        self._loop = loop
        self._scheduled = True
        self._busy_looks = 0
        loop.call_soon(self._tick)

    def _tick(self) -> None:
        loop = self._loop
        if loop is None or loop is not asyncio.get_running_loop():
            return  # a tick left over from a loop that was replaced
        # asyncio has no public way to ask whether callbacks are ready to run: its own
        # loops keep them in ``_ready``; other loops (uvloop) do not, hence the probe
        ready = getattr(loop, "_ready", None)
        if ready is not None:
            busy = len(ready) > 0
        else:  # unknown loop: let a few iterations pass between jumps
            busy = self._busy_looks < 3
        if busy and self._busy_looks < self.MAX_BUSY_LOOKS:
            self._busy_looks += 1
            loop.call_soon(self._tick)
            return
        self._busy_looks = 0
        heap = self._heap
        while heap and heap[0][2].cancelled:
            heapq.heappop(heap)
        if not heap:
            self._scheduled = False
            return
        when = heap[0][0]
        if when > self._now:
            self._now = when
            self.advances += 1
        while heap and heap[0][0] <= self._now:
            handle = heapq.heappop(heap)[2]
            if not handle.cancelled:
                handle.cancelled = True  # fired: a later cancel() is a no-op
                handle.callback(*handle.args)
        if heap:
            loop.call_soon(self._tick)
        else:
            self._scheduled = False


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
