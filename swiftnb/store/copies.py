"""The content-store copies of the outputs of calls that ran, made in batches after the
calls are recorded.

Why apart from the call: a copy and its row in the store cost a file copy and a
transaction, more than the rest of what memoization does for a short call, and a copy
is only needed much later (when the output is deleted or changed).  So the outputs are
queued with their size and mtime_ns as the call left them, and copied COPY_BATCH at a
time (or once the oldest has waited COPY_SECONDS, or when the run ends) with one
transaction for the lot.  An output that changed since (its device, inode, size or
mtime_ns differ) is not kept: the copy would not have the content its digest says.
Outputs not yet kept when a process is killed have no copy: deleting one later makes
its call run.  How a copy is kept (a hard link, or a copy) is the content store's
choice (:mod:`swiftnb.store.objects`)."""

from __future__ import annotations

import os
import threading
import time

from swiftnb.store.errors import StoreError
from swiftnb.store.objects import ContentStore, Signature, signature

__all__ = ["OutputCopies", "COPY_BATCH", "COPY_SECONDS"]

COPY_BATCH = 128
COPY_SECONDS = 1.0


class OutputCopies:
    """Outputs waiting for their copy in ``objects``; thread-safe."""

    def __init__(self, objects: ContentStore):
        self._objects = objects
        self._lock = threading.Lock()
        self._waiting: list[tuple[str, str]] = []  # path, digest
        self._found: list[Signature] = []  # each one's signature as its call left it
        self._oldest = 0.0

    @property
    def wanted(self) -> bool:
        """Whether copies are kept at all (``memoizeCacheSize`` 0 keeps none)."""
        return self._objects.limit > 0

    def add(self, path: str, digest: str, st: os.stat_result) -> None:
        """Queue ``path`` (with ``digest``, as ``st`` found it) for a copy."""
        with self._lock:
            if not self._waiting:
                self._oldest = time.monotonic()
            self._waiting.append((path, digest))
            self._found.append(signature(st))

    def keep(self, everything: bool = False) -> None:
        """Make the queued copies if a batch is due (all of them if ``everything``).  A
        problem of the store only leaves outputs without copies: it is said by the
        store's next write of calls."""
        with self._lock:
            due = everything or len(self._waiting) >= COPY_BATCH or (
                self._waiting and time.monotonic() - self._oldest >= COPY_SECONDS)
            if not due:
                return
            waiting, self._waiting = self._waiting, []
            found, self._found = self._found, []
        try:
            self._objects.keep_many(waiting, found)
        except StoreError:
            pass
