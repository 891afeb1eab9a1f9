"""The fast front end of the log reader: record heads parsed with array operations on bytes.

A Swift log line head has a fixed shape (``yyyy-MM-dd HH:mm:ss,SSS[+zzzz] LEVEL logger``),
so instead of a regular expression per line the bytes are viewed as a numpy array:
newlines give the line starts, digits at fixed offsets give the time, a small window of
bytes after the time stamp gives the level, the logger and the tag, and one boolean
mask removes every head so that the messages come out of a single ``decode`` and
``split``.  No Python code runs per line; Python objects are made only for the
messages (and for the few distinct levels, loggers and tags).

It returns the same columns as the regular-expression front end of
:mod:`swiftnb.logs.reader`, or ``None`` when a piece holds something it does not model
exactly (a line that looks like a record but is not one, a logger longer than the
window...); the reader then parses that piece with the regular expression.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Front", "front_from_bytes", "stamp_seconds", "stamped_lines"]

_WINDOW = 48  # the widest window below (28-byte stamps, 48-byte heads, 32-byte tags)
_DIGITS = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18, 20, 21, 22)
_SEPARATORS = ((4, ord("-")), (7, ord("-")), (10, ord(" ")), (13, ord(":")), (16, ord(":")),
               (19, ord(",")))
_SPACE, _NL, _TAB, _CR, _VT, _FF = 32, 10, 9, 13, 11, 12


@dataclass
class Front:
    """Per record: line, time, level/logger/tag as (codes, uniques), the rest of the
    message after the tag (continuation lines appended)."""

    n: int
    line: np.ndarray
    time: np.ndarray
    level: tuple[np.ndarray, np.ndarray]
    logger: tuple[np.ndarray, np.ndarray]
    tag: tuple[np.ndarray, np.ndarray]
    rest: np.ndarray


def _first_at_or_after(mask: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Column of the first True at or after ``start`` in each row; -1 if none."""
    cols = np.arange(mask.shape[1])
    hit = mask & (cols[None, :] >= start[:, None])
    first = hit.argmax(axis=1)
    first[~hit[np.arange(len(first)), first]] = -1
    return first


_HEAD_WINDOW = 48  # [ ]LEVEL +LOGGER and the byte after it
_TAG_WINDOW = 32   # TAG and the byte after it
_WS, _WORD, _UPPER, _TAGCHAR = 1, 2, 4, 8
_CLASSES = np.zeros(256, dtype=np.uint8)
for _b in (32, 10, 9, 13, 11, 12):
    _CLASSES[_b] |= _WS
for _b in list(range(48, 58)) + list(range(65, 91)) + list(range(97, 123)) + [95]:
    _CLASSES[_b] |= _WORD
for _b in range(65, 91):
    _CLASSES[_b] |= _UPPER | _TAGCHAR
for _b in list(range(48, 58)) + [95]:
    _CLASSES[_b] |= _TAGCHAR
_P1 = np.uint64(0x100000001B3)
_P2 = np.uint64(0x9E3779B97F4A7C15)


