"""A file put in its place whole or not at all.

Outputs fetched from a site (an SFTP get, an output that came back inline in the job's
result) are written under a temporary name of their own beside the target, then renamed
over it: a reader never sees half a file, two copies to one path never mix, and a failed
copy leaves the old content as it was.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator

from swiftnb.execution.shell import new_file_mode

__all__ = ["replacing", "write_atomically"]


@contextlib.contextmanager
def replacing(path: str) -> Iterator[str]:
    """A new temporary file's name beside ``path`` for the body to fill; when the body
    ends, that file (with the mode any new file gets here, not mkstemp's 0600) replaces
    ``path``.  If the body or the rename fails, the temporary file is removed."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".swiftnb-", suffix=".part",
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        exc.filename = path   # not the temporary name nobody asked for
        raise
    os.close(fd)
    try:
        yield tmp
        os.chmod(tmp, new_file_mode())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_atomically(path: str, data: bytes) -> None:
    """``data`` as the whole content of ``path`` (see :func:`replacing`)."""
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
