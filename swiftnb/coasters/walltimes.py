"""The coaster service's queues of tasks: by walltime, so that a block's remaining time
can be filled with the longest task that fits (as Swift/K's coaster BlockQueueProcessor
kept them), FIFO among tasks of equal walltime."""

from __future__ import annotations

import bisect
from collections import deque
from typing import Generic, Protocol, TypeVar

__all__ = ["WalltimeQueue", "Queued"]


class Queued(Protocol):
    """What a queue needs of a task: its walltime (seconds), size and worker slots."""

    walltime: int
    size: float
    slots: int


J = TypeVar("J", bound=Queued)


class WalltimeQueue(Generic[J]):
    """Tasks by walltime, FIFO among equal walltimes; pops the largest that fits a limit."""

    def __init__(self, p: float) -> None:
        self._p = p
        self._keys: list[int] = []
        self._buckets: dict[int, deque[J]] = {}
        self._n = 0
        self.size = 0.0  # summed job sizes (the planner's getJSize)
        self._wide = 0   # tasks of several slots (MPI): pop_fitting looks at slots then

    def __len__(self) -> int:
        return self._n

    def push(self, job: J) -> None:
        bucket = self._buckets.get(job.walltime)
        if bucket is None:
            bucket = self._buckets[job.walltime] = deque()
            bisect.insort(self._keys, job.walltime)
        bucket.append(job)
        self._n += 1
        self.size += job.size
        self._wide += job.slots > 1

    def _take(self, key: int, index: int) -> J:
        bucket = self._buckets[key]
        job = bucket.popleft()
        if not bucket:
            del self._buckets[key]
            del self._keys[index]
        self._n -= 1
        self.size -= job.size
        self._wide -= job.slots > 1
        if self._n == 0:
            self.size = 0.0
        return job

    def pop_fitting(self, limit: float, slots: int = 1) -> J | None:
        """The longest task with ``walltime <= limit`` that needs at most ``slots`` slots
        (the earliest of equals)."""
        i = bisect.bisect_right(self._keys, limit) - 1
        if i < 0:
            return None
        if not self._wide:
            return self._take(self._keys[i], i)
        for key in reversed(self._keys[:i + 1]):
            job = next((j for j in self._buckets[key] if j.slots <= slots), None)
            if job is not None:
                self.remove(job)
                return job
        return None

    def pop_smallest(self) -> J | None:
        return self._take(self._keys[0], 0) if self._keys else None

    def pop_largest(self) -> J | None:
        return self._take(self._keys[-1], len(self._keys) - 1) if self._keys else None

    def smallest_walltime(self) -> int | None:
        return self._keys[0] if self._keys else None

    def remove(self, job: J) -> bool:
        bucket = self._buckets.get(job.walltime)
        if bucket is None:
            return False
        try:
            bucket.remove(job)
        except ValueError:
            return False
        if not bucket:
            del self._buckets[job.walltime]
            self._keys.remove(job.walltime)
        self._n -= 1
        self.size -= job.size
        self._wide -= job.slots > 1
        return True

    def counts(self) -> list[tuple[int, int]]:
        """(walltime, number of tasks), ascending."""
        return [(k, len(self._buckets[k])) for k in self._keys]

    def walltimes(self) -> list[int]:
        """All walltimes, ascending (the planner's sorted holding list)."""
        out: list[int] = []
        for k in self._keys:
            out.extend([k] * len(self._buckets[k]))
        return out
