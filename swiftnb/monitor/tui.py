"""``swiftnb run -tui`` (Swift's ``-ui text``): a full-screen terminal monitor of the run.

Drawn with rich (plain ANSI: works over SSH in an 80x24 terminal) on the terminal's
alternate screen, from a :class:`~swiftnb.monitor.state.RunState` that follows the run's
event bus.  One ``call_later`` timer on the run's event loop builds a frame
(:func:`screen.draw`: lines of styled spans) at most :data:`REFRESH_HZ` times a second
and only when the model changed (or a second passed: the elapsed time moves); a thread
of its own (:class:`~swiftnb.monitor.painter.Painter`) renders the lines that changed
with rich and writes them, so the run pays for a few dict updates per event and a
fraction of a millisecond per redraw, rich's import and rendering happen off the loop,
and a terminal that reads slowly never holds the run.

Keys come from the terminal in cbreak mode (no echo, no line editing, but Ctrl-C still
interrupts as it does without the monitor: the run is cancelled, exit code 2):
↑/↓ (or k/j, Tab) select a throttle, +/- change it by one (past its top: ``off``, where
Swift allows it) through the executor (:class:`ThrottleControl`, as the notebook's
sliders do: a THROTTLE event says so), q leaves the monitor: the run goes on with the
ticker.  While the monitor owns the terminal the console output (ticker, warnings, the
script's output) is held and written out when it leaves (:mod:`swiftnb.monitor.held`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import termios
import tty
from typing import TYPE_CHECKING, Any, TextIO

from swiftnb.events import EventBus
from swiftnb.monitor.held import HeldOutput
from swiftnb.monitor.painter import Painter
from swiftnb.monitor.screen import draw, throttle_text
from swiftnb.monitor.state import RunState
from swiftnb.monitor.tuioptions import not_a_terminal
from swiftnb.scheduling.throttles import ThrottleControl

if TYPE_CHECKING:
    from swiftnb.runner import RunHandle

__all__ = ["TerminalMonitor", "REFRESH_HZ", "open_terminal_monitor"]

REFRESH_HZ = 4.0
#: a redraw even without events, so that the elapsed time and the ETA move
IDLE_REDRAW = 1.0

_UP = {"\x1b[A", "k", "\x1bOA"}
_DOWN = {"\x1b[B", "j", "\t", "\x1bOB"}
_MORE = {"+", "="}
_LESS = {"-", "_"}


def _keys(data: str) -> list[str]:
    """Split what one read gave into keys: escape sequences stay whole."""
    keys: list[str] = []
    i = 0
    while i < len(data):
        if data[i] == "\x1b" and i + 2 < len(data) and data[i + 1] in "[O":
            keys.append(data[i:i + 3])
            i += 3
        else:
            keys.append(data[i])
            i += 1
    return keys


class TerminalMonitor:
    """The full-screen monitor of one live run; :meth:`open` it, :meth:`close` it (both
    idempotent).  ``terminal``: where to draw (the real stdout); ``keyboard``: the file
    descriptor keys come from (None: no keys)."""

    def __init__(self, bus: EventBus, control: ThrottleControl | None, *,
                 terminal: TextIO, keyboard: int | None, label: str = "run") -> None:
        self.state = RunState(clock=bus.clock, control=control)
        self.state.label = label
        self._bus = bus
        self._terminal = terminal.fileno()
        self.keyboard = keyboard
        self.selected = 0
        self.message = ""
        self._painter: Painter | None = None
        self._held = HeldOutput()
        self._saved_tty: list[Any] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._drawn_version = -1
        self._drawn_at = 0.0

    # ------------------------------------------------------------------ lifetime
    def open(self, loop: asyncio.AbstractEventLoop) -> TerminalMonitor:
        """Follow the bus, take the screen and the keys, start the redraw timer."""
        self._loop = loop
        self.state.follow(self._bus)
        self._held.hold()
        self._painter = Painter(self._terminal)
        self._painter.start()
        if self.keyboard is not None:
            try:
                self._saved_tty = termios.tcgetattr(self.keyboard)
                tty.setcbreak(self.keyboard)
                loop.add_reader(self.keyboard, self._on_keys)
            except (termios.error, OSError, NotImplementedError):
                self.keyboard = None
        self._redraw(force=True)
        self._timer = loop.call_later(1.0 / REFRESH_HZ, self._tick)
        return self

    def close(self) -> None:
        """Give the terminal back (screen, keys, held output); the run is not touched."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.keyboard is not None and self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self.keyboard)
        if self._saved_tty is not None and self.keyboard is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.keyboard, termios.TCSADRAIN, self._saved_tty)
            self._saved_tty = None
        if self._painter is not None:
            painter, self._painter = self._painter, None
            painter.stop()
        self.state.close()
        self._held.release()

    # ------------------------------------------------------------------ drawing
    def _tick(self) -> None:
        self._redraw()
        if self._painter is not None and self._loop is not None:
            self._timer = self._loop.call_later(1.0 / REFRESH_HZ, self._tick)

    def _redraw(self, force: bool = False) -> None:
        if self._painter is None or self._loop is None:
            return
        if self._painter.failed:   # the terminal went away: the run goes on without it
            self.close()
            return
        now = self._loop.time()
        if not force and self.state.version == self._drawn_version \
                and now - self._drawn_at < IDLE_REDRAW:
            return
        self._drawn_version = self.state.version
        self._drawn_at = now
        size = self.size()
        self._painter.paint(draw(self.state, width=size[0], height=size[1],
                                 selected=self.selected, message=self.message), size)

    def size(self) -> tuple[int, int]:
        """The terminal's columns and rows now (80x24 when it cannot say)."""
        try:
            columns, rows = os.get_terminal_size(self._terminal)
        except OSError:
            return 80, 24
        return (columns or 80), (rows or 24)

    # ------------------------------------------------------------------ keys
    def _on_keys(self) -> None:
        assert self.keyboard is not None
        try:
            data = os.read(self.keyboard, 64).decode("utf-8", "replace")
        except OSError:
            data = ""
        if not data:    # end of input: no more keys, the monitor stays
            assert self._loop is not None
            self._loop.remove_reader(self.keyboard)
            return
        for key in _keys(data):
            if key == "q":
                self.close()
                print("swiftnb: left the monitor; the run goes on (Ctrl-C cancels it)",
                      file=sys.stderr, flush=True)
                return
            self.press(key)
        self._redraw(force=True)

    def press(self, key: str) -> None:
        """Act on one key (all but q, which :meth:`_on_keys` handles)."""
        throttles = self.state.throttles()
        if not throttles:
            return
        self.selected %= len(throttles)
        if key in _UP:
            self.selected = (self.selected - 1) % len(throttles)
        elif key in _DOWN:
            self.selected = (self.selected + 1) % len(throttles)
        elif key in _MORE or key in _LESS:
            chosen = throttles[self.selected]
            if not chosen.steerable:
                self.message = f"{chosen.name}: nothing to steer"
                return
            value = chosen.stepped(1 if key in _MORE else -1)
            refused = self.state.set_throttle(chosen.name, value, chosen.site)
            self.message = refused or f"set {throttle_text(chosen)} -> {value}"


def open_terminal_monitor(handle: RunHandle, loop: asyncio.AbstractEventLoop
                          ) -> TerminalMonitor | None:
    """The monitor of a run about to start, on the process's terminal (its keys from
    stdin when that is a terminal too); None when stdout is no terminal (the ticker
    alone then, as ``swiftnb run`` says in a warning)."""
    terminal = sys.__stdout__
    if terminal is None or not_a_terminal(terminal):
        return None
    keys = sys.__stdin__
    keyboard = None if keys is None or not_a_terminal(keys) else keys.fileno()
    control = handle.executor if isinstance(handle.executor, ThrottleControl) else None
    monitor = TerminalMonitor(handle.bus, control, terminal=terminal, keyboard=keyboard,
                              label=f"run {handle.runid}")
    monitor.state.watch_failures(handle.on_failure, handle.failures)
    return monitor.open(loop)
