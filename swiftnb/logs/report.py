"""The offline HTML report of a run (``swiftnb plot-log``): one self-contained file.

BokehJS is inlined (``bokeh.resources.INLINE``) so the report opens without network
access, e.g. on a cluster login node or attached to a ticket.  It replaces Swift/K's
``swift-plot-log`` directory of gnuplot PNGs.
"""

from __future__ import annotations

import os

from bokeh.embed import file_html
from bokeh.resources import INLINE

from swiftnb.logs.frame import LogFrame
from swiftnb.logs.plots import report_layout

__all__ = ["report_html", "write_report"]


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
