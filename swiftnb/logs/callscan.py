"""The per-call lines of a log as integer-coded columns, for the entity tables.

A run of N calls writes some ten lines per call (JOB_INIT ... END_SUCCESS), and the
tables of :class:`swiftnb.logs.frame.LogFrame` need of each only its time, its tag and
one to three ids.  Read into the event table (a Python string per field, a row of twenty
columns per record) a 100,000-call log cost 5-7 times the file in memory and ran at ~11
MB/s.  Here those lines are found and cut with numpy on the log's bytes, a chunk at a
time: ids are interned as integers (two independent 64-bit hashes of their bytes; codes
from the first, checked by the second), times come from the same stamp arithmetic as
the reader's (:func:`swiftnb.logs.fastparse.stamp_seconds`), the few per-call lines the
tables never look at (PROCEDURE, SCOPE...) are only counted, and every other line is
handed back as text for the regular reader (``rest``).

The shapes modelled are exactly those of the reader's field patterns; a log whose
per-call lines hold anything else (a continuation line, a non-ASCII id, an id longer
than 64 bytes, an unexpected field order) gives ``None`` and is read whole instead, so
the scan never gives a different answer.
"""

from __future__ import annotations

import functools
import mmap
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import pandas as pd

from swiftnb.errors import SwiftnbError
from swiftnb.logs.fastparse import stamp_seconds, stamped_lines
from swiftnb.logs.reader import MAX_LINE

#: a log's text: read into memory, or a file mapped
Bytes = bytes | bytearray | mmap.mmap

__all__ = ["Tag", "Ids", "CallColumns", "scan_calls", "STATUS_EXTRA"]


class Tag(IntEnum):
    """The per-call tags read as columns (codes of :attr:`CallColumns.tag`)."""

    JOB_INIT = 0
    JOB_SITE_SELECT = 1
    JOB_START = 2
    JOB_TASK = 3
    JOB_END = 4
    TASK_STATUS_CHANGE = 5
    THREAD_ASSOCIATION = 6
    END_SUCCESS = 7
    END_FAILURE = 8


#: per-call tags the entity tables never read: counted as records, otherwise skipped
SKIPPED = ("PROCEDURE", "PROCEDURE_END", "FOREACH_IT_START", "FOREACH_IT_END", "SCOPE")
#: " LEVEL logger " of the per-call lines, as Swift 0.96 and swiftnb's writer log them;
#: a per-call tag under another head is left to the reader, and the scan gives up
HEADS = (b" DEBUG swift ", b" INFO  swift ", b" INFO  Execute ", b" DEBUG Execute ")
#: the fields of a TASK_STATUS_CHANGE line after its status (the reader's pattern)
STATUS_EXTRA = re.compile(r"taskid=\S+ status=\d+(?: workerid=(?P<workerid>\S+))?"
                          r"(?: (?P<message>.+))?")

CHUNK_BYTES = 4 << 20     # bytes of log looked at a time
_WIDTH = 96          # bytes of a line's head in one row (stamp, head, tag)
_VALUE = 64          # the longest id (bytes) read as columns
_SHORT = 32          # ... and the length most fit in
_NEEDLES = [(tag, tag.name.encode() + b" ") for tag in Tag]
_ALL_NEEDLES = tuple(needle for _, needle in _NEEDLES) + tuple(
    name.encode() + b" " for name in SKIPPED)
_NEEDLE_CODE = {needle: int(tag) for tag, needle in _NEEDLES} | {
    needle: -1 for needle in _ALL_NEEDLES[len(_NEEDLES):]}
_P1, _P2 = np.uint64(0x100000001B3), np.uint64(0x9E3779B97F4A7C15)
_Q1, _Q2 = np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9)


#: byte classes: part of a ``\\S+`` value, white space to Python's ``re`` (``\\s``), or a
#: byte whose class depends on the text around it (non-ASCII, control): not modelled
_PLAIN, _SPACE, _ODD = 0, 1, 2
_BYTE_CLASS = np.zeros(256, dtype=np.uint8)
_BYTE_CLASS[:32] = _ODD
_BYTE_CLASS[128:] = _ODD
_BYTE_CLASS[127] = _ODD
_BYTE_CLASS[[9, 10, 11, 12, 13, 28, 29, 30, 31, 32]] = _SPACE


