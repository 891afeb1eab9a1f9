"""Small live bokeh charts inside ipywidgets.

A bokeh figure is wrapped in ``jupyter_bokeh.BokehModel``, an ipywidget that carries
bokeh document patches over its own widget comm.  That is what makes the charts live in
both JupyterLab and the classic notebook without a bokeh server, and lets them sit in
the same VBox as the other panels: ``ColumnDataSource.stream`` on the kernel side turns
into one PATCH-DOC (a few comm messages) per flush, however many events the batch held.
(``show(..., notebook_handle=True)`` + ``push_notebook`` would need the classic
notebook's bokeh comm and cannot be composed into a widget layout.)

``BokehModel``'s view needs BokehJS in the page and does not load it: the first chart
of a kernel puts it there (:func:`swiftnb.bokehjs.load_once`, from the installed bokeh,
no CDN), under the cell that builds the chart.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from swiftnb.bokehjs import load_once

if TYPE_CHECKING:
    from bokeh.models import LayoutDOM

__all__ = ["ScoreChart", "BlockTimeline", "bokeh_widget"]

_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
            "#7f7f7f", "#bcbd22", "#17becf")


def bokeh_widget(fig: LayoutDOM) -> W.Widget:
    """The figure as a widget, with BokehJS loaded into the page first."""
    from jupyter_bokeh import BokehModel

    load_once()
    return BokehModel(fig)


class ScoreChart:
    """Site tscore over (run) time, one line per site, streamed with a rollover."""

    ROLLOVER = 600

    def __init__(self, *, width: int = 460, height: int = 200) -> None:
        from bokeh.models import ColumnDataSource
        from bokeh.plotting import figure

        self.sites: list[str] = []
        self.source = ColumnDataSource(data={"t": []})
        self.figure = figure(width=width, height=height, y_axis_type="log",
                             title="site tscore", x_axis_label="run time (s)",
                             toolbar_location=None)
        self.figure.y_range.start = 0.01  # type: ignore[attr-defined]  # a DataRange1d
        self.figure.y_range.end = 100  # type: ignore[attr-defined]  # (as above)
        self.widget = bokeh_widget(self.figure)
        self.last: tuple | None = None
        self.points = 0
        self.updates = 0

    def _add_sites(self, names: list[str]) -> None:
        data = dict(self.source.data)
        n = len(data["t"])
        for name in names:
            data[name] = [math.nan] * n
            color = _PALETTE[len(self.sites) % len(_PALETTE)]
            self.sites.append(name)
            self.figure.line("t", name, source=self.source, color=color, legend_label=name)
        self.source.data = data
        self.figure.legend.location = "bottom_left"
        self.figure.legend.label_text_font_size = "8pt"

    def update(self, t: float, scores: dict[str, float]) -> bool:
        """Add one point per site at time ``t`` if a score changed since the last point."""
        new = [s for s in scores if s not in self.sites]
        if new:
            self._add_sites(new)
        row = tuple(scores.get(s, math.nan) for s in self.sites)
        if row == self.last and not new:
            return False
        self.last = row
        point: dict[str, Any] = {"t": [t]}
        for name, value in zip(self.sites, row):
            point[name] = [max(0.01, min(100.0, value)) if value == value else math.nan]
        self.source.stream(point, rollover=self.ROLLOVER)
        self.points += 1
        self.updates += 1
        return True


_STATE_COLORS = {"requested": "#bbbbbb", "queued": "#bbbbbb", "active": "#2ca02c",
                 "running": "#2ca02c", "shutdown": "#1f77b4", "done": "#1f77b4",
                 "failed": "#d62728"}


class BlockTimeline:
    """One bar per coaster block: requested .. started .. ended (or now)."""

    def __init__(self, *, width: int = 460, height: int = 160) -> None:
        from bokeh.models import ColumnDataSource
        from bokeh.plotting import figure

        self.source = ColumnDataSource(data={"y": [], "queued_left": [], "left": [],
                                             "right": [], "color": [], "id": []})
        self.figure = figure(width=width, height=height, title="blocks",
                             x_axis_label="run time (s)", toolbar_location=None)
        self.figure.hbar(y="y", left="queued_left", right="left", height=0.6,
                         source=self.source, color="#dddddd")
        self.figure.hbar(y="y", left="left", right="right", height=0.6,
                         source=self.source, color="color")
        self.widget = bokeh_widget(self.figure)
        self.last: tuple | None = None
        self.updates = 0

    def update(self, rows: list[dict[str, Any]]) -> bool:
        data: dict[str, list[Any]] = {"y": [], "queued_left": [], "left": [], "right": [],
                                      "color": [], "id": []}
        for i, r in enumerate(rows):
            data["y"].append(i)
            data["id"].append(r["id"])
            data["queued_left"].append(r["requested"])
            start = r["started"] if r["started"] is not None else r["end"]
            data["left"].append(start)
            data["right"].append(r["end"])
            data["color"].append(_STATE_COLORS.get(r["state"], "#2ca02c"))
        key = tuple(tuple(round(v, 1) if isinstance(v, float) else v for v in col)
                    for col in data.values())
        if key == self.last:
            return False
        self.last = key
        self.source.data = data
        self.updates += 1
        return True
