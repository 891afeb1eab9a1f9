"""A frame of the terminal monitor: lines of (text, :class:`Style`) spans, plain data.

:func:`swiftnb.monitor.screen.draw` builds one on the run's event loop from the run's
model (cheap: no measuring, no rendering); the painter thread renders it with rich and
writes it (:mod:`swiftnb.monitor.painter`).  Cell text is cleaned here of what must never
reach a terminal: an app's stderr may hold escapes, carriage returns or tabs.
"""

from __future__ import annotations

import enum
import re

__all__ = ["Style", "Span", "Line", "clean", "line", "plain"]


class Style(enum.Enum):
    """A span's look, as rich names it."""

    PLAIN = ""
    BOLD = "bold"
    DIM = "dim"
    REVERSE = "reverse"
    RED = "red"
    GREEN = "green"
    YELLOW = "yellow"
    GREY = "grey37"
    TITLE = "bold cyan"


Span = tuple[str, Style]
Line = tuple[Span, ...]

#: control characters (C0, DEL, C1): each becomes one space
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean(row: Line) -> Line:
    """``row`` with every control character of its text made a space."""
    return tuple((_CONTROL.sub(" ", text), style) for text, style in row)


def line(text: str, style: Style = Style.PLAIN) -> Line:
    """One span as a line."""
    return ((text, style),)


def plain(row: Line) -> str:
    """A line's text without its styles."""
    return "".join(text for text, _ in row)
