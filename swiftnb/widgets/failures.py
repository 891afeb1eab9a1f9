"""Failures: one row per failed attempt (newest first) that opens its details (command
line quoted as a shell needs it, stdout, stderr, the job's ``-info`` file) and a retry.

On a live run the panel shows the failed attempts the run itself records
(``run.failures``, :class:`swiftnb.attempts.Failure`: the Task with its argv and source
position, the TaskResult with exit code, stdout/stderr tails and site), and is told of new
ones through ``run.on_failure(callback)``.  It only observes: any number of panels can
watch one run, and a panel opened late shows the failures that happened before.  From a
log it only has what Swift logged: APPLICATION_EXCEPTION's message, and JOB_START's app
and arguments.

**Retry** calls ``run.retry(failure)`` (see :meth:`swiftnb.runner.RunHandle.retry`): the
failed call again, as a new attempt.  The button shows only for an attempt whose call has
not since succeeded: not by a later attempt of the run itself (``executionRetries``: a
task of the same job completed, seen in the event stream) nor by an earlier retry here.

**explain** (a live run) shows where the failed call's inputs came from and why it ran
(the JOB_NOT_CACHED reason when memoization is on), and for each output the calls that
made it last, from the run store (``RunHandle.explain``); without a store it says so.
Calls memoization reused never fail: the header counts them apart ("5 reused, not run"),
so a short failure list on a re-run is not mistaken for a healthy full run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import os
import re
import shlex
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

import ipywidgets as W

from swiftnb.attempts import Failure as Attempt
from swiftnb.engine.task import TaskResult
from swiftnb.events import Event
from swiftnb.execution.joblog import read_record
from swiftnb.runner import RunHandle
from swiftnb.store import StoreError
from swiftnb.display import last_lines, when

__all__ = ["FailuresPanel", "PanelFailure", "FailureRow", "info_path"]

_EXIT = re.compile(r"exit code (?:of )?(-?\d+)")
_PRE = "margin:2px 0;max-height:14em;overflow:auto;white-space:pre-wrap"


@dataclasses.dataclass
class PanelFailure:
    """One failed attempt as the panel shows it."""

    jobid: str
    command: str                     # quoted as a shell would need it (shlex.join)
    exit_code: int | None
    stderr: str
    source: str
    source_line: str
    site: str
    message: str
    time: float | None = None
    stdout: str = ""
    info_file: str = ""              # the job's -info record, if the site wrote one
    attempt: Attempt | None = None   # the run's record (live; retry needs it)
    retry_state: str = ""            # "", "running", "ok on SITE", "failed: ..."
    retry_result: TaskResult | None = None
    succeeded: bool = False          # the call has succeeded since (a later attempt)
    ran_because: str = ""            # memoization's reason for running the call
    explanation: str = ""            # what the explain button found (shown in the details)

    @property
    def retryable(self) -> bool:
        """Show the retry button: a live attempt whose call has not succeeded since."""
        if self.attempt is None or self.succeeded:
            return False
        return not any(r.ok for r in self.attempt.retries)


class FailureRow(NamedTuple):
    """The widgets of one row (a fixed pool, only their values change)."""

    box: W.VBox
    retry: W.Button
    text: W.HTML
    toggle: W.Button
    details: W.HTML
    explain: W.Button


def info_path(attempt: Attempt, site_run: str) -> str:
    """Where the site wrote the attempt's ``-info`` record (execution/joblog.py)."""
    task = attempt.task
    name = task.jobid if not task.attempt else f"{task.jobid}-{task.attempt}"
    return os.path.join(task.run_dir, f"{site_run}.d", f"{name}-info")


def _info_record(path: str, limit: int = 20_000) -> str:
    """The -info record Swift wrote to ``path``, wherever it is (execution/joblog.py)."""
    try:
        text = read_record(path)
    except OSError as exc:
        return f"(cannot read {path}: {exc.strerror or exc})"
    return "(not written by the site)" if text is None else text[:limit]


