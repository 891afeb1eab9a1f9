"""Content digests of files and directories, each file read once while it is unchanged.

Why remember digests: a memoized re-run asks for the digest of every input of every
call; reading 100,000 unchanged files again would cost more than the calls it saves.
A digest is remembered (in memory and in the store) with the file's real path,
device, inode, size and mtime_ns, and used while those are the same, as make and
Nextflow's default cache mode do.  The store's table of them is read whole the first
time a digest is asked for (a re-run asks for every input's: one query, not one a
file).  So ``touch`` makes the file be read again (giving the same digest), and a
change that keeps size and mtime_ns (a rewrite that resets the time) is not seen.  An
output of a call that ran is not read at all: the digest the job wrapper reported for
it is remembered with the file's stat after the call (:meth:`DigestCache.learn`), so an
unchanged re-run reads none of the files its calls wrote.

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

__all__ = ["DigestCache", "file_digest", "directory_digest", "PREFIX", "short", "absolute"]

PREFIX = "sha256:"
_CHUNK = 1 << 20

_Signature = tuple[int, int, int, int]


def file_digest(path: str) -> str:
    """"sha256:<hex>" of a file's bytes."""
    with open(path, "rb") as fh:
        return PREFIX + hashlib.file_digest(fh, "sha256").hexdigest()


def absolute(path: str) -> str:
    """``os.path.abspath(path)``, as it is when it is already absolute and normal (no
    ``.`` or ``..`` component, no ``//``, no trailing ``/``): the usual output path of
    a re-run's call, looked up on the event loop, needs no walk of its text."""
    if path[:1] == "/" and "/." not in path and "//" not in path and path[-1:] != "/":
        return path
    return os.path.abspath(path)


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
        #: directory -> its real path (see _real)
        self._real_dirs: dict[str, str] = {}
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
        if stored is not None and stored[1:3] == (st.st_size, st.st_mtime_ns) and (
                stored[0] == path_text(key) or stored[0] == path_text(self._real(key))):
            digest = stored[3]
        else:
            digest = file_digest(path)
            self.reads += 1
            if os.stat(path).st_mtime_ns != st.st_mtime_ns:
                return digest, st.st_size  # written while read: do not remember it
            self._remember(key, signature, digest)
            return digest, st.st_size
        with self._lock:
            self._memory[key] = (signature, digest)
        return digest, st.st_size

    def known(self, path: str) -> tuple[str, int] | None:
        """:meth:`measure` without reading the file, for the event loop: None when its
        digest is not remembered for the file as it is now (or it is missing, or a
        directory, or the store's table is not read yet)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        size = st.st_size
        key = absolute(path)
        known = self._memory.get(key)
        if known is not None and known[0] == (st.st_dev, st.st_ino, size, st.st_mtime_ns):
            return known[1], size
        table = self._table
        if table is None:
            return None
        stored = table.get((st.st_dev, st.st_ino))
        if stored is None or stored[1] != size or stored[2] != st.st_mtime_ns:
            return None
        if stored[0] != key:
            if stored[0] != path_text(key) and stored[0] != path_text(self._real(key)):
                return None
            # found by its real path: remembered under this one (one item set, atomic)
            self._memory[key] = ((st.st_dev, st.st_ino, size, st.st_mtime_ns), stored[3])
        # a path as the table has it is not copied into memory: the table answers the
        # next lookup as fast, and a re-run looks each output up once
        return stored[3], size

    def preload(self) -> None:
        """Read the store's table of digests now (in a thread: :meth:`known` answers
        from it on the loop)."""
        self._stored()

    def learn(self, path: str, st: os.stat_result, digest: str) -> None:
        """Remember ``digest`` for the regular file ``path`` as ``st`` found it, without
        reading it: the digest the job wrapper reported for an output it has just
        written (the file is read only if it changes).  ``st`` must be taken after the
        digest was made (the stat of the finished call's output)."""
        if stat.S_ISREG(st.st_mode):
            self._remember(os.path.abspath(path),
                           (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns), digest)

    def _remember(self, key: str, signature: _Signature, digest: str) -> None:
        """``digest`` of the file at the absolute ``key`` with ``signature``: in memory,
        in the table and in the next write of the store."""
        real = self._real(key)
        dev, ino, size, mtime_ns = signature
        table = self._stored()
        with self._lock:
            self._memory[key] = (signature, digest)
            self._pending[real] = (signature, digest)
            table[(dev, ino)] = (path_text(real), size, mtime_ns, digest)
            many = len(self._pending) >= self.PENDING_LIMIT
        if many:
            self._on_pending()

    def _real(self, path: str) -> str:
        """os.path.realpath of the absolute ``path``, its directory's resolved once (the
        outputs of a workflow share a few directories; a walk of every component of
        every file would cost more than the digest's lookup)."""
        parent, name = os.path.split(path)
        real_parent = self._real_dirs.get(parent)
        if real_parent is None:
            real_parent = self._real_dirs[parent] = os.path.realpath(parent)
        if os.path.islink(path):
            return os.path.realpath(path)
        return os.path.join(real_parent, name)

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
