"""Sites: score, load, running / queued, site set and failures, and a live score chart.

The figures are the run's :class:`~swiftnb.monitor.state.RunState`'s (the one model the
monitors read too): counts come from the event stream (JOB_START gives a job's host,
JOB_TASK ties the attempt's task id to the job, TASK_STATUS_CHANGE moves it between
states), so a tailed Swift/K log shows the same table.  When the panel watches a live run
its executor's snapshot (``state()``, the Scheduler's or the single local site's) supplies
score, tscore and the parallel-task limit; from a log the score is the last
``CONTACT_SELECTED score=`` (Swift logged the tscore) and the limit the last ``THROTTLE
name=parallelTasks``.

A saturated site (initialParallelTasks == maxParallelTasks, the defaults included, and
the single local site, which holds maxParallelTasks jobs from the start) has an
effectively infinite score: it shows as ``∞`` (with its failure debt, if any), its
tscore as T = 100.
"""

from __future__ import annotations

import math
import time

import ipywidgets as W

from swiftnb.monitor.state import RunState, SiteRow
from swiftnb.scheduling.throttles import ThrottleControl
from swiftnb.widgets._util import table
from swiftnb.widgets.modelpanel import ModelPanel

__all__ = ["SitesPanel"]

#: a row of the table: site, score, tscore, limit, running, queued, completed, failed, set
Row = tuple[str, float | str | None, float | None, int | float | str | None, int, int, int,
            int, str]


def _score(score: float | None, debt: float | None) -> float | str | None:
    """A score as shown: a saturated one is infinite (its debt said when it has one)."""
    if score is None or not math.isinf(score):
        return score
    return f"∞, debt {debt:.2f}" if debt else "∞"


class SitesPanel(ModelPanel):
    """One row per site, plus the tscore chart (``state``: see :class:`ModelPanel`; a
    model of its own reads ``scheduler``'s live snapshot)."""

    title = "Sites"
    CHART_EVERY = 1.0  # seconds between chart points
    HEADERS = ("site", "score", "tscore", "limit", "running", "queued", "completed",
               "failed", "set")

    def __init__(self, scheduler: ThrottleControl | None = None, *, chart: bool = True,
                 state: RunState | None = None) -> None:
        super().__init__(state, control=scheduler)
        self.scheduler = scheduler
        self._chart_at = -1e9
        self.table = W.HTML(value=table(self.HEADERS, [], cls="sites"))
        self.chart = None
        if chart:
            from swiftnb.widgets.chart import ScoreChart

            self.chart = ScoreChart()
        children = [self.table] + ([self.chart.widget] if self.chart is not None else [])
        self.widget = W.VBox(children)

    @property
    def sites(self) -> dict[str, SiteRow]:
        return self.state.sites

    def rows(self) -> list[Row]:
        """The table's rows, with the executor's live scores and limits when it has one."""
        return [(s.name, _score(s.score, s.debt), s.tscore, s.limit, s.running, s.queued,
                 s.done, s.failed, s.set) for s in self.state.site_rows()]

    def render(self, final: bool = False) -> bool:
        changed = False
        html = table(self.HEADERS, self.rows(), cls="sites")
        if html != self.table.value:
            self.table.value = html
            changed = True
        t0 = self.state.t0
        if self.chart is not None and t0 is not None:
            # a chart point costs a bokeh document patch: at most one per CHART_EVERY s
            now = time.monotonic()
            if final or now - self._chart_at >= self.CHART_EVERY:
                self._chart_at = now
                scores = {s.name: s.tscore for s in self.sites.values() if s.tscore is not None}
                if scores and self.chart.update(round((self.state.last or t0) - t0, 3),
                                                scores):
                    changed = True
        return changed

    def finish(self) -> None:
        """The run ended: draw the last chart point."""
        self.render(final=True)

    def snapshot(self) -> dict[str, dict[str, object]]:
        return {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()}
