"""Read Swift logs (Swift/K 0.96 and swiftnb's own) back into the event schema.

A log is read whole and parsed with whole-array and whole-column operations, never a
Python loop per line.  A record is a time-stamped line plus the lines without a time
stamp that continue it (the configuration dump, script source, exception traces).
Pieces of the log go through one of two front ends that give the same columns: the
array front end (:mod:`swiftnb.logs.fastparse`, numpy on the bytes) or, for a piece it
does not model exactly, one regular expression over the text.  The back end then
assigns kinds with per-category operations and extracts the fields of each tag with
one regular-expression pass over the rows of that tag.

The result is a DataFrame with one row per record:

``line`` (1-based line of the record in the file), ``time`` (float epoch seconds, true
UTC: the zone offset of each line is applied), ``kind`` (an event kind of
:data:`swiftnb.events.KINDS`, ``MESSAGE`` for free text), ``level``, ``logger``,
``text`` (the message, for rows without a tag), ``tag`` (the first upper-case word of the
message, also for tags swiftnb does not model, such as ``SCOPE`` or ``PROBE``), and one
column per field name (``jobid``, ``taskid``, ``status``, ``workerid``, ``host``, ``id``,
``blockid``...), empty where a kind has no such field.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import mmap
import os
import re
import stat
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from operator import methodcaller
from typing import IO, Any, Protocol, cast

import numpy as np
import pandas as pd

from swiftnb.errors import SwiftnbError
from swiftnb.events import KINDS, Event
from swiftnb.logs.fastparse import Front, front_from_bytes
from swiftnb.logs.writer import stream_name

__all__ = [
    "read_log",
    "read_text",
    "check_damage",
    "check_head",
    "open_log_path",
    "COMPRESSION_MAGIC",
    "parse_text",
    "read_events",
    "split_runs",
    "to_events",
    "LogFormatError",
    "LogWarning",
    "FIELD_PATTERNS",
]


class LogFormatError(SwiftnbError, ValueError):
    """The input is not a Swift log at all (no time-stamped line); says what was found."""


class LogWarning(SwiftnbError, UserWarning):
    """A log is readable but damaged: truncated, garbage before the first record..."""


_STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
#: one record: time stamp, zone, level, logger, optional TAG, rest of the message and
#: every following line that does not start with a time stamp.
_RECORD = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}(?:[+-]\d{4}|Z)? ?\w+ +\S+) ?"
    r"(?:([A-Z][A-Z0-9_]+)(?: |$))?"
    r"([^\n]*(?:\n(?!" + _STAMP + r")[^\n]*)*)",
    re.M,
)
_STAMP_AT_START = re.compile(_STAMP)

#: Fields of each tag, as Swift 0.96 (and the swiftnb writer) logs them.  Tags not
#: listed here get the generic ``key=value`` extraction.
FIELD_PATTERNS: dict[str, str] = {
    "JOB_INIT": r"^jobid=(?P<jobid>\S+)(?: tr=(?P<tr>\S+))?",
    "JOB_SITE_SELECT": r"^jobid=(?P<jobid>\S+)",
    "JOB_END": r"^jobid=(?P<jobid>\S+)",
    "JOB_CANCELED": r"^jobid=(?P<jobid>\S+)",
    "JOB_RESTARTED": r"^jobid=(?P<jobid>\S+)",
    "JOB_CACHED": (r"^jobid=(?P<jobid>\S+) tr=(?P<tr>\S+)(?: restored=(?P<restored>\S+))?"
                   r"(?: reason=(?P<reason>.*))?$"),
    "JOB_NOT_CACHED": r"^jobid=(?P<jobid>\S+) tr=(?P<tr>\S+)(?: reason=(?P<reason>.*))?$",
    "WAITING": (r"^subject=(?P<subject>\S+) id=(?P<id>\S*) site=(?P<site>\S*) "
                r"reason=(?P<reason>\S*)(?: lrm=(?P<lrm>\S+) job=(?P<job>\S+))?"
                r"(?: expected=(?P<expected>\S+))?"
                r"(?: detail=(?P<detail>[^\n]*))?$"),
    "THREAD_ASSOCIATION": (
        r"^jobid=(?P<jobid>\S+)(?: thread=(?P<thread>\S+))?(?: host=(?P<host>\S+))?"
        r"(?: thread=(?P<thread2>\S+))?(?: replicationGroup=(?P<replicationGroup>\S+))?"
    ),
    "JOB_START": (
        r"^jobid=(?P<jobid>\S+) tr=(?P<tr>\S+)(?: arguments=(?P<arguments>.*?))?"
        r"(?: tmpdir=(?P<tmpdir>\S+))?(?: host=(?P<host>\S+))?$"
    ),
    "JOB_TASK": (
        r"^jobid=(?P<jobid>\S+) taskid=(?P<taskid>\S+)(?: exec=(?P<exec>\S*))?"
        r"(?: dir=(?P<dir>\S*))?(?: args=(?P<args>.*))?"
    ),
    "TASK_STATUS_CHANGE": (
        r"^taskid=(?P<taskid>\S+) status=(?P<status>\d+)(?: workerid=(?P<workerid>\S+))?"
        r"(?: (?P<message>.+))?"
    ),
    "APPLICATION_EXCEPTION": r"^jobid=(?P<jobid>\S+)(?: - Application exception: (?P<message>.*))?",
    "END_SUCCESS": r"^(?:thread=(?P<thread>\S+) )?(?:jobid=(?P<jobid>\S+) )?tr=(?P<tr>\S+)",
    "END_FAILURE": r"^(?:thread=(?P<thread>\S+) )?(?:jobid=(?P<jobid>\S+) )?tr=(?P<tr>\S+)",
    "PROCEDURE": r"^line=(?P<line_>\S+) thread=(?P<thread>\S+) name=(?P<name>\S+)",
    "PROCEDURE_END": r"^line=(?P<line_>\S+) thread=(?P<thread>\S+) name=(?P<name>\S+)",
    "FOREACH_IT_START": r"^line=(?P<line_>\S+) thread=(?P<thread>\S+)",
    "FOREACH_IT_END": r"^line=(?P<line_>\S+) thread=(?P<thread>\S+)",
    "BLOCK_REQUESTED": (
        r"^id=(?P<id>[^,\s]+)(?:,? cores=(?P<cores>\d*))?(?:,? coresPerWorker=(?P<coresPerWorker>\d*))?"
        r"(?:,? walltime=(?P<walltime>\d*))?"
    ),
    "BLOCK_ACTIVE": r"^id=(?P<id>[^,\s]+)",
    "BLOCK_SHUTDOWN": r"^id=(?P<id>[^,\s]+)",
    "BLOCK_DONE": r"^id=(?P<id>[^,\s]+)",
    "BLOCK_FAILED": r"^id=(?P<id>[^,\s]+)",
    "BLOCK_UTILIZATION": r"^id=(?P<id>[^,\s]+),? u=(?P<u>[^,\s]+)",
    "WORKER_ACTIVE": (
        r"^blockid=(?P<blockid>\S+) id=(?P<id>\S+)(?: node=(?P<node>\S+))?(?: cores=(?P<cores>\d+))?"
    ),
    "WORKER_LOST": r"^blockid=(?P<blockid>\S+) id=(?P<id>\S+)",
    "WORKER_SHUTDOWN": r"^blockid=(?P<blockid>\S+) id=(?P<id>\S+)",
    "CONTACT_SELECTED": r"^host=(?P<host>[^,\s]+),? score=(?P<score>\S+)",
}
_GENERIC_KV = re.compile(r"(\w+)=([^\s,]*)")
#: tags of the stream that carry key=value fields
_TAGGED_KINDS = frozenset(KINDS) - {
    "RUN_START", "RUN_SUCCESS", "RUN_FAILURE", "CONFIG", "MESSAGE", "TRACE", "WARNING",
    "PROGRESS", "PLANNER",
}
#: field names that would clash with the base columns
_RENAME = {"line_": "procline", "line": "procline", "time": "time_", "kind": "kind_",
           "level": "level_", "logger": "logger_", "tag": "tag_", "text": "text_"}
#: the order of the field columns in the table (others follow, by name)
_FIELD_ORDER = {name: i for i, name in enumerate((
    "jobid", "tr", "taskid", "status", "workerid", "message", "host", "thread", "procline",
    "name", "replicationGroup", "arguments", "tmpdir", "exec", "dir", "args", "id",
    "blockid", "node", "cores", "coresPerWorker", "walltime", "u", "score"))}
#: columns that hold integers
_INT_COLUMNS = ("status",)


# -- opening -------------------------------------------------------------------------
#: the longest line a log may hold (bytes): a longer one is left empty (its newline
#: kept, so line numbers hold) and counted in a warning
MAX_LINE = 1 << 20
#: a log shows a Swift record within its first this many (decompressed) bytes, or it is
#: refused: an endless line, a binary file or a device is not read to its end
HEAD_BYTES = 4 << 20
#: a compressed log that expands more than MAX_RATIO times, past BOMB_FLOOR bytes, is
#: refused (real Swift logs expand 10-50 times; a compression bomb 1000 times and more)
MAX_RATIO = 200
BOMB_FLOOR = 32 << 20
#: bytes read (and decompressed) at a time
READ_CHUNK = 4 << 20

_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
#: how a compressed log starts
COMPRESSION_MAGIC = tuple(magic for magic, _ in _MAGIC)


class LineGuard:
    """Passes a log's bytes on in whole lines, with memory bounded by MAX_LINE: a line
    longer than that is left empty (skipped, counted), a NUL byte refuses the input
    (a binary file, zero-filled blocks, /dev/zero are not logs)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.offset = 0          # bytes seen
        self.lines = 0           # newlines passed on
        self.skipped = 0         # lines over MAX_LINE
        self.first_skipped = 0   # 1-based line of the first of them
        self._carry = b""        # the current line, not yet ended (at most MAX_LINE)
        self._skipping = False   # inside a line over MAX_LINE

    def feed(self, chunk: bytes) -> bytes:
        """The complete lines that ``chunk`` ends (over-long ones emptied)."""
        self._refuse_nul(chunk)
        self.offset += len(chunk)
        if self._skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                return b""
            chunk, self._skipping = chunk[nl:], False  # its newline ends the skipped line
        data = self._carry + chunk if self._carry else chunk
        cut = data.rfind(b"\n") + 1
        body, tail = data[:cut], data[cut:]
        body = self._empty_long_lines(body)   # before the tail: its lines come first
        if len(tail) > MAX_LINE:
            self._skip(self.lines + body.count(b"\n") + 1)
            self._skipping, tail = True, b""
        self._carry = tail
        self.lines += body.count(b"\n")
        return body

    def finish(self) -> bytes:
        """The last line, if the input does not end with a newline."""
        rest, self._carry = self._carry, b""
        return rest

    def whole(self, data: bytes) -> bytes:
        """All of a log's text at once (a fresh guard): what :meth:`feed` and
        :meth:`finish` give, but ``data`` itself unless a line is too long."""
        self._refuse_nul(data)
        self.offset = len(data)
        end = data.rfind(b"\n") + 1     # the last line without a newline starts here
        pos, parts, kept = 0, [], 0
        while end - pos > MAX_LINE:
            nl = data.rfind(b"\n", pos, pos + MAX_LINE + 1)
            if nl >= 0:
                pos = nl + 1
                continue
            self._skip(data.count(b"\n", 0, pos) + 1)
            parts.append(data[kept:pos])
            pos = kept = data.find(b"\n", pos)  # keep the newline: line numbers hold
        if len(data) - end > MAX_LINE:
            self._skip(data.count(b"\n", 0, end) + 1)
            parts.append(data[kept:end])
            kept = len(data)
        if not parts:
            return data
        parts.append(data[kept:])
        return b"".join(parts)

    def _refuse_nul(self, chunk: bytes) -> None:
        nul = chunk.find(b"\x00")
        if nul >= 0:
            raise LogFormatError(
                f"{self.name}: not a Swift log: binary data (a NUL byte at byte "
                f"{self.offset + nul:,} of its text)")

    def _skip(self, line: int) -> None:
        if not self.skipped:
            self.first_skipped = line
        self.skipped += 1

    def _empty_long_lines(self, body: bytes) -> bytes:
        """``body`` with every line over MAX_LINE emptied; steps a window of MAX_LINE
        bytes from newline to newline, so a normal log costs a few calls per chunk."""
        pos, parts, kept = 0, [], 0
        while len(body) - pos > MAX_LINE:
            nl = body.rfind(b"\n", pos, pos + MAX_LINE + 1)
            if nl >= 0:
                pos = nl + 1
                continue
            end = body.find(b"\n", pos)
            self._skip(self.lines + body.count(b"\n", 0, pos) + 1)
            parts.append(body[kept:pos])
            pos = kept = end  # keep the newline: line numbers hold
        if not parts:
            return body
        parts.append(body[kept:])
        return b"".join(parts)

    def warn(self) -> None:
        if self.skipped:
            warnings.warn(
                f"{self.name}:{self.first_skipped}: {self.skipped} line(s) longer than "
                f"{MAX_LINE >> 20} MiB skipped", LogWarning, stacklevel=4)


