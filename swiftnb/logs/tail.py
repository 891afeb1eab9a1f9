"""Tail mode: read a log that is still being written, in pieces, as event tables.

:class:`LogFollower` remembers where it stopped; each :meth:`~LogFollower.poll` parses
only the complete new records with the same vectorised parser as
:func:`~swiftnb.logs.reader.read_log`.  The last record is held back until the next
record starts (it may still get continuation lines), or until a poll finds no new
data (the writer flushes whole records), or at the end of the run.  A run's end is not
its ``Swift finished`` record: the final status line follows it, so a follower reads on
until the file has been quiet for a moment (``settle``) or its caller says the writer is
done (``stop``).

Two ways to drive it: the generator :func:`follow_log` (blocking sleeps, for scripts)
and the async generator :func:`afollow_log` (for notebook panels: it only awaits
``asyncio.sleep`` and never blocks the event loop).  :func:`tail_to_bus` republishes
the events on an :class:`~swiftnb.events.EventBus`, so the live panels can watch a run
that another process is executing.
"""

from __future__ import annotations

import asyncio
import os
import re
import time as _time
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pandas as pd

from swiftnb.events import EventBus
from swiftnb.logs.reader import (CHUNK_CHARS, READ_CHUNK, LineGuard, LogWarning, _empty_frame,
                                 open_log_path, _read_bytes, parse_bytes,
                                 to_events)

__all__ = ["LogFollower", "follow_log", "afollow_log", "tail_to_bus"]

_STAMP_LINE = re.compile(rb"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", re.M)


