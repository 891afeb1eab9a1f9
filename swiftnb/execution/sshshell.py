"""SSHShell: the Shell contract (shell.py) on one SSH host, through asyncssh.

One connection per host, shared by every caller: commands are channels on it (many at
once, up to sshd's MaxSessions, 10 by default) and files move through one SFTP client on
it, opened on first use.  A connection costs 30-50 ms and a login on the far side; a run
of thousands of tasks must not pay that per task (``shell_for`` hands every task of a
process the same SSHShell).

The user's SSH setup is honoured as OpenSSH does: ``~/.ssh/config`` (Host aliases,
HostName, Port, User, IdentityFile, ProxyJump, UserKnownHostsFile; read by asyncssh
itself), keys from the agent and ~/.ssh/id_*, and Swift 0.96's ``~/.ssh/auth.defaults``.
Arguments given to the constructor win over both files.

Host keys are checked against known_hosts, with OpenSSH's two distinct answers: a host
that is not listed (HOST_KEY_UNKNOWN; accepted and recorded only with
``accept_new_host_keys``, like StrictHostKeyChecking=accept-new) and a host listed with
another key (HOST_KEY_CHANGED; always refused).

Commands are argv lists joined with ``shlex.join`` for the remote login shell, which is
assumed to be POSIX (sh, bash, dash, ksh, zsh).  A command's timeout is enforced on the
far side with ``timeout -s KILL N`` (GNU coreutils): asyncssh's own timeout stops waiting
but leaves the remote process running.

A connection that dies makes the operations running on it fail with CONNECTION_LOST;
the next operation connects again, and ``reconnect`` waits for a host to come back.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shlex
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import asyncssh

from swiftnb.atomicfile import replacing
from swiftnb.execution.shell import (LOCAL_HOST, CommandResult, Process, Shell, ShellError,
                                     ShellFailure, Tunnel, signal_number)

__all__ = ["SSHShell", "shell_for", "close_shells", "AuthDefault", "read_auth_defaults"]

_DEFAULT_PORT = 22
#: reconnect(): first pause between attempts, doubled after each, up to the cap (seconds).
_BACKOFF_FIRST = 0.5
_BACKOFF_CAP = 10.0
#: run(timeout=N): how long past N this side waits for the far side's `timeout` to act
#: before it gives up on the channel itself (a connection that hangs).
_TIMEOUT_GRACE = 10.0
#: reconnect(): how long a connection that looks alive may take to answer a trivial command.
_PROBE_WITHIN = 10.0
#: The line the remote side prints when run()'s cwd cannot be entered (a protocol token
#: of this module, never shown to people).
_NO_CWD = "swiftnb-shell: cannot enter the working directory"


# --- Swift 0.96's ~/.ssh/auth.defaults -------------------------------------------------

_AUTH_ATTRIBUTES = ("type", "username", "key", "passphrase", "password")


@dataclass(frozen=True)
class AuthDefault:
    """One host's entry of ``~/.ssh/auth.defaults`` (Swift 0.96's login settings).

    ``type`` says which secret to use: "key" (``key`` with ``passphrase``) or
    "password"; None when the file does not say."""

    host: str
    type: str | None = None
    username: str | None = None
    key: str | None = None
    passphrase: str | None = None
    password: str | None = None


def read_auth_defaults(path: str) -> dict[str, AuthDefault]:
    """The entries of an auth.defaults file by host; {} when there is no file.

    Lines are ``HOST.ATTRIBUTE=VALUE`` (the host may hold dots: the attribute is the
    last dotted part), with ``#`` comments and blank lines; a malformed line is a
    ShellError(CONFIG) naming the file and line, since guessing would log in wrongly."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ShellError(ShellFailure.CONFIG, LOCAL_HOST,
                         f"cannot read {path}: {exc.strerror or exc}") from None
    fields: dict[str, dict[str, str]] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        host, dot, attribute = name.strip().rpartition(".")
        attribute = attribute.strip()
        if not eq or not dot or not host or attribute not in _AUTH_ATTRIBUTES:
            raise ShellError(ShellFailure.CONFIG, LOCAL_HOST,
                             f"{path}:{number}: expected HOST.ATTRIBUTE=VALUE with ATTRIBUTE "
                             f"one of {', '.join(_AUTH_ATTRIBUTES)}; got {raw.strip()!r}")
        value = value.strip()
        if attribute == "type" and value not in ("key", "password"):
            raise ShellError(ShellFailure.CONFIG, LOCAL_HOST,
                             f"{path}:{number}: {host}.type must be 'key' or 'password', "
                             f"not {value!r}")
        if attribute == "key":
            value = os.path.expanduser(value)
        fields.setdefault(host, {})[attribute] = value
    return {host: AuthDefault(host=host, **attrs) for host, attrs in fields.items()}


