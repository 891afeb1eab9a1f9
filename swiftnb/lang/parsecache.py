"""Scripts' parses kept between runs, as Swift/K kept ``SCRIPT.kml`` for an unchanged script.

Parsing a script takes a millisecond; loading the parser does not: importing lark and
building its tables is some 35 ms, a sixth of a ``swiftnb`` start.  A script file that
parsed before, unchanged, is read back from ``$XDG_CACHE_HOME/swiftnb/scripts`` instead,
and lark is not loaded at all.  A kept parse is used only when its file name, its text
and the code that made it (parser, AST, grammar, lark) are all the same; only parses
that succeeded are kept (an error is always reported by the parser itself).
``-recompile`` (as in Swift) and ``SWIFTNB_NO_CACHE`` bypass it.
"""

from __future__ import annotations

import importlib.util
import os
import pickle
import zlib

from swiftnb.lang import ast

#: kept parses at most; when more, the oldest half go (a test suite makes many scripts)
MAX_KEPT = 256

_HERE = os.path.dirname(os.path.abspath(__file__))
_READERS = [os.path.join(_HERE, name) for name in ("parser.py", "ast.py", "swift.lark")]
_readers_stamp: tuple[str, ...] | None = None


def _stamp() -> tuple[str, ...] | None:
    """The state of the code that parses (None: some of it cannot be found)."""
    global _readers_stamp
    if _readers_stamp is None:
        readers = list(_READERS)
        spec = importlib.util.find_spec("lark")
        if spec is None or not spec.origin:
            return None
        readers.append(spec.origin)
        found = []
        for reader in readers:
            try:
                st = os.stat(reader)
            except OSError:
                return None
            found.append(f"{reader}:{st.st_mtime_ns}:{st.st_size}")
        _readers_stamp = tuple(found)
    return _readers_stamp


def _directory() -> str | None:
    if os.environ.get("SWIFTNB_NO_CACHE"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "swiftnb", "scripts")


def _place(filename: str, text: str) -> tuple[str, tuple[str, ...]] | None:
    """(cache file, full key) for this script, or None when nothing is kept."""
    directory = _directory()
    stamp = _stamp()
    if directory is None or stamp is None:
        return None
    key = (filename, text, *stamp)
    checksum = zlib.crc32("\0".join(key).encode("utf-8", "surrogatepass"))
    return os.path.join(directory, f"{checksum:08x}.pickle"), key


def lookup(text: str, filename: str) -> ast.Program | None:
    """The kept parse of this script, or None."""
    place = _place(filename, text)
    if place is None:
        return None
    path, key = place
    try:
        with open(path, "rb") as fh:
            kept_key, program = pickle.load(fh)
    except Exception:  # noqa: BLE001 - missing, damaged or from other code: parse instead
        return None
    if kept_key != key or not isinstance(program, ast.Program):
        return None
    return program


def keep(text: str, filename: str, program: ast.Program) -> None:
    """Keep a successful parse for the next run of the same script."""
    place = _place(filename, text)
    if place is None:
        return
    path, key = place
    directory = os.path.dirname(path)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(directory, exist_ok=True)
        with open(tmp, "wb") as fh:
            pickle.dump((key, program), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        _prune(directory)
    except (OSError, pickle.PicklingError, RecursionError):  # read-only home, deep AST
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _prune(directory: str) -> None:
    """Drop the oldest half of the kept parses when there are more than MAX_KEPT."""
    with os.scandir(directory) as entries:
        kept = [e for e in entries if e.name.endswith(".pickle")]
    if len(kept) <= MAX_KEPT:
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
