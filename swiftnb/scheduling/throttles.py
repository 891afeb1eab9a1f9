"""Counting throttles whose limit can change while a run goes.

Swift has two kinds (seed 000, section 0.7): task throttles hold for the whole life of a
task (fileTransfersThrottle, fileOperationsThrottle, and the per-site parallel-task
limit, which the scheduler enforces through site load), and submission throttles hold
only while a task is being submitted (jobSubmitThrottle, hostJobSubmitThrottle).  Both
are a count with a limit and a FIFO of waiters; asyncio.Semaphore cannot change its
limit, hence this small class.  Lowering a limit never preempts: holders finish, and no
new holder enters until the count is under the new limit.
"""

from __future__ import annotations

import asyncio
import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

__all__ = ["Throttle", "parse_throttle", "UNLIMITED"]

UNLIMITED = math.inf


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
    if value < 1:
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
        on_change: Callable[["Throttle", float, float], None] | None = None,
    ) -> None:
        self.name = name
        self.host = host
        self.limit = float(limit)
        self.used = 0
        self.peak = 0
        self._waiters: deque[asyncio.Future] = deque()
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
        future = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # we were granted the slot just as we were cancelled
            else:
                try:
                    self._waiters.remove(future)
                except ValueError:
                    pass
            raise

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
