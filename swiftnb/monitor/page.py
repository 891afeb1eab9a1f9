"""The web monitor's page: the notebook panels' content as bokeh models.

One document per browser, built from a :class:`~swiftnb.monitor.view.MonitorView`:
a header (run, status, ``N of M done · F failed``), progress per app, sites with a chart
of their tscore over time, coaster blocks, throttle sliders, failures and what the run
waits for.  A periodic callback (every ``INTERVAL_MS``) redraws when the view's version
moved (or a second passed: the clock) and sends only the tables that changed, so a run's rate of events never
reaches the browser: at most a few small patches a second, and one model per table,
never one per task.
"""

from __future__ import annotations

import html
import math
import time
from collections.abc import Callable

from bokeh.document import Document
from bokeh.layouts import column, row
from bokeh.models import ColumnDataSource, CustomJSTickFormatter, HoverTool, LayoutDOM
from bokeh.models.widgets.markups import Div
from bokeh.models.widgets.sliders import Slider
from bokeh.models.widgets.tables import DataTable, TableColumn
from bokeh.plotting import figure

from swiftnb.monitor.state import Throttle
from swiftnb.monitor.view import TABLES, MonitorView

__all__ = ["build_page", "INTERVAL_MS"]

#: how often a page looks for changes (ms): at most 4 updates a second per browser
INTERVAL_MS = 250
#: the longest a page goes without a redraw (elapsed time and ETA move without events)
CLOCK_S = 1.0
#: the score chart's colours, one per site in order
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf")


def _heading(text: str) -> Div:
    return Div(text=f"<h3 style='margin:8px 0 2px 0'>{text}</h3>")


def _table(name: str, height: int) -> tuple[ColumnDataSource, DataTable]:
    source = ColumnDataSource({key: [] for key in TABLES[name]})
    table = DataTable(source=source, columns=[TableColumn(field=k, title=k)
                                              for k in TABLES[name]],
                      height=height, sizing_mode="stretch_width", index_position=None,
                      css_classes=[f"swiftnb-{name}"], name=name)
    return source, table


def _score_chart() -> tuple[ColumnDataSource, figure]:
    source = ColumnDataSource({"xs": [], "ys": [], "site": [], "color": []})
    chart = figure(height=220, sizing_mode="stretch_width", x_axis_type="datetime",
                   y_axis_label="tscore", toolbar_location=None, name="scores")
    chart.multi_line("xs", "ys", line_color="color", line_width=2, source=source)
    chart.add_tools(HoverTool(tooltips=[("site", "@site")]))
    return source, chart


def _key(setting: Throttle) -> str:
    return setting.name if setting.site is None else f"{setting.name} {setting.site}"


def _slider_value(setting: Throttle) -> int:
    """Where a slider stands: its value, or its last stop for off (or beyond its end)."""
    value = setting.value
    if not isinstance(value, (int, float)) or math.isinf(value) or value > setting.top:
        return setting.top + 1
    return max(1, int(value))


def _title(setting: Throttle) -> str:
    """The slider's title; bokeh shows the value after it (off for the last stop)."""
    return _key(setting) if setting.value is not None else f"{_key(setting)} (unknown)"