class LogFollower:
    """Incremental reader of one growing log file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        self.offset = 0          # bytes of the file consumed into _pending
        self.line = 1            # line number of the first pending line
        self._pending = b""      # complete lines not yet parsed (last record held back)
        self._guard = LineGuard(self.path)  # holds the unfinished last line
        self._idle_polls = 0
        self.finished = False    # a run-end record has been seen
        self._compressed = False

    def _read_new(self) -> bytes:
        """New bytes of the file, at most READ_CHUNK a poll (a log written faster than
        that is caught up over several polls; memory stays bounded)."""
        try:
            size = os.path.getsize(self.path)
        except FileNotFoundError:
            return b""
        if size < self.offset:  # truncated or replaced: start again
            warnings.warn(f"{self.path}: log file shrank; reading it again from the start",
                          LogWarning, stacklevel=3)
            self.offset, self.line, self._pending = 0, 1, b""
            self._guard = LineGuard(self.path)
        if size == self.offset or self._compressed:
            return b""
        with open_log_path(self.path) as fh:
            fh.seek(self.offset)
            data = fh.read(min(size - self.offset, READ_CHUNK))
        if self.offset == 0 and (data[:3] in (b"BZh", b"\x1f\x8b\x08")
                                 or data[:6] == b"\xfd7zXZ\x00"):
            # a compressed log cannot grow record by record: read it whole, once
            self._compressed = True
            self.offset = size
            text, _ = _read_bytes(self.path)
            return bytes(text)
        self.offset += len(data)
        return data

    def poll(self, *, final: bool = False) -> pd.DataFrame:
        """Parse the records completed since the last poll (``final``: all of them)."""
        data = self._read_new()
        if data:
            self._idle_polls = 0
            self._pending += data if self._compressed else self._guard.feed(data)
        else:
            self._idle_polls += 1
        if final:
            self._pending += self._guard.finish()
            self._guard.warn()
        text = self._pending
        if not text:
            return _empty_frame()
        if final or self._idle_polls >= 1 or self._compressed or len(text) > CHUNK_CHARS:
            ready, self._pending = text, b""
        else:
            # hold back the last record: it may still get continuation lines
            starts = [m.start() for m in _STAMP_LINE.finditer(text, max(0, len(text) - 65536))]
            last = starts[-1] if starts else 0
            if last == 0:
                return _empty_frame()
            ready, self._pending = text[:last], text[last:]
        first_line = self.line
        self.line += ready.count(b"\n") + (0 if ready.endswith(b"\n") else 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LogWarning)
            try:
                frame = parse_bytes(ready, name=self.path, first_line=first_line, check=False)
            except ValueError:  # no record in this piece (garbage lines): skip it
                return _empty_frame()
        if len(frame) and frame["kind"].isin(["RUN_SUCCESS", "RUN_FAILURE"]).any():
            self.finished = True
        return frame


#: seconds without new data after the run-end record before a follower takes the log as
#: complete (the writer still adds the final ticker line, then closes the file)
SETTLE = 2.0


class _Ending:
    """When a follow ends: ``stop()``; the run-end record seen and the file quiet for
    ``settle`` seconds (not at the record itself: the final status line comes after it,
    later still on a loaded machine); or no new data for ``idle_timeout`` seconds."""

    def __init__(self, follower: LogFollower, now: float, stop: Callable[[], bool] | None,
                 idle_timeout: float | None, settle: float) -> None:
        self.follower, self.stop = follower, stop
        self.idle_timeout, self.settle = idle_timeout, settle
        self.offset, self.last_data = follower.offset, now

    def due(self, now: float) -> bool:
        if self.follower.offset != self.offset:  # the file grew (even by a held-back line)
            self.offset, self.last_data = self.follower.offset, now
        quiet = now - self.last_data
        return ((self.stop is not None and self.stop())
                or (self.follower.finished and quiet >= self.settle)
                or (self.idle_timeout is not None and quiet > self.idle_timeout))

    def frames(self, clock: Callable[[], float]) -> Iterator[pd.DataFrame | None]:
        """The new records, a frame at a time, and None where the caller waits before the
        next poll (its own way: a sleep or an await); ends when :meth:`due` on ``clock``,
        with what the last poll left.  One loop for :func:`follow_log` and
        :func:`afollow_log`."""
        while True:
            frame = self.follower.poll()
            if len(frame):
                yield frame
            if self.due(clock()):
                rest = self.follower.poll(final=True)
                if len(rest):
                    yield rest
                return
            yield None


def follow_log(
    path: str | os.PathLike[str],
    *,
    interval: float = 0.5,
    stop: Callable[[], bool] | None = None,
    idle_timeout: float | None = None,
    settle: float = SETTLE,
) -> Iterator[pd.DataFrame]:
    """Yield event tables of new records until the run has ended (``Swift finished ...``
    and then nothing new for ``settle`` seconds), ``stop()`` says so, or nothing new
    arrived for ``idle_timeout`` seconds.  A caller that knows when the writer is done
    (its process exited) says so with ``stop`` and a long ``settle``."""
    ending = _Ending(LogFollower(path), _time.monotonic(), stop, idle_timeout, settle)
    for frame in ending.frames(_time.monotonic):
        if frame is None:
            _time.sleep(interval)
        else:
            yield frame


async def afollow_log(
    path: str | os.PathLike[str],
    *,
    interval: float = 0.5,
    stop: Callable[[], bool] | None = None,
    idle_timeout: float | None = None,
    settle: float = SETTLE,
) -> AsyncIterator[pd.DataFrame]:
    """The async form of :func:`follow_log` (awaits between polls; for the notebook)."""
    loop = asyncio.get_running_loop()
    ending = _Ending(LogFollower(path), loop.time(), stop, idle_timeout, settle)
    for frame in ending.frames(loop.time):
        if frame is None:
            await asyncio.sleep(interval)
        else:
            yield frame


async def tail_to_bus(path: str | os.PathLike[str], bus: EventBus, **kwargs) -> int:
    """Publish the events of a growing log on ``bus``; returns how many were published."""
    count = 0
    async for frame in afollow_log(path, **kwargs):
        for event in to_events(frame):
            bus.publish(event)
            count += 1
    return count