class _Readable(Protocol):
    """What the reading loop needs of a stream: plain, or a decompressor's."""

    def read(self, size: int = -1, /) -> bytes: ...


class _CountingReader:
    """A binary file's reads, counted (the compressed bytes behind a decompressor)."""

    def __init__(self, fh: IO[bytes], head: bytes = b"") -> None:
        self._fh, self._head, self.count = fh, head, 0

    def read(self, size: int = -1) -> bytes:
        if self._head:  # the bytes read to recognise the compression, given back
            cut = len(self._head) if size < 0 else size
            data, self._head = self._head[:cut], self._head[cut:]
        else:
            data = self._fh.read(size)
        if isinstance(data, str):  # a text stream given to read_log
            data = data.encode("utf-8")
        self.count += len(data)
        return data


def open_log_path(name: str) -> IO[bytes]:
    """A log file opened for reading; what is not a regular file is refused before it
    is opened (a FIFO would block, a device never ends)."""
    try:
        mode = os.stat(name).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"log file not found: {name}") from None
    if stat.S_ISDIR(mode):
        raise LogFormatError(f"{name} is a directory, not a log file")
    if not stat.S_ISREG(mode):
        raise LogFormatError(f"{name}: not a Swift log: not a regular file (a device, FIFO "
                             "or socket)")
    return open(name, "rb")


