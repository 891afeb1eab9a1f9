"""The Shell contract: run commands and move files on one machine, local or remote.

Providers (ssh, batch systems through a login node, coaster block boots) need the same
few operations on "the machine where the site is": run a command, start a long-lived
process and talk to it, copy files there and back, make and remove directories.  Putting
them behind one small interface, in the style of asyncio's transports, lets a provider be
written once and tested with ``LocalShell`` (this machine) as well as ``SSHShell``
(``sshshell.py``).

Failures are typed: a ``ShellError`` carries a ``ShellFailure`` kind, so that retries,
site scores and messages read the kind and never match message text.  Messages are for
people: they name the host (and port) and say what to do.
"""

from __future__ import annotations

import asyncio
import enum
import errno
import os
import shutil
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from swiftnb.atomicfile import replacing
from swiftnb.errors import SwiftnbError

__all__ = ["ShellFailure", "ShellError", "CommandResult", "Process", "Shell", "LocalShell",
           "Tunnel", "LOCAL_HOST", "signal_number", "os_error", "remove_local_tree"]

#: How a ShellError names this machine.
LOCAL_HOST = "this machine"


class ShellFailure(enum.Enum):
    """What kind of failure a ShellError is: a value, never a phrase to match."""

    UNREACHABLE = "unreachable"  # no TCP connection (refused, no route, DNS)
    AUTH_REFUSED = "auth-refused"
    HOST_KEY_UNKNOWN = "host-key-unknown"
    HOST_KEY_CHANGED = "host-key-changed"
    CONNECTION_LOST = "connection-lost"  # was connected, then the connection died
    TIMEOUT = "timeout"  # connect or command timed out
    REMOTE = "remote"  # the far side refused an operation (permission denied, disk full,
    #                    no such file)
    CONFIG = "config"  # bad ssh config / key file / auth.defaults


#: Kinds after which the same operation may succeed if simply tried again later.
_RETRYABLE = frozenset({ShellFailure.UNREACHABLE, ShellFailure.CONNECTION_LOST,
                        ShellFailure.TIMEOUT})


