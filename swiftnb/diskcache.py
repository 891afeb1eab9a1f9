"""Values kept between runs in ``$XDG_CACHE_HOME/swiftnb`` (``~/.cache/swiftnb``).

What a start would otherwise recompute (the parse of a configuration file, the resolved
built-in defaults, the parse of an unchanged script) is pickled there with the whole key
it was made from (the input's text and the state of the code that made it), and used
only when a later key is equal.  The file's name is a checksum of the key, so each input
keeps one file.  A missing, damaged or foreign file is simply made again; a home that
cannot be written keeps nothing; ``SWIFTNB_NO_CACHE`` turns it all off.

A pickle can run code when loaded, so a kept file is loaded only when nobody else can
have written it: the file, its folder and ``swiftnb/`` must belong to this user and
be writable by nobody else (made 0700 and 0600 here); anything else is ignored and
not written to.  Even then the loader builds only the classes of the modules in
:data:`CLASSES_FROM` (the parse trees kept), never a function call of the file's choice.
"""

from __future__ import annotations

import os
import pickle
import stat
import zlib
from typing import Any

__all__ = ["Key", "code_state", "place", "load", "store", "prune"]

#: what a kept value was made from: plain strings, compared whole
Key = tuple[str, ...]


def code_state(paths: list[str]) -> Key | None:
    """The state (path, mtime, size) of the files whose code makes a value; None when one
    cannot be found (keep nothing rather than trust an unknown state)."""
    found = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            return None
        found.append(f"{path}:{st.st_mtime_ns}:{st.st_size}")
    return tuple(found)


def place(kind: str, key: Key) -> str | None:
    """The file that keeps the value of ``key`` among those of ``kind`` (None: caching is
    off)."""
    if os.environ.get("SWIFTNB_NO_CACHE"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    checksum = zlib.crc32("\0".join(key).encode("utf-8", "surrogatepass"))
    return os.path.join(root, "swiftnb", kind, f"{checksum:08x}.pickle")


#: the modules whose classes a kept value is made of (scriptcache: the script's AST;
#: config: pyhocon's tree); any other global in a file refuses it
CLASSES_FROM = frozenset({"swiftnb.lang.ast", "pyhocon.config_tree", "pyparsing.results"})


class _Unpickler(pickle.Unpickler):
    """Builds the classes of :data:`CLASSES_FROM` only: no function of the file's
    choosing (``os.system``...) is ever called."""

    def find_class(self, module: str, name: str) -> type:
        if module in CLASSES_FROM and "." not in name:
            found = super().find_class(module, name)
            if isinstance(found, type) and found.__module__ == module:
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a kept value's class")


def _private(st: os.stat_result) -> bool:
    """Owned by this user and writable by nobody else."""
    return st.st_uid == os.geteuid() and not st.st_mode & 0o022


def _safe_folders(path: str) -> bool:
    """Whether the kind's folder and ``swiftnb/`` above it are this user's alone."""
    kind_dir = os.path.dirname(path)
    for folder in (kind_dir, os.path.dirname(kind_dir)):
        try:
            st = os.stat(folder)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or not _private(st):
            return False
    return True


def load(path: str, key: Key) -> Any | None:
    """The value kept at ``path`` for ``key``, or None (also for a file someone else
    could have written)."""
    try:
        if not _safe_folders(path):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or not _private(st):
                return None
            kept_key, value = _Unpickler(fh).load()
    except Exception:  # noqa: BLE001 - missing, damaged or from other code: make it again
        return None
    return value if kept_key == key else None


def _make_folders(path: str) -> bool:
    """The folders of ``path``, made 0700 where missing; False when they are not this
    user's alone (then nothing is kept there)."""
    kind_dir = os.path.dirname(path)
    for folder in (os.path.dirname(kind_dir), kind_dir):
        try:
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except FileNotFoundError:
            os.makedirs(folder, 0o700, exist_ok=True)
    return _safe_folders(path)


def store(path: str, key: Key, value: Any) -> None:
    """Keep ``value`` for ``key`` at ``path`` (whole or not at all, mode 0600; failures
    ignored)."""
    from swiftnb.atomicfile import write_atomically  # (tempfile: only when writing)

    try:
        data = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        if _make_folders(path):
            write_atomically(path, data, mode=0o600)
    except Exception:  # noqa: BLE001 - a read-only home, a value pickle cannot hold
        pass


def prune(directory: str, most: int) -> None:
    """Drop the oldest half of the values kept in ``directory`` when there are more than
    ``most`` (a test suite makes many scripts)."""
    try:
        with os.scandir(directory) as entries:
            kept = [e for e in entries if e.name.endswith(".pickle")]
    except OSError:
        return
    if len(kept) <= most:
        return

    def age(entry: os.DirEntry) -> int:
        try:
            return entry.stat().st_mtime_ns
        except OSError:  # another run pruned it
            return 0

    kept.sort(key=age)
    for entry in kept[:len(kept) // 2]:
        try:
            os.unlink(entry.path)
        except OSError:
            pass