def _decompressing(raw: _CountingReader) -> tuple[_Readable, str | None]:
    """(a reader of the decompressed bytes, the compression's name or None)."""
    head = raw.read(6)
    raw._head, raw.count = head, 0
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            # reading forward, the decompressors call only read() on the file object they
            # are given (typeshed asks gzip's for seek() too and lzma's for all of IO)
            compressed = cast(IO[bytes], raw)
            if kind == "gzip":
                return gzip.GzipFile(fileobj=compressed, mode="rb"), kind
            return (bz2.BZ2File if kind == "bz2" else lzma.LZMAFile)(compressed, "rb"), kind
    return raw, None


_DAMAGE = (OSError, EOFError, lzma.LZMAError, zlib.error)


def _read_chunks(stream: _Readable, kind: str | None, name: str,
                 have: Callable[[], int]) -> Iterator[bytes]:
    """Chunks of decompressed text; damage in compressed data ends them with a warning
    (what precedes it is kept) or, before any text, refuses the file."""
    while True:
        try:
            chunk = stream.read(READ_CHUNK)
        except _DAMAGE as exc:
            if kind is None:
                raise
            what = "is truncated" if isinstance(exc, EOFError) else f"is damaged ({exc})"
            if not have():
                raise LogFormatError(f"{name}: compressed file {what}, before any text of "
                                     "its own") from None
            warnings.warn(f"{name}: compressed file {what}; read what precedes it",
                          LogWarning, stacklevel=5)
            return
        if not chunk:
            return
        yield chunk


