"""One worker thread that handles queued requests of the event loop in batches.

Why: memoization asks the store something for every app call (its key's digests, the
earlier call with that key) and tells it how each call ended.  One ``asyncio.to_thread``
a request cost more than the work itself (a future, a thread wake-up and a fight for
the GIL each, ~0.3 ms): here the loop only queues a request and awaits its future, the
worker takes everything queued at once, handles it as one batch (one SQL query for all
its keys) and hands the results back to the loop in one call.  The store's files and
SQLite are still never touched by the loop's thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import Generic, NamedTuple, TypeVar

__all__ = ["BatchWorker", "MAX_BATCH"]

Item = TypeVar("Item")
Result = TypeVar("Result")

#: the most requests one batch takes (a batch's SQL query has one parameter a request)
MAX_BATCH = 500


class _Queued(NamedTuple, Generic[Item, Result]):
    item: Item
    future: asyncio.Future[Result] | None  # None: posted, nobody waits
    loop: asyncio.AbstractEventLoop | None


class BatchWorker(Generic[Item, Result]):
    """``handle(items) -> results`` (one result an item, in order) run in one daemon
    thread over whatever is queued; ``after()`` runs once a batch's results are handed
    back, and every ``tick`` seconds while nothing is asked (work the requests need not
    wait for).  An exception of ``handle`` is every item's of its batch."""

    def __init__(self, handle: Callable[[Sequence[Item]], Sequence[Result]],
                 after: Callable[[], None] = lambda: None, name: str = "swiftnb-batches",
                 tick: float = 0.25):
        self._handle = handle
        self._after = after
        self._tick = tick
        self._name = name
        self._queue: list[_Queued[Item, Result]] = []
        self._ready = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    async def submit(self, item: Item) -> Result:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Result] = loop.create_future()
        with self._ready:
            self._enqueue(_Queued(item, future, loop))
            self._ready.notify()
        return await future

    def post(self, item: Item) -> None:
        """Queue ``item`` without waiting for it nor waking the worker: it is handled
        with the next batch, or within ``tick`` seconds, or at :meth:`close` (what a
        caller need not wait for costs no thread hop).  Its result is dropped."""
        with self._ready:
            self._enqueue(_Queued(item, None, None))

    def _enqueue(self, queued: _Queued[Item, Result]) -> None:
        """Add to the queue (the caller holds ``_ready``), starting the worker thread
        with the first item."""
        if self._stopping:
            raise RuntimeError(f"{self._name} is closed")
        self._queue.append(queued)
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, daemon=True, name=self._name)
            self._thread.start()

    def close(self) -> None:
        """Handle what is queued, then stop the thread."""
        with self._ready:
            self._stopping = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    def _work(self) -> None:
        while True:
            with self._ready:
                if not self._queue and not self._stopping:
                    self._ready.wait(self._tick)
                if not self._queue and self._stopping:
                    return
                batch, self._queue = self._queue[:MAX_BATCH], self._queue[MAX_BATCH:]
            if batch:
                self._run(batch)
            try:
                self._after()
            except Exception:  # noqa: BLE001 - after() says its own problems; the worker goes on
                pass

    def _run(self, batch: list[_Queued[Item, Result]]) -> None:
        try:
            results: Sequence[Result] | BaseException = self._handle(
                [item for item, _, _ in batch])
        except BaseException as exc:  # noqa: BLE001 - handed to every waiting call
            results = exc
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Result],
                                                            Result | BaseException]]] = {}
        for index, (_, future, loop) in enumerate(batch):
            if future is None or loop is None:
                continue  # posted: nobody waits for it
            outcome = results if isinstance(results, BaseException) else results[index]
            by_loop.setdefault(loop, []).append((future, outcome))
        for loop, outcomes in by_loop.items():
            try:
                loop.call_soon_threadsafe(_resolve, outcomes)
            except RuntimeError:
                pass  # the loop is closed: nobody waits for these any more


def _resolve(outcomes: list[tuple[asyncio.Future[Result], Result | BaseException]]) -> None:
    for future, outcome in outcomes:
        if future.done():
            continue  # the call was canceled meanwhile
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