def _window(rows_of: np.ndarray, start: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``width`` bytes from each start, copied straight from a sliding view of
    the padded bytes (no index matrix).  Bytes past a line's end are the next line's;
    every scan below stops at the line's newline first, or gives up."""
    return rows_of[start, :width]


def _factorize_bytes(window: np.ndarray, start: np.ndarray, length: np.ndarray):
    """Codes and str values of the byte strings window[i, start:start+length]: the bytes
    (zero padded) are read as 64-bit words and hashed, the hashes factorized, and each
    distinct string decoded once (a handful: levels, loggers, tags)."""
    m, width = window.shape
    cols = np.arange(width)[None, :]
    keep = (cols >= start[:, None]) & (cols < (start + length)[:, None])
    block = np.where(keep, window, 0).astype(np.uint8)
    words = np.ascontiguousarray(block).view(np.uint64)
    with np.errstate(over="ignore"):
        key = length.astype(np.uint64) * _P2
        for i in range(words.shape[1]):
            key = (key ^ words[:, i]) * _P1
    codes, _ = pd.factorize(key, sort=False)
    nunique = int(codes.max()) + 1 if m else 0
    first = np.zeros(nunique, dtype=np.int64)
    first[codes[::-1]] = np.arange(m)[::-1]  # a row of each distinct string
    names = np.array([window[i, start[i]:start[i] + length[i]].tobytes().decode(
        "ascii", "replace") for i in first], dtype=object)
    return codes.astype(np.int64), names


def stamped_lines(first28: np.ndarray, length: np.ndarray) -> np.ndarray:
    """Which lines (their first 28 bytes, their lengths) start with a time stamp."""
    head = length >= 23
    digits = first28[:, _DIGITS] - np.uint8(48)  # wraps below '0': one compare suffices
    head &= (digits <= 9).all(axis=1)
    for k, ch in _SEPARATORS:
        head &= first28[:, k] == ch
    return head


def stamp_seconds(stamp: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Epoch seconds (true UTC; NaN for an impossible date) and stamp length (23, 24 with
    ``Z``, 28 with ``+zzzz``) of rows of a log line's first 28 bytes, whose digits and
    separators are checked; None when a ``+``/``-`` is not followed by a zone.  One
    arithmetic for every reader of time stamps, so their times agree to the bit."""
    m = len(stamp)

    def digit(k: int) -> np.ndarray:
        return stamp[:, k].astype(np.int64) - 48

    year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
    month = digit(5) * 10 + digit(6)
    day = digit(8) * 10 + digit(9)
    hour = digit(11) * 10 + digit(12)
    minute = digit(14) * 10 + digit(15)
    second = digit(17) * 10 + digit(18)
    millis = digit(20) * 100 + digit(21) * 10 + digit(22)
    # days from civil (proleptic Gregorian), vectorised
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    mp = (month + 9) % 12
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    time = (days * 86400 + hour * 3600 + minute * 60 + second).astype("float64") + millis / 1000.0
    month_len = np.array([31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    valid = (month >= 1) & (month <= 12) & (day >= 1) & (hour < 24) & (minute < 60) & (second < 60)
    valid &= day <= np.where((month == 2) & ~leap, 28, month_len[np.clip(month - 1, 0, 11)])
    time[~valid] = np.nan

    zone = stamp[:, 23].astype(np.int64)
    zoned = (zone == ord("+")) | (zone == ord("-"))
    if zoned.any():
        zd = [digit(k) for k in (24, 25, 26, 27)]
        digits_ok = np.ones(m, bool)
        for d in zd:
            digits_ok &= (d >= 0) & (d <= 9)
        if (zoned & ~digits_ok).any():
            return None  # '+' not followed by a zone: the regex decides what that is
        offset = (zd[0] * 10 + zd[1]) * 3600 + (zd[2] * 10 + zd[3]) * 60
        time -= np.where(zoned, np.where(zone == ord("-"), -offset, offset), 0)
    return time, np.where(zoned, 28, np.where(zone == ord("Z"), 24, 23))


def front_from_bytes(buf: bytes | bytearray, first_line: int) -> Front | None:
    """Parse one piece of a log (no trailing newline) or return None to fall back."""
    size = len(buf)
    if size == 0:
        return None
    arr = np.frombuffer(buf, dtype=np.uint8)
    newlines = np.flatnonzero(arr == _NL)
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [size]))
    padded = np.concatenate((arr, np.full(_WINDOW + 40, _NL, dtype=np.uint8)))
    rows_of = np.lib.stride_tricks.sliding_window_view(padded, _WINDOW)

    # which lines start with a time stamp: one 28-byte row per line, checked by column
    first28 = rows_of[starts, :28]
    head = stamped_lines(first28, ends - starts)
    heads = np.flatnonzero(head)
    if not len(heads):
        return None
    m = len(heads)
    h = starts[heads]
    stamp = first28[heads]  # bytes: a column is widened only when it is read
    del first28

    stamped = stamp_seconds(stamp)
    if stamped is None:
        return None  # '+' not followed by a zone: the regex decides what that is
    time, stamp_len = stamped

    # the bytes after the stamp: [ ]LEVEL +LOGGER[ ][TAG( |EOL)]REST, looked at through
    # two small windows; byte classes come from one table lookup
    base = h + stamp_len
    rows = np.arange(m)
    w1 = _window(rows_of, base, _HEAD_WINDOW)
    c1 = _CLASSES[w1]
    level_start = (w1[:, 0] == _SPACE).astype(np.int64)
    level_end = _first_at_or_after((c1 & _WORD) == 0, level_start)
    if (level_end <= level_start).any() or (w1[rows, level_end] != _SPACE).any():
        return None
    logger_start = _first_at_or_after(w1 != _SPACE, level_end)
    if (logger_start < 0).any() or (w1[rows, logger_start] == _NL).any():
        return None
    logger_end = _first_at_or_after((c1 & _WS) != 0, logger_start)
    if (logger_end < 0).any():
        return None
    after = logger_end + (w1[rows, logger_end] == _SPACE)
    w2 = _window(rows_of, base + after, _TAG_WINDOW)
    c2 = _CLASSES[w2]
    tag_end = _first_at_or_after((c2 & _TAGCHAR) == 0, np.ones(m, np.int64))
    if (tag_end < 0).any():
        return None
    has_tag = ((c2[:, 0] & _UPPER) != 0) & (tag_end >= 2) & (
        (w2[rows, tag_end] == _SPACE) | (w2[rows, tag_end] == _NL))
    tag_len = np.where(has_tag, tag_end, 0)
    rest_start = after + np.where(has_tag, tag_end + (w2[rows, tag_end] == _SPACE), 0)

    head_codes, head_names = _factorize_bytes(w1, level_start, logger_end - level_start)
    split = [n.split(None, 1) + [""] for n in head_names]
    level = pd.factorize(np.array([p[0] for p in split], dtype=object)[head_codes], sort=False)
    logger = pd.factorize(np.array([p[1].strip() for p in split], dtype=object)[head_codes],
                          sort=False)
    tag_codes, tag_uniques = _factorize_bytes(w2, np.zeros(m, np.int64), tag_len)

    # one mask removes every head (and the lines before the first record); the messages
    # then come out of one decode and one split, one entry per line of the piece
    # keep/drop runs: [0, h0) keep, [h0, r0) drop, [r0, h1) keep, ... [r_last, size) keep
    bounds = np.empty(2 * m + 2, dtype=np.int64)
    bounds[0], bounds[-1] = 0, size
    bounds[1:-1:2] = h
    bounds[2:-1:2] = np.minimum(base + rest_start, ends[heads])
    runs = np.diff(bounds)
    keep = np.repeat(np.tile(np.array([True, False]), m + 1)[:len(runs)], runs)
    messages = arr[keep].tobytes().decode("utf-8", errors="replace").split("\n")
    if len(messages) != len(starts):
        return None
    lines = np.empty(len(messages), dtype=object)
    lines[:] = messages
    del messages
    rest = lines[heads]
    # continuation lines: every line after the first record that is not a record
    first = heads[0]
    cont = np.flatnonzero(~head[first:]) + first
    if len(cont):
        owner = np.searchsorted(heads, cont, side="right") - 1
        joined: dict[int, list[str]] = {}
        for o, c in zip(owner.tolist(), cont.tolist()):  # the few continuation lines
            joined.setdefault(o, []).append(lines[c])
        for o, extra in joined.items():
            rest[o] = rest[o] + "\n" + "\n".join(extra)
    tag_uniques = np.asarray(tag_uniques, dtype=object)
    return Front(n=m, line=first_line + heads.astype("int64"), time=time,
                 level=level, logger=logger, tag=(tag_codes, tag_uniques), rest=rest)