def _read_bytes(source: str | os.PathLike[str] | IO[Any]) -> tuple[bytes | bytearray, str]:
    """A log's text, with bounded memory whatever the input (see :class:`LineGuard`,
    HEAD_BYTES, MAX_RATIO): an uncompressed file in one read (:func:`_read_plain`),
    anything else in chunks."""
    if not isinstance(source, (str, os.PathLike)):
        name = stream_name(source) or "<stream>"
        return _read_stream(source, name), name
    name = os.fspath(source)
    with open_log_path(name) as fh:
        first = fh.read(READ_CHUNK)
        if not first.startswith(tuple(magic for magic, _ in _MAGIC)):
            return _read_plain(fh, first, name), name
        fh.seek(0)
        return _read_stream(fh, name), name


def _read_stream(fh: IO[Any], name: str) -> bytearray:
    raw = _CountingReader(fh)
    stream, kind = _decompressing(raw)
    return _collect(stream, raw, kind, name)


def _no_record(name: str, offset: int) -> LogFormatError:
    return LogFormatError(
        f"{name}: not a Swift log: no line starts with a time stamp like "
        f"'2016-01-25 01:08:24,537+0000 INFO  Loader ...' in its first "
        f"{offset >> 20} MiB")


def _read_plain(fh: IO[bytes], first: bytes, name: str) -> bytes:
    """An uncompressed regular file whose first READ_CHUNK bytes are ``first``.

    Why not the chunks of :func:`_collect`: a chunk costs copies (the carried line joined
    to it, its whole lines cut out of it, appended to the result) and a scan of each
    line bound, which made a third of a 100 MB read.  Here those first bytes are checked
    as :func:`_collect` checks its first chunk, so a large file that is not a log is
    refused before the rest is read; then the file is read in one piece and its lines
    are checked in bulk (:meth:`LineGuard.whole`): the same text and warnings, and no
    copy unless a line is too long."""
    if len(first) >= HEAD_BYTES:
        probe = LineGuard(name)
        if _RECORD_START_B.search(probe.feed(first)) is None:
            raise _no_record(name, probe.offset)
        fh.seek(0)
        data = fh.read()
    else:
        data = first
    guard = LineGuard(name)
    data = guard.whole(data)
    guard.warn()
    return data


def _collect(stream: _Readable, raw: _CountingReader, kind: str | None, name: str) -> bytearray:
    guard = LineGuard(name)
    out = bytearray()
    found = False
    for chunk in _read_chunks(stream, kind, name, lambda: guard.offset):
        out += guard.feed(chunk)
        if not found:
            found = _RECORD_START_B.search(out) is not None
            if not found and guard.offset >= HEAD_BYTES:
                raise _no_record(name, guard.offset)
        if kind and guard.offset > BOMB_FLOOR and guard.offset > MAX_RATIO * raw.count:
            raise LogFormatError(
                f"{name}: not a Swift log: its {kind} data expands more than {MAX_RATIO} times "
                f"(past {guard.offset >> 20} MiB from {raw.count:,} bytes): a "
                "compression bomb")
    out += guard.finish()
    guard.warn()
    return out


# -- parsing -------------------------------------------------------------------------
def read_log(source: str | os.PathLike[str] | IO[Any], *, strict: bool = False) -> pd.DataFrame:
    """Read a Swift log (plain, .gz, .bz2, .xz, or an open file) into the event table.

    Damage (garbage before the first record, a truncated last line) is reported with a
    :class:`LogWarning` and the readable part is returned; ``strict=True`` turns those
    warnings into :class:`LogFormatError`.  A file with no Swift log line at all raises
    :class:`LogFormatError`.
    """
    data, name = read_text(source)
    if strict:
        with warnings.catch_warnings():
            warnings.simplefilter("error", LogWarning)
            try:
                return parse_bytes(data, name=name)
            except LogWarning as exc:
                raise LogFormatError(str(exc)) from None
    return parse_bytes(data, name=name)


def read_text(source: str | os.PathLike[str] | IO[Any]) -> tuple[bytes | bytearray, str]:
    """A log's text as bytes (decompressed, bounded as :func:`read_log` bounds it, CRLF
    line ends made LF) and the name to report it by."""
    data, name = _read_bytes(source)
    if b"\r\n" in data[:65536]:  # a log that went through Windows
        data = data.replace(b"\r\n", b"\n")
    return data, name


#: logs longer than this (bytes) are parsed in pieces (bounds the intermediates' memory)
CHUNK_CHARS = 16 << 20
#: the array front end (fastparse); False forces the regular expression everywhere
USE_FAST_FRONT = True


_RECORD_START_B = re.compile(rb"^" + _STAMP.encode(), re.M)


def parse_text(text: str, *, name: str = "<log>", first_line: int = 1,
               check: bool = True) -> pd.DataFrame:
    """Parse log text (whole records) into the event table; see the module docstring."""
    return parse_bytes(text.encode("utf-8", errors="replace"), name=name,
                       first_line=first_line, check=check)


