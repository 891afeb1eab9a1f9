"""Sites: score, load, running / queued, site set and failures, and a live score chart.

Counts come from the event stream (JOB_START gives a job's host, JOB_TASK ties the
attempt's task id to the job, TASK_STATUS_CHANGE moves it between states), so a tailed
Swift/K log shows the same table.  When the panel watches a live run its executor's
snapshot (``state()``, the Scheduler's or the single local site's) supplies score, tscore
and the parallel-task limit; from a log the score is the last ``CONTACT_SELECTED
score=`` (Swift logged the tscore) and the limit the last ``THROTTLE name=parallelTasks``.

A saturated site (initialParallelTasks == maxParallelTasks, the defaults included, and
the single local site, which holds maxParallelTasks jobs from the start) has an
effectively infinite score: it shows as ``∞`` (with its failure debt, if any), its
tscore as T = 100.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.scheduling.sites import SATURATED
from swiftnb.scheduling.throttles import ThrottleControl
from swiftnb.display import num
from swiftnb.widgets._util import table
from swiftnb.widgets.taskstates import TaskStates

__all__ = ["SitesPanel"]

_QUEUED = {8, 1}
_RUNNING = {16, 2, 17}


def _score(score: float | None, debt: float | None) -> float | str | None:
    """A score as shown: a saturated one is infinite (its debt said when it has one)."""
    if score is None or score < SATURATED / 2:
        return score
    return f"∞, debt {debt:.2f}" if debt else "∞"


class _Site:
    __slots__ = ("name", "score", "tscore", "limit", "queued", "running", "completed",
                 "failed", "set", "reason")

    def __init__(self, name: str) -> None:
        self.name = name
        self.score: float | str | None = None
        self.tscore: float | None = None
        self.limit: object = None  # as THROTTLE or the snapshot gave it
        self.queued = 0
        self.running = 0
        self.completed = 0
        self.failed = 0
        self.set = "candidate"
        self.reason = ""


class SitesPanel:
    """One row per site, plus the tscore chart."""

    title = "Sites"
    CHART_EVERY = 1.0  # seconds between chart points
    HEADERS = ("site", "score", "tscore", "limit", "running", "queued", "completed",
               "failed", "set")

    def __init__(self, scheduler: ThrottleControl | None = None, *, chart: bool = True) -> None:
        self.scheduler = scheduler
        self.sites: dict[str, _Site] = {}
        self.job_host: dict[str, str] = {}
        self.task_host: dict[str, str] = {}
        self.tasks = TaskStates()   # tasks with a known host, until they end
        self.t0: float | None = None
        self.now: float | None = None
        self._chart_at = -1e9
        self.table = W.HTML(value=table(self.HEADERS, [], cls="sites"))
        if scheduler is not None:
            for snap in scheduler.state().get("sites", ()):
                self._site(snap["site"])
        self.chart = None
        if chart:
            from swiftnb.widgets.chart import ScoreChart

            self.chart = ScoreChart()
        children = [self.table] + ([self.chart.widget] if self.chart is not None else [])
        self.widget = W.VBox(children)

    def _site(self, name: str) -> _Site:
        s = self.sites.get(name)
        if s is None:
            s = self.sites[name] = _Site(name)
        return s

    def apply(self, events: list[Event]) -> None:
        if events:
            if self.t0 is None:
                self.t0 = events[0].time
            self.now = events[-1].time
        job_host = self.job_host
        task_host = self.task_host
        tasks = self.tasks
        for e in events:
            kind = e.kind
            f = e.fields
            if kind == "TASK_STATUS_CHANGE":
                host = task_host.get(f.get("taskid", ""))
                if host is None:
                    continue
                change = tasks.change(e)
                if change is None:
                    continue
                tid, old, new = change
                s = self._site(host)
                if old in _QUEUED:
                    s.queued -= 1
                elif old in _RUNNING:
                    s.running -= 1
                if new in _QUEUED:
                    s.queued += 1
                elif new in _RUNNING:
                    s.running += 1
                elif new == 7:
                    s.completed += 1
                    task_host.pop(tid, None)
                    tasks.forget(tid)
                elif new in (5, 6):
                    if new == 5:
                        s.failed += 1
                    task_host.pop(tid, None)
                    tasks.forget(tid)
            elif kind == "JOB_START":
                host = f.get("host")
                jobid = f.get("jobid")
                if host and jobid is not None:  # (JOB_START names its job: log and run)
                    job_host[jobid] = host
                    self._site(host)
            elif kind == "JOB_TASK":
                host = job_host.get(f.get("jobid", ""))
                taskid = f.get("taskid")
                if host is not None and taskid is not None:
                    task_host[taskid] = host
            elif kind == "CONTACT_SELECTED":
                host = f.get("host")
                if host:
                    self._site(host).tscore = num(f.get("score"))
            elif kind == "SITE_SET":
                host = f.get("host")
                if host:
                    s = self._site(host)
                    s.set = str(f.get("set"))
                    s.reason = str(f.get("reason") or "")
            elif kind == "THROTTLE" and f.get("name") == "parallelTasks" and f.get("host"):
                self._site(f["host"]).limit = f.get("new")

    def _live(self) -> None:
        if self.scheduler is None:
            return
        try:
            snaps = self.scheduler.state().get("sites", ())
        except Exception:  # noqa: BLE001 - a panel never breaks a run
            return
        for snap in snaps:
            s = self._site(snap["site"])
            s.score = _score(num(snap.get("score")), num(snap.get("debt")))
            s.tscore = num(snap.get("tscore"))
            s.limit = snap.get("limit")

    def rows(self) -> list[tuple]:
        return [(s.name, s.score, s.tscore, s.limit, s.running, s.queued, s.completed,
                 s.failed, s.set) for s in self.sites.values()]

    def render(self, final: bool = False) -> bool:
        self._live()
        changed = False
        html = table(self.HEADERS, self.rows(), cls="sites")
        if html != self.table.value:
            self.table.value = html
            changed = True
        if self.chart is not None and self.t0 is not None:
            # a chart point costs a bokeh document patch: at most one per CHART_EVERY s
            now = time.monotonic()
            if final or now - self._chart_at >= self.CHART_EVERY:
                self._chart_at = now
                scores = {s.name: s.tscore for s in self.sites.values() if s.tscore is not None}
                if scores and self.chart.update(round((self.now or self.t0) - self.t0, 3),
                                                scores):
                    changed = True
        return changed

    def finish(self) -> None:
        """The run ended: draw the last chart point."""
        self.render(final=True)

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()}
