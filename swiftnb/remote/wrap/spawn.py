"""Starting an app's process: one vfork and exec, without ``subprocess.Popen``'s Python.

Popen does in Python, on every start, work an app's start needs once a run: the job's
environment copied from ``os.environ`` (each of its ~40 variables decoded) and encoded
back to bytes, its descriptors sorted, its arguments checked.  On the local site that was
~0.15 ms of the ~1.4 ms a call costs the swiftnb process (benchmarks/local.py).
:class:`AppEnvironment` encodes the environment once; :func:`start_app` makes the call of
CPython's ``_posixsubprocess`` that Popen makes itself (vfork, then in the child: the
descriptors, a new session, the working directory, exec), and an exec that fails comes
back through the same pipe as the same ``OSError`` (``errno``, ``filename``).
:class:`AppProcess` is waited for as a Popen is (``wait``, ``returncode``).

``_posixsubprocess.fork_exec`` is CPython's private entry point: its arguments are those
of 3.11-3.13, and 3.14's (no ``allow_vfork``), as typeshed spells them.  A Python whose
signature differs (TypeError) starts apps through Popen from then on, as before.
"""

from __future__ import annotations

import _posixsubprocess
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["AppEnvironment", "AppProcess", "start_app"]

#: False once fork_exec refused our arguments (another CPython): Popen from then on
_direct = True


class AppEnvironment:
    """The environment an app starts with, encoded once: this process's as it was when
    the object was made (a run's start), or a job's own (``env`` profiles)."""

    def __init__(self, variables: Mapping[str, str] | None = None) -> None:
        source = os.environ if variables is None else variables
        self.variables: dict[str, str] = dict(source)
        self._encoded = [_entry(k, v) for k, v in self.variables.items() if k]

    def with_var(self, name: str, value: str) -> list[bytes]:
        """The encoded entries with ``name=value`` added (replacing one of that name)."""
        prefix = os.fsencode(name) + b"="
        if name in self.variables:
            return [e for e in self._encoded if not e.startswith(prefix)] + [
                prefix + os.fsencode(value)]
        return [*self._encoded, prefix + os.fsencode(value)]


def _entry(name: str, value: str) -> bytes:
    key = os.fsencode(name)
    if b"=" in key:
        raise ValueError(f"illegal environment variable name {name!r}")
    return key + b"=" + os.fsencode(value)


class AppProcess:
    """A started app: its pid, and its exit code once waited for (as Popen's ``wait``:
    negative when a signal ended it)."""

    __slots__ = ("pid", "returncode")

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def wait(self) -> int:
        """Block until it has ended (reaping it); its exit code."""
        if self.returncode is None:
            while True:
                try:
                    _, status = os.waitpid(self.pid, 0)
                except ChildProcessError:  # reaped elsewhere: its status is lost
                    self.returncode = 255
                    break
                except InterruptedError:
                    continue
                self.returncode = os.waitstatus_to_exitcode(status)
                break
        return self.returncode


class _PopenProcess(AppProcess):
    """An app Popen started: waited for through Popen (which would otherwise reap it
    itself once the object is gone, and its exit code with it)."""

    __slots__ = ("_proc",)

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        super().__init__(proc.pid)
        self._proc = proc

    def wait(self) -> int:
        self.returncode = self._proc.wait()
        return self.returncode


def start_app(argv: Sequence[str], cwd: str, environment: list[bytes],
              streams: tuple[int, int, int]) -> AppProcess:
    """Start ``argv`` (its program a path) in ``cwd``, in a session of its own, with
    ``streams`` as its stdin, stdout and stderr and every other descriptor closed.
    OSError: it could not be started (the program's, or ``cwd``'s, when chdir failed)."""
    global _direct
    if _direct:
        try:
            return _fork_exec(argv, cwd, environment, streams)
        except TypeError:  # another CPython's fork_exec: Popen does it from now on
            _direct = False
    env = dict(entry.split(b"=", 1) for entry in environment)
    stdin, stdout, stderr = streams
    return _PopenProcess(subprocess.Popen(
        list(argv), cwd=cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=True, close_fds=True))


def _fork_exec(argv: Sequence[str], cwd: str, environment: list[bytes],
               streams: tuple[int, int, int]) -> AppProcess:
    args = [os.fsencode(a) for a in argv]
    errpipe_read, errpipe_write = os.pipe()
    low: list[int] = []
    while errpipe_write < 3:  # as Popen: the child's 0-2 are its streams
        low.append(errpipe_write)
        errpipe_write = os.dup(errpipe_write)
    for fd in low:
        os.close(fd)
    stdin, stdout, stderr = streams
    try:
        try:
            if sys.version_info >= (3, 14):
                pid = _posixsubprocess.fork_exec(
                    args, (args[0],), True, (errpipe_write,), cwd, environment,
                    stdin, -1, -1, stdout, -1, stderr, errpipe_read, errpipe_write,
                    True, True, -1, None, None, None, -1,
                    None)  # type: ignore[arg-type]  # no preexec_fn: None, as Popen passes
            else:
                pid = _posixsubprocess.fork_exec(
                    args, (args[0],), True, (errpipe_write,), cwd, environment,
                    stdin, -1, -1, stdout, -1, stderr, errpipe_read, errpipe_write,
                    True, True, -1, None, None, None, -1,
                    None, True)  # type: ignore[arg-type]  # no preexec_fn: None, as Popen
        finally:
            os.close(errpipe_write)
        failure = bytearray()
        while True:  # empty at exec (the pipe closes on exec); else why it failed
            part = os.read(errpipe_read, 50000)
            failure += part
            if not part or len(failure) > 50000:
                break
    finally:
        os.close(errpipe_read)
    process = AppProcess(pid)
    if failure:
        process.wait()
        raise _start_error(bytes(failure), argv[0], cwd)
    return process


def _start_error(data: bytes, program: str, cwd: str) -> OSError:
    """The OSError the child reported as ``Name:hex errno:text`` (Popen's format)."""
    try:
        _, hex_errno, text = data.split(b":", 2)
        number = int(hex_errno, 16)
    except ValueError:
        return OSError(f"could not start {program}: {data[:200]!r}")
    where = cwd if text == b"noexec" else program  # "noexec": chdir failed
    return OSError(number, os.strerror(number) if number else text.decode(errors="replace"),
                   where)