def parse_bytes(data: bytes | bytearray, *, name: str = "<log>", first_line: int = 1,
                check: bool = True) -> pd.DataFrame:
    """Parse a log's bytes (UTF-8) into the event table.

    Pieces of about :data:`CHUNK_CHARS` bytes, cut before a record, go through the array
    front end (:mod:`swiftnb.logs.fastparse`); a piece it does not model exactly goes
    through the regular expression instead.  Both give the same columns.
    """
    # the newline that ends the last line is not a continuation line of its record
    # (positions, not a copy: the data may be 100 MB)
    limit = len(data) - 1 if data.endswith(b"\n") else len(data)
    first = _RECORD_START_B.search(data, 0, limit)
    if first is None:
        if data.strip():
            lead = data.lstrip().splitlines()[0][:80].decode("utf-8", errors="replace")
            raise LogFormatError(
                f"{name}: not a Swift log: no line starts with a time stamp like "
                f"'2016-01-25 01:08:24,537+0000 INFO  Loader ...' (first line: {lead!r})")
        return _empty_frame()
    if check:
        check_damage(data, name)
    pos = first.start()
    line = first_line + data.count(b"\n", 0, pos)
    pieces: list[_Piece] = []
    while pos < limit:
        end = limit
        if pos + CHUNK_CHARS < limit:
            nxt = _RECORD_START_B.search(data, pos + CHUNK_CHARS, limit)
            if nxt is not None:
                end = nxt.start() - 1  # the newline before the next record
        chunk = data[pos:end]
        newlines = chunk.count(b"\n")
        front = front_from_bytes(chunk, line) if USE_FAST_FRONT else None
        if front is None:
            text = chunk.decode("utf-8", errors="replace")
            records = _RECORD.findall(text)
            del text
            if records:
                # lines that are not records: continuation lines (or stray lines skipped)
                front = _front_regex(records, line, newlines + 1 - len(records))
            del records
        del chunk
        if front is not None:
            pieces.append(_finish(front))
        del front
        line += newlines + 1
        pos = end + 1
    if not pieces:
        return _empty_frame()
    return _assemble(pieces, name)


@dataclass
class _Piece:
    """The columns of one piece of a log, before they become one DataFrame."""

    n: int
    line: np.ndarray
    time: np.ndarray
    cats: dict[str, tuple[np.ndarray, np.ndarray]]  # column -> (codes, uniques)
    text: np.ndarray
    fields: dict[str, tuple[np.ndarray, np.ndarray]]  # column -> (rows, values)


def _assemble(pieces: list[_Piece], name: str) -> pd.DataFrame:
    """One DataFrame from the pieces: categories merged by code maps, field columns
    filled slice by slice (no per-row work)."""
    total = sum(p.n for p in pieces)
    starts = np.cumsum([0] + [p.n for p in pieces])
    time = np.concatenate([p.time for p in pieces])
    line = np.concatenate([p.line for p in pieces])
    data: dict[str, Any] = {"line": line, "time": time}
    for col in ("kind", "level", "logger", "tag"):
        merged: dict[str, int] = {}
        codes = np.empty(total, dtype="int64")
        for p, start in zip(pieces, starts):
            piece_codes, uniques = p.cats[col]
            remap = np.array([merged.setdefault(u, len(merged)) for u in uniques], dtype="int64")
            codes[start:start + p.n] = remap[piece_codes] if len(remap) else piece_codes
        # categories in sorted order, whichever front end and piece order made them
        names = np.array(list(merged), dtype=object)
        order = np.argsort(names, kind="stable")
        rank = np.empty(len(order), dtype="int64")
        rank[order] = np.arange(len(order))
        data[col] = pd.Categorical.from_codes(
            rank[codes] if len(rank) else codes,
            categories=pd.Index(names[order], dtype=object))
    data["text"] = pd.Series(np.concatenate([p.text for p in pieces]), dtype=object, copy=False)
    field_names: list[str] = []
    for p in pieces:
        field_names.extend(c for c in p.fields if c not in field_names)
    field_names.sort(key=lambda c: (_FIELD_ORDER.get(c, len(_FIELD_ORDER)), c))
    for col in field_names:
        values = np.full(total, None, dtype=object)
        for p, start in zip(pieces, starts):
            if col in p.fields:
                rows, vals = p.fields[col]
                values[rows + start] = vals
        data[col] = _to_int(values) if col in _INT_COLUMNS else pd.Series(
            _interned(values), dtype=object, copy=False)
    out = pd.DataFrame(data, copy=False)
    bad = np.isnan(time)
    if bad.any():
        first_bad = int(line[bad][0])
        warnings.warn(f"{name}:{first_bad}: {int(bad.sum())} records with an impossible date "
                      "ignored", LogWarning, stacklevel=3)
        out = out[~bad].reset_index(drop=True)
    return out


