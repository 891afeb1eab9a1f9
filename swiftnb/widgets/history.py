"""Run history: the past runs in a directory (its ``runNNN`` run directories and their
logs, read with :mod:`swiftnb.logs`): date, run id, script, status, tasks, duration; pick
one to write and open its HTML report.

Why: a notebook accumulates runs; comparing today's run with yesterday's starts from a
list of them.  A log is read once per (size, modification time): re-opening the panel
after a new run reads only the new log.

The run store (``.swiftnb`` beside the run directories, written when memoization is on)
adds what logs do not keep well: how many calls each run reused ("cached") and ran.  A
store run is matched to its log by run id (the store's is ``runNNN-xxxxxx``) and start;
a run the store knows whose directory is gone is listed from the store alone; runs that
predate the store, and Swift/K 0.96 logs, are listed from their logs as before (their
cached count is what the log says: none for Swift/K).
"""

from __future__ import annotations

import dataclasses
import html
import os
import re

import ipywidgets as W

from swiftnb.store import DEFAULT_DIR, RunRecord, RunStore, StoreError, StoreErrorKind
from swiftnb.display import duration, when
from swiftnb.widgets._util import table

__all__ = ["PastRun", "past_runs", "read_past_run", "store_runs", "merge_store",
           "HistoryPanel", "report_link"]

_RUN_DIR = re.compile(r"run\d{3,}$")
_CANCELED = ("Execution canceled", "Execution interrupted")


@dataclasses.dataclass(frozen=True)
class PastRun:
    """What the history shows of one run, from its log."""

    runid: str
    path: str           # the run directory
    log: str            # its log file
    script: str         # the script's stem (the log is SCRIPT-RUNID.log)
    start: float | None
    status: str         # ok, failed, canceled, unfinished, unreadable
    tasks: int          # app calls (jobs)
    failed: int
    seconds: float | None
    cached: int = 0     # calls memoization reused
    stored: str = ""    # the run's id in the run store, if it is there

    def row(self) -> tuple:
        return (when(self.start), self.runid, self.script, self.status, self.tasks,
                self.cached, self.failed, duration(self.seconds))


_CACHE: dict[str, tuple[tuple[int, float], PastRun]] = {}


def read_past_run(run_dir: str, log: str) -> PastRun:
    """One run's summary from its log (cached by the log's size and mtime)."""
    st = os.stat(log)
    key = (st.st_size, st.st_mtime)
    hit = _CACHE.get(log)
    if hit is not None and hit[0] == key:
        return hit[1]
    runid = os.path.basename(run_dir)
    script = os.path.basename(log)[:-len(f"-{runid}.log")]
    from swiftnb.logs import LogFormatError, LogFrame

    try:
        lf = LogFrame.read(log)
        info = lf.run
    except (LogFormatError, OSError, ValueError) as exc:
        past = PastRun(runid, run_dir, log, script, st.st_mtime, f"unreadable: {exc}", 0, 0,
                       None)
        _CACHE[log] = (key, past)
        return past
    ev = lf.events
    messages = ev.loc[ev["kind"] == "MESSAGE", "text"].astype(str)
    if info["outcome"] == "success":
        status = "ok"
    elif messages.str.startswith(_CANCELED).any():
        status = "canceled"
    elif info["outcome"] == "failure":
        status = "failed"
    else:
        status = "unfinished"
    past = PastRun(runid, run_dir, log, script, info["start"], status, int(info["njobs"]),
                   int(info["jobs_failed"]), info.get("ttc"),
                   cached=int((ev["kind"] == "JOB_CACHED").sum()))
    _CACHE[log] = (key, past)
    return past


def past_runs(directory: str) -> list[PastRun]:
    """The runs in ``directory`` (``runNNN`` with a ``*-runNNN.log``), newest first."""
    out: list[PastRun] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        path = os.path.join(directory, name)
        if not _RUN_DIR.match(name) or not os.path.isdir(path):
            continue
        try:
            logs = [f for f in os.listdir(path) if f.endswith(f"-{name}.log")]
        except OSError:
            continue
        if logs:
            out.append(read_past_run(path, os.path.join(path, sorted(logs)[0])))
    out.sort(key=lambda r: r.runid, reverse=True)
    return out


_STORE_STATUS = {"success": "ok", "failure": "failed"}
#: a store run and a log are the same run when they started this close (seconds)
_SAME_START = 120.0


