"""The successful calls of earlier runs of a script, in memory, read once at the start
of a run, so that a call they answer is reused without a thread or a query.

Why: re-running an unchanged workflow asks the store, for each of its calls, for the
latest call with the same key; one query and one thread hop a call cost more than the
engine's own work for the call (benchmarks/memo.py).  One query at the start, in a
thread of its own while the run compiles and starts, makes the answer a dict lookup on
the event loop.  Only what a reuse needs is kept a call (its row id, the texts of its
reason, its files as the ``files`` column has them): ~0.3 KB.

What it holds is a snapshot: a call of this run, of another script or of another
process running at the same time is not in it, and a lookup that misses is no answer
(memoization then asks the store, :meth:`~swiftnb.store.memo.StoreMemo.decide`).  The
digest table is read in the same thread (:meth:`DigestCache.preload`), so that the
outputs' digests are known by a ``stat`` each too."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import NamedTuple

from swiftnb.store.db import RunStore
from swiftnb.store.errors import StoreError

__all__ = ["KnownCall", "KnownCalls", "KNOWN_RUNS"]


class KnownCall(NamedTuple):
    """A successful call as a reuse of it needs it."""

    call_id: int
    jobid: str
    run_id: str
    files_json: str  # the ``files`` column: [[role, path, digest, size], ...]


#: the latest runs of a script whose calls are read (a call reused by every run since is
#: in the latest; one only in an older run is found by the store's query instead)
KNOWN_RUNS = 3


class KnownCalls:
    """key -> the latest successful call with that key, of the latest KNOWN_RUNS runs
    of ``script`` before ``run_id``; loading starts at once, in a daemon thread."""

    def __init__(self, store: RunStore, script: str | None, run_id: str,
                 learn_apps: Callable[[set[str]], None] = lambda apps: None):
        self._store = store
        self._learn_apps = learn_apps
        self._script = script
        self._run_id = run_id
        self._calls: dict[str, KnownCall] = {}
        self._done: concurrent.futures.Future[None] = concurrent.futures.Future()
        #: True once loaded without a problem (a lookup before, or after a failed load,
        #: answers None)
        self.ready = False
        self._loaded: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._load, daemon=True,
                                        name="swiftnb-memo-known")
        self._thread.start()

    def get(self, key: str) -> KnownCall | None:
        return self._calls.get(key) if self.ready else None

    def __len__(self) -> int:
        return len(self._calls)

    async def loaded(self) -> None:
        """Return once loading has ended (whether or not it worked).  All the calls of
        a run wait on one event of the loop, set by one thread-safe call (a wrapped
        future each would cost every call a wake-up of the loop from the thread)."""
        if self._done.done():
            return
        if self._loaded is None:
            loaded = self._loaded = asyncio.Event()
            loop = asyncio.get_running_loop()
            self._done.add_done_callback(lambda _: _set_soon(loop, loaded))
        await self._loaded.wait()

    def wait(self, timeout: float | None = None) -> None:
        """Block until loading has ended (for callers outside the loop)."""
        self._thread.join(timeout)

    def _load(self) -> None:
        try:
            if self._script is not None:
                runs: dict[str, str] = {}  # one string a run id, not one a row
                calls = self._calls
                apps: set[str] = set()
                make = KnownCall._make
                for call_id, key, jobid, run_id, files_json, app in self._store.known_call_rows(
                        self._script, self._run_id, KNOWN_RUNS):
                    # by id: the latest last
                    calls[key] = make((call_id, jobid, runs.setdefault(run_id, run_id), files_json))
                    apps.add(app)
                self._learn_apps(apps)
            self._store.digests.preload()
            self.ready = True
        except StoreError:
            pass  # said by the memo's first query of the store, which fails the same way
        finally:
            self._done.set_result(None)


def _set_soon(loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
    try:
        loop.call_soon_threadsafe(event.set)
    except RuntimeError:
        pass  # the loop is closed: nobody waits any more
