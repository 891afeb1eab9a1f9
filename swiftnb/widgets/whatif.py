"""What if: several configurations side by side (docs/whatif.md).

One row per configuration: the predicted time to completion as a bar from the 10th to
the 90th percentile with the median marked, the actual run's time beside it when there
is one, and each site's share of the tasks as a stacked bar (predicted, and actual
below it).  A table says the same in numbers, for reading and for copying.

The panel shows a table from :func:`swiftnb.forecast.comparison.compare`;
:meth:`WhatIfPanel.compare` makes one and shows it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W
import pandas as pd

from swiftnb.display import duration
from swiftnb.forecast.comparison import ACTUAL, ACTUAL_SHARE, Scenario, compare
from swiftnb.forecast.model import Model
from swiftnb.forecast.prediction import SHARE
from swiftnb.widgets._util import table
from swiftnb.widgets.chart import _PALETTE, bokeh_widget

__all__ = ["WhatIfPanel", "comparison_rows", "share_bars"]


def _percent(value: float) -> str:
    return f"{value * 100:.0f}%"


def _sites(frame: pd.DataFrame) -> list[str]:
    """The sites of the table's share columns, predicted or actual, in name order."""
    names = {c[len(SHARE):] for c in frame.columns if c.startswith(SHARE)}
    names |= {c[len(ACTUAL_SHARE):] for c in frame.columns if c.startswith(ACTUAL_SHARE)}
    return sorted(names)


def comparison_rows(frame: pd.DataFrame) -> list[tuple[str, ...]]:
    """The table's rows as shown: configuration, median, interval, actual, shares."""
    sites = _sites(frame)
    rows: list[tuple[str, ...]] = []
    for label, row in frame.iterrows():
        actual = row.get(ACTUAL, math.nan)
        shares = ", ".join(f"{s} {_percent(row.get(SHARE + s, 0.0))}" for s in sites)
        if actual == actual:
            shares += " (actual: " + ", ".join(
                f"{s} {_percent(row.get(ACTUAL_SHARE + s, 0.0))}" for s in sites) + ")"
        rows.append((str(label), duration(row["median"]),
                     f"{duration(row['p10'])} .. {duration(row['p90'])}",
                     duration(actual) if actual == actual else "-", shares))
    return rows


def share_bars(frame: pd.DataFrame) -> dict[str, list[Any]]:
    """The stacked share bars' data: one bar per configuration (and one per actual run,
    labelled ``<configuration> (actual)``), a column per site."""
    sites = _sites(frame)
    data: dict[str, list[Any]] = {"bar": [], **{s: [] for s in sites}}
    for label, row in frame.iterrows():
        data["bar"].append(str(label))
        for s in sites:
            data[s].append(float(row.get(SHARE + s, 0.0)))
        if row.get(ACTUAL, math.nan) == row.get(ACTUAL, math.nan):
            data["bar"].append(f"{label} (actual)")
            for s in sites:
                data[s].append(float(row.get(ACTUAL_SHARE + s, 0.0)))
    return data


class WhatIfPanel:
    """Predicted TTC (median, 10-90% interval), the actual run, and per-site shares of
    several configurations; ``.widget`` is the ipywidget to display."""

    title = "What if"
    HEADERS = ("configuration", "predicted TTC", "10-90%", "actual", "share of tasks")

    def __init__(self, frame: pd.DataFrame | None = None, *, width: int = 640) -> None:
        self.width = width
        self.frame = pd.DataFrame()
        self.table = W.HTML(value=table(self.HEADERS, [], cls="whatif"))
        self.charts = W.VBox([])
        self.widget = W.VBox([W.HTML(value=f"<b>{self.title}</b>"), self.charts, self.table])
        if frame is not None:
            self.show(frame)

    @classmethod
    def compare(cls, script: str | os.PathLike[str], model: Model | str | os.PathLike[str],
                scenarios: Mapping[str, Scenario | Any], *,
                args: Sequence[str] | Mapping[str, Any] | None = None, runs: int = 10,
                seed: int = 0, at: float | None = None) -> WhatIfPanel:
        """Predict each configuration (:func:`~swiftnb.forecast.comparison.compare`) and
        show them."""
        return cls(compare(script, model, scenarios, args=args, runs=runs, seed=seed, at=at))

    def show(self, frame: pd.DataFrame) -> None:
        """Show ``frame`` (a table from ``compare``) in place of what was shown."""
        self.frame = frame
        self.table.value = table(self.HEADERS, comparison_rows(frame), cls="whatif")
        self.charts.children = (bokeh_widget(self._ttc_figure()),
                                bokeh_widget(self._share_figure()))

    def _ttc_figure(self) -> Any:
        from bokeh.models import ColumnDataSource, FactorRange
        from bokeh.plotting import figure

        labels = [str(label) for label in self.frame.index][::-1]
        frame = self.frame.loc[self.frame.index[::-1]]
        source = ColumnDataSource(data={
            "y": labels, "p10": frame["p10"].tolist(), "p90": frame["p90"].tolist(),
            "median": frame["median"].tolist(), "actual": frame[ACTUAL].tolist()})
        fig = figure(y_range=FactorRange(factors=labels), width=self.width,
                     height=60 + 40 * len(labels),
                     title="time to completion (s): 10-90% interval, median, actual",
                     toolbar_location=None, x_axis_label="seconds")
        fig.hbar(y="y", left="p10", right="p90", height=0.5, source=source,
                 color="#9ecae1", legend_label="10-90%")
        fig.scatter(x="median", y="y", source=source, size=10, color="#08519c",
                    legend_label="median")
        fig.scatter(x="actual", y="y", source=source, size=12, marker="diamond",
                    color="#d62728", legend_label="actual")
        fig.legend.location = "bottom_right"
        fig.legend.label_text_font_size = "8pt"
        return fig

    def _share_figure(self) -> Any:
        from bokeh.models import ColumnDataSource, FactorRange, Range1d
        from bokeh.plotting import figure

        data = share_bars(self.frame)
        sites = [k for k in data if k != "bar"]
        bars = data["bar"][::-1]
        data = {k: v[::-1] for k, v in data.items()}
        fig = figure(y_range=FactorRange(factors=bars), x_range=Range1d(start=0, end=1),
                     width=self.width, height=60 + 28 * len(bars), title="share of tasks per site",
                     toolbar_location=None)
        if sites:
            fig.hbar_stack(sites, y="bar", height=0.6, source=ColumnDataSource(data=data),
                           color=[_PALETTE[i % len(_PALETTE)] for i in range(len(sites))],
                           legend_label=sites)
            fig.legend.location = "bottom_right"
            fig.legend.label_text_font_size = "8pt"
        return fig

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
