"""Copies of outputs, by content, so that a memoized call whose output was deleted or
overwritten can be restored instead of run again.

Why by digest: two calls making the same bytes keep one copy, and a copy is found from
the digest the call's record holds.  Copies are made under a temporary name and
renamed, so a killed run never leaves a half copy under a digest's name.  The store
stays under ``limit`` bytes by evicting the least recently used copies (Swift's
``cachingAlgorithm: "LRU"``); ``limit = 0`` keeps nothing.

Why a hard link, when the output is on the store's file system: making a new file costs
most of what a short call costs (on this project's test machine, ~1 ms of CPU a copy
against ~15 us a link), and memoization must not slow a first run by more than 10%.  A
link shares the output's inode, so it survives the output being deleted or replaced
(a re-run's wrapper, ``mv``, ``sed -i`` and most editors write a new file and rename it)
but not the output being rewritten in place (``>``, an app writing through a DIRECT
link).  That case is caught, never served: a kept file is restored only after its
bytes are read again and give its digest (a copy that does not is dropped, and the
call runs), and a kept file whose size is not its output's any more is made again.
Making outputs read-only would have kept the link safe, at the price of changing the
mode of the user's files and failing apps that write an output in place; a link also
costs no disk space of its own.  Directories, and outputs on another file system (or
where links are refused), are copied (``copy_file_range``: a reflink where the file
system has them)."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import sqlite3
import stat
import time
import uuid
from collections.abc import Sequence

from swiftnb.store.digests import PREFIX
from swiftnb.store.sqlite import StoreDatabase

__all__ = ["ContentStore", "DEFAULT_LIMIT", "Signature"]

DEFAULT_LIMIT = 1 << 30  # 1 GiB
_CHUNK = 1 << 24
_READ_CHUNK = 1 << 20
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
#: link() errors that mean "not this file" (links refused: not its owner, too many)
_NO_LINK = frozenset({errno.EPERM, errno.EACCES, errno.EMLINK})
#: link() errors that mean "not from this file system" (another one, or none at all)
_NO_LINKS_HERE = frozenset({errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP})

#: (st_dev, st_ino, st_size, st_mtime_ns) of a file as its digest was made
Signature = tuple[int, int, int, int]


def signature(st: os.stat_result) -> Signature:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


class ContentStore:
    def __init__(self, db: StoreDatabase, root: str, limit: int = DEFAULT_LIMIT):
        self._db = db
        self.root = root
        self.limit = limit
        #: the bytes kept, as this process counts them: the database's sum is read only
        #: when this count reaches the limit (another process's copies are seen then)
        self._counted: int | None = None
        self._made_dirs: set[str] = set()
        #: devices whose files cannot be linked into the store: copied
        self._unlinkable: set[int] = set()

    def path_of(self, digest: str) -> str:
        hexdigits = digest.removeprefix(PREFIX)
        return os.path.join(self.root, hexdigits[:2], hexdigits[2:])

    def __contains__(self, digest: str) -> bool:
        return os.path.lexists(self.path_of(digest))

    def keep(self, path: str, digest: str) -> bool:
        """Keep a copy of ``path`` (a file or a directory tree) whose content has
        ``digest``; True if a copy is kept now (made or already there)."""
        return self.keep_many([(path, digest)]) == [True]

    def keep_many(self, outputs: Sequence[tuple[str, str]],
                  as_found: Sequence[Signature | None] | None = None) -> list[bool]:
        """:meth:`keep` of many (path, digest) pairs with one transaction for their rows
        and one eviction: memoization keeps its outputs a batch of calls at a time.
        ``as_found``: each file's signature when its digest was made (None: not known);
        a file whose signature is another now is not kept (it changed since).  A copy
        that fails (OSError) is False; the others are kept."""
        if self.limit <= 0:
            return [False] * len(outputs)
        kept: list[bool] = []
        made: dict[str, int] = {}
        used: list[str] = []
        for index, (path, digest) in enumerate(outputs):
            dest = self.path_of(digest)
            if digest in made:
                used.append(digest)
                kept.append(True)
                continue
            found = as_found[index] if as_found is not None else None
            try:
                there = _lstat_or_none(dest)
                st = _stat_or_none(path)
                # as its digest was made (unknown: as it is)
                fresh = st is not None and (found is None or signature(st) == found)
                if there is not None:
                    if not (fresh and st is not None and found is not None
                            and _rewritten(there, st)):
                        used.append(digest)
                        kept.append(True)
                        continue
                    os.unlink(dest)  # rewritten in place through its output: kept anew
                if st is None or not fresh:
                    kept.append(False)
                    continue
                size = _tree_size(path) if stat.S_ISDIR(st.st_mode) else st.st_size
                if size > self.limit:
                    kept.append(False)
                    continue
                parent = os.path.dirname(dest)
                if parent not in self._made_dirs:
                    os.makedirs(parent, mode=0o700, exist_ok=True)
                    self._made_dirs.add(parent)
                if not self._link(path, dest, st):
                    _copy_atomically(path, dest, st)
            except FileExistsError:  # linked by another process meanwhile
                used.append(digest)
                kept.append(True)
                continue
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

    def _link(self, path: str, dest: str, st: os.stat_result) -> bool:
        """Keep the regular file ``path`` as ``dest`` by a hard link (see the module's
        docstring); False where links cannot be made (copy it then).  A file replaced
        or written between its stat ``st`` and the link is not kept (OSError)."""
        if not stat.S_ISREG(st.st_mode) or st.st_dev in self._unlinkable:
            return False
        try:
            os.link(path, dest, follow_symlinks=True)
        except FileExistsError:
            raise
        except OSError as exc:
            if exc.errno in _NO_LINKS_HERE:
                self._unlinkable.add(st.st_dev)
            elif exc.errno not in _NO_LINK:
                raise
            return False
        if signature(os.lstat(dest)) != signature(st):
            os.unlink(dest)
            raise OSError(errno.ESTALE, "changed while it was kept", path)
        return True

    def restore(self, digest: str, dest: str) -> bool:
        """Copy the kept content back to ``dest`` (replacing it whole); False if not kept,
        or if the kept file's bytes are not those of ``digest`` any more (it shared an
        output's inode, and that output was rewritten in place): it is dropped then."""
        source = self.path_of(digest)
        try:
            st = os.lstat(source)
        except FileNotFoundError:
            return False
        parent = os.path.dirname(os.path.abspath(dest))
        os.makedirs(parent, exist_ok=True)
        if stat.S_ISDIR(st.st_mode):
            if os.path.isdir(dest) and not os.path.islink(dest):
                shutil.rmtree(dest)
            _copy_atomically(source, dest)
        elif not _copy_verified(source, dest, stat.S_IMODE(st.st_mode), digest):
            os.unlink(source)
            self._forget(digest)
            return False
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


