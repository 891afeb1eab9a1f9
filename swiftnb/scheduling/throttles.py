"""Counting throttles whose limit can change while a run goes.

Swift has two kinds (seed 000, section 0.7): task throttles hold for the whole life of a
task (fileTransfersThrottle, fileOperationsThrottle, and the per-site parallel-task
limit, which the scheduler enforces through site load), and submission throttles hold
only while a task is being submitted (jobSubmitThrottle, hostJobSubmitThrottle).  Both
are a count with a limit and a FIFO of waiters; asyncio.Semaphore cannot change its
limit, hence this small class.  Lowering a limit never preempts: holders finish, and no
new holder enters until the count is under the new limit.

The names an executor's ``set_throttle`` takes, and how their values are written in
``THROTTLE`` events and ``throttles()``, live here too, so that the multi-site scheduler
and the single local site speak to the notebook's throttles panel alike
(:class:`ThrottleControl`).
"""

from __future__ import annotations

import abc
import asyncio
import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from swiftnb.nearest import close_matches
from swiftnb.scheduling.provider import Provider

__all__ = ["Throttle", "parse_throttle", "UNLIMITED", "THROTTLE_NAMES", "THROTTLE_ALIASES",
           "OFF_NAMES", "SWIFT_OFF", "throttle_name", "shown_limit", "ThrottleControl"]

UNLIMITED = math.inf
#: Swift/K's "off": the schema's Throttle type turns it into Integer.MAX_VALUE
SWIFT_OFF = 2**31 - 1

#: the names ``set_throttle`` accepts (swift.conf spelling)
THROTTLE_NAMES = (
    "jobSubmitThrottle", "hostJobSubmitThrottle", "maxParallelTasks", "initialParallelTasks",
    "fileTransfersThrottle", "fileOperationsThrottle", "replicationLimit",
    "replicationMinQueueTime", "delayBase", "maxSubmitRate",
)

#: swift.properties spellings (Swift <= 0.95) accepted by ``set_throttle``
THROTTLE_ALIASES = {
    "throttle.submit": "jobSubmitThrottle",
    "throttle.host.submit": "hostJobSubmitThrottle",
    "throttle.transfers": "fileTransfersThrottle",
    "throttle.file.operations": "fileOperationsThrottle",
    "replication.limit": "replicationLimit",
    "replication.min.queue.time": "replicationMinQueueTime",
}

#: the names of Swift's Throttle type: a positive number or "off" (no limit); the
#: parallel-task limits are plain counts
OFF_NAMES = frozenset({"jobSubmitThrottle", "hostJobSubmitThrottle", "fileTransfersThrottle",
                       "fileOperationsThrottle"})


def throttle_name(name: str) -> str:
    """The swift.conf name of a throttle; ValueError (naming the nearest) if unknown."""
    name = THROTTLE_ALIASES.get(name, name)
    if name not in THROTTLE_NAMES:
        near = close_matches(name, THROTTLE_NAMES)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise ValueError(f"unknown throttle {name!r}{hint}")
    return name


def shown_limit(value: float | int | None) -> int | float | str | None:
    """A limit as THROTTLE events and ``throttles()`` carry it: "off" for no limit
    (infinite, or Swift's Integer.MAX_VALUE), whole floats as ints."""
    if value is None:
        return None
    if isinstance(value, float):
        if math.isinf(value) or value >= SWIFT_OFF:
            return "off"
        if value.is_integer():
            return int(value)
    elif value >= SWIFT_OFF:
        return "off"
    return value


class ThrottleControl(abc.ABC):
    """What the notebook's panels steer and read of a run's executor: its throttles, its
    sites' scores and its providers.  The multi-site Scheduler and the single local
    site's executor both are one, so a panel asks ``isinstance(executor,
    ThrottleControl)`` and never which executor it has (a dry run's is none)."""

    @abc.abstractmethod
    def throttles(self) -> dict[str, Any]:
        """Global values by name, and ``"sites"``: site name -> per-site values."""

    @abc.abstractmethod
    def set_throttle(self, name: str, value: object, site: str | None = None) -> None:
        """Change a throttle now (one THROTTLE event per change); ValueError if refused."""

    @abc.abstractmethod
    def state(self) -> dict[str, Any]:
        """A snapshot; ``"sites"`` lists each site's score, tscore, load and limit."""

    @abc.abstractmethod
    def providers(self) -> list[Provider]:
        """The providers of the run's sites, in site order (the blocks panel reads their
        ``state()``: coaster blocks and their walltime left)."""


def parse_throttle(value: object, key: str = "throttle") -> float:
    """A Swift Throttle value: a positive number, or "off"/"none"/None for no limit."""
    if value is None:
        return UNLIMITED
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("off", "none", "unlimited", "inf"):
            return UNLIMITED
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{key}: expected a number or \"off\", got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key}: expected a number or \"off\", got {value!r}")
    if not value >= 1:  # NaN too
        raise ValueError(f"{key}: must be at least 1, got {value!r}")
    return float(value)


class Throttle:
    """At most ``limit`` holders at once; waiters are served first come, first served."""

    __slots__ = ("name", "host", "limit", "used", "peak", "_waiters", "_on_change")

    def __init__(
        self,
        name: str,
        limit: float = UNLIMITED,
        host: str | None = None,
        on_change: Callable[[Throttle, float, float], None] | None = None,
    ) -> None:
        self.name = name
        self.host = host
        self.limit = float(limit)
        self.used = 0
        self.peak = 0
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._on_change = on_change

    def __repr__(self) -> str:
        return f"Throttle({self.name!r}, host={self.host!r}, {self.used}/{self.limit})"

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def try_acquire(self) -> bool:
        """Take a slot now if one is free and nobody is queued before us."""
        if self.used < self.limit and not self._waiters:
            self._take()
            return True
        return False

    async def acquire(self) -> None:
        if self.try_acquire():
            return
        turn = self.queue()
        try:
            await turn
        except asyncio.CancelledError:
            self.withdraw(turn)
            raise

    def queue(self) -> asyncio.Future[None]:
        """A place in the queue: the future is done when the slot is taken for its
        holder.  For a caller that awaits it itself (the single site: one coroutine
        frame less for each of a large run's waiting calls); one that stops waiting
        gives it back with :meth:`withdraw`."""
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(turn)
        return turn

    def withdraw(self, turn: asyncio.Future[None]) -> None:
        """Its waiter was cancelled: leave the queue, or give back the slot granted just
        before."""
        if turn.done() and not turn.cancelled():
            self.release()
        else:
            try:
                self._waiters.remove(turn)
            except ValueError:
                pass

    def release(self) -> None:
        self.used -= 1
        self._grant()

    def _take(self) -> None:
        self.used += 1
        if self.used > self.peak:
            self.peak = self.used

    def _grant(self) -> None:
        while self._waiters and self.used < self.limit:
            future = self._waiters.popleft()
            if not future.done():
                self._take()
                future.set_result(None)

    def cancel_waiters(self) -> None:
        """Cancel every waiter (their owner shuts down); holders keep their slots."""
        waiters, self._waiters = self._waiters, deque()
        for future in waiters:
            future.cancel()

    def set_limit(self, limit: float) -> None:
        """Change the limit now; waiters enter at once if it grew."""
        old = self.limit
        self.limit = float(limit)
        if self._on_change is not None and old != self.limit:
            self._on_change(self, old, self.limit)
        self._grant()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        await self.acquire()
        try:
            yield
        finally:
            self.release()
