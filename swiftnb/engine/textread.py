"""Reading the text of a data file a script names (``readData``, ``readStructured``,
``extractInt``, trunk's ``read``, ``csv_mapper``'s list), safely.

A script may name any path: a named pipe an app is still to write, ``/dev/zero``, a
huge file, random bytes.  Reading here

* never blocks the event loop: a named pipe is read without blocking (the loop waits for
  its writer), a large regular file in a worker thread; a run waiting for a pipe still
  answers SIGINT and SIGTERM;
* takes bounded memory: a file may be at most :data:`MAX_FILE_BYTES`, a line at most
  :data:`MAX_LINE_BYTES` (both far above any real data file); beyond that, or for what
  is not a data file (a directory, a device, a socket), the read is refused with a
  message naming the file;
* accepts text only: UTF-8 without NUL bytes; anything else is refused with the line.

Errors are :class:`~swiftnb.engine.data.BuiltinError` whose message starts with the
file's name as the script gave it.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import select
import stat

from swiftnb.engine.data import BuiltinError

__all__ = ["MAX_FILE_BYTES", "MAX_LINE_BYTES", "read_text_file", "read_text_file_blocking"]

#: the largest data file read (64 MiB): a data file lists values, not bulk data
MAX_FILE_BYTES = 64 << 20
#: the longest line of a data file (1 MiB)
MAX_LINE_BYTES = 1 << 20
#: files up to this size are read on the loop at once; larger ones in a worker thread
_INLINE_BYTES = 1 << 16
_CHUNK = 1 << 16  # must not exceed MAX_LINE_BYTES (see _Text.feed)

_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFCHR: "a character device",
          stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB" if n >= 1 << 20 else f"{n} bytes"


class _Text:
    """Bytes of one file, checked as they come: size, line length, NUL bytes, UTF-8."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.size = 0
        self.line = 1      # the line the next byte belongs to
        self.run = 0       # bytes of that line seen so far
        self.parts: list[str] = []
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict")

    def refuse(self, line: int, why: str) -> BuiltinError:
        return BuiltinError(f"{self.shown}, line {line}: {why}")

    def feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_FILE_BYTES:
            raise BuiltinError(f"{self.shown}: more than {_mib(MAX_FILE_BYTES)}; a data file "
                               f"may be at most {_mib(MAX_FILE_BYTES)}")
        nul = chunk.find(b"\0")
        if nul >= 0:
            raise self.refuse(self.line + chunk.count(b"\n", 0, nul),
                              "a NUL byte: not a text file")
        first = chunk.find(b"\n")
        # a line wholly inside one chunk is shorter than the chunk, so below the limit:
        # only the line running across chunks is counted
        self.run += len(chunk) if first < 0 else first
        if self.run > MAX_LINE_BYTES:
            raise self.refuse(self.line, f"a line longer than {_mib(MAX_LINE_BYTES)}: "
                              "not a data file")
        if first >= 0:
            self.run = len(chunk) - chunk.rfind(b"\n") - 1
        try:
            self.parts.append(self.decoder.decode(chunk))
        except UnicodeDecodeError as e:
            raise self.refuse(self.line + chunk.count(b"\n", 0, e.start),
                              f"not UTF-8 text (byte 0x{chunk[e.start]:02x})") from None
        self.line += chunk.count(b"\n")

    def text(self) -> str:
        try:
            self.parts.append(self.decoder.decode(b"", final=True))
        except UnicodeDecodeError:
            raise self.refuse(self.line, "not UTF-8 text (it ends inside a character)") from None
        return "".join(self.parts)


def _cannot(shown: str, e: OSError) -> BuiltinError:
    return BuiltinError(f"cannot read {shown}: {e.strerror or e}")


def _check_kind(shown: str, st: os.stat_result) -> None:
    """Refuse what is not a regular file or a named pipe, and a file too large."""
    fmt = stat.S_IFMT(st.st_mode)
    if fmt in _KINDS:
        raise BuiltinError(f"{shown} is not a data file ({_KINDS[fmt]}): a data file is a "
                           "regular file or a named pipe")
    if fmt == stat.S_IFREG and st.st_size > MAX_FILE_BYTES:
        raise BuiltinError(f"{shown} is {_mib(st.st_size)}; a data file may be at most "
                           f"{_mib(MAX_FILE_BYTES)}")


def _open(path: str, shown: str) -> tuple[int, bool]:
    """(descriptor, is a pipe) of ``path``, checked before and after opening (a device
    is never opened; a file swapped for one in between is refused).  The open never
    waits: a pipe is opened non-blocking."""
    try:
        _check_kind(shown, os.stat(path))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        raise _cannot(shown, e) from None
    try:
        st = os.fstat(fd)
        _check_kind(shown, st)
    except BaseException:
        os.close(fd)
        raise
    return fd, stat.S_ISFIFO(st.st_mode)


def _read_all(fd: int, shown: str) -> str:
    """The whole text behind a blocking descriptor, checked (closes ``fd``)."""
    acc = _Text(shown)
    try:
        os.set_blocking(fd, True)
        while chunk := os.read(fd, _CHUNK):
            acc.feed(chunk)
    except OSError as e:
        raise _cannot(shown, e) from None
    finally:
        os.close(fd)
    return acc.text()


async def _read_pipe(fd: int, shown: str) -> str:
    """A named pipe's text, waiting on the loop for its writer and its data (closes
    ``fd``).  An empty read is the end only once a writer has come and gone (the pipe
    hung up); before any writer came, Linux reads nothing and the wait goes on."""
    loop = asyncio.get_running_loop()
    acc = _Text(shown)
    try:
        while True:
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                await _readable(loop, fd)
                continue
            except OSError as e:
                raise _cannot(shown, e) from None
            if chunk:
                acc.feed(chunk)
            elif _hung_up(fd):
                return acc.text()
            else:
                await _readable(loop, fd)
    finally:
        os.close(fd)


async def _readable(loop: asyncio.AbstractEventLoop, fd: int) -> None:
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, wake)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


def _hung_up(fd: int) -> bool:
    """Whether a pipe's last writer has gone (poll's POLLHUP, never set before a
    writer came)."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return any(ev & select.POLLHUP for _, ev in poller.poll(0))


async def read_text_file(path: str, shown: str) -> str:
    """The text of the data file at ``path`` (``shown``: its name in messages), without
    blocking the loop."""
    fd, pipe = _open(path, shown)
    if pipe:
        return await _read_pipe(fd, shown)
    try:
        small = os.fstat(fd).st_size <= _INLINE_BYTES
    except OSError as e:
        os.close(fd)
        raise _cannot(shown, e) from None
    if small:
        return _read_all(fd, shown)
    return await asyncio.to_thread(_read_all, fd, shown)


def read_text_file_blocking(path: str, shown: str) -> str:
    """:func:`read_text_file` for a caller outside the event loop (it may wait for a
    pipe's writer)."""
    fd, _ = _open(path, shown)
    return _read_all(fd, shown)
