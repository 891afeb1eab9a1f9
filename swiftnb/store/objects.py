"""Copies of outputs, by content, so that a memoized call whose output was deleted or
overwritten can be restored instead of run again.

Why by digest: two calls making the same bytes keep one copy, and a copy is found from
the digest the call's record holds.  Copies are made under a temporary name and
renamed, so a killed run never leaves a half copy under a digest's name.  The store
stays under ``limit`` bytes by evicting the least recently used copies (Swift's
``cachingAlgorithm: "LRU"``); ``limit = 0`` keeps nothing."""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import stat
import time
import uuid
from collections.abc import Sequence

from swiftnb.store.digests import PREFIX
from swiftnb.store.sqlite import StoreDatabase

__all__ = ["ContentStore", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 1 << 30  # 1 GiB
_CHUNK = 1 << 24
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


class ContentStore:
    def __init__(self, db: StoreDatabase, root: str, limit: int = DEFAULT_LIMIT):
        self._db = db
        self.root = root
        self.limit = limit
        #: the bytes kept, as this process counts them: the database's sum is read only
        #: when this count reaches the limit (another process's copies are seen then)
        self._counted: int | None = None
        self._made_dirs: set[str] = set()

    def path_of(self, digest: str) -> str:
        hexdigits = digest.removeprefix(PREFIX)
        return os.path.join(self.root, hexdigits[:2], hexdigits[2:])

    def __contains__(self, digest: str) -> bool:
        return os.path.lexists(self.path_of(digest))

    def keep(self, path: str, digest: str) -> bool:
        """Keep a copy of ``path`` (a file or a directory tree) whose content has
        ``digest``; True if a copy is kept now (made or already there)."""
        return self.keep_many([(path, digest)]) == [True]

    def keep_many(self, outputs: Sequence[tuple[str, str]]) -> list[bool]:
        """:meth:`keep` of many (path, digest) pairs with one transaction for their rows
        and one eviction: memoization keeps its outputs a batch of calls at a time.  A
        copy that fails (OSError) is False; the others are kept."""
        if self.limit <= 0:
            return [False] * len(outputs)
        kept: list[bool] = []
        made: dict[str, int] = {}
        used: list[str] = []
        for path, digest in outputs:
            dest = self.path_of(digest)
            if digest in made or os.path.lexists(dest):
                used.append(digest)
                kept.append(True)
                continue
            try:
                st = os.stat(path)
                size = _tree_size(path) if stat.S_ISDIR(st.st_mode) else st.st_size
                if size > self.limit:
                    kept.append(False)
                    continue
                parent = os.path.dirname(dest)
                if parent not in self._made_dirs:
                    os.makedirs(parent, mode=0o700, exist_ok=True)
                    self._made_dirs.add(parent)
                _copy_atomically(path, dest, st)
            except OSError:
                kept.append(False)
                continue
            made[digest] = size
            kept.append(True)
        if not made and not used:
            return kept
        now = time.time()

        def rows(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT OR REPLACE INTO objects VALUES (?, ?, ?)",
                             [(digest, size, now) for digest, size in made.items()])
            conn.executemany("UPDATE objects SET last_used = ? WHERE digest = ?",
                             [(now, digest) for digest in dict.fromkeys(used)])

        self._db.write(rows)
        evicted: set[str] = set()
        if made:
            if self._counted is None:
                self._counted = self.used()
            else:
                self._counted += sum(made.values())
            if self._counted > self.limit:
                evicted.update(self.evict())
        return [ok and digest not in evicted for ok, (_, digest) in zip(kept, outputs)]

    def restore(self, digest: str, dest: str) -> bool:
        """Copy the kept content back to ``dest`` (replacing it whole); False if not kept."""
        source = self.path_of(digest)
        if not os.path.lexists(source):
            return False
        parent = os.path.dirname(os.path.abspath(dest))
        os.makedirs(parent, exist_ok=True)
        if os.path.isdir(dest) and not os.path.islink(dest):
            shutil.rmtree(dest)
        _copy_atomically(source, dest)
        self._touch(digest)
        return True

    def used(self) -> int:
        return int(self._db.read("SELECT COALESCE(SUM(size), 0) FROM objects")[0][0])

    def evict(self) -> list[str]:
        """Remove least recently used copies until the store is under ``limit``."""
        removed: list[str] = []
        total = self._counted = self.used()
        if total <= self.limit:
            return removed
        for digest, size in self._db.read("SELECT digest, size FROM objects "
                                          "ORDER BY last_used, digest"):
            if total <= self.limit:
                break
            target = self.path_of(digest)
            if os.path.isdir(target) and not os.path.islink(target):
                shutil.rmtree(target, ignore_errors=True)
            elif os.path.lexists(target):
                os.unlink(target)
            self._forget(digest)
            total -= size
            removed.append(digest)
        self._counted = total
        return removed

    def _forget(self, digest: str) -> None:
        self._db.write(lambda conn: conn.execute(
            "DELETE FROM objects WHERE digest = ?", (digest,)))

    def _touch(self, digest: str) -> None:
        now = time.time()
        self._db.write(lambda conn: conn.execute(
            "UPDATE objects SET last_used = ? WHERE digest = ?", (now, digest)))


def _tree_size(path: str) -> int:
    return sum(os.path.getsize(os.path.join(top, name))
               for top, _, names in os.walk(path) for name in names)


def _copy_atomically(source: str, dest: str, st: os.stat_result | None = None) -> None:
    """``source`` (a file or a tree; ``st``: its stat when known) to ``dest`` by way of a
    temporary name beside it."""
    temp = os.path.join(os.path.dirname(os.path.abspath(dest)),
                        f".{os.path.basename(dest)}.{uuid.uuid4().hex[:8]}.tmp")
    st = os.stat(source) if st is None else st
    try:
        if stat.S_ISDIR(st.st_mode):
            shutil.copytree(source, temp, symlinks=False)
            if os.path.lexists(dest):
                shutil.rmtree(dest) if os.path.isdir(dest) else os.unlink(dest)
        else:
            _copy_file(source, temp, stat.S_IMODE(st.st_mode))
        os.replace(temp, dest)
    except BaseException:
        if os.path.isdir(temp):
            shutil.rmtree(temp, ignore_errors=True)
        elif os.path.lexists(temp):
            os.unlink(temp)
        raise


def _copy_file(source: str, temp: str, mode: int) -> None:
    """A file's bytes and mode to the new file ``temp``, with as few system calls as a
    copy takes (shutil.copyfile and copymode stat both files several times: most of the
    cost of copying a small output)."""
    with open(source, "rb") as src, open(os.open(temp, _NEW_FILE, 0o600), "wb") as dst:
        os.fchmod(dst.fileno(), mode)
        try:
            while os.copy_file_range(src.fileno(), dst.fileno(), _CHUNK):
                pass
        except OSError as exc:  # another filesystem, or a kernel without it
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            shutil.copyfileobj(src, dst, _CHUNK)