class ShellError(SwiftnbError):
    """A Shell operation failed; ``kind`` says how, ``host`` where ("127.0.0.1:2222",
    or "this machine"), and the message says what happened and what to do."""

    def __init__(self, kind: ShellFailure, host: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.host = host
        self.message = message

    @property
    def retryable(self) -> bool:
        """Whether trying again later may help (the host or the network may come back);
        a refused login, a host key problem, a remote refusal or a bad configuration
        will not change by itself."""
        return self.kind in _RETRYABLE

    def __repr__(self) -> str:
        return f"ShellError({self.kind.name}, {self.host!r}, {self.message!r})"


@dataclass(frozen=True)
class CommandResult:
    """A finished command: its exit status and what it wrote (decoded as UTF-8, with
    undecodable bytes replaced: output is for reading, files move through put/get).
    Killed by signal N: status 128 + N, as a shell reports it."""

    returncode: int
    stdout: str
    stderr: str


class Process(ABC):
    """A started command and its streams, for the long-lived ones (workers, tails) that a
    provider talks to while they run.  Stdout is read line by line, since workers speak
    line protocols; stderr is kept for the message when the process fails."""

    @abstractmethod
    async def write(self, data: bytes) -> None:
        """Write to the process's stdin (waits while the pipe is full)."""

    @abstractmethod
    def close_stdin(self) -> None:
        """Close its stdin, so that it reads EOF."""

    @abstractmethod
    async def readline(self) -> bytes:
        """The next line of its stdout, with its newline; b"" at EOF."""

    @abstractmethod
    async def read_stderr(self) -> str:
        """All it wrote on stderr; waits for the stream's end (after exit)."""

    @abstractmethod
    def send_signal(self, name: str) -> None:
        """Send a signal by name ("TERM", "KILL") to the process (not necessarily to its
        children: see the implementation); nothing happens once it has ended."""

    @abstractmethod
    async def wait(self) -> int | None:
        """Its exit status once it has ended (128 + N when killed by signal N); None if
        unknown, e.g. when the connection to its host was lost."""


class Tunnel:
    """A way back: programs on a shell's machine connect to ``host:port`` there and
    reach a port of this machine.  ``close()`` ends it (connections through it die)."""

    def __init__(self, host: str, port: int, closer: Callable[[], None] | None = None) -> None:
        self.host = host
        self.port = port
        self._closer = closer

    def close(self) -> None:
        closer, self._closer = self._closer, None
        if closer is not None:
            closer()


class Shell(ABC):
    """Runs commands and moves files on one machine.

    Commands are argv lists, never shell strings: a file name holding spaces, quotes or
    ``;`` is one argument everywhere.  Every failure is a ShellError; a command that runs
    and exits non-zero is a result, not a failure.  A program that cannot be found or
    executed exits 127 or 126, as under a shell."""

    name: str  # for messages: "this machine", "127.0.0.1:2222"

    @abstractmethod
    async def run(self, argv: Sequence[str], *, input: bytes | None = None,
                  timeout: float | None = None, cwd: str | None = None) -> CommandResult:
        """Run a command to its end and return its status and output; stdin is ``input``
        (or empty).  After ``timeout`` seconds the command is killed (on the far side
        too: nothing is left running) and ShellError(TIMEOUT) is raised.  A ``cwd`` that
        cannot be entered is a ShellError(REMOTE)."""

    @abstractmethod
    async def start(self, argv: Sequence[str], *, cwd: str | None = None,
                    env: Mapping[str, str] | None = None) -> Process:
        """Start a command and return it running; ``env`` is added to its environment."""

    @abstractmethod
    async def put(self, local_path: str, remote_path: str) -> None:
        """Copy a file of this machine to the shell's machine.  Makes no directories: the
        caller knows which ones exist, and one makedirs serves many files."""

    @abstractmethod
    async def get(self, remote_path: str, local_path: str) -> None:
        """Copy a file of the shell's machine to this one, atomically: into a temporary
        name beside ``local_path``, then renamed, so a reader never sees half a file."""

    @abstractmethod
    async def makedirs(self, path: str) -> None:
        """Make a directory and its parents (mkdir -p); no error if it exists."""

    @abstractmethod
    async def remove_tree(self, path: str) -> None:
        """Remove a file or a directory tree (rm -rf); no error if it is absent."""

    @abstractmethod
    async def exists(self, path: str) -> bool:
        """Whether something (even a dangling symlink) is at ``path``."""

    @abstractmethod
    async def reverse_tunnel(self, port: int) -> Tunnel:
        """Let programs on the shell's machine reach ``port`` on this machine's loopback:
        where they connect, on the shell's machine (its loopback, for SSH: a remote port
        forward).  Coaster workers behind a login node come back this way, since compute
        nodes of a cluster cannot reach the notebook's machine."""

    async def reconnect(self, *, give_up_after: float) -> None:
        """Connect again after a lost connection, trying for ``give_up_after`` seconds
        (ShellError(UNREACHABLE) then).  A shell with no connection has nothing to do."""

    @abstractmethod
    async def close(self) -> None:
        """Release the shell's resources (connections)."""


def os_error(exc: OSError, what: str, host: str = LOCAL_HOST) -> ShellError:
    """ShellError(REMOTE) for an OS refusal, with the path and the OS's own words."""
    words = exc.strerror or str(exc)
    where = f"{exc.filename}: " if exc.filename is not None else ""
    return ShellError(ShellFailure.REMOTE, host, f"{what} on {host} failed: {where}{words}")


def signal_number(name: str) -> int:
    """The number of a signal named "TERM", "SIGTERM", "KILL", ...; ValueError if none."""
    upper = name.upper()
    try:
        return int(signal.Signals[upper if upper.startswith("SIG") else "SIG" + upper])
    except KeyError:
        raise ValueError(f"unknown signal name {name!r}") from None


def remove_local_tree(path: str) -> None:
    """rm -rf of a tree that may hold read-only directories (the site run's shared copy
    of an input directory is 0555, so that no app writes into it): a directory that
    refuses the removal of an entry is made writable by its owner and tried again.
    A missing path is no error; other OSErrors are raised."""
    def writable_again(function: Callable[..., object], failed: str, info: object) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, FileNotFoundError):
            return
        parent = os.path.dirname(failed)
        if not isinstance(exc, PermissionError) or not parent:
            raise exc if exc is not None else OSError(f"cannot remove {failed}")
        os.chmod(parent, os.stat(parent).st_mode | 0o700)
        if os.path.isdir(failed) and not os.path.islink(failed):
            os.chmod(failed, os.stat(failed).st_mode | 0o700)
            shutil.rmtree(failed, onerror=writable_again)
        else:
            function(failed)

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=writable_again)
    else:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _status(code: int | None) -> int | None:
    """asyncio's returncode (-N when killed by signal N) as a shell reports it (128+N)."""
    return None if code is None else (128 - code if code < 0 else code)


