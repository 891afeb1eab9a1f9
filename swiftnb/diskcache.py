"""Values kept between runs in ``$XDG_CACHE_HOME/swiftnb`` (``~/.cache/swiftnb``).

What a start would otherwise recompute (the parse of a configuration file, the resolved
built-in defaults, the parse of an unchanged script) is pickled there with the whole key
it was made from (the input's text and the state of the code that made it), and used
only when a later key is equal.  The file's name is a checksum of the key, so each input
keeps one file.  A missing, damaged or foreign file is simply made again; a home that
cannot be written keeps nothing; ``SWIFTNB_NO_CACHE`` turns it all off.
"""

from __future__ import annotations

import os
import pickle
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


def load(path: str, key: Key) -> Any | None:
    """The value kept at ``path`` for ``key``, or None."""
    try:
        with open(path, "rb") as fh:
            kept_key, value = pickle.load(fh)
    except Exception:  # noqa: BLE001 - missing, damaged or from other code: make it again
        return None
    return value if kept_key == key else None


def store(path: str, key: Key, value: Any) -> None:
    """Keep ``value`` for ``key`` at ``path`` (whole or not at all; failures ignored)."""
    from swiftnb.atomicfile import write_atomically  # (tempfile: only when writing)

    try:
        data = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        write_atomically(path, data)
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
