"""Batching between the event stream and the widgets.

A run of 100,000 tasks emits about a million events; a browser cannot take a widget
update for each.  The bus callback of a :class:`Feed` therefore only appends the event to
a list.  A timer on the running event loop (``loop.call_later``, no asyncio Task) flushes
that list every ``interval`` seconds (0.2 s: at most 5 updates per second per panel):
every panel folds the batch into its own plain-Python state (``apply``), then updates its
widget traits once (``render``, under ``hold_sync``, so one comm message per widget that
changed).  When the run ends (RUN_SUCCESS / RUN_FAILURE) or :meth:`Feed.stop` is called,
a final flush happens, the bus subscription is removed and the timer is cancelled; ``on_end`` then lets the
owner draw its panels' last state (a chart's final point).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import Protocol

from swiftnb.events import Event, EventBus

__all__ = ["Feed", "Panel", "END_KINDS", "DEFAULT_INTERVAL"]

END_KINDS = frozenset({"RUN_SUCCESS", "RUN_FAILURE"})
DEFAULT_INTERVAL = 0.2  # seconds: <= 5 updates per second per panel


class Panel(Protocol):
    """What the feed needs of a panel."""

    def apply(self, events: list[Event]) -> None:
        """Fold a batch of events into the panel's state (no widget traffic)."""

    def render(self) -> bool:
        """Push the state into widget traits; True if any trait changed."""


class Feed:
    """Buffers events from a bus and flushes them into panels on a timer."""

    GRACE_TICKS = 3

    def __init__(self, bus: EventBus, panels: Iterable[Panel], *,
                 interval: float = DEFAULT_INTERVAL,
                 on_end: Callable[[], None] | None = None) -> None:
        self.bus = bus
        self.panels = list(panels)
        self.interval = float(interval)
        self.on_end = on_end
        self._buffer: list[Event] = []
        self._unsubscribe: Callable[[], None] | None = bus.subscribe(self._buffer.append)
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.flushes = 0          # timer ticks that found events or ended the feed
        self.busy = 0.0           # CPU seconds in flushes and on_end (the dashboard's own cost)
        self.events_seen = 0
        self.renders: dict[int, int] = {}   # id(panel) -> renders that changed a trait
        self.stopped = False
        self.ended = False        # the run's end was seen in the stream
        self._grace = 0
        self.stop_on_end = True   # False when the owner stops the feed at the run's end
        self.started_at = time.monotonic()
        self.stopped_at: float | None = None

    def prime(self, events: Iterable[Event]) -> None:
        """Events that happened before the feed subscribed (a dashboard opened late)."""
        self._buffer[:0] = list(events)

    # ---------------------------------------------------------------- timer
    def start(self) -> Feed:
        """Start the periodic flush on the running loop (if there is one)."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None  # no loop (a plain script): flush() by hand
            return self
        self._arm()
        return self

    def _arm(self) -> None:
        if self._loop is not None and not self.stopped and not self._loop.is_closed():
            self._timer = self._loop.call_later(self.interval, self._tick)

    def _tick(self) -> None:
        self._timer = None
        try:
            self.flush()
        finally:
            if not self.stopped:
                self._arm()

    # ---------------------------------------------------------------- flush
    def flush(self) -> None:
        """Fold the buffered events into every panel and update their widgets once."""
        t = time.process_time()
        try:
            self._flush()
        finally:
            self.busy += time.process_time() - t

    def _flush(self) -> None:
        buffer = self._buffer
        events = buffer[:]
        del buffer[:]
        if events:
            self.events_seen += len(events)
            for panel in self.panels:
                panel.apply(events)
        changed_any = False
        for panel in self.panels:
            if panel.render():
                changed_any = True
                self.renders[id(panel)] = self.renders.get(id(panel), 0) + 1
        if events or changed_any:
            self.flushes += 1
        if events and not self.ended and any(e.kind in END_KINDS for e in events):
            # the run ended; providers still report their shutdown (blocks, workers)
            # for a moment, so stop after a few quiet ticks (or when stop() is called)
            self.ended = True
            self._grace = self.GRACE_TICKS
        elif self.ended and not events and self.stop_on_end:
            self._grace -= 1
            if self._grace <= 0:
                self.stop()

    def stop(self) -> None:
        """Final flush, unsubscribe, cancel the timer.  Safe to call twice."""
        if self.stopped:
            return
        self.stopped = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._buffer:
            self.flush()
        else:
            for panel in self.panels:
                if panel.render():
                    self.renders[id(panel)] = self.renders.get(id(panel), 0) + 1
        self.stopped_at = time.monotonic()
        if self.on_end is not None:
            t = time.process_time()
            try:
                self.on_end()
            finally:
                self.busy += time.process_time() - t

    @property
    def running(self) -> bool:
        return not self.stopped

    def renders_of(self, panel: Panel) -> int:
        return self.renders.get(id(panel), 0)
