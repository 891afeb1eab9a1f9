"""Threads for blocking calls of a running app, each handing its result to the loop.

Why not ``loop.run_in_executor(ThreadPoolExecutor)``: every call there makes a
``concurrent.futures.Future``, chains it to an asyncio future and takes a condition
lock on each side, a cost paid twice per app call.  Here a thread puts its result on
the loop with one ``call_soon_threadsafe``.  There is a thread for every call under way
(an app's thread mostly sleeps in ``wait``, without the GIL), made when none is idle,
kept while idle.  The threads are daemons: a process that exits does not wait for them.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["Runners"]


class Runners:
    """``await runners.call(fn, *args)`` runs ``fn(*args)`` on a thread of its own."""

    def __init__(self, name: str = "swiftnb-runner", limit: int = 1024) -> None:
        self.name = name
        self.limit = limit
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self._threads = 0
        self._closed = False

    def call(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future[Any]:
        """A future for ``fn(*args)`` run on a runner thread (its result or exception)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        with self._lock:
            if self._closed:
                raise RuntimeError("runner threads are shut down")
            if self._idle:
                self._idle -= 1  # that thread is this call's: no call waits behind another
            elif self._threads < self.limit:
                self._threads += 1
                threading.Thread(target=self._work, name=f"{self.name}-{self._threads}",
                                 daemon=True).start()
            # else: at the limit, the call waits for a thread to come free
        self._queue.put((loop, future, fn, args))
        return future

    def shutdown(self) -> None:
        """Let the idle threads end; busy ones end after their call."""
        with self._lock:
            self._closed = True
            count = self._threads
        for _ in range(count):
            self._queue.put(None)

    def _work(self) -> None:
        get, put_back = self._queue.get, _deliver
        while True:
            item = get()
            if item is None:
                return
            loop, future, fn, args = item
            try:
                result, error = fn(*args), None
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                result, error = None, exc
            with self._lock:  # idle before the loop hears of it: its next call is ours
                self._idle += 1
            try:
                loop.call_soon_threadsafe(put_back, future, result, error)
            except RuntimeError:  # the loop is closed: nobody awaits this any more
                pass


def _deliver(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)