# --- host keys ------------------------------------------------------------------------


def _host_pattern(host: str, port: int) -> str:
    """How known_hosts names a host: ``host``, or ``[host]:port`` off port 22."""
    return host if port == _DEFAULT_PORT else f"[{host}]:{port}"


@dataclass
class _HostKeyCheck:
    """known_hosts with OpenSSH's verdicts, for one connection attempt.

    asyncssh trusts the keys it finds for the host and asks the client object about any
    other key (``validate_host_public_key``); this tells "not listed" from "listed with
    another key", which asyncssh reports alike."""

    known: asyncssh.SSHKnownHosts
    files: list[str]  # the known_hosts files read (the first one is written to)
    accept_new: bool
    verdict: ShellFailure | None = None
    new_line: str | None = None  # known_hosts line of a newly accepted key, to append

    def validate(self, host: str, addr: str, port: int, key: asyncssh.SSHKey) -> bool:
        listed = self.known.match(host, addr, None if port == _DEFAULT_PORT else port)[0]
        if listed:
            self.verdict = ShellFailure.HOST_KEY_CHANGED
            return False
        if not self.accept_new:
            self.verdict = ShellFailure.HOST_KEY_UNKNOWN
            return False
        algorithm_and_key = " ".join(key.export_public_key("openssh").decode().split()[:2])
        self.new_line = f"{_host_pattern(host, port)} {algorithm_and_key}"
        return True

    def record_new_key(self) -> None:
        """Append an accepted key once the server has proved it holds it (asyncssh checks
        that after validate() said yes, so nothing is written for an impostor)."""
        if self.new_line is None or not self.files:
            return
        path = self.files[0]
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        with open(path, "a+", encoding="utf-8") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():
                f.seek(f.tell() - 1)
                if f.read(1) != "\n":
                    f.write("\n")
            f.write(self.new_line + "\n")
        self.new_line = None


class _Client(asyncssh.SSHClient):
    """asyncssh's client callbacks: host keys not found in known_hosts go to the check."""

    def __init__(self, check: _HostKeyCheck) -> None:
        self._check = check

    def validate_host_public_key(self, host: str, addr: str, port: int,
                                 key: asyncssh.SSHKey) -> bool:
        return self._check.validate(host, addr, port, key)


# --- the settings of one connection ---------------------------------------------------


@dataclass(frozen=True)
class _Target:
    """Where and as whom to log in, resolved from the constructor, ~/.ssh/config and
    auth.defaults at connect time (HOME may change between SSHShell() and the connect,
    as it does in tests)."""

    kwargs: dict[str, object]  # for asyncssh.connect
    host: str  # HostName
    port: int
    user: str
    key_files: tuple[str, ...]  # for messages
    agent: bool
    password: bool
    known_hosts_files: tuple[str, ...]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _default_key_files() -> list[str]:
    return sorted(p for p in glob.glob(os.path.expanduser("~/.ssh/id_*")) if not p.endswith(".pub"))


# --- SSHShell -------------------------------------------------------------------------


