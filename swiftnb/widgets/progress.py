"""Progress: N of M app calls done with elapsed time, rate and ETA, overall and per app
name, and one bar and count per CoG task state.

The numbers are those of the run's :class:`~swiftnb.monitor.state.RunState`, the one model
every view of a run reads (the terminal and web monitors too): JOB_INIT makes M (a Swift
script discovers its calls as dataflow unfolds, so M grows while the run goes),
END_SUCCESS / END_FAILURE make N (with the app name ``tr``), TASK_STATUS_CHANGE puts each
task id in exactly one state; both a live run and a Swift 0.96 log carry them.  The rate
is the calls done per second of run time; the ETA is the calls left at that rate.

A call memoization reused (JOB_CACHED, then the usual END_SUCCESS) is done, and counted
apart as well: "(3 cached)" in the headline, a "cached" column per app and a Cached bar
under the overall one.  Such calls take no time, so the rate and ETA count only the calls
that ran: a re-run that reuses most calls would otherwise promise a finish far too soon.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as W

from swiftnb.display import duration
from swiftnb.monitor.state import AppProgress, RunState
from swiftnb.widgets._util import table
from swiftnb.widgets.modelpanel import ModelPanel

__all__ = ["ProgressPanel", "STATES", "AppCount", "CACHED_COLOR"]

#: the colour of reused calls wherever the dashboard draws them (progress, task stream,
#: graph)
CACHED_COLOR = "#17becf"

#: (status code, label, bar style) in the order a task passes them
STATES = (
    (8, "Submitting", "info"),
    (1, "Submitted", "info"),
    (16, "Stage in", "info"),
    (2, "Active", ""),
    (17, "Stage out", "info"),
    (7, "Completed", "success"),
    (5, "Failed", "danger"),
    (6, "Canceled", "warning"),
)

#: calls of one app name (the model's row; the name this module has always exported)
AppCount = AppProgress


class ProgressPanel(ModelPanel):
    """"N of M done", elapsed, rate, ETA; a per-app table; bars of tasks by state.

    The counts are ``state``'s (:class:`ModelPanel`: ``known`` is M, ``done`` N, ``ok``,
    ``failed``, ``cached``, ``apps``).  ``clock``, for a model of the panel's own: the
    run's clock of a live run (the time goes on between events); without it (a log) the
    run's time is that of its last event."""

    title = "Progress"
    APP_HEADERS = ("app", "done", "of", "failed", "cached", "rate /s", "ETA")

    def __init__(self, clock: Callable[[], float] | None = None, *,
                 state: RunState | None = None) -> None:
        super().__init__(state, clock=clock)
        self.bars = {
            code: W.IntProgress(value=0, min=0, max=1, description=label, bar_style=style,
                                layout=W.Layout(width="360px"))
            for code, label, style in STATES
        }
        self.overall = W.IntProgress(value=0, min=0, max=1, bar_style="success",
                                     layout=W.Layout(width="360px"))
        self.cached_bar = W.IntProgress(value=0, min=0, max=1, description="Cached",
                                        bar_style="", style={"bar_color": CACHED_COLOR},
                                        layout=W.Layout(width="360px"))
        self.cached_label = W.Label("")
        # shown from the first reused call on (a run without memoization has no use for it)
        self.cached_row = W.HBox([self.cached_bar, self.cached_label],
                                 layout=W.Layout(display="none"))
        self.headline = W.HTML(value="")
        self.apps_html = W.HTML(value="")
        self.summary = W.HTML(value="")
        rows = [W.HBox([self.bars[code], W.Label("")]) for code, _, _ in STATES]
        self._labels = {code: row.children[1] for (code, _, _), row in zip(STATES, rows)}
        self.widget = W.VBox([self.headline, self.overall,
                              self.cached_row, self.apps_html,
                              self.summary, *rows])

    # ------------------------------------------------------------ figures
    def counts(self) -> dict[int, int]:
        """Tasks by status code, for the states the bars show."""
        counts = self.state.task_counts
        return {code: counts.get(code, 0) for code, _, _ in STATES}

    def headline_text(self) -> str:
        """``37 of 120 done (5 cached, 2 failed) · elapsed 1 min 05 s · 0.57/s · ETA 2 min
        25 s``."""
        count, notes, rest = self.state.headline_parts()
        return " &middot; ".join([f"<b>{count}</b>{notes}", *rest])

    def app_rows(self) -> list[tuple[str, int, int, int, int, str, str]]:
        return [(name, app.done, app.known, app.failed, app.cached,
                 "" if rate is None else f"{rate:.3g}", duration(eta))
                for name, app, rate, eta in self.state.app_rows()]

    # ------------------------------------------------------------ widgets
    def _set(self, widget: W.HTML, value: str) -> bool:
        if widget.value == value:
            return False
        widget.value = value
        return True

    def render(self) -> bool:
        changed = False
        counts = self.counts()
        state = self.state
        total = max(1, state.tasks)
        for code, bar in self.bars.items():
            n = counts[code]
            if bar.max != total or bar.value != n:
                with bar.hold_sync():
                    bar.max = total
                    bar.value = n
                changed = True
            label = self._labels[code]
            text = str(n)
            if label.value != text:
                label.value = text
                changed = True
        known, done, cached = state.known, state.done, state.cached
        if self.overall.max != max(1, known) or self.overall.value != done:
            with self.overall.hold_sync():
                self.overall.max = max(1, known)
                self.overall.value = done
            changed = True
        if cached and (self.cached_bar.max != max(1, known)
                       or self.cached_bar.value != cached):
            self.cached_row.layout.display = ""
            with self.cached_bar.hold_sync():
                self.cached_bar.max = max(1, known)
                self.cached_bar.value = cached
            changed = True
        if cached and self.cached_label.value != str(cached):
            self.cached_label.value = str(cached)
            changed = True
        changed |= self._set(self.headline, self.headline_text())
        changed |= self._set(self.apps_html, table(self.APP_HEADERS, self.app_rows(),
                                                   cls="apps") if state.apps else "")
        summary = (f"<b>jobs</b> {known} &nbsp; <b>ok</b> {state.ok} &nbsp; "
                   f"<b>cached</b> {cached} &nbsp; "
                   f"<b>failed</b> {state.failed} &nbsp; <b>tasks</b> {state.tasks}")
        changed |= self._set(self.summary, summary)
        return changed

    def snapshot(self) -> dict[str, int]:
        """Counts by state label (what the bars show)."""
        counts = self.counts()
        return {label: counts[code] for code, label, _ in STATES}
