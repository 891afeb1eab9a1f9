"""Bokeh plots of a run, each a function from a :class:`LogFrame` to a layout.

They take the tables of :mod:`swiftnb.logs.frame`, so they draw a Swift/K 0.96 log, a
swiftnb log and a live run alike.  In a notebook: :func:`swiftnb.bokehjs.output_notebook`
(BokehJS from the installed bokeh: bokeh's own ``output_notebook()`` asks a CDN, which a
machine without internet never reaches) then ``bokeh.io.show(task_timeline(lf))``; as a
file: :func:`swiftnb.logs.report.write_report`.
Large runs are thinned to ``max_rows`` entities (evenly spaced) so that a plot stays
responsive; the thinning is said in the title.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from bokeh.layouts import column, gridplot
from bokeh.models import ColumnDataSource, HoverTool
from bokeh.models.ui import UIElement
from bokeh.models.widgets import Div
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from swiftnb.logs.frame import TIMINGS, LogFrame

__all__ = ["task_timeline", "block_timeline", "state_counts", "timing_histograms",
           "jobs_per_site", "site_scores"]

#: phase of a task -> (start state, end state, colour)
TASK_PHASES = {
    "waiting": ("submitting", "stage_in", "#c7c7c7"),
    "stage in": ("stage_in", "active", Category10_10[1]),
    "executing": ("active", "stage_out", Category10_10[0]),
    "stage out": ("stage_out", "completed", Category10_10[2]),
    "failed": ("active", "failed", Category10_10[3]),
}
WIDTH = 900
#: the most tasks the task timeline draws: a larger run is drawn as an even sample
TASK_ROWS = 4000


def _dt(seconds: Any) -> Any:
    return pd.to_datetime(seconds, unit="s", utc=True).tz_localize(None) \
        if np.ndim(seconds) else pd.Timestamp(seconds, unit="s")


def _thin(frame: pd.DataFrame, max_rows: int) -> tuple[pd.DataFrame, str]:
    if len(frame) <= max_rows:
        return frame, ""
    step = int(np.ceil(len(frame) / max_rows))
    return frame.iloc[::step], f" (one in every {step} of {len(frame):,})"


def _empty(title: str, why: str) -> Any:
    return column(Div(text=f"<h3>{title}</h3><p><i>{why}</i></p>"))


def task_timeline(lf: LogFrame, *, max_rows: int = TASK_ROWS) -> Any:
    """One line per task: waiting, stage in, executing, stage out (or failed)."""
    tasks = lf.tasks
    if not len(tasks):
        return _empty("Tasks", "no tasks in this log")
    tasks = tasks.copy()
    # fill missing phase ends so that every observed interval is drawn
    tasks["stage_in"] = tasks["stage_in"].fillna(tasks["active"])
    tasks["stage_out"] = tasks["stage_out"].fillna(tasks["completed"])
    start = tasks[["submitting", "submitted", "stage_in", "active"]].min(axis=1)
    tasks = tasks.assign(_start=start).sort_values("_start", kind="stable")
    tasks["row"] = np.arange(len(tasks))
    tasks, note = _thin(tasks, max_rows)
    rows = (-1, max(1, len(tasks)))
    p = figure(title=f"Tasks{note}", x_axis_type="datetime", width=WIDTH,
               height=min(700, 200 + 2 * len(tasks)),
               y_range=rows,  # type: ignore[arg-type]  # bokeh makes the Range1d
               tools="xpan,xwheel_zoom,box_zoom,reset,save")
    for label, (s, e, colour) in TASK_PHASES.items():
        seg = tasks[[s, e, "row", "jobid", "workerid"]].dropna(subset=[s, e])
        if not len(seg):
            continue
        src = ColumnDataSource({
            "left": _dt(seg[s].to_numpy()), "right": _dt(seg[e].to_numpy()),
            "y": seg["row"].to_numpy(), "taskid": seg.index.astype(str).to_numpy(),
            "jobid": seg["jobid"].astype(str).to_numpy(),
            "worker": seg["workerid"].astype(str).to_numpy(),
            "secs": (seg[e] - seg[s]).round(3).to_numpy(),
        })
        r = p.hbar(y="y", left="left", right="right", height=0.8, color=colour,
                   legend_label=label, source=src)
        p.add_tools(HoverTool(renderers=[r], tooltips=[
            ("task", "@taskid"), ("job", "@jobid"), ("worker", "@worker"),
            (label, "@secs s")]))
    p.yaxis.axis_label = "task (by start)"
    p.legend.location = "top_left"
    p.legend.click_policy = "hide"
    return column(p)


def block_timeline(lf: LogFrame, *, max_rows: int = 2000) -> Any:
    """One line per coaster block: queued, then running; worker start marks."""
    blocks = lf.blocks
    if not len(blocks):
        return _empty("Coaster blocks", "no coaster blocks in this log")
    blocks = blocks.sort_values("requested", kind="stable").copy()
    blocks["row"] = np.arange(len(blocks))
    blocks, note = _thin(blocks, max_rows)
    end = blocks["done"].fillna(blocks["shutdown"]).fillna(blocks["failed"])
    p = figure(title=f"Coaster blocks{note}", x_axis_type="datetime", width=WIDTH,
               height=min(600, 180 + 6 * len(blocks)), tools="xpan,xwheel_zoom,box_zoom,reset,save")
    for label, s, e, colour in (("queued", blocks["requested"], blocks["active"], "#c7c7c7"),
                                ("running", blocks["active"], end, Category10_10[0])):
        ok = s.notna() & e.notna()
        if not ok.any():
            continue
        src = ColumnDataSource({
            "left": _dt(s[ok].to_numpy()), "right": _dt(e[ok].to_numpy()),
            "y": blocks.loc[ok, "row"].to_numpy(), "id": blocks.index[ok].astype(str).to_numpy(),
            "cores": blocks.loc[ok, "cores"].astype(str).to_numpy(),
            "secs": (e[ok] - s[ok]).round(3).to_numpy(),
        })
        r = p.hbar(y="y", left="left", right="right", height=0.8, color=colour,
                   legend_label=label, source=src)
        p.add_tools(HoverTool(renderers=[r], tooltips=[("block", "@id"), ("cores", "@cores"),
                                                       (label, "@secs s")]))
    workers = lf.workers
    if len(workers) and workers["active"].notna().any():
        rows = workers["block"].map(blocks["row"])
        ok = rows.notna() & workers["active"].notna()
        if ok.any():
            p.scatter(_dt(workers.loc[ok, "active"].to_numpy()), rows[ok].to_numpy(),
                      marker="triangle", size=7, color=Category10_10[1],
                      legend_label="worker active")
    p.yaxis.axis_label = "block"
    p.legend.location = "top_left"
    return column(p)


def _occupancy(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Step function of how many [start, end) intervals are open (end NaN = still open)."""
    starts = starts[~np.isnan(starts)] if len(starts) else starts
    ends = ends[~np.isnan(ends)] if len(ends) else ends
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.argsort(times, kind="stable")
    return times[order], np.cumsum(deltas[order])