class _SSHProcess(Process):
    """A command started on a channel of the shell's connection.

    ``send_signal`` reaches the command sshd started (the login shell exec's it), not
    necessarily its children: a provider that must end a whole tree kills the remote
    process group itself."""

    def __init__(self, proc: asyncssh.SSHClientProcess[bytes], shell: SSHShell,
                 conn: asyncssh.SSHClientConnection) -> None:
        self._proc = proc
        self._shell = shell
        self._conn = conn

    async def write(self, data: bytes) -> None:
        """As to a local pipe: writing to a process that has ended is REMOTE (its stdin is
        closed); CONNECTION_LOST only when the connection itself is gone."""
        try:
            with self._shell._errors("writing to a process's stdin"):
                self._proc.stdin.write(data)
                await self._proc.stdin.drain()
        except ShellError as exc:
            if exc.kind is ShellFailure.CONNECTION_LOST:
                await asyncio.sleep(0)  # let the loop take in a socket's end
                if not self._conn.is_closed():
                    raise ShellError(ShellFailure.REMOTE, exc.host,
                                     f"writing to a process on {exc.host} failed: it has closed "
                                     "its stdin or ended") from None
            raise

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError, asyncssh.Error):
            self._proc.stdin.write_eof()

    async def readline(self) -> bytes:
        with self._shell._errors("reading a process's output"):
            return await self._proc.stdout.readline()

    async def read_stderr(self) -> str:
        with self._shell._errors("reading a process's stderr"):
            return (await self._proc.stderr.read()).decode(errors="replace")

    def send_signal(self, name: str) -> None:
        signal_number(name)  # a bad name is the caller's error, not ignored
        upper = name.upper()
        with contextlib.suppress(OSError, asyncssh.Error):  # the channel has closed: it ended
            self._proc.send_signal(upper[3:] if upper.startswith("SIG") else upper)

    async def wait(self) -> int | None:
        """Waits for the channel to close; unread output stays readable (asyncssh's own
        wait() would collect it).  As with a local pipe, a process whose stdout nobody
        reads may block before it ends."""
        with contextlib.suppress(asyncssh.Error, OSError):
            await self._proc.wait_closed()
        return _status(self._proc.returncode)


def _status(returncode: int | None) -> int | None:
    """asyncssh's returncode (the exit status, or -N for signal N) as a shell says it."""
    return None if returncode is None else (128 - returncode if returncode < 0 else returncode)


