"""The panels' HTML tables (numbers and dates read as :mod:`swiftnb.display` says)."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

from swiftnb.display import fmt

__all__ = ["table"]

_STYLE = ("border-collapse:collapse;font-family:monospace;font-size:12px")

def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, cls: str = "") -> str:
    """An HTML table (the state a browser receives in the HTML widget's value)."""
    head = "".join(f"<th style='padding:0 6px;text-align:left'>{html.escape(h)}</th>"
                   for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(fmt(c))}</td>" for c in row)
        + "</tr>" for row in rows)
    return (f"<table class='swiftnb-{cls}' style='{_STYLE}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")
