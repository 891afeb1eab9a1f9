"""The offline HTML report of a run (``swiftnb plot-log``): one self-contained file.

BokehJS is inlined (``bokeh.resources.INLINE``) so the report opens without network
access, e.g. on a cluster login node or attached to a ticket.  It replaces Swift/K's
``swift-plot-log`` directory of gnuplot PNGs.

The report is a page to read, not a notebook cell to poke at: its charts are the ones of
:mod:`swiftnb.logs.plots`, tidied for print (:func:`tidy`): legends beside the data, not
over it; titles that fit; clock times and durations without float noise.
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Iterable
from typing import cast

import numpy as np
import pandas as pd
from bokeh.embed import file_html
from bokeh.layouts import column, gridplot
from bokeh.models import BasicTickFormatter, DatetimeAxis, DatetimeTickFormatter, LayoutDOM
from bokeh.models.annotations import Legend, Title
from bokeh.models.ui import UIElement
from bokeh.models.widgets import Div
from bokeh.palettes import Category10_10
from bokeh.plotting import figure
from bokeh.resources import INLINE

from swiftnb.logs.frame import TIMINGS, LogFrame
from swiftnb.logs.plots import (TASK_ROWS, WIDTH, block_timeline, jobs_per_site,
                                site_scores, state_counts, task_timeline)

__all__ = ["report_html", "report_layout", "tidy", "timing_label", "write_report",
           "clock", "seconds", "sampling_note"]

#: what each timing measures, as the report says it.  Tss ends at the job's first task,
#: which a job gets only when a throttle slot is free: on a busy site Tss is mostly that
#: wait, not Swift's set-up.  Tw starts there.
_WHAT = {name: spec[3] for name, spec in TIMINGS.items()}



def _clock_ticks() -> DatetimeTickFormatter:
    """Clock-time tick labels (bokeh's own say "0ms 500ms" below a second); a model
    of its own for each axis (a model belongs to one document)."""
    return DatetimeTickFormatter(
        microseconds="%H:%M:%S.%6N", milliseconds="%H:%M:%S.%3N", seconds="%H:%M:%S",
        minsec="%H:%M:%S", minutes="%H:%M", hourmin="%H:%M", hours="%H:%M",
        days="%Y-%m-%d", months="%Y-%m", years="%Y")

#: a title character's width, in font sizes (bold sans, on the wide side)
_CHAR_EM = 0.6
_HIST_WIDTH = 440


def timing_label(name: str) -> str:
    """``Tss``: what it measures (the report's table and histogram titles)."""
    return _WHAT[name]


def clock(t: float | None) -> str:
    """An epoch time as a UTC date to the millisecond (no nanosecond noise)."""
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return "-"
    return pd.Timestamp(t, unit="s", tz="UTC").strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + " UTC"


def seconds(value: float) -> str:
    """A duration with the digits that mean something: 3 significant below 10 s
    (``0.000333``, ``2.64``), else to the millisecond (``1006.728``)."""
    if value is None or math.isnan(value):
        return "-"
    if abs(value) < 10:
        return format(value, ".3g")
    return f"{value:.3f}".rstrip("0").rstrip(".")


def _summary_html(lf: LogFrame, heading: str) -> str:
    run = lf.run
    rows = [("run", run["run_id"] or "-"), ("outcome", run["outcome"] or "incomplete"),
            ("start", clock(run["start"])), ("finish", clock(run["finish"])),
            ("time to completion", f"{seconds(run.get('ttc', 0) or 0)} s"),
            ("jobs", f"{run['njobs']} ({run['jobs_succeeded']} succeeded, "
                     f"{run['jobs_failed']} failed)"),
            ("tasks", f"{run['ntasks']} ({run['tasks_completed']} completed, "
                      f"{run['tasks_failed']} failed)"),
            ("coaster blocks / workers", f"{run['nblocks']} / {run['nworkers']}"),
            ("sites", ", ".join(run["hosts"]) or "-")]
    table = "".join(f"<tr><th style='text-align:left;padding-right:1em'>{html.escape(k)}</th>"
                    f"<td>{html.escape(str(v))}</td></tr>" for k, v in rows)
    summary = lf.summary()
    stats = ""
    if len(summary):
        head = "".join(f"<th>{h}</th>" for h in
                       ("timing", "what", "start event", "end event", "count", "mean s",
                        "min s", "median s", "max s"))
        body = ""
        for name, r in summary.iterrows():
            entity, s, e, _ = TIMINGS[name]
            cells = [name, timing_label(name), f"{entity}.{s}", f"{entity}.{e}",
                     str(int(r["count"]))] + [seconds(r[k]) for k in ("mean", "min", "50%",
                                                                      "max")]
            body += "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
        stats = (f"<h3>Timings</h3><table border='1' cellpadding='3' "
                 f"style='border-collapse:collapse'><tr>{head}</tr>{body}</table>")
    return f"<h1>{html.escape(heading)}</h1><table>{table}</table>{stats}"


def _timing_histograms(lf: LogFrame, bins: int = 30) -> LayoutDOM:
    """A histogram per timing, in milliseconds when all of it is under a second."""
    t = lf.timings()
    t = t[t["timing"] != "TTC"]
    if not len(t):
        return column(Div(text="<h3>Timings</h3><p><i>no entity reached both states of "
                               "any timing</i></p>"))
    plots: list[UIElement | None] = []
    for name, group in t.groupby("timing", sort=False):
        values = group["duration"].to_numpy(dtype=float)
        unit, scale = ("ms", 1000.0) if np.nanmax(np.abs(values)) < 1 else ("s", 1.0)
        values = values * scale
        counts, edges = np.histogram(values, bins=bins if np.ptp(values) > 0 else 1)
        p = figure(title=f"{name} (n={len(values)})", width=_HIST_WIDTH, height=240,
                   tools="save")
        p.quad(top=counts, bottom=0, left=edges[:-1], right=edges[1:],
               color=Category10_10[0], alpha=0.7)
        p.xaxis.axis_label = "milliseconds" if unit == "ms" else "seconds"
        p.yaxis.axis_label = "count"
        p.add_layout(Title(text=timing_label(name), text_font_style="italic",
                           text_font_size="11px"), "above")
        plots.append(p)
    return column(Div(text="<h3>Timings</h3>"), gridplot(plots, ncols=2))


def _wrapped(text: str, room: int) -> str:
    """``text`` in lines of at most ``room`` characters, cut after a ': ' if one fits,
    else at the last space that fits."""
    lines: list[str] = []
    rest = text
    while len(rest) > room:
        cut = rest.rfind(": ", 0, room)
        cut = cut + 1 if cut > 0 else rest.rfind(" ", 0, room)
        if cut <= 0:
            cut = room
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return "\n".join([*lines, rest])


def _fit_titles(p: figure) -> None:
    """Titles wider than their figure wrap (bokeh clips them)."""
    for title in cast("Iterable[Title]", p.select({"type": Title})):
        size = float(str(title.text_font_size or "13px").removesuffix("px") or 13)
        assert p.width is not None  # a figure has a width (600 unless given)
        room = int(p.width / (size * _CHAR_EM))
        text = title.text  # a plain string in our figures
        if text and isinstance(text, str) and len(text) > room:
            title.text = _wrapped(text, room)


def tidy(layout: LayoutDOM) -> LayoutDOM:
    """Make every chart of ``layout`` read well on a static page: legends to the right of
    the plot area (a legend inside covers bars), clock-time axes as ``HH:MM:SS(.mmm)``,
    plain (not scientific) numbers on value axes, titles that fit their figure."""
    for p in cast("Iterable[figure]", layout.select({"type": figure})):
        for legend in cast("list[Legend]", list(p.select({"type": Legend}))):
            if legend in p.center:
                p.center = [r for r in p.center if r is not legend]
                legend.location = "top_left"
                p.add_layout(legend, "right")
                assert p.width is not None  # (600 unless given)
                p.width += 150
        for axis in [*p.xaxis, *p.yaxis]:
            if isinstance(axis, DatetimeAxis):
                axis.formatter = _clock_ticks()
            elif isinstance(axis.formatter, BasicTickFormatter):
                axis.formatter = BasicTickFormatter(use_scientific=False)
        _fit_titles(p)
        p.min_border_left = max(p.min_border_left or 0, 60)
    return layout


def sampling_note(ntasks: int, rows: int = TASK_ROWS) -> str:
    """What the page says when the task timeline draws a sample of a large run's tasks
    (the counts over time and the histograms always take every task)."""
    if ntasks <= rows:
        return ""
    step = -(-ntasks // rows)
    return (f"This run has {ntasks:,} tasks: the task timeline draws one task in every "
            f"{step} by start time ({-(-ntasks // step):,} rows); the task states over "
            "time, the timings table and the histograms count every task.")


def report_layout(lf: LogFrame, *, title: str | None = None) -> LayoutDOM:
    """Summary and timings table, task states, task and block timelines, the timings'
    histograms, jobs per site, site scores and throttles: one column."""
    heading = title or f"Swift run {lf.run['run_id'] or lf.name or ''}".strip()
    return tidy(column(
        Div(text=_summary_html(lf, heading), width=WIDTH + 150),
        state_counts(lf),
        *([Div(text=f"<p><i>{html.escape(note)}</i></p>", width=WIDTH + 150)]
          if (note := sampling_note(len(lf.tasks))) else []),
        task_timeline(lf),
        block_timeline(lf),
        _timing_histograms(lf),
        jobs_per_site(lf),
        site_scores(lf),
    ))


def report_html(lf: LogFrame, *, title: str | None = None) -> str:
    """The report as one HTML string with BokehJS inlined."""
    name = title or f"Swift run {lf.run['run_id'] or os.path.basename(lf.name or '')}".strip()
    return file_html(report_layout(lf, title=title), INLINE, title=name)


def write_report(lf: LogFrame, path: str | os.PathLike[str], *, title: str | None = None) -> str:
    """Write the report to ``path``; returns the path."""
    text = report_html(lf, title=title)
    path = os.fspath(path)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path