class SSHShell(Shell):
    """One SSH host (see the module docstring).  Safe to share between tasks of one event
    loop; used from another loop (a new ``asyncio.run``), it connects again there."""

    def __init__(self, host: str, *, port: int | None = None, user: str | None = None,
                 identity_files: Sequence[str] | None = None, known_hosts: str | None = None,
                 accept_new_host_keys: bool = False, connect_timeout: float = 30.0,
                 password: str | None = None) -> None:
        self._host = host
        self._port = port
        self._user = user
        self._identity_files = tuple(identity_files) if identity_files is not None else None
        self._known_hosts = known_hosts
        self._accept_new = accept_new_host_keys
        self._connect_timeout = connect_timeout
        self._password = password
        self.name = f"{host}:{port}" if port else host
        self._target: _Target | None = None
        self._conn: asyncssh.SSHClientConnection | None = None
        self._sftp: asyncssh.SFTPClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock: asyncio.Lock | None = None  # one connect (or SFTP start) at a time

    # -- connection --------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether a live connection exists (for this thread's running loop, if any)."""
        if self._conn is None or self._conn.is_closed():
            return False
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return True

    @property
    def connection(self) -> asyncssh.SSHClientConnection | None:
        """The asyncssh connection in use (for tests and diagnostics), None if none."""
        return self._conn if self.connected else None

    def _label(self) -> str:
        """The host for people: the alias and where it leads, when they differ."""
        if self._target is None:
            return self.name
        if self._target.host == self._host:
            return self._target.address
        return f"{self._host} ({self._target.address})"

    def _bind_loop(self) -> asyncio.Lock:
        """The lock of the running loop; a connection made on another loop is dropped
        (its loop is gone or busy elsewhere: it cannot serve this one)."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop or self._lock is None:
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.abort()
            self._conn, self._sftp = None, None
            self._loop, self._lock = loop, asyncio.Lock()
        return self._lock

    async def connect(self) -> None:
        """Connect now if not connected (one attempt); ShellError if it fails."""
        await self._connection()

    async def _connection(self) -> asyncssh.SSHClientConnection:
        lock = self._bind_loop()
        conn = self._conn
        if conn is not None and not conn.is_closed():
            return conn
        async with lock:
            if self._conn is None or self._conn.is_closed():
                self._conn, self._sftp = None, None
                self._conn = await self._connect_once()
            return self._conn

    async def reconnect(self, *, give_up_after: float) -> None:
        """Connect again, trying with exponential back-off (0.5 s doubling, up to 10 s
        between tries) until connected or ``give_up_after`` seconds have passed; then
        ShellError(UNREACHABLE).  A refusal that time will not cure (login, host key,
        config) is raised at once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + give_up_after
        delay = _BACKOFF_FIRST
        last: ShellError | None = None
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                conn = await asyncio.wait_for(self._connection(), remaining)
                if await self._answers(conn, min(remaining, _PROBE_WITHIN)):
                    return
                self._drop(conn)
                last = self._lost("a check of the connection")
            except TimeoutError:
                last = ShellError(ShellFailure.TIMEOUT, self.name,
                                  f"connecting to {self._label()} took too long")
            except ShellError as exc:
                if not exc.retryable:
                    raise
                last = exc
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await asyncio.sleep(min(delay, remaining))
            delay = min(delay * 2, _BACKOFF_CAP)
        target = self._target
        port = target.port if target else (self._port or _DEFAULT_PORT)
        raise ShellError(ShellFailure.UNREACHABLE, target.address if target else self.name,
                         f"{self._label()} did not take a connection for {give_up_after:g} s "
                         f"({last.message if last else 'no attempt finished'}); check that the "
                         f"host is up and that sshd listens on port {port}")

    @staticmethod
    async def _answers(conn: asyncssh.SSHClientConnection, within: float) -> bool:
        """Whether the far side answers on ``conn`` (one trivial command): a host that
        died may not have been noticed yet, since the loop learns of a closed socket
        only when it next reads."""
        try:
            await asyncio.wait_for(conn.run("exit 0", check=False), within)
            return True
        except (asyncssh.Error, OSError, TimeoutError):
            return False

    def _drop(self, conn: asyncssh.SSHClientConnection) -> None:
        """Forget a connection found dead (if it is still the current one)."""
        if self._conn is conn:
            self._conn, self._sftp = None, None
        with contextlib.suppress(Exception):
            conn.abort()

    async def _process(self, command: str, what: str) -> asyncssh.SSHClientProcess[bytes]:
        """A new channel running ``command``.  If the connection turns out to be dead
        when the channel is opened, nothing has run on the far side yet, so this
        connects again once and retries."""
        for attempt in (1, 2):
            conn = await self._connection()
            try:
                # bytes: a file name that is not UTF-8 goes as its own bytes
                return await conn.create_process(os.fsencode(command), encoding=None)
            except (asyncssh.ConnectionLost, asyncssh.DisconnectError, asyncssh.ChannelOpenError,
                    BrokenPipeError, ConnectionResetError):
                await asyncio.sleep(0)  # let the loop take in the socket's end
                if attempt == 2 or not conn.is_closed():
                    with self._errors(what):
                        raise
                self._drop(conn)
        raise AssertionError("unreachable")

    def _resolve(self) -> tuple[_Target, _HostKeyCheck]:
        """Read ~/.ssh/config, auth.defaults and known_hosts for one connection attempt."""
        home_ssh = Path("~/.ssh").expanduser()
        config = [str(home_ssh / "config")] if (home_ssh / "config").is_file() else []
        try:
            defaults = read_auth_defaults(str(home_ssh / "auth.defaults"))
        except ShellError as exc:
            raise ShellError(ShellFailure.CONFIG, self.name, exc.message) from None
        kwargs: dict[str, object] = {"host": self._host, "config": config,
                                     "connect_timeout": self._connect_timeout}
        if self._port is not None:
            kwargs["port"] = self._port
        try:
            probe = asyncssh.SSHClientConnectionOptions(**kwargs)  # what the config says
        except (ValueError, OSError, asyncssh.Error) as exc:
            raise ShellError(ShellFailure.CONFIG, self.name,
                             f"cannot read the SSH configuration for {self._host} "
                             f"({', '.join(config) or 'no ~/.ssh/config'}): {exc}") from None
        auth = defaults.get(self._host) or defaults.get(probe.host)
        user = self._user or (auth.username if auth else None)
        if user:
            kwargs["username"] = user
        key_files: list[str] = []
        if self._identity_files is not None:
            key_files = [os.path.expanduser(p) for p in self._identity_files]
        elif auth is not None and auth.key and auth.type != "password":
            key_files = [auth.key]
            if auth.passphrase:
                kwargs["passphrase"] = auth.passphrase
        if key_files:
            kwargs["client_keys"] = key_files
        password = self._password or (auth.password if auth and auth.type != "key" else None)
        if password:
            kwargs["password"] = password
        try:
            options = asyncssh.SSHClientConnectionOptions(**kwargs)
        except (ValueError, OSError, asyncssh.Error) as exc:
            keys = ", ".join(key_files) or "the default keys"
            raise ShellError(ShellFailure.CONFIG, self.name,
                             f"cannot load the login settings for {self._host} ({keys}): "
                             f"{exc}") from None
        if not key_files:
            configured = options.config.get("IdentityFile", ())
            key_files = [os.path.expanduser(str(p))
                         for p in configured  # type: ignore[attr-defined]  # asyncssh: untyped
                         ] if configured else _default_key_files()
        if self._known_hosts is not None:
            kh_files = [os.path.expanduser(self._known_hosts)]
        elif options.known_hosts is None:  # UserKnownHostsFile none: nothing is known
            kh_files = []
        elif not options.known_hosts:  # () or []: the config names none
            kh_files = [str(home_ssh / "known_hosts")]
        else:
            kh_files = [os.path.expanduser(str(p))
                        for p in options.known_hosts]  # type: ignore[union-attr]  # asyncssh: untyped options
        text = ""
        for path in kh_files:
            try:
                with open(path, encoding="utf-8") as f:
                    text += f.read() + "\n"
            except FileNotFoundError:
                pass
            except OSError as exc:
                raise ShellError(ShellFailure.CONFIG, self.name,
                                 f"cannot read known_hosts file {path}: {exc.strerror}") from None
        try:
            known = asyncssh.import_known_hosts(text)
        except ValueError as exc:
            raise ShellError(ShellFailure.CONFIG, self.name,
                             f"a known_hosts file ({', '.join(kh_files)}) is malformed: "
                             f"{exc}") from None
        check = _HostKeyCheck(known=known, files=kh_files, accept_new=self._accept_new)
        kwargs["known_hosts"] = known
        kwargs["client_factory"] = lambda: _Client(check)
        target = _Target(kwargs=kwargs, host=options.host, port=options.port,
                         user=options.username, key_files=tuple(key_files),
                         agent=bool(options.agent_path), password=bool(password),
                         known_hosts_files=tuple(kh_files))
        return target, check

    async def _connect_once(self) -> asyncssh.SSHClientConnection:
        target, check = self._resolve()
        self._target = target
        self.name = target.address
        try:
            conn = await asyncssh.connect(**target.kwargs)
        except asyncssh.HostKeyNotVerifiable as exc:
            raise self._host_key_error(target, check, exc) from None
        except asyncssh.PermissionDenied:
            keys = ", ".join(target.key_files) or "no key files"
            agent = " and the ssh agent's keys" if target.agent else ""
            agent += " and a password" if target.password else ""
            raise ShellError(
                ShellFailure.AUTH_REFUSED, target.address,
                f"{self._label()} refused the login of {target.user} with keys {keys}{agent}; "
                f"check that one of their public keys is in ~{target.user}/.ssh/authorized_keys "
                "there, or name the right user and key (User and IdentityFile in ~/.ssh/config, "
                "or ~/.ssh/auth.defaults)") from None
        except TimeoutError:  # before OSError: TimeoutError is one
            raise ShellError(ShellFailure.TIMEOUT, target.address,
                             f"connecting to {self._label()} took longer than "
                             f"{self._connect_timeout:g} s; check that the host is up and "
                             "reachable from this machine") from None
        except (asyncssh.ConnectionLost, OSError) as exc:
            raise ShellError(ShellFailure.UNREACHABLE, target.address,
                             f"cannot connect to {self._label()}: {_words(exc)}; check that the "
                             f"host is up and that sshd listens on port {target.port}") from None
        except asyncssh.DisconnectError as exc:
            if exc.code in (asyncssh.DISC_TOO_MANY_CONNECTIONS,
                            asyncssh.DISC_SERVICE_NOT_AVAILABLE, asyncssh.DISC_BY_APPLICATION):
                raise ShellError(ShellFailure.UNREACHABLE, target.address,
                                 f"{self._label()} turned the connection away: "
                                 f"{exc.reason}") from None
            raise ShellError(ShellFailure.CONFIG, target.address,
                             f"{self._label()} and this machine could not agree on the SSH "
                             f"connection: {exc.reason}; check the algorithms and keys in "
                             "~/.ssh/config") from None
        except (ValueError, asyncssh.Error) as exc:
            raise ShellError(ShellFailure.CONFIG, target.address,
                             f"cannot connect to {self._label()}: {exc}") from None
        try:
            check.record_new_key()
        except OSError as exc:
            conn.close()
            raise ShellError(ShellFailure.CONFIG, target.address,
                             f"accepted the new host key of {self._label()} but cannot record "
                             f"it in {check.files[0]}: {exc.strerror}") from None
        return conn

    def _host_key_error(self, target: _Target, check: _HostKeyCheck,
                        exc: asyncssh.HostKeyNotVerifiable) -> ShellError:
        files = ", ".join(target.known_hosts_files) or "no known_hosts file"
        pattern = _host_pattern(target.host, target.port)
        if check.verdict is ShellFailure.HOST_KEY_CHANGED:
            return ShellError(
                ShellFailure.HOST_KEY_CHANGED, target.address,
                f"the host key of {self._label()} has CHANGED: it is not the one recorded in "
                f"{files}.  Someone may be intercepting the connection, or the host was "
                "reinstalled.  Check with its administrators; if the new key is right, remove "
                f"the old one with `ssh-keygen -R '{pattern}'"
                + (f" -f {target.known_hosts_files[0]}" if target.known_hosts_files else "")
                + "` and connect again.  swiftnb never accepts a changed key by itself.")
        port = "" if target.port == _DEFAULT_PORT else f"-p {target.port} "
        if check.verdict is ShellFailure.HOST_KEY_UNKNOWN:
            where = (f"{files} has no entry for {pattern}" if target.known_hosts_files
                     else "UserKnownHostsFile is none in ~/.ssh/config")
            return ShellError(
                ShellFailure.HOST_KEY_UNKNOWN, target.address,
                f"the host key of {self._label()} is not known ({where}); connect once with "
                f"`ssh {port}{target.user}@{target.host}` to check and accept its key, or set "
                "acceptNewHostKeys: true in the site's execution options")
        return ShellError(ShellFailure.HOST_KEY_UNKNOWN, target.address,
                          f"the host key of {self._label()} cannot be trusted ({exc.reason}); "
                          f"check the entries for {pattern} in {files}")

    async def _sftp_client(self) -> asyncssh.SFTPClient:
        """The shell's one SFTP client, started on first use on the current connection
        (and again after a reconnect: ``_sftp`` always belongs to ``_conn``)."""
        for attempt in (1, 2):
            conn = await self._connection()
            if self._sftp is not None:
                return self._sftp
            assert self._lock is not None
            async with self._lock:
                if self._sftp is not None and self._conn is conn:
                    return self._sftp
                try:
                    # names are bytes: one that is not UTF-8 crosses as its own bytes
                    sftp = await conn.start_sftp_client(path_errors="surrogateescape")
                except (asyncssh.ConnectionLost, asyncssh.DisconnectError,
                        asyncssh.ChannelOpenError, BrokenPipeError, ConnectionResetError):
                    await asyncio.sleep(0)  # as in _process: a dead connection not yet seen
                    if attempt == 2 or not conn.is_closed():
                        with self._errors("starting SFTP"):
                            raise
                    self._drop(conn)
                    continue
                except (asyncssh.Error, OSError):
                    with self._errors("starting SFTP"):
                        raise
                if self._conn is conn:
                    self._sftp = sftp
                return sftp
        raise AssertionError("unreachable")

    @contextlib.contextmanager
    def _errors(self, what: str, path: str | None = None) -> Iterator[None]:
        """Turn asyncssh's and the OS's exceptions into ShellErrors of the right kind."""
        try:
            yield
        except ShellError:
            raise
        except (asyncssh.SFTPNoConnection, asyncssh.SFTPConnectionLost, asyncssh.ConnectionLost,
                BrokenPipeError, ConnectionResetError):
            raise self._lost(what) from None
        except asyncssh.SFTPError as exc:
            where = f"{path}: " if path else ""
            raise ShellError(ShellFailure.REMOTE, self.name,
                             f"{what} on {self._label()} failed: {where}{exc.reason}") from None
        except asyncssh.ChannelOpenError as exc:
            if self._conn is None or self._conn.is_closed():
                raise self._lost(what) from None
            raise ShellError(ShellFailure.REMOTE, self.name,
                             f"{self._label()} refused a new session for {what}: {exc.reason} "
                             "(sshd's MaxSessions bounds the commands running at once on one "
                             "connection)") from None
        except asyncssh.DisconnectError:
            raise self._lost(what) from None
        except OSError as exc:  # this machine's side of a copy
            words = exc.strerror or str(exc)
            where = f"{exc.filename}: " if exc.filename else ""
            raise ShellError(ShellFailure.REMOTE, LOCAL_HOST,
                             f"{what} failed on this machine: {where}{words}") from None

    def _lost(self, what: str) -> ShellError:
        return ShellError(ShellFailure.CONNECTION_LOST, self.name,
                          f"the connection to {self._label()} was lost during {what}; the next "
                          "operation connects again (reconnect() waits for the host)")

    # -- commands ----------------------------------------------------------------------

    @staticmethod
    def _command(argv: Sequence[str], *, cwd: str | None = None,
                 env: Mapping[str, str] | None = None, timeout: float | None = None) -> str:
        """The remote shell's command line for an argv (exec'd, so signals reach it)."""
        if not argv:
            raise ValueError("an empty command line")
        words: list[str] = []
        if timeout is not None:
            words += ["timeout", "-s", "KILL", f"{max(timeout, 0.001):.3f}"]
        if env:
            words += ["env", *(f"{k}={v}" for k, v in env.items())]
        line = "exec " + shlex.join([*words, *argv])
        if cwd is not None:
            line = (f"cd -- {shlex.quote(cwd)} 2>/dev/null || "
                    f"{{ echo {shlex.quote(_NO_CWD)} >&2; exit 1; }}; {line}")
        return line

    async def run(self, argv: Sequence[str], *, input: bytes | None = None,
                  timeout: float | None = None, cwd: str | None = None) -> CommandResult:
        command = self._command(argv, cwd=cwd, timeout=timeout)
        proc = await self._process(command, f"running {argv[0]}")
        started = time.monotonic()
        try:
            with self._errors(f"running {argv[0]}"):
                if input:
                    proc.stdin.write(input)
                proc.stdin.write_eof()
                out, err = await asyncio.wait_for(
                    proc.communicate(), None if timeout is None else timeout + _TIMEOUT_GRACE)
        except TimeoutError:
            proc.close()
            raise self._timed_out(argv, timeout) from None
        except asyncio.CancelledError:
            proc.close()  # the far side's timeout, if any, still ends the command
            raise
        code = _status(proc.returncode)
        if code is None:
            raise self._lost(f"running {argv[0]}")
        if timeout is not None and code == 128 + signal.SIGKILL \
                and time.monotonic() - started >= timeout:
            raise self._timed_out(argv, timeout)
        stderr = err.decode(errors="replace")
        if cwd is not None and code == 1 and stderr == _NO_CWD + "\n":
            raise ShellError(ShellFailure.REMOTE, self.name,
                             f"cannot run {argv[0]} in {cwd} on {self._label()}: the directory "
                             "does not exist or is not accessible")
        return CommandResult(code, out.decode(errors="replace"), stderr)

    def _timed_out(self, argv: Sequence[str], timeout: float | None) -> ShellError:
        return ShellError(ShellFailure.TIMEOUT, self.name,
                          f"{argv[0]} on {self._label()} did not finish within {timeout:g} s "
                          "and was killed there")

    async def start(self, argv: Sequence[str], *, cwd: str | None = None,
                    env: Mapping[str, str] | None = None) -> Process:
        """Start a command; a missing program or cwd shows as its exit status (127, 1)
        and stderr, since the far side reports them only once the command has run."""
        command = self._command(argv, cwd=cwd, env=env)
        proc = await self._process(command, f"starting {argv[0]}")
        return _SSHProcess(proc, self, proc.channel.get_connection())  # type: ignore[arg-type]  # a client channel's connection

    # -- files -------------------------------------------------------------------------

    async def put(self, local_path: str, remote_path: str) -> None:
        sftp = await self._sftp_client()
        if not os.path.isfile(local_path):  # asyncssh would upload a directory or say little
            raise ShellError(ShellFailure.REMOTE, LOCAL_HOST,
                             f"copying to {self._label()} failed on this machine: {local_path}: "
                             "no such file")
        with self._errors(f"writing {remote_path}", remote_path):
            await sftp.put(local_path, remote_path)

    async def get(self, remote_path: str, local_path: str) -> None:
        sftp = await self._sftp_client()
        # under a temporary name beside local_path, then renamed over it (atomicfile)
        with (self._errors(f"copying {remote_path} from {self._label()} to {local_path}"),
              replacing(local_path) as tmp,
              self._errors(f"reading {remote_path}", remote_path)):
            await sftp.get(remote_path, tmp)

    async def makedirs(self, path: str) -> None:
        sftp = await self._sftp_client()
        with self._errors("making a directory", path):
            await sftp.makedirs(path, exist_ok=True)

    async def remove_tree(self, path: str) -> None:
        """One ``rm -rf`` on the far side: a job directory of thousands of files would be
        as many SFTP round trips."""
        result = await self.run(["rm", "-rf", "--", path])
        if result.returncode != 0:
            raise ShellError(ShellFailure.REMOTE, self.name,
                             f"removing {path} on {self._label()} failed: {result.stderr.strip()}")

    async def exists(self, path: str) -> bool:
        sftp = await self._sftp_client()
        with self._errors("looking for a file", path):
            return await sftp.lexists(path)

    async def reverse_tunnel(self, port: int) -> Tunnel:
        """A remote port forward: sshd listens on the host's loopback (an ephemeral port)
        and each connection there comes back over this SSH connection to ``port`` on this
        machine's loopback.  Loopback on the far side, since sshd's default GatewayPorts
        keeps forwards off other interfaces; a relay there (``coasters/relay.py``) serves
        the cluster's nodes.  A host whose sshd forbids forwarding (AllowTcpForwarding no)
        refuses with REMOTE."""
        conn = await self._connection()
        with self._errors("opening a reverse tunnel"):
            try:
                listener = await conn.forward_remote_port("127.0.0.1", 0, "127.0.0.1", port)
            except asyncssh.ChannelListenError as exc:
                raise ShellError(ShellFailure.REMOTE, self.name,
                                 f"{self._label()} refused to forward a port back to this "
                                 f"machine ({exc}); its sshd must allow TCP forwarding "
                                 "(AllowTcpForwarding yes or remote)") from None
        return Tunnel("127.0.0.1", listener.get_port(), listener.close)

    async def close(self) -> None:
        """Close the connection; the next operation would open a new one."""
        self._bind_loop()  # a connection of another loop is only dropped
        conn, sftp = self._conn, self._sftp
        self._conn, self._sftp = None, None
        if sftp is not None:
            sftp.exit()
        if conn is not None:
            conn.close()
            with contextlib.suppress(Exception):
                await conn.wait_closed()