def store_runs(directory: str) -> tuple[list[RunRecord], str]:
    """The runs of the store in ``directory`` and, when it exists but cannot be read, why
    (no store is no error: memoization was never on there)."""
    try:
        with RunStore.open(directory, create=False) as store:
            return store.run_records(), ""
    except StoreError as exc:
        return [], "" if exc.kind is StoreErrorKind.MISSING else str(exc)


def merge_store(runs: list[PastRun], records: list[RunRecord]) -> list[PastRun]:
    """``runs`` (from logs) with the store's counts where a record is the same run, and
    the store's other runs added; newest first."""
    out = list(runs)
    for record in records:
        runid = record.run_id.rsplit("-", 1)[0]
        counts = record.counts
        i = next((i for i, r in enumerate(out) if r.runid == runid and not r.stored
                  and (r.start is None or abs(r.start - record.started) < _SAME_START)), None)
        if i is not None:
            out[i] = dataclasses.replace(out[i], stored=record.run_id,
                                         cached=counts.get("cached", out[i].cached))
            continue
        ended = record.ended
        out.append(PastRun(
            record.run_id, "", "", os.path.splitext(os.path.basename(record.script))[0],
            record.started, _STORE_STATUS.get(record.status, record.status),
            sum(counts.values()), counts.get("failed", 0),
            None if ended is None else ended - record.started, cached=counts.get("cached", 0),
            stored=record.run_id))
    out.sort(key=lambda r: r.start or 0.0, reverse=True)
    return out


def report_link(path: str) -> str:
    """An HTML link that opens ``path`` in a new browser tab from a notebook: relative to
    the kernel's directory, which JupyterLab resolves against the notebook's own."""
    rel = os.path.relpath(path, os.getcwd())
    href = rel if not rel.startswith("..") else "file://" + os.path.abspath(path)
    return (f"<a href='{html.escape(href)}' target='_blank' rel='noopener'>open "
            f"{html.escape(rel)}</a>")


class HistoryPanel:
    """The runs of a directory (the one watched too: ``unfinished`` until it ends and
    the panel is refreshed, which the dashboard does at the run's end once the panel has
    been shown); a drop-down and a button to write and open one's report."""

    title = "History"
    HEADERS = ("date", "run", "script", "status", "tasks", "cached", "failed", "duration")

    def __init__(self, directory: str, store: str | None = None) -> None:
        self.directory = directory
        #: the run store's directory (default: ``.swiftnb`` in ``directory``)
        self.store = store if store is not None else os.path.join(directory, DEFAULT_DIR)
        self.store_problem = ""
        self.runs: list[PastRun] = []
        self.loaded = False     # read when first shown: a folder of big logs takes time
        self.table = W.HTML(value="<i>the runs of this directory are read when this tab "
                                  "is opened</i>")
        self.choice = W.Dropdown(options=[], description="run")
        self.open_button = W.Button(description="open report", icon="external-link")
        self.open_button.on_click(lambda _b: self.open_report())
        self.refresh_button = W.Button(description="refresh", icon="refresh")
        self.refresh_button.on_click(lambda _b: self.refresh())
        self.link = W.HTML(value="")
        self.widget = W.VBox([W.HBox([self.choice, self.open_button, self.refresh_button]),
                              self.link, self.table])

    def refresh(self) -> None:
        """Read the directory (again: new runs, runs that ended since)."""
        self.loaded = True
        records, self.store_problem = store_runs(self.store)
        self.runs = merge_store(past_runs(self.directory), records)
        self.table.value = table(self.HEADERS, [r.row() for r in self.runs], cls="history") \
            if self.runs else "<i>no runs in this directory</i>"
        if self.store_problem:
            self.table.value += (f"<div style='color:#c00'>run store not read: "
                                 f"{html.escape(self.store_problem)}</div>")
        self.choice.options = [(f"{r.runid} {r.script} ({r.status})", r.runid)
                               for r in self.runs]

    def open_report(self, runid: str | None = None) -> str | None:
        """Write the chosen run's ``report.html`` (next to its log); the path."""
        runid = runid or self.choice.value
        past = next((r for r in self.runs if r.runid == runid), None)
        if past is None:
            self.link.value = "<i>choose a run</i>"
            return None
        if not past.log:
            self.link.value = (f"<i>no log of {html.escape(past.runid)}: its run directory "
                               "is gone; the run store keeps its calls</i>")
            return None
        from swiftnb.logs import LogFrame, write_report

        path = os.path.join(past.path, "report.html")
        write_report(LogFrame.read(past.log), path, title=f"swiftnb run {past.runid}")
        self.link.value = report_link(path)
        return path
