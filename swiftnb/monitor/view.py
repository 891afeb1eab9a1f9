"""What the web page reads of a run: plain rows and values, no bokeh, no widgets.

:mod:`swiftnb.monitor.page` draws a :class:`MonitorView`; :mod:`swiftnb.monitor.webview`
makes one of the run's :class:`~swiftnb.monitor.state.RunState` (live or from a log).
Keeping the page behind this small interface lets one page serve both.
"""

from __future__ import annotations

from typing import Protocol

from swiftnb.monitor.state import Throttle

__all__ = ["Columns", "MonitorView", "TABLES"]

#: a table as bokeh's ColumnDataSource takes it: column name -> values, one per row
Columns = dict[str, list[object]]

#: each table's columns, in the order shown: what a view's tables must hold
TABLES: dict[str, tuple[str, ...]] = {
    "apps": ("app", "done", "of", "failed", "cached", "rate", "ETA"),
    "sites": ("site", "score", "tscore", "limit", "running", "queued", "done", "failed",
              "set"),
    "blocks": ("block", "site", "shape", "walltime", "state", "LRM", "workers", "running",
               "done"),
    "failures": ("time", "app", "site", "exit", "command", "stderr"),
    "waiting": ("subject", "id", "site", "reason", "detail"),
}


class MonitorView(Protocol):
    """A run's panels as data; ``version`` grows whenever any of it changed."""

    @property
    def version(self) -> int: ...

    def title(self) -> str: ...

    def counts(self) -> str: ...

    def apps_table(self) -> Columns: ...

    def sites_table(self) -> Columns: ...

    def scores(self) -> dict[str, tuple[list[float], list[float]]]: ...

    def blocks_table(self) -> Columns: ...

    def failures_table(self) -> Columns: ...

    def waiting_table(self) -> Columns: ...

    def throttles(self) -> list[Throttle]: ...

    def set_throttle(self, name: str, value: int | str, site: str | None) -> str | None:
        """Change a throttle of the run; the refusal's message, or None when done."""
        ...