def _words(exc: BaseException) -> str:
    """An OS error's own words ("Connection refused"), without the errno decoration."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


# --- one SSHShell per host and options in a process -----------------------------------

_SHELLS: dict[tuple[object, ...], SSHShell] = {}


def shell_for(host: str, *, port: int | None = None, user: str | None = None,
              identity_files: Sequence[str] | None = None, known_hosts: str | None = None,
              accept_new_host_keys: bool = False, connect_timeout: float = 30.0,
              password: str | None = None) -> SSHShell:
    """The process's SSHShell for these settings, made on first request: every task of a
    run that names the same host shares its one connection."""
    key = (host, port, user, None if identity_files is None else tuple(identity_files),
           known_hosts, accept_new_host_keys, connect_timeout, password)
    shell = _SHELLS.get(key)
    if shell is None:
        shell = _SHELLS[key] = SSHShell(host, port=port, user=user, identity_files=identity_files,
                                        known_hosts=known_hosts,
                                        accept_new_host_keys=accept_new_host_keys,
                                        connect_timeout=connect_timeout, password=password)
    return shell


async def close_shells() -> None:
    """Close every shell ``shell_for`` made and forget them (end of a run, or of a test)."""
    shells = list(_SHELLS.values())
    _SHELLS.clear()
    for shell in shells:
        with contextlib.suppress(Exception):
            await shell.close()