class FailuresPanel:
    """The last ``keep`` failures, newest first, each with details and a retry button.

    ``run``: the live run (its failure records, retry), else None: the panel is then fed
    by log events only."""

    title = "Failures"

    def __init__(self, run: RunHandle | None = None, *, sources: dict[str, str] | None = None,
                 keep: int = 8) -> None:
        self.run = run
        self.sources = sources or {}
        self.site_run = run.run_dir.site_run if run is not None else ""
        self.failures: deque[PanelFailure] = deque(maxlen=keep)
        self.total = 0
        self.jobs: dict[str, tuple[str, str, str]] = {}  # jobid -> (tr, arguments, host)
        self.task_job: dict[str, str] = {}               # taskid -> jobid (running tasks)
        self.succeeded: set[str] = set()                 # jobids of failures that then succeeded
        self._failed_jobs: set[str] = set()
        self.cached = 0                                  # calls memoization reused
        self.ran_because: dict[str, str] = {}            # jobid -> why it was not reused
        self._dirty = False
        self.retries: list[asyncio.Task] = []
        self.retried: list[PanelFailure] = []     # every failure retried (also those scrolled out)
        self.opened: set[int] = set()        # rows whose details are open
        self.header = W.HTML(value="no failures")
        self.list = W.VBox([])
        self.widget = W.VBox([self.header, self.list])
        self.rows: list[FailureRow] = []
        self._unsubscribe: Callable[[], None] | None = None
        if run is not None:
            for attempt in run.failures:      # those before the panel was opened
                self.record(attempt)
            self._unsubscribe = run.on_failure(self.record)

    @property
    def live(self) -> bool:
        """Showing a run's own failure records (retry possible)."""
        return self.run is not None

    # ------------------------------------------------------------ live recording
    def _source_line(self, source: str) -> str:
        m = re.match(r"(.*):(\d+):\d+$", source or "")
        if not m:
            return ""
        name, line = m.group(1), int(m.group(2))
        for fname, text in self.sources.items():
            if fname == name or fname.endswith("/" + name) or fname.rsplit("/", 1)[-1] == name:
                lines = text.splitlines()
                if 0 < line <= len(lines):
                    return lines[line - 1].strip()
        return ""

    def record(self, attempt: Attempt) -> None:
        """A failed attempt recorded by the run (a :class:`swiftnb.attempts.Failure`)."""
        self.failures.appendleft(PanelFailure(
            jobid=attempt.jobid, command=shlex.join(attempt.argv),
            exit_code=attempt.exit_code, stderr=attempt.stderr_tail,
            source=attempt.source, source_line=self._source_line(attempt.source),
            site=attempt.site, message=attempt.message, time=attempt.time,
            stdout=attempt.result.stdout_tail or "",
            info_file=info_path(attempt, self.site_run), attempt=attempt,
            succeeded=attempt.jobid in self.succeeded,
            ran_because=self.ran_because.get(attempt.jobid, "")))
        self._failed_jobs.add(attempt.jobid)
        self.total += 1
        self._dirty = True

    def stop(self) -> None:
        """Stop listening to the run (rows and retry buttons stay)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # ------------------------------------------------------------ events
    def _job_succeeded(self, jobid: str) -> None:
        self.succeeded.add(jobid)
        if jobid in self._failed_jobs:
            for f in self.failures:
                if f.jobid == jobid and not f.succeeded:
                    f.succeeded = True
                    self._dirty = True

    def apply(self, events: list[Event]) -> None:
        live = self.run is not None
        for e in events:
            kind = e.kind
            if kind == "JOB_CACHED":
                self.cached += 1
                self._dirty = True
            elif kind == "JOB_NOT_CACHED":
                self.ran_because[str(e.fields.get("jobid"))] = str(e.fields.get("reason") or "")
            elif kind == "JOB_TASK":
                self.task_job[str(e.fields.get("taskid"))] = str(e.fields.get("jobid"))
            elif kind == "TASK_STATUS_CHANGE":
                status = str(e.fields.get("status"))
                if status in ("7", "5", "6"):
                    jobid = self.task_job.pop(str(e.fields.get("taskid")), None)
                    if jobid is not None and status == "7":
                        self._job_succeeded(jobid)
            elif live:
                continue  # live: the run records its failures, with more detail
            elif kind == "JOB_START":
                f = e.fields
                self.jobs[str(f.get("jobid"))] = (str(f.get("tr")), str(f.get("arguments") or ""),
                                                  str(f.get("host") or ""))
            elif kind == "APPLICATION_EXCEPTION":
                self._logged(e)

    def _logged(self, e: Event) -> None:
        jobid = str(e.fields.get("jobid"))
        tr, args, host = self.jobs.get(jobid, ("", "", ""))
        message = str(e.fields.get("message") or e.text or "")
        m = _EXIT.search(message)
        stderr = ""
        if "stderr" in message.lower():
            stderr = message.split("tderr", 1)[1].lstrip(":\n ")
        words = [w.strip() for w in args.strip("[]").split(",") if w.strip()]
        self.failures.appendleft(PanelFailure(
            jobid=jobid, command=shlex.join([tr, *words]) if tr else "",
            exit_code=int(m.group(1)) if m else None, stderr=stderr, source="",
            source_line="", site=host, message=message.strip(), time=e.time))
        self.total += 1
        self._dirty = True

    # ------------------------------------------------------------ explain
    def explain(self, index: int) -> str:
        """Explain failure ``index`` (0 = newest): its inputs and why it ran, and the
        store's account of each output; shown in the row's details, which open."""
        failure = list(self.failures)[index]
        failure.explanation = self._explanation(failure)
        self.opened.add(index)
        self._dirty = True
        self.render()
        return failure.explanation

    def _explanation(self, f: PanelFailure) -> str:
        run, attempt = self.run, f.attempt
        if run is None or attempt is None:
            return "no explanation: watching a log (the run store is read by a live run)"
        reason = f.ran_because or self.ran_because.get(f.jobid, "")
        lines = [f"why it ran: {reason}" if reason else
                 "why it ran: memoization was off (no reason recorded)"]
        lines += [f"input: {path}" for path in attempt.task.inputs] or ["inputs: none"]
        for path in attempt.task.outputs:
            try:
                lines.append(str(run.explain(path, why=True)))
            except StoreError as exc:
                lines.append(f"{path}: no explanation ({exc})")
                break   # the same store for every output: say it once
        return "\n".join(lines)

    # ------------------------------------------------------------ retry
    def retry(self, index: int) -> asyncio.Task | None:
        """Retry failure ``index`` (0 = newest) through ``run.retry``; the asyncio task."""
        failure = list(self.failures)[index]
        run = self.run
        attempt = failure.attempt
        if attempt is None or run is None:
            failure.retry_state = "failed: no task to retry (watching a log)"
            self._dirty = True
            return None
        failure.retry_state = "running"
        self.retried.append(failure)
        self._dirty = True

        async def again() -> TaskResult | None:
            try:
                result = await run.retry(attempt)
            except Exception as exc:  # noqa: BLE001 - shown in the panel (e.g. a bad site)
                failure.retry_state = f"failed: {exc or type(exc).__name__}"
                self._dirty = True
                self.render()
                return None
            failure.retry_result = result
            if result.ok:
                failure.retry_state = f"ok on {result.site}" if result.site else "ok"
            else:
                failure.retry_state = f"failed: exit code {result.exit_code}"
            self._dirty = True
            self.render()
            return result

        t = asyncio.get_running_loop().create_task(again())
        self.retries.append(t)
        return t

    # ------------------------------------------------------------ widgets
    def _text(self, f: PanelFailure) -> str:
        where = f"{html.escape(f.source)} <code>{html.escape(f.source_line)}</code>" \
            if f.source else ""
        state = ""
        if f.retry_state:
            state = "retry: " + html.escape(f.retry_state)
        elif f.succeeded:
            state = "succeeded on a later attempt"
        return (f"<div style='font-family:monospace;font-size:12px'>"
                f"<b>{html.escape(f.command)}</b> &nbsp; exit code {f.exit_code} "
                f"{'on ' + html.escape(f.site) if f.site else ''} &nbsp; "
                f"<span class='swiftnb-when'>{html.escape(when(f.time))}</span><br>{where}"
                f"<pre style='margin:2px 0;color:#900'>"
                f"{html.escape(last_lines(f.stderr) or f.message)}</pre>{state}</div>")

    def details_html(self, f: PanelFailure) -> str:
        """What a row opens: command line, stdout, stderr and the -info file."""
        parts = [("command line", f.command), ("stdout", f.stdout or "(empty)"),
                 ("stderr", f.stderr or f.message or "(empty)")]
        if f.explanation:
            parts.append(("explanation", f.explanation))
        if f.info_file:
            parts.append((f"info file {f.info_file}", _info_record(f.info_file)))
        return "".join(f"<div class='swiftnb-failure-{label.split()[0]}'><b>{html.escape(label)}"
                       f"</b><pre style='{_PRE}'>{html.escape(text)}</pre></div>"
                       for label, text in parts)

    def toggle(self, index: int) -> None:
        """Open or close the details of row ``index``."""
        if index in self.opened:
            self.opened.discard(index)
        else:
            self.opened.add(index)
        self._dirty = True
        self.render()

    def _row(self, i: int) -> FailureRow:
        """Row ``i`` of a fixed pool: widgets are made once and then only updated, so a
        new failure costs a few trait updates, not new comms."""
        while len(self.rows) <= i:
            j = len(self.rows)
            button = W.Button(description="retry", button_style="warning",
                              layout=W.Layout(width="70px"))
            button.on_click(lambda _b, j=j: self.retry(j))
            toggle = W.Button(description="details", layout=W.Layout(width="70px"))
            toggle.on_click(lambda _b, j=j: self.toggle(j))
            explain = W.Button(description="explain", tooltip="where its inputs came from "
                               "and why it ran (the run store)", layout=W.Layout(width="70px"))
            explain.on_click(lambda _b, j=j: self.explain(j))
            text = W.HTML(value="")
            details = W.HTML(value="", layout=W.Layout(display="none"))
            box = W.VBox([W.HBox([toggle, button, explain, text]), details])
            self.rows.append(FailureRow(box, button, text, toggle, details, explain))
        return self.rows[i]

    def header_text(self) -> str:
        text = (f"{self.total} failed attempt{'s' if self.total != 1 else ''}"
                if self.total else "no failures")
        if self.cached:
            text += (f" &middot; {self.cached} call{'s' if self.cached != 1 else ''} "
                     "reused, not run (cached)")
        return text

    def render(self) -> bool:
        if not self._dirty:
            return False
        self._dirty = False
        changed = False
        header = self.header_text()
        if self.header.value != header:
            self.header.value = header
            changed = True
        failures = list(self.failures)
        for i, f in enumerate(failures):
            row = self._row(i)
            value = self._text(f)
            if row.text.value != value:
                row.text.value = value
                changed = True
            opened = i in self.opened
            display = "" if opened else "none"
            if opened:
                details = self.details_html(f)
                if row.details.value != details:
                    row.details.value = details
            if row.details.layout.display != display:
                row.details.layout.display = display
            row.toggle.description = "hide" if opened else "details"
            explainable = "visible" if f.attempt is not None else "hidden"
            if row.explain.layout.visibility != explainable:
                row.explain.layout.visibility = explainable
            visibility = "visible" if f.retryable else "hidden"
            if row.retry.layout.visibility != visibility:
                row.retry.layout.visibility = visibility
            disabled = f.retry_state == "running"
            if row.retry.disabled != disabled:
                row.retry.disabled = disabled
        shown = tuple(row.box for row in self.rows[:len(failures)])
        if tuple(self.list.children) != shown:
            self.list.children = shown
            changed = True
        return changed

    @property
    def buttons(self) -> list[W.Button]:
        """The retry buttons of the rows shown (0 = newest failure)."""
        return [row.retry for row in self.rows[:len(self.failures)]]
