"""Progress: N of M app calls done with elapsed time, rate and ETA, overall and per app
name, and one bar and count per CoG task state.

Counted from JOB_INIT (an app call known to the run: the M of "N of M"; a Swift script
discovers its calls as dataflow unfolds, so M grows while the run goes), END_SUCCESS /
END_FAILURE (a call done, with its app name ``tr``) and TASK_STATUS_CHANGE (each task id
in exactly one state), which both a live run and a Swift 0.96 log carry.  The rate is the
calls done per second of run time; the ETA is the calls left at that rate.

A call memoization reused (JOB_CACHED, then the usual END_SUCCESS) is done, and counted
apart as well: "(3 cached)" in the headline, a "cached" column per app and a Cached bar
under the overall one.  Such calls take no time, so the rate and ETA count only the calls
that ran: a re-run that reuses most calls would otherwise promise a finish far too soon.
"""

from __future__ import annotations

from collections.abc import Callable

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.display import duration, progress_parts, rate_eta, run_time
from swiftnb.widgets._util import table
from swiftnb.widgets.taskstates import TaskStates

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


class AppCount:
    """Calls of one app name: known, done well (some of them reused), done badly."""

    __slots__ = ("known", "ok", "failed", "cached")

    def __init__(self) -> None:
        self.known = 0
        self.ok = 0
        self.failed = 0
        self.cached = 0

    @property
    def done(self) -> int:
        return self.ok + self.failed


class ProgressPanel:
    """"N of M done", elapsed, rate, ETA; a per-app table; bars of tasks by state."""

    title = "Progress"
    APP_HEADERS = ("app", "done", "of", "failed", "cached", "rate /s", "ETA")

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        # ``clock``: the run's clock (live: the time goes on between events); without it
        # (a log) the run's time is that of the last event
        self.clock = clock
        self.tasks = TaskStates()                 # taskid -> latest status
        self.counts: dict[int, int] = {code: 0 for code, _, _ in STATES}
        self.apps: dict[str, AppCount] = {}
        self.jobs = 0
        self.jobs_ok = 0
        self.jobs_failed = 0
        self.jobs_cached = 0
        self.t0: float | None = None
        self.last: float | None = None
        self.ended_at: float | None = None
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

    def _app(self, tr: object) -> AppCount:
        name = str(tr or "?")
        app = self.apps.get(name)
        if app is None:
            app = self.apps[name] = AppCount()
        return app

    def apply(self, events: list[Event]) -> None:
        if not events:
            return
        if self.t0 is None:
            self.t0 = events[0].time
        self.last = events[-1].time
        tasks = self.tasks
        counts = self.counts
        for e in events:
            kind = e.kind
            if kind == "TASK_STATUS_CHANGE":
                change = tasks.change(e)
                if change is None:
                    continue
                _, old, new = change
                if old in counts:
                    counts[old] -= 1
                if new in counts:
                    counts[new] += 1
            elif kind == "JOB_INIT":
                self.jobs += 1
                self._app(e.fields.get("tr")).known += 1
            elif kind == "JOB_CACHED":
                self.jobs_cached += 1
                self._app(e.fields.get("tr")).cached += 1
            elif kind == "END_SUCCESS":
                self.jobs_ok += 1
                self._app(e.fields.get("tr")).ok += 1
            elif kind == "END_FAILURE":
                self.jobs_failed += 1
                self._app(e.fields.get("tr")).failed += 1
            elif kind in ("RUN_SUCCESS", "RUN_FAILURE"):
                self.ended_at = e.time

    # ------------------------------------------------------------ figures
    @property
    def done(self) -> int:
        return self.jobs_ok + self.jobs_failed

    def elapsed(self) -> float:
        """Run time so far (to the run's end once it ended)."""
        return run_time(self.t0, self.last, self.ended_at, self.clock)

    def rate_eta(self) -> tuple[float | None, float | None]:
        return rate_eta(self.done - self.jobs_cached, self.jobs - self.jobs_cached,
                         self.elapsed())

    def headline_text(self) -> str:
        """``37 of 120 done (5 cached, 2 failed) · elapsed 1 min 05 s · 0.57/s · ETA 2 min
        25 s``."""
        rate, eta = self.rate_eta()
        count, notes, rest = progress_parts(self.done, self.jobs, self.jobs_cached,
                                            self.jobs_failed, self.elapsed(), rate, eta,
                                            self.ended_at is not None)
        return " &middot; ".join([f"<b>{count}</b>{notes}", *rest])

    def app_rows(self) -> list[tuple]:
        elapsed = self.elapsed()
        rows = []
        for name, app in sorted(self.apps.items()):
            rate, eta = rate_eta(app.done - app.cached, app.known - app.cached, elapsed)
            rows.append((name, app.done, app.known, app.failed, app.cached,
                         "" if rate is None else f"{rate:.3g}",
                         "" if eta is None or self.ended_at is not None else duration(eta)))
        return rows

    # ------------------------------------------------------------ widgets
    def _set(self, widget: W.HTML, value: str) -> bool:
        if widget.value == value:
            return False
        widget.value = value
        return True

    def render(self) -> bool:
        changed = False
        total = max(1, len(self.tasks))
        for code, bar in self.bars.items():
            n = self.counts[code]
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
        if self.overall.max != max(1, self.jobs) or self.overall.value != self.done:
            with self.overall.hold_sync():
                self.overall.max = max(1, self.jobs)
                self.overall.value = self.done
            changed = True
        if self.jobs_cached and (self.cached_bar.max != max(1, self.jobs)
                                 or self.cached_bar.value != self.jobs_cached):
            self.cached_row.layout.display = ""
            with self.cached_bar.hold_sync():
                self.cached_bar.max = max(1, self.jobs)
                self.cached_bar.value = self.jobs_cached
            changed = True
        if self.jobs_cached and self.cached_label.value != str(self.jobs_cached):
            self.cached_label.value = str(self.jobs_cached)
            changed = True
        changed |= self._set(self.headline, self.headline_text())
        changed |= self._set(self.apps_html, table(self.APP_HEADERS, self.app_rows(),
                                                   cls="apps") if self.apps else "")
        summary = (f"<b>jobs</b> {self.jobs} &nbsp; <b>ok</b> {self.jobs_ok} &nbsp; "
                   f"<b>cached</b> {self.jobs_cached} &nbsp; "
                   f"<b>failed</b> {self.jobs_failed} &nbsp; <b>tasks</b> {len(self.tasks)}")
        changed |= self._set(self.summary, summary)
        return changed

    def snapshot(self) -> dict[str, int]:
        """Counts by state label (what the bars show)."""
        return {label: self.counts[code] for code, label, _ in STATES}
