"""Content digests of outputs, the same function on both sides (the run store digests a
directory with :func:`directory_digest`, so that the two agree by construction)."""

from __future__ import annotations

import hashlib
import os
import stat
from typing import Callable

_DIGEST_CHUNK = 1 << 20


def file_digest(path: str) -> str:
    """"sha256:<hex>" of a file's bytes, read in 1 MiB pieces (contract of
    ``Task.digest_outputs``; ``swiftnb.store.digests`` computes the same on this side)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for piece in iter(lambda: fh.read(_DIGEST_CHUNK), b""):
            h.update(piece)
    return "sha256:" + h.hexdigest()


def output_digest(path: str) -> str:
    """A file's digest, or a directory's (:func:`directory_digest`)."""
    return directory_digest(path) if os.path.isdir(path) else file_digest(path)


def directory_digest(path: str, digest: Callable[[str], str] = file_digest) -> str:
    """sha256 over the sorted lines "<relative path>\t<file digest>\n" of the regular
    files under a directory (relative paths with "/"); ``digest`` gives a file's digest
    (the run store passes its cached one, so both sides agree by construction)."""
    lines = []
    for top, dirs, names in os.walk(path):
        dirs.sort()
        for name in names:
            full = os.path.join(top, name)
            if stat.S_ISREG(os.lstat(full).st_mode):
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                lines.append(f"{rel}\t{digest(full)}\n")
    lines.sort()
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()