def _interned(values: np.ndarray) -> np.ndarray:
    """``values`` with equal strings as one object: a job id is on five lines of a call,
    a task id on three, a site name on every job's; one object each holds a large log's
    table in less memory, and hashes once in the tables' joins."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if len(uniques) * 2 > len(values):  # mostly distinct (messages): nothing to share
        return values
    out = np.asarray(uniques, dtype=object).take(codes) if len(uniques) else values
    out[codes < 0] = None
    return out


def check_damage(data: bytes | bytearray, name: str) -> None:
    """Warn about text before the first record and a last line cut short."""
    check_head(data, name, stacklevel=5)
    if data and not data.endswith(b"\n"):
        tail = data[data.rfind(b"\n") + 1:][:60].decode("utf-8", errors="replace")
        line = data.count(b"\n") + 1
        warnings.warn(
            f"{name}:{line}: log ends in the middle of a line ({tail!r}); "
            "it is truncated or still being written", LogWarning, stacklevel=4)


def check_head(data: bytes | bytearray | mmap.mmap, name: str, *, stacklevel: int = 4) -> None:
    """Warn about text before the first record (of a log read or mapped)."""
    head = data[:200].lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    if head and not _STAMP_AT_START.match(head):
        lead = head.splitlines()[0][:60] if head.strip() else "blank lines"
        warnings.warn(f"{name}:1: text before the first log record ignored ({lead!r})",
                      LogWarning, stacklevel=stacklevel)


def _empty_frame() -> pd.DataFrame:
    return pd.DataFrame({
        "line": pd.Series([], dtype="int64"), "time": pd.Series([], dtype="float64"),
        "kind": pd.Series([], dtype=object), "level": pd.Series([], dtype=object),
        "logger": pd.Series([], dtype=object), "tag": pd.Series([], dtype=object),
        "text": pd.Series([], dtype=object),
    })


def _epoch_seconds(uniques: np.ndarray) -> np.ndarray:
    """Epoch seconds of distinct ``yyyy-MM-dd HH:mm:ss,SSS[+zzzz]`` stamps, without a
    Python loop: stamps are sliced as fixed-width unicode arrays, each distinct second is
    parsed once, milliseconds and zones come from the character codes."""
    fixed = np.asarray(uniques, dtype="U28")
    chars = fixed.view(np.uint32).reshape(len(fixed), 28).astype(np.int64)
    ms = (chars[:, 20] - 48) * 100 + (chars[:, 21] - 48) * 10 + (chars[:, 22] - 48)
    sec_codes, sec_uniques = pd.factorize(fixed.astype("U19"), sort=False)
    parsed = pd.to_datetime(pd.Index(sec_uniques, dtype=object), format="%Y-%m-%d %H:%M:%S",
                            errors="coerce")
    secs = parsed.as_unit("s").asi8.astype("float64")
    secs[np.asarray(parsed.isna())] = np.nan
    result = secs[sec_codes] + ms / 1000.0
    sign = chars[:, 23]
    zoned = (sign == ord("+")) | (sign == ord("-"))
    if zoned.any():
        digits = chars[:, 24:28] - 48
        offset = (digits[:, 0] * 10 + digits[:, 1]) * 3600 + (digits[:, 2] * 10 + digits[:, 3]) * 60
        offset = np.where(sign == ord("-"), -offset, offset)
        result = result - np.where(zoned, offset, 0)
    return result


def _kind_of_tag(tag: str) -> str:
    if tag in _TAGGED_KINDS or tag == "RUN_START":
        return tag
    if tag == "SWIFT_CONFIGURATION":
        return "CONFIG"
    if tag == "PLANNER":
        return "PLANNER"
    return "MESSAGE"


def _split_heads(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct heads ``'2016-01-25 01:08:24,537+0000 INFO  Loader'`` -> epoch seconds,
    level and logger of each, with array operations (the few distinct level+logger
    pairs are split in Python)."""
    time = _epoch_seconds(heads)
    fixed = np.asarray(heads, dtype=str)
    width = fixed.dtype.itemsize // 4
    chars = fixed.view(np.uint32).reshape(len(fixed), width)
    sign = chars[:, 23] if width > 23 else np.zeros(len(fixed), np.uint32)
    stamp_len = np.where((sign == ord("+")) | (sign == ord("-")), 28,
                         np.where(sign == ord("Z"), 24, 23))
    rest = np.empty(len(fixed), dtype=object)
    for k in np.unique(stamp_len):
        idx = np.flatnonzero(stamp_len == k)
        sub = np.ascontiguousarray(fixed[idx])
        tail = np.ndarray(shape=(len(idx),), dtype=f"<U{width - k}", buffer=sub,
                          offset=4 * int(k), strides=sub.strides)
        rest[idx] = tail.astype(object)
    codes, uniques = pd.factorize(rest, sort=False)
    split = [u.split(None, 1) + [""] for u in uniques]
    levels = np.array([p[0] for p in split], dtype=object)[codes]
    loggers = np.array([p[1].strip() for p in split], dtype=object)[codes]
    return time, levels, loggers


