"""A file put in its place whole or not at all.

Outputs fetched from a site (an SFTP get, an output that came back inline in the job's
result) are written under a temporary name of their own beside the target, then renamed
over it: a reader never sees half a file, two copies to one path never mix, and a failed
copy leaves the old content as it was.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
import tempfile
from collections.abc import Iterator

__all__ = ["replacing", "write_atomically", "new_file_mode"]


@contextlib.contextmanager
def replacing(path: str, mode: int | None = None) -> Iterator[str]:
    """A new temporary file's name beside ``path`` for the body to fill; when the body
    ends, that file (with ``mode``, by default the mode any new file gets here, not
    mkstemp's 0600) replaces ``path``.  If the body or the rename fails, the temporary
    file is removed.  A ``path`` that exists and is no regular file (``/dev/stdout``, a
    FIFO, ``/dev/full``) is written in place, never replaced: a rename would put a file
    where the device was; a directory is refused."""
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield path
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=".swiftnb-", suffix=".part",
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        exc.filename = path   # not the temporary name nobody asked for
        raise
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, new_file_mode() if mode is None else mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_atomically(path: str, data: bytes, mode: int | None = None) -> None:
    """``data`` as the whole content of ``path`` (see :func:`replacing`)."""
    with replacing(path, mode) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


@functools.cache
def new_file_mode() -> int:
    """The mode a new file gets here (0666 less the umask): mkstemp makes 0600, and a file
    fetched through a temporary name should look like any other.  Read from /proc, since
    setting the umask to learn it would race with other threads; once per process (a
    process's umask is set at its start: an SSH site fetches thousands of files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o644