class _Unmodelled(SwiftnbError):
    """A per-call line the columns do not model exactly: the log is read whole."""


@dataclass
class Ids:
    """One id space (job ids, task ids...): per row of the columns, the code of its
    value (-1 where the row has none), and the values by code, in order of first
    appearance."""

    codes: np.ndarray
    values: np.ndarray


@dataclass
class CallColumns:
    """The per-call lines of a log, one entry per line in log order, and the rest."""

    tag: np.ndarray                 # Tag codes (int8)
    time: np.ndarray                # float epoch seconds, true UTC
    jobid: Ids
    taskid: Ids
    thread: Ids
    tr: Ids
    host: Ids
    status: np.ndarray              # int16, -1 where the row is no status line
    workerid: dict[int, str]        # row -> workerid of the status lines that have one
    message: dict[int, str]         # row -> message of the status lines that have one
    rest: bytes                     # every other line, for the regular reader
    rest_lines: np.ndarray          # the 1-based line in the log of each line of ``rest``
    records: int                    # per-call and skipped records (the rest's not counted)
    first: tuple[int, float] | None  # (line, time) of the first per-call or skipped record
    last: tuple[int, float] | None


@dataclass
class _ChunkValues:
    """The values of one id space found in the chunk being read."""

    rows: list[np.ndarray] = field(default_factory=list)
    pos: list[np.ndarray] = field(default_factory=list)
    lengths: list[np.ndarray] = field(default_factory=list)
    h1: list[np.ndarray] = field(default_factory=list)
    h2: list[np.ndarray] = field(default_factory=list)


@dataclass
class _Field:
    """The values of one id space, chunk by chunk: per value its row and its code among
    the chunk's distinct values; per distinct value of a chunk its hashes, length,
    first row and string (so that the log's bytes are not needed after the chunk)."""

    pending: _ChunkValues = field(default_factory=_ChunkValues)
    rows: list[np.ndarray] = field(default_factory=list)
    local: list[np.ndarray] = field(default_factory=list)
    h1: list[np.ndarray] = field(default_factory=list)
    h2: list[np.ndarray] = field(default_factory=list)
    lengths: list[np.ndarray] = field(default_factory=list)
    first_rows: list[np.ndarray] = field(default_factory=list)
    values: list[np.ndarray] = field(default_factory=list)

    def seal(self, chunk: _Chunk) -> None:
        """The chunk's values interned among themselves; their strings decoded."""
        p = self.pending
        if not p.rows:
            return
        rows, pos = _joined(p.rows), _joined(p.pos)
        lengths, h1, h2 = _joined(p.lengths), _joined(p.h1), _joined(p.h2)
        local, _ = pd.factorize(h1, sort=False)
        distinct = int(local.max()) + 1
        one = np.empty(distinct, dtype=np.int64)  # a row of each value
        one[local] = np.arange(len(local))
        if (h2 != h2[one][local]).any() or (lengths != lengths[one][local]).any():
            raise _Unmodelled  # two values with one hash: never seen, but never wrong
        first_row = np.full(distinct, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_row, local, rows)
        self.rows.append(rows.astype(np.int32))
        self.local.append(local.astype(np.int32))
        self.h1.append(h1[one])
        self.h2.append(h2[one])
        self.lengths.append(lengths[one])
        self.first_rows.append(first_row)
        self.values.append(_raw(chunk, pos[one], lengths[one]))

    def ids(self, n: int) -> Ids:
        """Codes in order of first appearance (by row), checked by the second hash."""
        codes = np.full(n, -1, dtype=np.int32)
        if not self.rows:
            return Ids(codes, np.zeros(0, dtype=object))
        h2, lengths = _joined(self.h2), _joined(self.lengths)
        found, _ = pd.factorize(_joined(self.h1), sort=False)
        distinct = int(found.max()) + 1
        one = np.empty(distinct, dtype=np.int64)
        one[found] = np.arange(len(found))
        if (h2 != h2[one][found]).any() or (lengths != lengths[one][found]).any():
            raise _Unmodelled
        first_row = np.full(distinct, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first_row, found, _joined(self.first_rows))
        by_appearance = np.argsort(first_row)
        rank = np.empty(distinct, dtype=np.int32)
        rank[by_appearance] = np.arange(distinct, dtype=np.int32)
        values = _decoded(_joined(self.values)[one[by_appearance]])
        offset = 0
        for rows, local in zip(self.rows, self.local):
            size = int(local.max()) + 1
            codes[rows] = rank[found[offset + local]]
            offset += size
        self.rows.clear()
        self.local.clear()
        return Ids(codes, values)


