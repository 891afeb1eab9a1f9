"""The coaster service's listening socket: admits only authenticated connections.

Why not ``asyncio.start_server``: its stream reader lets every connection buffer up to the
stream limit (the service's was 16 MB, for results with inline outputs) before anyone
knows who is connecting, with no bound on how many connect.  Here a connection is first
a bare socket whose one hello line is read into a buffer of at most ``HELLO_LIMIT``
bytes within ``HELLO_TIMEOUT`` seconds; at most ``MAX_PENDING`` connections may be in
that state (more are closed at once); only a hello that ``authenticate`` accepts turns
into a stream with the large line limit.  Running out of file descriptors on accept
(EMFILE and the like) pauses accepting, with one WARNING, instead of an asyncio
traceback per attempt.

The port: ``port`` if not 0, else the first free one of ``port_range`` (swift.conf's
``TCPPortRange``), else any free port.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from swiftnb.errors import SwiftnbError
from swiftnb.jsonobject import json_object
from swiftnb.scheduling.background import internal_error, start_background

__all__ = ["Listener", "ListenError", "HELLO_LIMIT", "HELLO_TIMEOUT", "MAX_PENDING",
           "LINE_LIMIT"]

#: bytes an unauthenticated connection may send: its hello line (~300 bytes) fits many times
HELLO_LIMIT = 4096
#: seconds from accept to a complete hello line
HELLO_TIMEOUT = 5.0
#: connections accepted whose hello has not come yet, at most
MAX_PENDING = 128
#: the longest line of an authenticated connection: a worker's "done" carries inline
#: outputs (worker.inline_outputs: up to 4 x 64 KiB, base64) and the tails of the app's
#: stdout and stderr; a client's "submit" a job spec
LINE_LIMIT = 1 << 24
#: accept errors that mean "out of resources": wait for a connection to close
_EXHAUSTED = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)

#: a hello -> None (admit) or why not (the reason is sent to the peer when it is not
#: None; "" closes the connection without an answer)
Authenticate = Callable[[dict[str, Any]], "str | None"]
#: an admitted connection's hello, reader and writer; returns when the connection ends
Handler = Callable[[dict[str, Any], asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


class ListenError(SwiftnbError, OSError):
    """The listener could not bind; the message names the address and the ports tried."""


def bind_socket(host: str, port: int, port_range: tuple[int, int] | None) -> socket.socket:
    """A listening, non-blocking socket on ``host``: see the module docstring for the port."""
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ListenError(f"cannot listen on {host}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    if port:
        ports: range | list[int] = [port]
    elif port_range is not None:
        ports = range(port_range[0], port_range[1] + 1)
    else:
        ports = [0]
    last: OSError | None = None
    for candidate in ports:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((address[0], candidate, *address[2:]))
            sock.listen(1024)
        except OSError as exc:
            sock.close()
            last = exc
            if exc.errno == errno.EADDRINUSE and len(ports) > 1:
                continue
            raise ListenError(f"cannot listen on {host}:{candidate or 'any port'} "
                              f"({exc.strerror or exc})") from None
        sock.setblocking(False)
        return sock
    assert port_range is not None and last is not None
    raise ListenError(f"cannot listen on {host}: every port of TCPPortRange "
                      f"{port_range[0]}-{port_range[1]} is in use") from None


class Listener:
    """One listening socket of a coaster service (see the module docstring)."""

    def __init__(self, host: str, port: int, port_range: tuple[int, int] | None, *,
                 authenticate: Authenticate, handler: Handler,
                 warn: Callable[[str], None]) -> None:
        self.host = host
        self.port = port
        self.port_range = port_range
        self.authenticate = authenticate
        self.handler = handler
        self.warn = warn
        self.pending = 0            # accepted, hello not read yet
        self.refused_busy = 0       # closed at once: too many pending
        self._sock: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._freed: asyncio.Event | None = None
        self._warned_exhausted = False

    async def start(self) -> int:
        """Bind and start accepting; returns the port."""
        self._sock = bind_socket(self.host, self.port, self.port_range)
        self.port = self._sock.getsockname()[1]
        self._freed = asyncio.Event()
        self._accepting = start_background(self._accept_loop(), self._tasks, lambda exc: self.warn(
            internal_error(f"accepting connections on {self.host}:{self.port} (no worker "
                           "can connect now)", exc)))
        return self.port

    async def close(self) -> None:
        """Stop accepting and end every connection (their handlers are cancelled)."""
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=2.0)

    async def _accept_loop(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._sock is not None and self._freed is not None
        while True:
            try:
                sock, _ = await loop.sock_accept(self._sock)
            except OSError as exc:
                if self._sock is None:
                    return
                if exc.errno in _EXHAUSTED:
                    if not self._warned_exhausted:
                        self._warned_exhausted = True
                        what = ("file descriptors" if exc.errno in (errno.EMFILE, errno.ENFILE)
                                else "memory")
                        self.warn(f"the coaster service on {self.host}:{self.port} is out of "
                                  f"{what} ({errno.errorcode.get(exc.errno or 0, '?')}: "
                                  f"{exc.strerror}); new connections wait until others "
                                  "close (raise 'ulimit -n'?)")
                    self._freed.clear()
                    with contextlib.suppress(asyncio.TimeoutError):
                        await asyncio.wait_for(self._freed.wait(), 1.0)
                else:  # a connection aborted before it was accepted, and the like
                    await asyncio.sleep(0.05)
                continue
            if self.pending >= MAX_PENDING:
                self.refused_busy += 1
                sock.close()
                continue
            self.pending += 1
            task = loop.create_task(self._connection(sock))
            self._tasks.add(task)
            task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if self._freed is not None:
            self._freed.set()
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            self.warn(f"coaster service connection error: {type(exc).__name__}: {exc}")

    async def _connection(self, sock: socket.socket) -> None:
        writer: asyncio.StreamWriter | None = None
        admitted = False
        try:
            try:
                hello = await asyncio.wait_for(_read_hello(sock), HELLO_TIMEOUT)
            except (TimeoutError, OSError):
                hello = None
            finally:
                self.pending -= 1
            if hello is None:
                return
            why = self.authenticate(hello)
            if why is not None:
                if why:
                    with contextlib.suppress(OSError, asyncio.TimeoutError):
                        await asyncio.wait_for(asyncio.get_running_loop().sock_sendall(
                            sock, _line({"op": "refused", "reason": why})), HELLO_TIMEOUT)
                return
            _tune(sock)
            reader, writer = await _streams(sock)
            admitted = True
            await self.handler(hello, reader, writer)
        except asyncio.CancelledError:
            pass
        finally:
            if writer is not None:
                with contextlib.suppress(Exception):
                    writer.close()
            elif not admitted:
                sock.close()


async def _read_hello(sock: socket.socket) -> dict[str, Any] | None:
    """The first line, read into at most HELLO_LIMIT bytes; None if it is not a JSON
    object, is too long, or anything follows it (a peer waits for the answer)."""
    loop = asyncio.get_running_loop()
    buf = b""
    while b"\n" not in buf:
        if len(buf) >= HELLO_LIMIT:
            return None
        chunk = await loop.sock_recv(sock, HELLO_LIMIT - len(buf))
        if not chunk:
            return None
        buf += chunk
    line, _, rest = buf.partition(b"\n")
    return None if rest.strip() else json_object(line)


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


def _tune(sock: socket.socket) -> None:
    """No Nagle delay; notice a vanished remote node within about a minute."""
    with contextlib.suppress(OSError, AttributeError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, 30)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, 10)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)


async def _streams(sock: socket.socket) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """An accepted socket as asyncio streams with the large line limit."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    protocol = asyncio.StreamReaderProtocol(reader)
    transport, _ = await loop.connect_accepted_socket(lambda: protocol, sock)
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
