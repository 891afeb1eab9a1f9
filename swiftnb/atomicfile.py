"""A file put in its place whole or not at all.

Outputs fetched from a site (an SFTP get, an output that came back inline in the job's
result) are written under a temporary name of their own beside the target, then renamed
over it: a reader never sees half a file, two copies to one path never mix, and a failed
copy leaves the old content as it was.

Per file: a stat of the target, the temporary file's creation (with the mode a new file
gets here, so no chmod follows) and the rename; an SSH site stages out one file per
output, and on a cluster's shared file system each path operation is a round trip.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator

__all__ = ["replacing", "write_atomically"]

#: tries at a free temporary name (each random: a clash is two processes' bad luck)
_NAME_TRIES = 100


@contextlib.contextmanager
def replacing(path: str, mode: int | None = None) -> Iterator[str]:
    """A new temporary file's name beside ``path`` for the body to fill; when the body
    ends, that file (with ``mode``, by default the mode any new file gets here) replaces
    ``path``.  If the body or the rename fails, the temporary file is removed.  A
    ``path`` that exists and is no regular file (``/dev/stdout``, a FIFO, ``/dev/full``)
    is written in place, never replaced: a rename would put a file where the device was;
    a directory is refused."""
    with _replacing(path, mode) as (target, fd):
        if fd is not None:
            os.close(fd)
        yield target


def write_atomically(path: str, data: bytes, mode: int | None = None) -> None:
    """``data`` as the whole content of ``path`` (see :func:`replacing`), written through
    the descriptor that made the temporary file (not opened a second time)."""
    with _replacing(path, mode) as (target, fd):
        with (open(target, "wb") if fd is None else os.fdopen(fd, "wb")) as fh:
            fh.write(data)


@contextlib.contextmanager
def _replacing(path: str, mode: int | None) -> Iterator[tuple[str, int | None]]:
    """(the name to write, its open descriptor, which the body closes): a new temporary
    file renamed over ``path`` when the body ends; ``(path, None)`` for a target that is
    no regular file, written in place."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield path, None
        return
    tmp, fd = _new_beside(path, mode)
    try:
        yield tmp, fd
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _new_beside(path: str, mode: int | None) -> tuple[str, int]:
    """A new file under a name of its own in ``path``'s directory, open for writing.
    Created with 0666, so the umask gives it the mode any new file gets here (mkstemp's
    0600 needed a chmod after); an explicit ``mode`` is set on the descriptor."""
    directory = os.path.dirname(os.path.abspath(path))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC  # EXCL: no symlink followed
    for _ in range(_NAME_TRIES):
        tmp = os.path.join(directory, f".swiftnb-{secrets.token_hex(6)}.part")
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            exc.filename = path   # not the temporary name nobody asked for
            raise
        if mode is not None:
            try:
                os.fchmod(fd, mode)
            except OSError:
                os.close(fd)
                os.unlink(tmp)
                raise
        return tmp, fd
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", path)
