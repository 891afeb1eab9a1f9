"""Back-pressure on new app calls: a ``foreach`` stops starting iterations while the
executor already holds many more calls than it can run at once.

Why: every app call that reached the executor is a coroutine and an asyncio task
until it ends; a foreach over a large range used to start up to ``maxForeachThreads``
(16,384) iterations at once, and all but a site's few slots waited, at ~3.7 KB each
(benchmarks/percall.py, docs/running.md "What one call costs").  An iteration not yet
started costs nothing, so the loop waits instead, and goes on when the calls in the
executor have drained to a few hundred more than its slots.

Why it cannot deadlock: only calls that reached the executor are counted (``Run.active``:
their inputs are all closed, their task built); such a call waits for nothing but the
executor's slots, which the calls running before it give back.  The count therefore
falls, the gate reopens at the latest when it is REOPEN_ABOVE more than the slots, and every held
foreach goes on (Swift's semantics: a foreach's iterations all run, in any order, an
iteration may wait on another; a held loop only starts its next ones later).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from swiftnb.engine import values as V

__all__ = ["CallGate", "HOLD_ABOVE", "REOPEN_ABOVE"]

#: hold new iterations once the calls in the executor exceed its slots by this many
HOLD_ABOVE = 1024
#: and start them again once they exceed its slots by fewer than this many (a burst of
#: HOLD_ABOVE - REOPEN_ABOVE calls per reopening, not one wake per call that ends)
REOPEN_ABOVE = 512


class CallGate:
    """The run's gate: ``limit`` is the number of calls in the executor at which a
    loop asks :meth:`hold`; the executor's capacity is asked only then (never for a run
    that keeps fewer than HOLD_ABOVE calls in it)."""

    __slots__ = ("limit", "_capacity", "_held", "hold_above", "reopen_above")

    def __init__(self, capacity: Callable[[], float], *, hold_above: int = HOLD_ABOVE,
                 reopen_above: int = REOPEN_ABOVE) -> None:
        """``capacity()``: how many calls the executor runs at once (math.inf: any)."""
        self._capacity = capacity
        self.hold_above = hold_above
        self.reopen_above = reopen_above
        self.limit: float = hold_above
        self._held: list[Callable[[], None]] = []

    @property
    def holding(self) -> bool:
        return bool(self._held)

    def hold(self, active: int, resume: Callable[[], None]) -> bool:
        """A loop would start more work with ``active`` calls in the executor: True if it
        must wait (``resume`` is called from the run's queue once it may go on)."""
        if not self._held:
            capacity = self._capacity()
            if math.isinf(capacity) or active < capacity + self.hold_above:
                self.limit = capacity + self.hold_above
                return False
            self.limit = capacity + self.reopen_above
        self._held.append(resume)
        return True

    def call_ended(self, active: int) -> None:
        """A call left the executor (``active`` remain): reopen once few enough do."""
        if active < self.limit:
            held, self._held = self._held, []
            self.limit = self._capacity() + self.hold_above
            for resume in held:
                V.schedule(resume)