def _lstat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _stat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None


def _rewritten(kept: os.stat_result, output: os.stat_result) -> bool:
    """Whether the kept file of an unchanged output's digest is not that content any
    more: its size is another (it was linked to an output rewritten in place since)."""
    return (stat.S_ISREG(kept.st_mode) and stat.S_ISREG(output.st_mode)
            and kept.st_size != output.st_size)


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


def _copy_verified(source: str, dest: str, mode: int, digest: str) -> bool:
    """The file ``source`` to ``dest`` (by way of a temporary name) if its bytes give
    ``digest``, read once for both; False (``dest`` untouched) if they do not."""
    temp = os.path.join(os.path.dirname(os.path.abspath(dest)),
                        f".{os.path.basename(dest)}.{uuid.uuid4().hex[:8]}.tmp")
    hasher = hashlib.sha256()
    try:
        with open(source, "rb") as src, open(os.open(temp, _NEW_FILE, 0o600), "wb") as dst:
            os.fchmod(dst.fileno(), mode)
            while piece := src.read(_READ_CHUNK):
                hasher.update(piece)
                dst.write(piece)
        if PREFIX + hasher.hexdigest() != digest:
            os.unlink(temp)
            return False
        if os.path.isdir(dest) and not os.path.islink(dest):
            shutil.rmtree(dest)
        os.replace(temp, dest)
    except BaseException:
        if os.path.lexists(temp):
            os.unlink(temp)
        raise
    return True
