"""A coaster service's secret in a file only its owner can read.

Why a file: a secret on a command line is in every user's process list, and one in the
environment of a person's shell leaks into everything started from it.  A file of mode
0600 is what OpenSSH does with keys, and a worker started by hand (``--secret-file``) or a
client (``execution.options.secretFile``) reads it.

Where, by default: ``~/.swiftnb/coasters/service-PORT.secret`` (the directory 0700).  The
port names the service on its machine: a client that knows the service's URL finds the
secret without being told more, the same person's services on different ports do not
share a file, and a service removes its file when it stops.  A client on another machine
needs a copy (mode 0600), named by ``secretFile``.
"""

from __future__ import annotations

import contextlib
import os

from swiftnb.errors import SwiftnbError

__all__ = ["default_secret_path", "write_secret", "SecretWriteError", "read_secret", "SECRET_DIR"]

SECRET_DIR = "~/.swiftnb/coasters"


def default_secret_path(port: int) -> str:
    """Where the service on ``port`` keeps its secret unless told otherwise."""
    return os.path.join(os.path.expanduser(SECRET_DIR), f"service-{port}.secret")


class SecretWriteError(SwiftnbError, OSError):
    """The secret cannot be written where asked (the message names the path and why);
    nothing of the secret is left behind."""


def write_secret(path: str, secret: str) -> str:
    """Write ``secret`` to ``path`` (mode 0600, atomically, never through a symlink);
    a missing directory is made 0700.  Returns the absolute path.  On failure a
    :class:`SecretWriteError` naming ``path``, and no temporary file left."""
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(path):
        raise SecretWriteError(f"cannot write the secret file {path}: it is a directory "
                               "(give the path of a file)")
    directory = os.path.dirname(path)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise SecretWriteError(f"cannot write the secret file {path}: "
                               f"{exc.strerror or exc}") from None
    try:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask
            os.write(fd, (secret + "\n").encode())
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise SecretWriteError(f"cannot write the secret file {path}: "
                               f"{exc.strerror or exc}") from None
    return path


def read_secret(path: str) -> str:
    """The secret in ``path``; a ValueError (for people) if it is missing, empty or others
    may read it (the worker's own check, which must stay stdlib-only, is the same)."""
    from swiftnb.remote.worker import SecretFileError, read_secret_file

    try:
        return read_secret_file(os.path.expanduser(path))
    except SecretFileError as exc:
        raise ValueError(str(exc)) from None
