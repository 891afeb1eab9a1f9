"""Whether a command line asks for the terminal monitor, and whether it can have it.

Kept free of rich so that ``swiftnb run`` without ``-tui`` pays nothing for it.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from typing import TextIO

__all__ = ["wants_terminal_monitor", "not_a_terminal", "NOT_A_TERMINAL"]

#: the one-line notice of a ``-tui`` whose stdout is a pipe or a file
NOT_A_TERMINAL = "{option}: stdout is not a terminal; the run shows the summary ticker"


def wants_terminal_monitor(ui: str | None, flags: Collection[str]) -> bool:
    """``-tui``, or ``-ui text`` (Swift/K's name of its terminal monitor)."""
    return "-tui" in flags or ui == "text"


def not_a_terminal(stream: TextIO | None) -> bool:
    """Whether ``stream`` cannot show a full-screen monitor (a pipe, a file, closed)."""
    if stream is None:
        return True
    try:
        return not os.isatty(stream.fileno())
    except (OSError, ValueError):
        return True
