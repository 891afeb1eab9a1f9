"""Copies of outputs, by content, so that a memoized call whose output was deleted or
overwritten can be restored instead of run again.

Why by digest: two calls making the same bytes keep one copy, and a copy is found from
the digest the call's record holds.  Copies are made under a temporary name and
renamed, so a killed run never leaves a half copy under a digest's name.  The store
stays under ``limit`` bytes by evicting the least recently used copies (Swift's
``cachingAlgorithm: "LRU"``); ``limit = 0`` keeps nothing."""

from __future__ import annotations

import os
import shutil
import time
import uuid

from swiftnb.store.digests import PREFIX
from swiftnb.store.sqlite import StoreDatabase

__all__ = ["ContentStore", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 1 << 30  # 1 GiB


class ContentStore:
    def __init__(self, db: StoreDatabase, root: str, limit: int = DEFAULT_LIMIT):
        self._db = db
        self.root = root
        self.limit = limit

    def path_of(self, digest: str) -> str:
        hexdigits = digest.removeprefix(PREFIX)
        return os.path.join(self.root, hexdigits[:2], hexdigits[2:])

    def __contains__(self, digest: str) -> bool:
        return os.path.lexists(self.path_of(digest))

    def keep(self, path: str, digest: str) -> bool:
        """Keep a copy of ``path`` (a file or a directory tree) whose content has
        ``digest``; True if a copy is kept now (made or already there)."""
        if self.limit <= 0:
            return False
        dest = self.path_of(digest)
        if os.path.lexists(dest):
            self._touch(digest)
            return True
        size = _size(path)
        if size > self.limit:
            return False
        os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
        _copy_atomically(path, dest)
        now = time.time()
        self._db.write(lambda conn: conn.execute(
            "INSERT OR REPLACE INTO objects VALUES (?, ?, ?)", (digest, size, now)))
        self.evict()
        return os.path.lexists(dest)

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
        total = self.used()
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
        return removed

    def _forget(self, digest: str) -> None:
        self._db.write(lambda conn: conn.execute(
            "DELETE FROM objects WHERE digest = ?", (digest,)))

    def _touch(self, digest: str) -> None:
        now = time.time()
        self._db.write(lambda conn: conn.execute(
            "UPDATE objects SET last_used = ? WHERE digest = ?", (now, digest)))


def _size(path: str) -> int:
    if not os.path.isdir(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(top, name))
               for top, _, names in os.walk(path) for name in names)


def _copy_atomically(source: str, dest: str) -> None:
    temp = os.path.join(os.path.dirname(os.path.abspath(dest)),
                        f".{os.path.basename(dest)}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        if os.path.isdir(source):
            shutil.copytree(source, temp, symlinks=False)
        else:
            shutil.copyfile(source, temp)
            shutil.copymode(source, temp)
        if os.path.isdir(temp) and os.path.lexists(dest):
            shutil.rmtree(dest) if os.path.isdir(dest) else os.unlink(dest)
        os.replace(temp, dest)
    except BaseException:
        if os.path.isdir(temp):
            shutil.rmtree(temp, ignore_errors=True)
        elif os.path.lexists(temp):
            os.unlink(temp)
        raise