def _front_regex(records: list[tuple[str, ...]], first_line: int,
                 continuation_lines: int) -> Front:
    """The columns of a piece parsed by the regular expression (the general path)."""
    n = len(records)
    table = np.empty((n, 3), dtype=object)
    table[:] = records  # one C pass; cheaper than zip(*records)
    del records
    heads = np.ascontiguousarray(table[:, 0])
    tags = np.ascontiguousarray(table[:, 1])
    bodies = np.ascontiguousarray(table[:, 2])
    del table
    head_codes, head_uniques = pd.factorize(heads, sort=False)
    del heads
    head_time, head_level, head_logger = _split_heads(np.asarray(head_uniques, dtype=object))
    time = head_time[head_codes]
    level_codes, level_uniques = pd.factorize(head_level[head_codes], sort=False)
    logger_codes, logger_uniques = pd.factorize(head_logger[head_codes], sort=False)
    rest = bodies
    # continuation lines: rare (configuration dump, script source, stack traces)
    line = first_line + np.arange(n, dtype="int64")
    if continuation_lines:
        # find the few newlines inside records: positions in the joined bodies -> rows
        lengths = np.fromiter(map(len, rest), np.int64, n) + 1
        starts = np.cumsum(lengths) - lengths
        joined = "\x00".join(rest)
        at = np.fromiter((m.start() for m in re.finditer("\n", joined)), np.int64)
        del joined
        extra = np.bincount(np.searchsorted(starts, at, side="right") - 1, minlength=n)
        line[1:] += np.cumsum(extra)[:-1]
    tag_codes, tag_uniques = pd.factorize(tags, sort=False)
    return Front(n=n, line=line, time=time,
                 level=(level_codes, np.asarray(level_uniques, dtype=object)),
                 logger=(logger_codes, np.asarray(logger_uniques, dtype=object)),
                 tag=(tag_codes, np.asarray(tag_uniques, dtype=object)), rest=rest)


def _finish(front: Front) -> _Piece:
    """Kinds, text and fields of a piece: the same for both front ends."""
    n, line, time, rest = front.n, front.line, front.time, front.rest
    level_codes, level_uniques = front.level
    logger_codes, logger_uniques = front.logger
    tag_codes, tag_uniques = front.tag
    tag_kind = np.array([_kind_of_tag(t) for t in tag_uniques], dtype=object)
    kind = tag_kind[tag_codes]

    def logger_rows(logger_name: str) -> np.ndarray:
        hit = np.flatnonzero(np.asarray(logger_uniques, dtype=object) == logger_name)
        return np.flatnonzero(logger_codes == hit[0]) if len(hit) else np.zeros(0, "int64")

    # run-level kinds that are not tags
    loader = logger_rows("Loader")
    if len(loader):
        done = np.fromiter(map(methodcaller("startswith", "Swift finished with"), rest[loader]),
                           bool, len(loader))
        ok = np.fromiter(map(methodcaller("startswith", "Swift finished with no errors"),
                             rest[loader]), bool, len(loader))
        kind[loader[done & ok]] = "RUN_SUCCESS"
        kind[loader[done & ~ok]] = "RUN_FAILURE"
    for logger_name, logger_kind in (("trace", "TRACE"), ("Warnings", "WARNING"),
                                     ("BlockQueueProcessor", "PLANNER")):
        kind[logger_rows(logger_name)] = logger_kind
    ticker = logger_rows("RuntimeStats$ProgressTicker")
    if len(ticker):
        heap = np.fromiter(map(methodcaller("startswith", "HeapMax:"), rest[ticker]), bool,
                           len(ticker))
        kind[ticker[~heap]] = "PROGRESS"

    kind_codes, kind_uniques = pd.factorize(kind, sort=False)
    tagged_kinds = np.array([k in _TAGGED_KINDS for k in kind_uniques], dtype=bool)[kind_codes]
    # text: the whole message for free-text rows, the dump for CONFIG, none for tagged rows
    text = np.full(n, None, dtype=object)
    free = np.flatnonzero(~tagged_kinds)
    if len(free):
        free_tags = np.asarray(tag_uniques, dtype=object)[tag_codes[free]]
        has_tag = free_tags != ""
        msgs = rest[free].copy()
        with_tag = np.flatnonzero(has_tag)
        if len(with_tag):
            msgs[with_tag] = list(map(_join_tag, free_tags[with_tag], msgs[with_tag]))
        text[free] = msgs
    config = np.flatnonzero(kind == "CONFIG")
    if len(config):
        text[config] = [r.lstrip(" \n") for r in rest[config]]

    fields: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for code, tag_name in enumerate(tag_uniques):
        if tag_name not in _TAGGED_KINDS:
            continue
        rows = np.flatnonzero((tag_codes == code) & tagged_kinds)
        if not len(rows):
            continue
        extracted = _extract(rest[rows], FIELD_PATTERNS.get(tag_name))
        if "thread2" in extracted:
            thread2 = extracted.pop("thread2")
            extracted["thread"] = np.where(pd.isna(extracted["thread"]), thread2,
                                           extracted["thread"])
        for col, values in extracted.items():
            col = _RENAME.get(col, col)
            if col in fields:
                old_rows, old_values = fields[col]
                fields[col] = (np.concatenate([old_rows, rows]),
                               np.concatenate([old_values, values]))
            else:
                fields[col] = (rows, values)
    return _Piece(
        n=n, line=line, time=time,
        cats={"kind": (kind_codes, np.asarray(kind_uniques, dtype=object)),
              "level": (level_codes, np.asarray(level_uniques, dtype=object)),
              "logger": (logger_codes, np.asarray(logger_uniques, dtype=object)),
              "tag": (tag_codes, np.asarray(tag_uniques, dtype=object))},
        text=text, fields=fields)


def _to_int(values: np.ndarray) -> pd.arrays.IntegerArray:
    """Nullable integers of a column of digit strings and None (digits by the regex)."""
    mask = pd.isna(values)
    ints = np.zeros(len(values), dtype="int64")
    present = ~mask
    if present.any():
        ints[present] = np.asarray(values[present].astype(str)).astype("int64")
    return pd.arrays.IntegerArray(ints, mask)


