"""The task stream: one bar per task per execution slot over time, as Dask's dashboard
draws its workers' threads.

A task is an attempt (a task id): JOB_START names its app (``tr``) and site (``host``),
JOB_TASK ties the job to the task id, TASK_STATUS_CHANGE to Active (2) starts its bar and
to Completed (7), Failed (5) or Canceled (6) ends it.  Each site has slots: a task that
becomes active takes the lowest free slot of its site, so the rows of one site show how
busy it was.  Bars are colored by app name (failed ones red).  Finished bars are streamed
to the chart at most once per ``EVERY`` seconds (one bokeh patch for all of them); bars
of running tasks are drawn up to "now" in a second, small source that is replaced.
Times are dates on the axis (wall clock) or run seconds (a simulated grid's clock).

A call memoization reused (JOB_CACHED) ran no task: it is a diamond of its own colour on
a last row, ``cached``, at the time of the decision (zero duration), so a re-run shows
what it skipped beside what it ran.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.display import EPOCH_2001
from swiftnb.widgets.progress import CACHED_COLOR
from swiftnb.widgets.taskstates import TaskStates

if TYPE_CHECKING:  # bokeh is imported when the chart is first drawn
    from bokeh.models import ColumnDataSource
    from bokeh.plotting import figure

__all__ = ["TaskStream", "Bar", "Reuse", "TaskStreamPanel", "CACHED_ROW"]

#: the chart row of the calls memoization reused
CACHED_ROW = "cached"

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8")
FAILED_COLOR = "#d62728"
CANCELED_COLOR = "#bbbbbb"
_ENDS = {7: "completed", 5: "failed", 6: "canceled"}


class Bar:
    """One task on one slot: [start, end) in run time."""

    __slots__ = ("taskid", "app", "site", "slot", "start", "end", "state")

    def __init__(self, taskid: str, app: str, site: str, slot: int, start: float) -> None:
        self.taskid = taskid
        self.app = app
        self.site = site
        self.slot = slot
        self.start = start
        self.end: float | None = None
        self.state = "active"


class Reuse:
    """One reused call: when the decision was made, its app and job."""

    __slots__ = ("time", "app", "jobid")

    def __init__(self, time: float, app: str, jobid: str) -> None:
        self.time = time
        self.app = app
        self.jobid = jobid


class TaskStream:
    """Bars from events (plain Python, no widgets): ``done`` in order of ending."""

    def __init__(self) -> None:
        self.job: dict[str, tuple[str, str]] = {}      # jobid -> (app, site), until it ends
        self.task: dict[str, tuple[str, str]] = {}     # taskid -> (app, site)
        self.states = TaskStates()                     # taskid -> status, until it ends
        self.running: dict[str, Bar] = {}
        self.done: list[Bar] = []                      # ended, not yet drawn
        self.finished = 0                              # bars ended so far
        self.free: dict[str, list[int]] = {}           # site -> free slots (sorted)
        self.slots: dict[str, int] = {}                # site -> slots ever used
        self.sites: list[str] = []
        self.apps: list[str] = []
        self.reused: list[Reuse] = []                  # reused calls, not yet drawn
        self.cached = 0                                # reused calls so far

    def _take_slot(self, site: str) -> int:
        free = self.free.setdefault(site, [])
        if free:
            return free.pop(0)
        if site not in self.slots:
            self.sites.append(site)
            self.slots[site] = 0
        self.slots[site] += 1
        return self.slots[site] - 1

    def _give_slot(self, site: str, slot: int) -> None:
        free = self.free[site]
        free.append(slot)
        free.sort()

    def apply(self, events: list[Event]) -> None:
        for e in events:
            kind = e.kind
            if kind == "TASK_STATUS_CHANGE":
                change = self.states.change(e)
                if change is None:
                    continue
                tid, _, new = change
                if new == 2 and tid not in self.running:
                    app, site = self.task.get(tid, ("?", "?"))
                    if app not in self.apps:
                        self.apps.append(app)
                    self.running[tid] = Bar(tid, app, site, self._take_slot(site), e.time)
                elif new in _ENDS:
                    self.states.forget(tid)
                    bar = self.running.pop(tid, None)
                    self.task.pop(tid, None)
                    if bar is not None:
                        bar.end = e.time
                        bar.state = _ENDS[new]
                        self._give_slot(bar.site, bar.slot)
                        self.done.append(bar)
                        self.finished += 1
            elif kind == "JOB_CACHED":
                f = e.fields
                self.reused.append(Reuse(e.time, str(f.get("tr") or "?"), str(f.get("jobid"))))
                self.cached += 1
            elif kind == "JOB_START":
                f = e.fields
                self.job[str(f.get("jobid"))] = (str(f.get("tr") or "?"),
                                                 str(f.get("host") or "?"))
            elif kind == "JOB_END":
                self.job.pop(str(e.fields.get("jobid")), None)
            elif kind == "JOB_TASK":
                f = e.fields
                known = self.job.get(str(f.get("jobid")))
                if known is not None:
                    self.task[str(f.get("taskid"))] = known

    def row(self, bar: Bar) -> str:
        """The chart row (y label) of a bar: ``site slot``."""
        return f"{bar.site} {bar.slot}"

    def rows(self) -> list[str]:
        """Every slot row, sites in order of first use; ``cached`` last once a call was
        reused."""
        rows = [f"{site} {i}" for site in self.sites for i in range(self.slots[site])]
        return rows + [CACHED_ROW] if self.cached else rows

    def color(self, bar: Bar) -> str:
        if bar.state == "failed":
            return FAILED_COLOR
        if bar.state == "canceled":
            return CANCELED_COLOR
        return PALETTE[self.apps.index(bar.app) % len(PALETTE)]


_COLUMNS = ("row", "left", "right", "color", "app", "state")
_CACHED_COLUMNS = ("row", "x", "app", "state", "jobid")


class TaskStreamPanel:
    """The task stream chart (bokeh hbar glyphs through ``chart.bokeh_widget``)."""

    title = "Task stream"
    EVERY = 1.0            # seconds between chart patches
    ROLLOVER = 20_000      # finished bars the chart keeps

    def __init__(self, *, chart: bool = True, width: int = 560, height: int = 260,
                 clock: Callable[[], float] | None = None) -> None:
        self.stream = TaskStream()
        self.clock = clock
        self.t0: float | None = None
        self.now: float | None = None
        self.sent = 0                 # finished bars streamed to the chart
        self.drawn: list[str] = []    # task ids of the finished bars the chart holds
        self.updates = 0
        self._at = -1e9
        self._chart = chart
        self._size = (width, height)
        self.figure: figure | None = None
        self.done_source: ColumnDataSource | None = None
        self.live_source: ColumnDataSource | None = None
        self.cached_source: ColumnDataSource | None = None
        self.note = W.HTML(value="<i>no task has run yet</i>")
        self.widget = W.VBox([self.note])

    # ------------------------------------------------------------ data
    def apply(self, events: list[Event]) -> None:
        if not events:
            return
        if self.t0 is None:
            self.t0 = events[0].time
        self.now = events[-1].time
        self.stream.apply(events)

    def _x(self, t: float) -> float:
        """Chart x: epoch milliseconds on a date axis, or run seconds (virtual clock)."""
        assert self.t0 is not None
        if self.t0 >= EPOCH_2001:
            return t * 1000.0
        return t - self.t0

    def _columns(self, bars: list[Bar], now: float) -> dict[str, object]:
        """Chart columns; times as numpy arrays, which bokeh sends as binary buffers
        (a list of floats costs an encoding step per number)."""
        import numpy as np

        s = self.stream
        return {"row": [s.row(b) for b in bars],
                "left": np.fromiter((self._x(b.start) for b in bars), float, len(bars)),
                "right": np.fromiter((self._x(b.end if b.end is not None else now)
                                      for b in bars), float, len(bars)),
                "color": [s.color(b) for b in bars],
                "app": [b.app for b in bars],
                "state": [b.state for b in bars]}

    def _reused_columns(self, reused: list[Reuse]) -> dict[str, object]:
        import numpy as np

        return {"row": [CACHED_ROW] * len(reused),
                "x": np.fromiter((self._x(r.time) for r in reused), float, len(reused)),
                "app": [r.app for r in reused], "state": ["cached"] * len(reused),
                "jobid": [r.jobid for r in reused]}

    def cached_points(self) -> int:
        """Reused calls the chart holds (diamonds on the ``cached`` row)."""
        return 0 if self.cached_source is None else len(self.cached_source.data["x"])

    def data_rows(self) -> int:
        """Bars the chart holds now (finished ones streamed, running ones drawn)."""
        if self.done_source is None or self.live_source is None:
            return 0
        return len(self.done_source.data["state"]) + len(self.live_source.data["state"])

    # ------------------------------------------------------------ chart
    def _make_chart(self) -> None:
        from bokeh.models import ColumnDataSource, FactorRange, HoverTool
        from bokeh.plotting import figure

        from swiftnb.widgets.chart import bokeh_widget

        assert self.t0 is not None
        dates = self.t0 >= EPOCH_2001
        empty: dict[str, list[Any]] = {c: [] for c in _COLUMNS}
        self.done_source = ColumnDataSource(data=dict(empty))
        self.live_source = ColumnDataSource(data=dict(empty))
        self.cached_source = ColumnDataSource(data={c: [] for c in _CACHED_COLUMNS})
        width, height = self._size
        fig = figure(width=width, height=height, title="task stream",
                     x_axis_type="datetime" if dates else "linear",
                     x_axis_label="time" if dates else "run time (s)",
                     y_range=FactorRange(factors=[]), toolbar_location="right",
                     tools="xpan,xwheel_zoom,reset")
        for source in (self.done_source, self.live_source):
            fig.hbar(y="row", left="left", right="right", height=0.8, color="color",
                     line_color=None, source=source)
        fig.scatter(x="x", y="row", marker="diamond", size=9, color=CACHED_COLOR,
                    line_color="#0b7285", source=self.cached_source)
        fig.add_tools(HoverTool(tooltips=[("app", "@app"), ("slot", "@row"),
                                          ("state", "@state")]))
        fig.yaxis.major_label_text_font_size = "7pt"
        self.figure = fig
        self.widget.children = (bokeh_widget(fig),)

    def render(self, final: bool = False) -> bool:
        s = self.stream
        if self.t0 is None or not (s.done or s.running or s.reused):
            return False
        if not self._chart:
            s.done = []   # nothing draws them
            s.reused = []
            return False
        now_wall = time.monotonic()
        if not final and now_wall - self._at < self.EVERY:
            return False
        self._at = now_wall
        if self.figure is None:
            self._make_chart()
        assert self.figure is not None and self.done_source is not None
        assert self.live_source is not None and self.cached_source is not None
        rows = s.rows()
        y_range = self.figure.y_range  # the FactorRange the chart was made with
        if list(y_range.factors) != rows:  # type: ignore[attr-defined]  # (a FactorRange)
            y_range.factors = rows  # type: ignore[attr-defined]  # (a FactorRange)
        now = self.clock() if self.clock is not None and not final else (self.now or self.t0)
        new = s.done
        if new:
            self.done_source.stream(self._columns(new, now), rollover=self.ROLLOVER)
            self.sent += len(new)
            self.drawn.extend(b.taskid for b in new)
            del self.drawn[:-self.ROLLOVER]
            s.done = []
        if s.reused:
            self.cached_source.stream(self._reused_columns(s.reused), rollover=self.ROLLOVER)
            s.reused = []
        running = list(s.running.values())
        if running or self.live_source.data["state"]:
            self.live_source.data = self._columns(running, now)
        self.updates += 1
        return True

    def finish(self) -> None:
        self.render(final=True)