def state_counts(lf: LogFrame) -> Any:
    """Tasks waiting, active and completed over time; coaster cores allocated."""
    tasks = lf.tasks
    if not len(tasks):
        return _empty("Task states over time", "no tasks in this log")
    p = figure(title="Task states over time", x_axis_type="datetime", width=WIDTH, height=320,
               tools="xpan,xwheel_zoom,box_zoom,reset,save")
    first = tasks[["submitting", "submitted"]].min(axis=1).to_numpy()
    started = tasks["active"].to_numpy()
    finished = tasks[["completed", "failed", "canceled"]].min(axis=1).to_numpy()
    waiting_end = np.where(np.isnan(started), finished, started)
    waiting_end = np.where(np.isnan(first), np.nan, waiting_end)
    active_end = np.where(np.isnan(started), np.nan, finished)
    series = {
        "waiting": _occupancy(first, waiting_end),
        "active": _occupancy(started, active_end),
        "completed": _occupancy(tasks["completed"].to_numpy(), np.array([])),
        "failed": _occupancy(tasks["failed"].to_numpy(), np.array([])),
    }
    colours = {"waiting": "#7f7f7f", "active": Category10_10[0],
               "completed": Category10_10[2], "failed": Category10_10[3]}
    for label, (t, n) in series.items():
        if len(t):
            p.step(_dt(t), n, mode="after", color=colours[label], legend_label=label,
                   line_width=2)
    blocks = lf.blocks
    if len(blocks) and blocks["active"].notna().any():
        cores = pd.to_numeric(blocks["cores"], errors="coerce").fillna(0).to_numpy()
        end = blocks["done"].fillna(blocks["shutdown"]).to_numpy()
        act = blocks["active"].to_numpy()
        ok = ~np.isnan(act)
        t = np.concatenate([act[ok], end[ok & ~np.isnan(end)]])
        d = np.concatenate([cores[ok], -cores[ok & ~np.isnan(end)]])
        order = np.argsort(t, kind="stable")
        p.step(_dt(t[order]), np.cumsum(d[order]), mode="after", color=Category10_10[1],
               legend_label="cores in active blocks", line_dash="dashed")
    p.yaxis.axis_label = "count"
    p.legend.location = "top_left"
    p.legend.click_policy = "hide"
    return column(p)