class Page:
    """One browser's document and what it last sent."""

    def __init__(self, view: MonitorView, doc: Document) -> None:
        self.view = view
        self.doc = doc
        self.seen = -1
        self.drawn = -math.inf   # when it last redrew (the header's clock moves alone)
        self.title = Div(text="", css_classes=["swiftnb-title"], name="title")
        self.counts = Div(text="", css_classes=["swiftnb-counts"], name="counts")
        self.sources: dict[str, ColumnDataSource] = {}
        self.sent: dict[str, object] = {}
        self.tables: dict[str, DataTable] = {}
        tables = self.tables
        for name, height in (("apps", 140), ("sites", 120), ("blocks", 120),
                             ("failures", 160), ("waiting", 110)):
            self.sources[name], tables[name] = _table(name, height)
        self.sources["scores"], chart = _score_chart()
        self.sliders: dict[str, Slider] = {}
        self.slider_box = column(sizing_mode="stretch_width")
        self.throttle_note = Div(text="", css_classes=["swiftnb-throttle-note"])
        left = column(_heading("Progress"), tables["apps"], _heading("Sites"),
                      tables["sites"], chart, sizing_mode="stretch_width")
        right = column(_heading("Throttles"), self.slider_box, self.throttle_note,
                       _heading("Coaster blocks"), tables["blocks"],
                       _heading("Waiting for"), tables["waiting"],
                       sizing_mode="stretch_width")
        layout: LayoutDOM = column(self.title, self.counts,
                                   row(left, right, sizing_mode="stretch_width"),
                                   _heading("Failures"), tables["failures"],
                                   sizing_mode="stretch_width")
        doc.title = "swiftnb monitor"
        doc.add_root(layout)
        self.update()
        doc.add_periodic_callback(self.update, INTERVAL_MS)

    def update(self) -> None:
        """Send what changed since the last call (nothing when the version stands)."""
        version = self.view.version
        now = time.monotonic()
        if version == self.seen and now - self.drawn < CLOCK_S:
            return
        self.seen, self.drawn = version, now
        self.title.text = self.view.title()
        self.counts.text = self.view.counts()
        tables: dict[str, Callable[[], object]] = {
            "apps": self.view.apps_table, "sites": self.view.sites_table,
            "blocks": self.view.blocks_table, "failures": self.view.failures_table,
            "waiting": self.view.waiting_table,
            "scores": self._score_lines}
        for name, read in tables.items():
            data = read()
            if data != self.sent.get(name):
                self.sent[name] = data
                source = self.sources[name]
                rows = len(next(iter(source.data.values()), []))
                source.data = dict(data)  # type: ignore[call-overload]  # bokeh types data as its own DataDict
                table = self.tables.get(name)
                if table is not None and rows == len(next(iter(source.data.values()), [])):
                    # BokehJS redraws a table when its row count changes, not when its
                    # cells do (its view's indices stay): a tag change makes it redraw
                    table.tags = [version]
        self._update_sliders()

    def _score_lines(self) -> dict[str, list[object]]:
        lines: dict[str, list[object]] = {"xs": [], "ys": [], "site": [], "color": []}
        for i, (site, (times, scores)) in enumerate(sorted(self.view.scores().items())):
            lines["xs"].append([t * 1000.0 for t in times])  # datetime axis: ms
            lines["ys"].append(list(scores))
            lines["site"].append(site)
            lines["color"].append(PALETTE[i % len(PALETTE)])
        return lines

    def _update_sliders(self) -> None:
        for setting in self.view.throttles():
            slider = self.sliders.get(_key(setting))
            if slider is None:
                slider = self._new_slider(setting)
            slider.title = _title(setting)
            slider.disabled = not setting.steerable or setting.value is None
            wanted = _slider_value(setting)
            if slider.value != wanted:
                slider.value = wanted

    def _new_slider(self, setting: Throttle) -> Slider:
        """A slider whose release (or arrow key) changes the run's throttle; its last
        stop, past ``top``, is off where Swift allows it."""
        slider = Slider(start=1, end=setting.top + 1, step=1, value=_slider_value(setting),
                        title=_title(setting), sizing_mode="stretch_width", tooltips=False,
                        format=CustomJSTickFormatter(  # the last stop reads "off"
                            code=f"return tick > {setting.top} ? 'off' : String(tick)"),
                        name=f"throttle {_key(setting)}",
                        css_classes=["swiftnb-throttle", f"swiftnb-throttle-{setting.name}"])

        def moved(_attr: str, _old: object, new: object) -> None:
            assert isinstance(new, (int, float))
            value: int | str = int(new)
            if new > setting.top:
                value = "off" if setting.off_allowed else setting.top
            refusal = self.view.set_throttle(setting.name, value, setting.site)
            self.throttle_note.text = "" if refusal is None else \
                f"refused: {html.escape(refusal)}"
            self.seen = -1  # redraw the readouts from the run's own values

        slider.on_change("value_throttled", moved)
        self.sliders[_key(setting)] = slider
        self.slider_box.children = [*self.slider_box.children, slider]
        return slider


def build_page(view: MonitorView) -> Callable[[Document], None]:
    """The bokeh application function: a new :class:`Page` of ``view`` per browser."""
    def make(doc: Document) -> None:
        Page(view, doc)

    return make