def _join_tag(tag: str, rest: str) -> str:
    return f"{tag} {rest}" if rest else tag


_COMPILED: dict[str, re.Pattern[str]] = {}


def _extract(values: np.ndarray, pattern: str | None) -> dict[str, np.ndarray]:
    """Fields of the rows of one tag (object arrays, None where absent): one regex pass
    over the rows joined by newlines (C speed); rows that do not all match exactly once
    fall back to ``str.extract``."""
    if pattern is None:
        frame = _generic_fields(pd.Series(values, dtype=object))
    else:
        compiled = _COMPILED.get(pattern)
        if compiled is None:
            compiled = _COMPILED[pattern] = re.compile(pattern, re.M)
        names = list(compiled.groupindex)
        joined = "\n".join(values)
        if joined.count("\n") == len(values) - 1:
            found = compiled.findall(joined)
            if len(found) == len(values):
                table = np.empty((len(found), len(names)), dtype=object)
                if len(names) == 1:
                    table[:, 0] = found
                else:
                    table[:] = found
                del found
                table[table == ""] = None
                return {name: np.ascontiguousarray(table[:, i]) for i, name in enumerate(names)}
        frame = pd.Series(values, dtype=object).str.extract(pattern, flags=re.S, expand=True)
    out = {}
    for col in frame.columns:
        arr = frame[col].to_numpy(dtype=object, copy=True)
        arr[pd.isna(arr)] = None
        out[str(col)] = arr
    return out


def _generic_fields(sub: pd.Series) -> pd.DataFrame:
    if sub.empty:
        return pd.DataFrame(index=sub.index)
    pairs = sub.str.extractall(_GENERIC_KV.pattern)
    if pairs.empty:
        return pd.DataFrame(index=sub.index)
    pairs = pairs.reset_index(level="match", drop=False)
    # first occurrence of each key per row
    pairs = pairs[~pairs.set_index(0, append=True).index.duplicated()]
    wide = pairs.pivot(columns=0, values=1)
    wide.columns.name = None
    return wide.reindex(sub.index)


# -- back to events ------------------------------------------------------------------
_BASE_COLUMNS = ("line", "time", "kind", "level", "logger", "tag", "text")


def to_events(frame: pd.DataFrame) -> list[Event]:
    """The rows of an event table as :class:`swiftnb.events.Event` objects.

    Fields keep their log order as far as the table records it (known kinds list the
    fields of their pattern in order).
    """
    field_cols = [c for c in frame.columns if c not in _BASE_COLUMNS]
    order_cache: dict[str, list[str]] = {}
    events = []
    records = frame.to_dict("records")
    for rec in records:
        kind = rec["kind"]
        cols = order_cache.get(rec["tag"])
        if cols is None:
            pattern = FIELD_PATTERNS.get(rec["tag"])
            names = re.findall(r"\?P<(\w+)>", pattern) if pattern else []
            names = ["procline" if n == "line_" else n for n in names if n != "thread2"]
            cols = names + [c for c in field_cols if c not in names]
            order_cache[rec["tag"]] = cols
        fields = {}
        for c in cols:
            v = rec.get(c)
            if v is not None and v is not pd.NA and not (isinstance(v, float) and np.isnan(v)):
                fields["line" if c == "procline" else c] = int(v) if c in _INT_COLUMNS else v
        text = rec["text"]
        events.append(Event(rec["time"], kind, fields, rec["level"], rec["logger"],
                            None if text is None or (isinstance(text, float)) else text))
    return events


#: Loader lines a run writes before its RUN_ID line (Swift/K 0.96: JAVA, VERSION)
_RUN_HEAD_TAGS = ("JAVA", "VERSION")


def run_starts(frame: pd.DataFrame) -> list[int]:
    """Row positions where the runs of a log begin: each ``RUN_ID`` line of the Loader,
    moved back over the JAVA/VERSION lines before it.  Several runs appended to one
    file with the same ``-logfile`` give several starts; the first run starts at 0."""
    if not len(frame) or "tag" not in frame:
        return [0] if len(frame) else []
    loader = (frame["logger"] == "Loader").to_numpy()
    tags = frame["tag"].astype(object).to_numpy()
    starts = []
    for row in np.flatnonzero(loader & (tags == "RUN_ID")).tolist():
        while row > 0 and loader[row - 1] and tags[row - 1] in _RUN_HEAD_TAGS:
            row -= 1
        starts.append(row)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return starts


def split_runs(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """The event table of each run in a log (one for a log of one run)."""
    starts = run_starts(frame)
    if len(starts) <= 1:
        return [frame]
    bounds = [*starts, len(frame)]
    return [frame.iloc[a:b].reset_index(drop=True) for a, b in zip(bounds, bounds[1:])]


def read_events(source: str | os.PathLike[str] | IO[Any]) -> list[Event]:
    """Read a log straight into a list of events (for replaying into panels)."""
    return to_events(read_log(source))


def concat_frames(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """One event table from tables read in pieces (tail mode); fields absent from a
    piece are None, as in a table read whole."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return _empty_frame()
    out = pd.concat(frames, ignore_index=True)
    for col in out.columns:
        if col in ("line", "time", "status"):
            continue
        if col in ("kind", "level", "logger", "tag"):
            out[col] = out[col].astype("category")
        else:
            values = out[col].astype(object)
            out[col] = values.where(values.notna(), None)
    return out