def timing_histograms(lf: LogFrame, *, bins: int = 30) -> Any:
    """A histogram of each timing (Tss, Tse, Tw, Te, ... see docs/logs.md)."""
    t = lf.timings()
    t = t[t["timing"] != "TTC"]
    if not len(t):
        return _empty("Timings", "no entity reached both states of any timing")
    plots: list[UIElement | None] = []
    for name, group in t.groupby("timing", sort=False):
        values = group["duration"].to_numpy()
        counts, edges = np.histogram(values, bins=bins if np.ptp(values) > 0 else 1)
        p = figure(title=f"{name}: {TIMINGS[name][3]} (n={len(values)})", width=300,
                   height=220, tools="save")
        p.quad(top=counts, bottom=0, left=edges[:-1], right=edges[1:],
               color=Category10_10[0], alpha=0.7)
        p.xaxis.axis_label = "seconds"
        plots.append(p)
    return gridplot(plots, ncols=3)


def jobs_per_site(lf: LogFrame) -> Any:
    """Jobs per site and outcome."""
    jobs = lf.jobs
    if not len(jobs) or "host" not in jobs or jobs["host"].isna().all():
        return _empty("Jobs per site", "no site information in this log")
    counts = jobs.groupby(jobs["host"].fillna("?")).size()
    p = figure(x_range=list(counts.index.astype(str)),  # type: ignore[arg-type]  # a FactorRange
               title="Jobs per site", width=450,
               height=260, tools="save")
    p.vbar(x=list(counts.index.astype(str)), top=counts.to_numpy(), width=0.7,
           color=Category10_10[0])
    return column(p)


def site_scores(lf: LogFrame) -> Any:
    """Site scores over time (what adaptive site selection saw) and throttle changes."""
    scores = lf.scores.dropna(subset=["score"])
    throttles = lf.throttles.dropna(subset=["new"])
    if not len(scores) and not len(throttles):
        return _empty("Site scores and throttles", "no site scores or throttle changes logged")
    plots: list[UIElement | None] = []
    if len(scores):
        p = figure(title="Site scores (CONTACT_SELECTED)", x_axis_type="datetime", width=WIDTH,
                   height=280, tools="xpan,xwheel_zoom,box_zoom,reset,save")
        for i, (host, group) in enumerate(scores.groupby(scores["host"].fillna("?"), sort=True)):
            p.step(_dt(group["time"].to_numpy()), group["score"].to_numpy(), mode="after",
                   color=Category10_10[i % 10], legend_label=str(host), line_width=2)
        p.legend.location = "top_left"
        p.legend.click_policy = "hide"
        plots.append(p)
    if len(throttles):
        p = figure(title="Throttles (THROTTLE)", x_axis_type="datetime", width=WIDTH, height=250,
                   tools="xpan,xwheel_zoom,box_zoom,reset,save")
        keys = throttles["name"].fillna("?") + " " + throttles["host"].fillna("all")
        for i, (key, group) in enumerate(throttles.groupby(keys, sort=True)):
            p.step(_dt(group["time"].to_numpy()), group["new"].to_numpy(), mode="after",
                   color=Category10_10[i % 10], legend_label=str(key), line_width=2)
        p.legend.location = "top_left"
        p.legend.click_policy = "hide"
        plots.append(p)
    return column(*plots)
