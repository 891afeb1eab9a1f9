"""Small helpers shared by the panels: HTML tables and finding parts of a run."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["table", "scheduler_of", "executor_of", "providers_of", "num", "fmt"]

_STYLE = ("border-collapse:collapse;font-family:monospace;font-size:12px")


def fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "off"
        return f"{value:.2f}"
    return str(value)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, cls: str = "") -> str:
    """An HTML table (the state a browser receives in the HTML widget's value)."""
    head = "".join(f"<th style='padding:0 6px;text-align:left'>{html.escape(h)}</th>"
                   for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:0 6px'>{html.escape(fmt(c))}</td>" for c in row)
        + "</tr>" for row in rows)
    return (f"<table class='swiftnb-{cls}' style='{_STYLE}'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")


def scheduler_of(run: Any) -> Any:
    """The run's executor that has ``set_throttle`` (the Scheduler), or None."""
    if run is None:
        return None
    for attr in ("scheduler", "executor"):
        obj = getattr(run, attr, None)
        if obj is not None and hasattr(obj, "set_throttle"):
            return obj
    inner = getattr(run, "run", None)
    if inner is not None and inner is not run:
        return scheduler_of(inner)
    return None


def executor_of(run: Any) -> Any:
    """Whatever the engine submits tasks to (Scheduler or single-site executor)."""
    if run is None:
        return None
    for attr in ("executor", "scheduler"):
        obj = getattr(run, attr, None)
        if obj is not None and hasattr(obj, "submit"):
            return obj
    inner = getattr(run, "run", None)
    if inner is not None and inner is not run:
        return executor_of(inner)
    return None


def providers_of(run: Any) -> list[Any]:
    """The providers of the run's sites (for coaster block snapshots)."""
    sched = scheduler_of(run) or executor_of(run)
    out = []
    for site in getattr(sched, "sites", None) or ():
        provider = getattr(site, "provider", None)
        if provider is not None:
            out.append(provider)
    provider = getattr(sched, "provider", None)
    if provider is not None:
        out.append(provider)
    return out


def num(value: Any, default: float | None = None) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return default
