"""The web page's view of a run: the :class:`~swiftnb.monitor.state.RunState` the
terminal monitor reads too, as the page's tables, header and score series.

The state folds the events (live, or a followed log's) and reads the executor's live
values; this adds what only a page needs: table columns, the header's HTML and each
site's tscore over time for the chart (a point per site at most once a second, the last
``SCORE_POINTS``).
"""

from __future__ import annotations

import datetime as dt
import html
import math
import time
from collections import deque
from collections.abc import Iterable

from swiftnb.display import cell, duration
from swiftnb.monitor.state import RunState, Throttle
from swiftnb.monitor.view import TABLES, Columns

__all__ = ["StateView"]

#: how many points of each site's score the chart keeps (10 min at one a second)
SCORE_POINTS = 600


def _columns(table: str, rows: Iterable[tuple[object, ...]]) -> Columns:
    names = TABLES[table]
    columns: Columns = {name: [] for name in names}
    for row in rows:
        for name, value in zip(names, row):
            columns[name].append(cell(value))
    return columns


def _date(t: float) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")


class StateView:
    """A :class:`~swiftnb.monitor.view.MonitorView` of one :class:`RunState`."""

    def __init__(self, state: RunState, label: str) -> None:
        self.state = state
        self.label = label
        self.status: str | None = None     # how the run ended, when its handle says so
        self._bump = 0
        self._series: dict[str, tuple[deque[float], deque[float]]] = {}
        self._last_point = -math.inf

    @property
    def version(self) -> int:
        return self.state.version + self._bump

    def ended(self, status: str) -> None:
        """The run's handle says the run ended (``ok``, ``failed``, ``canceled``)."""
        self.status = status
        self._bump += 1

    def title(self) -> str:
        state = self.state
        if self.status is not None:
            status = f"ended: {self.status}"
        elif state.outcome is not None:
            status = f"ended: {'ok' if state.outcome == 'success' else 'failed'}"
        else:
            status = "running"
        started = f" · started {_date(state.t0)}" if state.t0 is not None else ""
        return f"<b>{html.escape(self.label)}</b> · {status}{started}"

    def counts(self) -> str:
        state = self.state
        colour = "#c62828" if state.failed or state.failure_count else "inherit"
        return (f"{html.escape(state.headline())} · <span style='color:{colour}'>"
                f"{state.failure_count} failed attempts</span>")

    def apps_table(self) -> Columns:
        return _columns("apps", (
            (name, app.done, app.known, app.failed, app.cached,
             "" if rate is None else f"{rate:.3g}/s", "" if eta is None else duration(eta))
            for name, app, rate, eta in self.state.app_rows()))

    def sites_table(self) -> Columns:
        rows = self.state.site_rows()
        now = time.time()
        if now - self._last_point >= 1.0:
            self._last_point = now
            for site in rows:
                if site.tscore is not None:
                    times, scores = self._series.setdefault(site.name, (
                        deque(maxlen=SCORE_POINTS), deque(maxlen=SCORE_POINTS)))
                    times.append(self.state.last if self.state.control is None
                                 and self.state.last is not None else now)
                    scores.append(site.tscore)
        return _columns("sites", ((s.name, s.score, s.tscore, s.limit, s.running, s.queued,
                                   s.done, s.failed, s.set) for s in rows))

    def scores(self) -> dict[str, tuple[list[float], list[float]]]:
        return {name: (list(times), list(scores))
                for name, (times, scores) in self._series.items()}

    def blocks_table(self) -> Columns:
        return _columns("blocks", (
            (b.id, b.site, b.shape, b.walltime, b.state, b.lrm, len(b.workers), b.running,
             b.done) for b in self.state.blocks.values()))

    def failures_table(self) -> Columns:
        return _columns("failures", (
            (_date(f.time), f.app, f.site, f.exit_code, f.command, f.stderr)
            for f in reversed(self.state.failures)))

    def waiting_table(self) -> Columns:
        return _columns("waiting", ((w.subject, w.id, w.site, w.reason, w.detail)
                                    for w in self.state.waiting_rows()))

    def throttles(self) -> list[Throttle]:
        try:
            return self.state.throttles()
        except Exception:  # noqa: BLE001 - a monitor never breaks the run it shows
            return []

    def set_throttle(self, name: str, value: int | str, site: str | None) -> str | None:
        return self.state.set_throttle(name, value, site)
