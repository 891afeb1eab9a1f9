"""Memoized calls: the engine's contract with whatever remembers app calls.

Why a contract of its own: the engine must not know where calls are remembered (the
run store, :mod:`swiftnb.store.memo`, lives above it and imports sqlite), yet the
decision belongs in the call path, after the restart log check and before the call is
submitted, so that a reused call never reaches a site.  The engine asks
:meth:`CallMemo.decide` once per call (or first :meth:`CallMemo.decide_now`, which
answers at once when a reuse is known without waiting: a call it reuses need not become
a coroutine of its own), and after a call that ran tells :meth:`CallMemo.remember` how
it ended; a memo never raises into the engine for a
problem of its own store (it says so and lets calls run).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

from swiftnb.engine.task import Task, TaskResult

__all__ = ["CallMemo", "MemoDecision"]


@dataclass(frozen=True, slots=True)
class MemoDecision:
    """Whether a call is reused instead of run, and why, for people (the JOB_CACHED
    and JOB_NOT_CACHED ``reason``).  ``restored``: an output was brought back from the
    content store for the reuse."""

    reuse: bool
    reason: str
    restored: bool = False


class CallMemo(abc.ABC):
    """Remembers app calls across runs (docs/memoization.md).

    The engine calls :meth:`decide` for every call when memoization is on (not for a
    dry run, not for a call the restart log skips); when the decision is to run it sets
    ``task.digest_outputs`` so that the site reports the outputs' digests, runs the call
    (with its retries) and then calls :meth:`remember` with the last attempt's result."""

    def decide_now(self, task: Task) -> MemoDecision | None:
        """A reuse decided at once, on the loop, from what the memo holds in memory (a
        few ``stat`` calls at most); None when it cannot tell without waiting: then ask
        :meth:`decide`.  Never a decision to run (that needs :meth:`decide`)."""
        return None

    @abc.abstractmethod
    async def decide(self, task: Task) -> MemoDecision:
        """Reuse (an earlier call with the same key made outputs that are in place, or
        were restored) or run, with the reason either way.  Must not block the loop."""

    @abc.abstractmethod
    async def remember(self, task: Task, result: TaskResult, decision: MemoDecision,
                       started: float, ended: float) -> None:
        """Record a call that ran: a success may be reused later, a failure never is
        (it only lets a later run say "earlier call failed")."""

    @abc.abstractmethod
    def close(self) -> None:
        """Write what is still buffered; the memo is not used afterwards."""
