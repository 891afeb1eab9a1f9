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
import io
import lzma
import os
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from operator import methodcaller
from typing import IO, Any

import numpy as np
import pandas as pd

from swiftnb.events import KINDS, Event
from swiftnb.logs.fastparse import Front, front_from_bytes
from swiftnb.logs.writer import stream_name

__all__ = [
    "read_log",
    "parse_text",
    "read_events",
    "to_events",
    "LogFormatError",
    "LogWarning",
    "FIELD_PATTERNS",
]


class LogFormatError(ValueError):
    """The input is not a Swift log at all (no time-stamped line); says what was found."""


class LogWarning(UserWarning):
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
def _read_bytes(source: str | os.PathLike[str] | IO[Any]) -> tuple[bytes, str]:
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        try:
            with open(name, "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise FileNotFoundError(f"log file not found: {name}") from None
        except IsADirectoryError:
            raise LogFormatError(f"{name} is a directory, not a log file") from None
    else:
        name = stream_name(source) or "<stream>"
        data = source.read()
        if isinstance(data, str):
            return data.encode("utf-8"), name
    return _decompress(data, name), name


def _decompress(data: bytes, name: str) -> bytes:
    try:
        if data[:2] == b"\x1f\x8b":
            return gzip.decompress(data)
        if data[:3] == b"BZh":
            return _bz2_decompress_partial(data, name)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(data)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise LogFormatError(f"{name}: cannot decompress ({exc})") from None
    return data


def _bz2_decompress_partial(data: bytes, name: str) -> bytes:
    """bz2 that keeps what it could decompress from a truncated file (with a warning)."""
    out = io.BytesIO()
    while data:
        dec = bz2.BZ2Decompressor()
        try:
            out.write(dec.decompress(data))
        except OSError as exc:
            if out.tell():
                warnings.warn(f"{name}: compressed data damaged ({exc}); read what precedes it",
                              LogWarning, stacklevel=4)
                break
            raise LogFormatError(f"{name}: cannot decompress ({exc})") from None
        if not dec.eof:
            warnings.warn(f"{name}: compressed file is truncated; read what it holds",
                          LogWarning, stacklevel=4)
            break
        data = dec.unused_data
    return out.getvalue()


# -- parsing -------------------------------------------------------------------------
def read_log(source: str | os.PathLike[str] | IO[Any], *, strict: bool = False) -> pd.DataFrame:
    """Read a Swift log (plain, .gz, .bz2, .xz, or an open file) into the event table.

    Damage (garbage before the first record, a truncated last line) is reported with a
    :class:`LogWarning` and the readable part is returned; ``strict=True`` turns those
    warnings into :class:`LogFormatError`.  A file with no Swift log line at all raises
    :class:`LogFormatError`.
    """
    data, name = _read_bytes(source)
    if b"\r\n" in data[:65536]:  # a log that went through Windows
        data = data.replace(b"\r\n", b"\n")
    if strict:
        with warnings.catch_warnings():
            warnings.simplefilter("error", LogWarning)
            try:
                return parse_bytes(data, name=name)
            except LogWarning as exc:
                raise LogFormatError(str(exc)) from None
    return parse_bytes(data, name=name)


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


def parse_bytes(data: bytes, *, name: str = "<log>", first_line: int = 1,
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
        _check_damage(data, name)
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
    names: list[str] = []
    for p in pieces:
        names.extend(c for c in p.fields if c not in names)
    names.sort(key=lambda c: (_FIELD_ORDER.get(c, len(_FIELD_ORDER)), c))
    for col in names:
        values = np.full(total, None, dtype=object)
        for p, start in zip(pieces, starts):
            if col in p.fields:
                rows, vals = p.fields[col]
                values[rows + start] = vals
        data[col] = _to_int(values) if col in _INT_COLUMNS else pd.Series(
            values, dtype=object, copy=False)
    out = pd.DataFrame(data, copy=False)
    bad = np.isnan(time)
    if bad.any():
        first_bad = int(line[bad][0])
        warnings.warn(f"{name}:{first_bad}: {int(bad.sum())} records with an impossible date "
                      "ignored", LogWarning, stacklevel=3)
        out = out[~bad].reset_index(drop=True)
    return out


def _check_damage(data: bytes, name: str) -> None:
    head = data[:200].lstrip(b"\xef\xbb\xbf").decode("utf-8", errors="replace")
    if head and not _STAMP_AT_START.match(head):
        lead = head.splitlines()[0][:60] if head.strip() else "blank lines"
        warnings.warn(f"{name}:1: text before the first log record ignored ({lead!r})",
                      LogWarning, stacklevel=4)
    if data and not data.endswith(b"\n"):
        tail = data[data.rfind(b"\n") + 1:][:60].decode("utf-8", errors="replace")
        line = data.count(b"\n") + 1
        warnings.warn(
            f"{name}:{line}: log ends in the middle of a line ({tail!r}); "
            "it is truncated or still being written", LogWarning, stacklevel=4)


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
