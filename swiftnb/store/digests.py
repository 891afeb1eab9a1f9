"""Content digests of files and directories, each file read once while it is unchanged.

Why remember digests: a memoized re-run asks for the digest of every input of every
call; reading 100,000 unchanged files again would cost more than the calls it saves.
A digest is remembered (in memory and in the store) with the file's real path,
device, inode, size and mtime_ns, and used while those are the same, as make and
Nextflow's default cache mode do.  The store's table of them is read whole the first
time a digest is asked for (a re-run asks for every input's: one query, not one a
file).  So ``touch`` makes the file be read again (giving the same digest), and a
change that keeps size and mtime_ns (a rewrite that resets the time) is not seen.

A directory's digest is sha256 over the sorted lines "<relative path>\\t<file digest>\\n"
of the regular files under it (relative paths with "/"), the form the job wrapper uses
for a directory output (Task.digest_outputs).  A directory's own mtime does not change
when a file in it does, so it is never remembered as a whole; its files are."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
from collections.abc import Callable

from swiftnb.remote.wrapper import directory_digest
from swiftnb.store.sqlite import StoreDatabase, path_text

__all__ = ["DigestCache", "file_digest", "directory_digest", "PREFIX", "short"]

PREFIX = "sha256:"
_CHUNK = 1 << 20

_Signature = tuple[int, int, int, int]


def file_digest(path: str) -> str:
    """"sha256:<hex>" of a file's bytes."""
    with open(path, "rb") as fh:
        return PREFIX + hashlib.file_digest(fh, "sha256").hexdigest()


def short(digest: str) -> str:
    """The first 12 hex digits, what people read."""
    return digest.removeprefix(PREFIX)[:12]


class DigestCache:
    """Digests of files, remembered by (realpath, st_dev, st_ino, st_size, st_mtime_ns).

    New digests are written to the store with the next batch of calls (``on_pending``
    asks the store to flush when many wait)."""

    #: new digests waiting for the store's next transaction before it is asked to flush
    PENDING_LIMIT = 256

    def __init__(self, db: StoreDatabase, on_pending: Callable[[], None]):
        self._db = db
        self._on_pending = on_pending
        self._lock = threading.Lock()
        self._memory: dict[str, tuple[_Signature, str]] = {}
        self._pending: dict[str, tuple[_Signature, str]] = {}
        self._table: dict[tuple[int, int], tuple[str, int, int, str]] | None = None
        #: files read to digest them (what the cache exists to keep low)
        self.reads = 0

    def digest(self, path: str) -> str:
        return self.measure(path)[0]

    def measure(self, path: str) -> tuple[str, int]:
        """(digest, size) of ``path``, from one stat of it (a directory's size is its
        own entry's)."""
        st = os.stat(path)
        if stat.S_ISDIR(st.st_mode):
            return directory_digest(path, self.digest), st.st_size
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        key = os.path.abspath(path)
        known = self._memory.get(key)
        if known is not None and known[0] == signature:
            return known[1], st.st_size
        # by inode first: the real path (a walk of every component) is needed only
        # when the path given is not the one remembered
        table = self._stored()
        stored = table.get((st.st_dev, st.st_ino))
        real = key
        if stored is not None and stored[0] != path_text(key):
            real = os.path.realpath(path)
        if stored is not None and stored[:3] == (path_text(real), st.st_size,
                                                 st.st_mtime_ns):
            digest = stored[3]
        else:
            real = os.path.realpath(path)
            digest = file_digest(path)
            self.reads += 1
            if os.stat(path).st_mtime_ns != st.st_mtime_ns:
                return digest, st.st_size  # written while read: do not remember it
            with self._lock:
                self._pending[real] = (signature, digest)
                table[(st.st_dev, st.st_ino)] = (path_text(real), st.st_size,
                                                          st.st_mtime_ns, digest)
                many = len(self._pending) >= self.PENDING_LIMIT
            if many:
                self._on_pending()
        with self._lock:
            self._memory[key] = (signature, digest)
        return digest, st.st_size

    def _stored(self) -> dict[tuple[int, int], tuple[str, int, int, str]]:
        """The store's digest table by (dev, ino), read whole at the first digest asked
        for: one query instead of one a file (a re-run asks for every input's).  A
        digest another process writes later is not seen: that file is read again."""
        if self._table is None:
            rows = self._db.read("SELECT dev, ino, path, size, mtime_ns, digest FROM digests")
            with self._lock:
                if self._table is None:
                    self._table = {(dev, ino): (path, size, mtime_ns, digest)
                                   for dev, ino, path, size, mtime_ns, digest in rows}
        return self._table

    def has_pending(self) -> bool:
        return bool(self._pending)

    def write_pending(self, conn: sqlite3.Connection) -> None:
        """Inside the store's transaction: the digests learnt since the last one."""
        with self._lock:
            pending, self._pending = self._pending, {}
        conn.executemany("INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?)",
                         [(dev, ino, path_text(path), size, mtime_ns, digest)
                          for path, ((dev, ino, size, mtime_ns), digest) in pending.items()])