class _Chunk:
    """The lines of one chunk of the log, and its bytes read at any offset: as rows of
    a few bytes (a ``V<width>`` view with a stride of one byte, so that a gather copies
    each row in one move) or as little-endian 8-byte words."""

    def __init__(self, data: Bytes, begin: int, end: int) -> None:
        arr = np.frombuffer(data, dtype=np.uint8, count=end - begin, offset=begin)
        self.begin = begin
        newlines = np.flatnonzero(arr == 10)
        self.starts = np.concatenate(([0], newlines[:-1] + 1))
        self.ends = newlines
        self.padded = np.concatenate((arr, np.full(_WIDTH + 8, 10, dtype=np.uint8)))
        self.words = np.ndarray(shape=(len(self.padded) - 8,), dtype=np.uint64,
                                buffer=self.padded, strides=(1,))
        self._rows: dict[int, np.ndarray] = {}

    def rows(self, pos: np.ndarray, width: int) -> np.ndarray:
        """The ``width`` bytes at each position, one row each."""
        view = self._rows.get(width)
        if view is None:
            view = self._rows[width] = np.ndarray(
                shape=(len(self.padded) - width,), dtype=f"V{width}", buffer=self.padded,
                strides=(1,))
        return view[pos].view(np.uint8).reshape(len(pos), width)

    def literal(self, pos: np.ndarray, text: bytes) -> np.ndarray:
        """Whether ``text`` is at each position (8 bytes at a time, as words)."""
        hit = np.ones(len(pos), dtype=bool)
        for k in range(0, len(text), 8):
            word, mask = _word(text[k:k + 8])
            got = self.words[pos + k if k else pos]
            if len(text) - k < 8:
                got &= mask
            hit &= got == word
        return hit

    def keyed(self, pos: np.ndarray, key: bytes) -> tuple[np.ndarray, np.ndarray,
                                                          tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Where ``key`` is at each position, and (length, hash 1, hash 2) of the value
        after it there: one row of bytes read per position for both."""
        width = len(key)
        has = np.flatnonzero(self.literal(pos, key))
        length, h1, h2, long = _hashed(self.rows(pos[has] + width, _SHORT))
        if len(long):
            again = self.value(pos[has[long]] + width)
            length[long], h1[long], h2[long] = again
        return has, pos[has] + width, (length, h1, h2)

    def span(self, pos: np.ndarray) -> np.ndarray:
        """The length of the ``\\S+`` value at each position (as :meth:`value`, unhashed)."""
        window = self.rows(pos, _VALUE)
        length = ((window - np.uint8(33)) > 93).argmax(axis=1)
        if not (_BYTE_CLASS[window[np.arange(len(pos)), length]] == _SPACE).all() or not (
                length > 0).all():
            raise _Unmodelled
        return length

    def value(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``\\S+`` at each position: (length, hash 1, hash 2); an empty, non-ASCII or
        over-long value is not modelled.  Most ids fit in 32 bytes: those that do not
        are read again through 64."""
        length, h1, h2, long = _hashed(self.rows(pos, _SHORT))
        if len(long):
            length[long], h1[long], h2[long], longer = _hashed(self.rows(pos[long], _VALUE))
            if len(longer):
                raise _Unmodelled
        return length, h1, h2


def _hashed(window: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(length, hash 1, hash 2) of the value at the start of each row, and the rows whose
    value does not end inside the window."""
    stop = (window - np.uint8(33)) > 93  # not printable ASCII (below 33 wraps): an end
    length = stop.argmax(axis=1)
    rows = np.arange(len(window))
    ends_at = _BYTE_CLASS[window[rows, length]]
    long = np.flatnonzero(~stop[rows, length])
    ends_at[long] = _SPACE
    if not (ends_at == _SPACE).all() or not (length[stop[rows, length]] > 0).all():
        raise _Unmodelled
    words = np.ascontiguousarray(window).view(np.uint64) & _word_masks(window.shape[1])[length]
    with np.errstate(over="ignore"):
        h1 = length.astype(np.uint64)
        h2 = h1 * _Q2
        h1 *= _P2
        h2 += _Q1
        for i in range(words.shape[1]):
            word = words[:, i]
            h1 ^= word
            h1 *= _P1
            h2 *= _Q1
            h2 += word
    return length, h1, h2, long


_MASKS: dict[int, np.ndarray] = {}


def _word_masks(width: int) -> np.ndarray:
    """Per value length (0..width), the masks of the 8-byte words of a ``width``-byte
    row that keep the value's bytes and clear the rest (little-endian)."""
    table = _MASKS.get(width)
    if table is None:
        kept = np.clip(np.arange(width + 1)[:, None] - 8 * np.arange(width // 8)[None, :], 0, 8)
        table = _MASKS[width] = np.array(
            [[(1 << (8 * int(k))) - 1 for k in row] for row in kept], dtype=np.uint64)
    return table


def _times(stamp: np.ndarray) -> np.ndarray:
    """Epoch seconds of rows of stamps (a line's first 28 bytes): a stamp is often the
    line before's (a call's lines share their millisecond), so each run of equal stamps
    is converted once.  An impossible date (the reader drops its line, with a warning)
    or a broken zone is not modelled."""
    words = np.ascontiguousarray(stamp).view(np.uint32)
    changed = np.ones(len(stamp), dtype=bool)
    changed[1:] = (words[1:] != words[:-1]).any(axis=1)
    stamps = stamp_seconds(stamp[changed])
    if stamps is None or np.isnan(stamps[0]).any():
        raise _Unmodelled
    return stamps[0][np.cumsum(changed) - 1]


@functools.cache
def _word(text: bytes) -> tuple[np.uint64, np.uint64]:
    """The first 8 bytes of ``text`` as a little-endian word, and the mask of them."""
    head = text[:8]
    return (np.frombuffer(head.ljust(8, b"\0"), dtype=np.uint64)[0],
            np.frombuffer((b"\xff" * len(head)).ljust(8, b"\0"), dtype=np.uint64)[0])


def _matching(chunk: _Chunk, pos: np.ndarray,
              texts: tuple[bytes, ...]) -> list[tuple[bytes, np.ndarray]]:
    """For each of ``texts``, the indices of ``pos`` where it stands: one compare of an
    8-byte word per row and text, the rest of a text checked only where its word is."""
    words = chunk.words[pos]
    found = []
    for text in texts:
        word, mask = _word(text)
        rows = np.flatnonzero((words if len(text) >= 8 else words & mask) == word)
        if len(rows) and len(text) > 8:
            rows = rows[chunk.literal(pos[rows] + 8, text[8:])]
        if len(rows):
            found.append((text, rows))
    return found


class _Scan:
    """One pass over a log's bytes; see the module docstring."""

    def __init__(self, data: Bytes, release: Callable[[int], None] | None) -> None:
        self.data = data
        self.release = release
        self.nrows = 0
        self.tags: list[np.ndarray] = []
        self.times: list[np.ndarray] = []
        self.fields = {name: _Field() for name in ("jobid", "taskid", "thread", "tr", "host")}
        self.status_rows: list[np.ndarray] = []
        self.status_values: list[np.ndarray] = []
        self.workerid: dict[int, str] = {}
        self.message: dict[int, str] = {}
        self.rest: list[bytes | bytearray] = []  # the other lines, as read
        self.rest_lines: list[np.ndarray] = []
        self.records = 0
        self.first: tuple[int, float] | None = None
        self.last: tuple[int, float] | None = None
        self.line = 0  # lines before the current chunk
        self.taken_last = False  # the last line of the chunk before is a per-call line
        self.any_stamped = False  # a line with a time stamp seen

    def run(self) -> None:
        data, size, begin = self.data, len(self.data), 0
        while begin < size:
            end = data.rfind(b"\n", begin, begin + CHUNK_BYTES) + 1
            if end <= begin:  # no newline in this window: to the next one (or the end)
                nxt = data.find(b"\n", begin + CHUNK_BYTES)
                end = size if nxt < 0 else nxt + 1
            if data[end - 1:end] != b"\n":  # a last line without a newline: the reader's
                self.rest.append(data[begin:end])
                self.rest_lines.append(np.array([self.line + 1], dtype=np.int64))
                break
            if data.find(b"\0", begin, end) >= 0:
                raise _Unmodelled  # binary data: the reader refuses it, and says why
            self._chunk(_Chunk(data, begin, end))
            if begin == 0 and not self.any_stamped:
                raise _Unmodelled  # no record in the first chunk: the reader says why
            begin = end
            if self.release is not None:
                self.release(end)

    def _chunk(self, chunk: _Chunk) -> None:
        starts, ends = chunk.starts, chunk.ends
        nlines = len(starts)
        if (ends - starts).max() > MAX_LINE:
            raise _Unmodelled  # the reader empties such a line, and says so
        head = chunk.rows(starts, 28)
        stamped = stamped_lines(head, ends - starts)
        zone = head[:, 23]
        zoned = (zone == ord("+")) | (zone == ord("-"))
        zone_ok = ~zoned | ((head[:, 24:28] - np.uint8(48)) <= 9).all(axis=1)
        stamp_len = np.where(zoned, 28, np.where(zone == ord("Z"), 24, 23))
        candidate = np.flatnonzero(stamped & zone_ok)
        tag_at = np.full(nlines, -1, dtype=np.int64)
        after = starts[candidate] + stamp_len[candidate]
        for text, rows in _matching(chunk, after, HEADS):
            tag_at[candidate[rows]] = stamp_len[candidate[rows]] + len(text)
        tag = np.full(nlines, -1, dtype=np.int8)
        skipped = np.zeros(nlines, dtype=bool)
        headed = np.flatnonzero(tag_at >= 0)
        at = starts[headed] + tag_at[headed]
        for needle, rows in _matching(chunk, at, _ALL_NEEDLES):
            code = _NEEDLE_CODE[needle]
            if code < 0:
                skipped[headed[rows]] = True
            else:
                tag[headed[rows]] = code
        hot = tag >= 0
        taken = hot | skipped
        # a line without a stamp after a per-call line would continue it: not modelled
        if (taken[:-1] & ~stamped[1:]).any() or (self.taken_last and not stamped[0]):
            raise _Unmodelled
        self.taken_last = bool(taken[-1])
        lines = self.line + 1 + np.arange(nlines, dtype=np.int64)
        self.any_stamped |= bool(stamped.any())
        taken_rows = np.flatnonzero(taken)
        times = _times(head[taken_rows])
        if len(taken_rows):
            if self.first is None:
                self.first = (int(lines[taken_rows[0]]), float(times[0]))
            self.last = (int(lines[taken_rows[-1]]), float(times[-1]))
            self.records += len(taken_rows)
        rest = ~taken
        if rest.any():
            edges = np.flatnonzero(np.diff(np.concatenate(([0], rest.view(np.int8), [0]))))
            base, data = chunk.begin, self.data
            self.rest.extend(data[base + int(starts[a]):base + int(ends[b - 1]) + 1]
                             for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()))
            self.rest_lines.append(lines[rest])
        self.line += nlines
        rows = np.flatnonzero(hot)
        if len(rows):
            self._per_call(chunk, rows, tag[rows], times[hot[taken_rows]],
                           starts[rows] + tag_at[rows])
        self.nrows += len(rows)
        for f in self.fields.values():
            f.seal(chunk)

    def _per_call(self, chunk: _Chunk, rows: np.ndarray, tags: np.ndarray,
                  times: np.ndarray, tag_pos: np.ndarray) -> None:
        self.tags.append(tags)
        self.times.append(times)
        index = self.nrows + np.arange(len(rows), dtype=np.int64)
        for code, needle in _NEEDLES:
            which = np.flatnonzero(tags == code)
            if len(which):
                self._fields(chunk, Tag(code), index[which], tag_pos[which] + len(needle))

    def _keep(self, name: str, chunk: _Chunk, rows: np.ndarray, pos: np.ndarray,
              value: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
        length, h1, h2 = value
        p = self.fields[name].pending
        p.rows.append(rows)
        p.pos.append(pos)
        p.lengths.append(length.astype(np.uint8))
        p.h1.append(h1)
        p.h2.append(h2)
        return pos + length

    def _required(self, name: str, chunk: _Chunk, rows: np.ndarray, pos: np.ndarray,
                  key: bytes) -> np.ndarray:
        """``key`` and its value at each position; the position after the value."""
        has, start, value = chunk.keyed(pos, key)
        if len(has) != len(pos):
            raise _Unmodelled
        return self._keep(name, chunk, rows, start, value)

    def _optional(self, name: str, chunk: _Chunk, rows: np.ndarray, pos: np.ndarray,
                  key: bytes) -> np.ndarray:
        """`` key=value`` where present; the positions after it (or unchanged)."""
        has, start, value = chunk.keyed(pos, key)
        if len(has):
            pos = pos.copy()
            pos[has] = self._keep(name, chunk, rows[has], start, value)
        return pos

    def _fields(self, chunk: _Chunk, tag: Tag, rows: np.ndarray, pos: np.ndarray) -> None:
        """The reader's field pattern of ``tag`` (FIELD_PATTERNS), for the fields the
        entity tables read."""
        if tag in (Tag.JOB_INIT, Tag.JOB_SITE_SELECT, Tag.JOB_END):
            pos = self._required("jobid", chunk, rows, pos, b"jobid=")
            if tag == Tag.JOB_INIT:
                self._optional("tr", chunk, rows, pos, b" tr=")
        elif tag == Tag.JOB_TASK:
            pos = self._required("jobid", chunk, rows, pos, b"jobid=")
            self._required("taskid", chunk, rows, pos, b" taskid=")
        elif tag == Tag.JOB_START:
            self._job_start(chunk, rows, pos)
        elif tag == Tag.THREAD_ASSOCIATION:
            pos = self._required("jobid", chunk, rows, pos, b"jobid=")
            has_thread = chunk.literal(pos, b" thread=")
            pos = self._optional("thread", chunk, rows, pos, b" thread=")
            pos = self._optional("host", chunk, rows, pos, b" host=")
            late = np.flatnonzero(~has_thread)  # the pattern's second place for thread
            if len(late):
                self._optional("thread", chunk, rows[late], pos[late], b" thread=")
        elif tag == Tag.TASK_STATUS_CHANGE:
            self._status(chunk, rows, pos)
        else:  # END_SUCCESS, END_FAILURE: [thread=T ][jobid=J ]tr=TR
            pos = self._optional("thread", chunk, rows, pos - 1, b" thread=") + 1
            if not (chunk.padded[pos - 1] == 32).all():
                raise _Unmodelled
            pos = self._optional("jobid", chunk, rows, pos - 1, b" jobid=") + 1
            if not (chunk.padded[pos - 1] == 32).all() or not chunk.literal(pos, b"tr=").all():
                raise _Unmodelled

    def _job_start(self, chunk: _Chunk, rows: np.ndarray, pos: np.ndarray) -> None:
        """``jobid=J tr=TR[ arguments=...][ tmpdir=D][ host=H]`` to the end of the line:
        the host is the value after the line's last space when it follows ``host=``."""
        pos = self._required("jobid", chunk, rows, pos, b"jobid=")
        pos = self._skip_value(chunk, pos, b" tr=")
        at_end = chunk.padded[pos] == 10
        if not (at_end | chunk.literal(pos, b" arguments=")).all():
            raise _Unmodelled
        more = np.flatnonzero(~at_end)
        rows, pos = rows[more], pos[more]
        # the line's end, and its last space within the last _VALUE + 8 bytes
        line_end = chunk.ends[np.searchsorted(chunk.ends, pos)]
        back = np.maximum(line_end - (_VALUE + 8), pos)
        window = chunk.rows(back, _VALUE + 8)
        inside = np.arange(_VALUE + 8)[None, :] < (line_end - back)[:, None]
        kind = _BYTE_CLASS[window]
        space = (kind == _SPACE) & inside
        if ((kind == _ODD) & inside).any():
            raise _Unmodelled
        last = (_VALUE + 7) - space[:, ::-1].argmax(axis=1)
        if not space[np.arange(len(rows)), last].all():
            raise _Unmodelled  # no space in the tail: a value longer than modelled
        start = back + last
        has = chunk.literal(start, b" host=") & (start + 6 < line_end)
        which = np.flatnonzero(has)
        if len(which):
            hpos = start[which] + 6
            self._keep("host", chunk, rows[which], hpos, chunk.value(hpos))

    @staticmethod
    def _skip_value(chunk: _Chunk, pos: np.ndarray, key: bytes) -> np.ndarray:
        if not chunk.literal(pos, key).all():
            raise _Unmodelled
        pos = pos + len(key)
        return pos + chunk.span(pos)

    def _status(self, chunk: _Chunk, rows: np.ndarray, pos: np.ndarray) -> None:
        """``taskid=T status=N``; whatever follows N (a workerid, a message) is read
        by the reader's own pattern, line by line (one a task at most, on a coaster site)."""
        pos = self._required("taskid", chunk, rows, pos, b"taskid=")
        if not chunk.literal(pos, b" status=").all():
            raise _Unmodelled
        pos = pos + 8
        window = chunk.rows(pos, 12) - np.uint8(48)  # a byte below '0' wraps past 9
        ndigits = (window > 9).argmax(axis=1)
        if not (ndigits > 0).all() or not (ndigits < 10).all():
            raise _Unmodelled
        value = np.zeros(len(rows), dtype=np.int64)
        for k in range(int(ndigits.max())):
            value = np.where(k < ndigits, value * 10 + window[:, k], value)
        self.status_rows.append(rows)
        self.status_values.append(value.astype(np.int16))
        after = pos + ndigits
        extra = np.flatnonzero(chunk.padded[after] != 10)
        line = np.searchsorted(chunk.ends, pos[extra])
        begin, data = chunk.begin, self.data
        for row, start, end in zip(rows[extra].tolist(), chunk.starts[line].tolist(),
                                   chunk.ends[line].tolist()):
            text = data[begin + start:begin + end].decode("utf-8", "replace")
            found = STATUS_EXTRA.match(text, text.index(" TASK_STATUS_CHANGE ") + 20)
            if found is None:
                raise _Unmodelled
            if found["workerid"] is not None:
                self.workerid[row] = found["workerid"]
            if found["message"] is not None:
                self.message[row] = found["message"]

    def columns(self) -> CallColumns:
        n = self.nrows
        tag = np.concatenate(self.tags) if self.tags else np.zeros(0, np.int8)
        time = np.concatenate(self.times) if self.times else np.zeros(0)
        status = np.full(n, -1, dtype=np.int16)
        if self.status_rows:
            status[np.concatenate(self.status_rows)] = np.concatenate(self.status_values)
        ids = {name: f.ids(n) for name, f in self.fields.items()}
        rest = b"".join(self.rest)
        lines = np.concatenate(self.rest_lines) if self.rest_lines else np.zeros(0, np.int64)
        return CallColumns(tag=tag, time=time, status=status, workerid=self.workerid,
                           message=self.message, rest=rest, rest_lines=lines,
                           records=self.records, first=self.first, last=self.last, **ids)



def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The arrays of a column, as one (the list emptied: its memory goes at once)."""
    out = np.concatenate(parts)
    parts.clear()
    return out


def _raw(chunk: _Chunk, pos: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ASCII values at ``pos`` of a chunk as fixed-width bytes (``S<width>``): kept
    past the chunk, decoded once per distinct value of the whole log (:func:`_decoded`)."""
    width = int(lengths.max())
    window = chunk.rows(pos, width) * (np.arange(width)[None, :] < lengths[:, None])
    return np.ascontiguousarray(window).view(f"S{width}").ravel()


def _decoded(raw: np.ndarray) -> np.ndarray:
    """``S<width>`` values (printable ASCII) as str objects: each byte widened to a UCS-4
    code unit is the same character, and a numeric cast is some four times faster than
    numpy's cast of ``S`` to ``U``."""
    width = raw.dtype.itemsize
    units = np.ascontiguousarray(raw).view(np.uint8).reshape(len(raw), width)
    return units.astype(np.uint32).view(f"U{width}").ravel().astype(object)


def scan_calls(data: Bytes, release: Callable[[int], None] | None = None,
               ) -> CallColumns | None:
    """The per-call lines of a log's text as columns, or None when they hold something
    the columns do not model (the caller reads the log whole).  ``release(offset)`` is
    called as the bytes before ``offset`` are no longer needed (a mapped file gives
    its pages back: the whole log is never resident at once)."""
    scan = _Scan(data, release)
    try:
        scan.run()
        return scan.columns()
    except _Unmodelled:
        return None