class _LocalProcess(Process):
    """A child process of this machine (asyncio subprocess in a session of its own)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self._proc = proc

    @property
    def pid(self) -> int:
        """Also its process group's id: ``os.killpg(pid, ...)`` reaches its children."""
        return self._proc.pid

    async def write(self, data: bytes) -> None:
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(data)
            await self._proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise os_error(exc, "writing to a process's stdin") from None

    def close_stdin(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()

    async def readline(self) -> bytes:
        assert self._proc.stdout is not None
        return await self._proc.stdout.readline()

    async def read_stderr(self) -> str:
        assert self._proc.stderr is not None
        return (await self._proc.stderr.read()).decode(errors="replace")

    def send_signal(self, name: str) -> None:
        """Signals the process only; see ``pid`` for its children."""
        number = signal_number(name)
        if self._proc.returncode is None:
            try:
                self._proc.send_signal(number)
            except ProcessLookupError:
                pass

    async def wait(self) -> int | None:
        return _status(await self._proc.wait())


class LocalShell(Shell):
    """This machine: asyncio subprocesses and plain file copies.

    Each command runs in a session of its own, so that a timeout kills the command with
    everything it started (its process group), as the remote ``timeout -s KILL`` does."""

    def __init__(self) -> None:
        self.name = LOCAL_HOST

    async def _spawn(self, argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str] | None,
                     stdin: int) -> asyncio.subprocess.Process:
        """Start a child in a session of its own; OSError as the OS said it."""
        if not argv:
            raise ValueError("an empty command line")
        full_env = None if env is None else {**os.environ, **env}
        return await asyncio.create_subprocess_exec(
            *argv, stdin=stdin, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=full_env, start_new_session=True)

    def _no_cwd(self, argv: Sequence[str], cwd: str, exc: OSError) -> ShellError:
        return ShellError(ShellFailure.REMOTE, self.name,
                          f"cannot run {argv[0]} in {cwd} on {self.name}: {exc.strerror}")

    async def run(self, argv: Sequence[str], *, input: bytes | None = None,
                  timeout: float | None = None, cwd: str | None = None) -> CommandResult:
        try:
            proc = await self._spawn(argv, cwd=cwd, env=None,
                                     stdin=asyncio.subprocess.PIPE if input is not None
                                     else asyncio.subprocess.DEVNULL)
        except OSError as exc:
            if cwd is not None and exc.filename == cwd:
                raise self._no_cwd(argv, cwd, exc) from None
            code_ = 127 if exc.errno == errno.ENOENT else 126  # as a shell says it
            return CommandResult(code_, "", f"{argv[0]}: {exc.strerror}\n")
        try:
            out, err = await asyncio.wait_for(proc.communicate(input), timeout)
        except (TimeoutError, asyncio.CancelledError) as exc:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise ShellError(ShellFailure.TIMEOUT, self.name,
                             f"{argv[0]} on {self.name} did not finish within {timeout:g} s "
                             "and was killed") from None
        code = _status(proc.returncode)
        assert code is not None
        return CommandResult(code, out.decode(errors="replace"), err.decode(errors="replace"))

    async def start(self, argv: Sequence[str], *, cwd: str | None = None,
                    env: Mapping[str, str] | None = None) -> Process:
        """As Shell.start; a program or cwd that is missing is a ShellError(REMOTE) here
        at once (a remote shell reports it as the process's exit status)."""
        try:
            proc = await self._spawn(argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE)
        except OSError as exc:
            if cwd is not None and exc.filename == cwd:
                raise self._no_cwd(argv, cwd, exc) from None
            raise os_error(exc, f"starting {argv[0]}") from None
        return _LocalProcess(proc)

    async def put(self, local_path: str, remote_path: str) -> None:
        await self._copy(local_path, remote_path, atomic=False)

    async def get(self, remote_path: str, local_path: str) -> None:
        await self._copy(remote_path, local_path, atomic=True)

    async def _copy(self, src: str, dst: str, *, atomic: bool) -> None:
        """Copy on a thread (a copy takes as long as the file is big); ``atomic``: into a
        temporary name beside ``dst``, then renamed."""
        def copy() -> None:
            with open(src, "rb") as source:
                if not atomic:
                    with open(dst, "wb") as target:
                        shutil.copyfileobj(source, target, 1 << 20)
                    return
                with replacing(dst) as tmp, open(tmp, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
        try:
            await asyncio.to_thread(copy)
        except OSError as exc:
            if exc.filename is None:
                exc.filename = dst
            raise os_error(exc, f"copying {src} to {dst}") from None

    async def makedirs(self, path: str) -> None:
        try:
            await asyncio.to_thread(os.makedirs, path, exist_ok=True)
        except OSError as exc:
            raise os_error(exc, "making a directory") from None

    async def remove_tree(self, path: str) -> None:
        try:
            await asyncio.to_thread(remove_local_tree, path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise os_error(exc, "removing") from None

    async def exists(self, path: str) -> bool:
        return os.path.lexists(path)

    async def reverse_tunnel(self, port: int) -> Tunnel:
        return Tunnel("127.0.0.1", port)  # the same machine: nothing to forward

    async def close(self) -> None:
        """Nothing to release: each command is a child process of its own."""
