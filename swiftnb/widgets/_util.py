"""Small helpers shared by the panels: HTML tables, numbers and dates."""

from __future__ import annotations

import html
import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["table", "num", "fmt", "when", "duration", "EPOCH_2001"]

_STYLE = ("border-collapse:collapse;font-family:monospace;font-size:12px")

#: times below this are run-relative (a simulated grid's virtual clock), not epoch seconds
EPOCH_2001 = 978307200.0


def fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "off"
        return f"{value:.2f}"
    return str(value)


def when(t: float | None, *, day: bool = True) -> str:
    """A time as people read it: a local date and time for wall-clock seconds, ``t=12.5 s``
    for a virtual clock (a simulated grid starts at 0), never a bare epoch float."""
    if t is None or t != t:
        return ""
    if t < EPOCH_2001:
        return f"t={t:.1f} s"
    stamp = time.localtime(t)
    return time.strftime("%Y-%m-%d %H:%M:%S" if day else "%H:%M:%S", stamp)


def duration(seconds: float | None) -> str:
    """``1 h 02 min``, ``3 min 05 s``, ``4.2 s``: a span without float noise."""
    if seconds is None or seconds != seconds or math.isinf(seconds):
        return ""
    s = max(0.0, seconds)
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, cls: str = "") -> str:
    """An HTML table (the state a browser receives in the HTML widget's value)."""
    head = "".join(f"<th style='padding:0 6px;text-align:left'>{html.escape(h)}</th>"
                   for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(fmt(c))}</td>" for c in row)
        + "</tr>" for row in rows)
    return (f"<table class='swiftnb-{cls}' style='{_STYLE}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def num(value: Any, default: float | None = None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default
