"""Puts the terminal monitor's frames on the terminal from a thread of its own.

The run's event loop only builds a frame (a list of lines of styled spans: a fraction
of a millisecond) and hands it over; this thread renders it with rich (styles to ANSI,
each line cut to the terminal's width with an ellipsis, wide characters counted) and
writes, in one write, the lines that differ from the frame before, each at its row.
rich is imported here, in this thread, off the run's start.  Only lines that changed
are rendered (a redraw mostly moves the header, the bar and a row or two), and a
terminal that reads slowly (an SSH link that stalls, a paused tmux pane, Ctrl-S) never
stops the run: the writes block here, and a frame not yet written is replaced by the
newer one.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from swiftnb.monitor.frame import Line

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["Painter", "LineRenderer", "ENTER", "LEAVE", "frame_update"]

#: the alternate screen, the cursor hidden, the screen cleared
ENTER = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"
#: styles reset, the cursor shown, the main screen back
LEAVE = "\x1b[0m\x1b[?25h\x1b[?1049l"
_CLEAR = "\x1b[H\x1b[2J"
_ERASE_REST = "\x1b[K"


class LineRenderer:
    """Renders lines with rich: ANSI (or plain text with ``color=False``), cut to a
    width with an ellipsis.  Made in the painter thread, which imports rich."""

    def __init__(self, color: bool = True) -> None:
        import io

        from rich.color import ColorSystem
        from rich.console import Console
        from rich.text import Text

        self._text = Text
        self._color = ColorSystem.EIGHT_BIT if color else None
        self._console: Console = Console(file=io.StringIO(), force_terminal=color,
                                         highlight=False, legacy_windows=False)

    def render(self, row: Line, width: int) -> str:
        """One line within ``width`` columns."""
        text = self._text(no_wrap=True, overflow="ellipsis", end="")
        for chunk, style in row:
            text.append(chunk, style.value or None)
        text.truncate(width, overflow="ellipsis")
        if self._color is None:
            return text.plain
        return "".join(seg.style.render(seg.text, color_system=self._color)
                       if seg.style else seg.text
                       for seg in text.render(self._console, end=""))


def frame_update(previous: list[str], frame: list[str]) -> str:
    """The ANSI that turns a screen showing ``previous`` into one showing ``frame``
    (both lines of ANSI, row 1 first): only the rows that differ are rewritten."""
    parts: list[str] = []
    for row in range(max(len(previous), len(frame))):
        new = frame[row] if row < len(frame) else ""
        if row >= len(previous) or previous[row] != new:
            parts.append(f"\x1b[{row + 1};1H{new}{_ERASE_REST}")
    return "".join(parts)


class Painter:
    """Writes frames to the terminal ``fd``: :meth:`start` takes the screen,
    :meth:`paint` hands over the newest frame, :meth:`stop` gives the screen back.
    ``failed`` is set when the terminal went away (a write failed)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.failed = False
        self.painted = 0
        self._pending: tuple[list[Line], tuple[int, int]] | None = None
        self._stopping = False
        self._wake = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="swiftnb-tui-painter",
                                        daemon=True)
        self._shown: list[str] = []
        self._size: tuple[int, int] | None = None
        self._renderer: LineRenderer | None = None
        #: the rendering of each line of the frame shown (a line that did not change is
        #: not rendered again)
        self._rendered: dict[Line, str] = {}

    def start(self) -> None:
        self._write(ENTER)
        self._thread.start()

    def paint(self, frame: list[Line], size: tuple[int, int]) -> None:
        """Show ``frame`` (fitted to ``size``, columns x rows) as soon as the terminal
        takes it; a frame handed over before is dropped if not written yet."""
        with self._wake:
            self._pending = (frame, size)
            self._wake.notify()

    def stop(self, timeout: float = 2.0) -> None:
        """Write the last frame handed over, then give the screen back (waits at most
        ``timeout`` for a terminal that does not read)."""
        with self._wake:
            self._stopping = True
            self._wake.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)
        elif not self.failed:   # never started: the screen was still taken
            self._write(LEAVE)

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._pending is None and not self._stopping:
                    self._wake.wait()
                pending, self._pending = self._pending, None
                stopping = self._stopping
            if pending is not None and not self.failed:
                self._show(*pending)
            if stopping:
                if not self.failed:
                    self._write(LEAVE)
                return

    def _show(self, frame: list[Line], size: tuple[int, int]) -> None:
        if self._renderer is None:
            self._renderer = LineRenderer()
        prefix = ""
        if size != self._size:   # a resized terminal: start from a clear screen
            self._size, self._shown, self._rendered, prefix = size, [], {}, _CLEAR
        rendered = {row: self._rendered.get(row) or self._renderer.render(row, size[0])
                    for row in frame}
        self._rendered = rendered
        lines = [rendered[row] for row in frame]
        update = prefix + frame_update(self._shown, lines)
        self._shown = lines
        if update:
            self._write(update)
            self.painted += 1

    def _write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        try:
            while data:
                data = data[os.write(self.fd, data):]
        except OSError:
            self.failed = True
