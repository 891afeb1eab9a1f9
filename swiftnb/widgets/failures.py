"""Recent failures: command, exit code, stderr tail, the Swift source line, retry.

On a live run the panel shows the failed attempts the run itself records
(``run.failures``, :class:`swiftnb.attempts.Failure`: the Task with its argv and source
position, the TaskResult with exit code, stderr tail and site), and is told of new ones
through ``run.on_failure(callback)``.  It only observes: any number of panels can watch
one run, and a panel opened late shows the failures that happened before.  From a log it
only has what Swift logged: APPLICATION_EXCEPTION's message, and JOB_START's app and
arguments.

**Retry** calls ``run.retry(failure)`` (see :meth:`swiftnb.runner.RunHandle.retry`): the
failed call again, as a new attempt, through the run's executor while the run goes and
through a fresh one built from its configuration afterwards; the row shows how it ended.
It does not change the Swift run's outcome.  What it is for: after fixing the cause (a
missing input, a broken site), check that the call now works and produce its outputs in
their mapped places (recorded in the restart log, so ``-resume`` skips the call).
"""

from __future__ import annotations

import asyncio
import dataclasses
import html
import re
from collections import deque
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from swiftnb.events import Event

__all__ = ["FailuresPanel", "Failure", "watches_failures"]

_EXIT = re.compile(r"exit code (?:of )?(-?\d+)")


@dataclasses.dataclass
class Failure:
    """One failed attempt as the panel shows it."""

    jobid: str
    command: str
    exit_code: int | None
    stderr: str
    source: str
    source_line: str
    site: str
    message: str
    attempt: Any = None              # the run's swiftnb.attempts.Failure (live; retry needs it)
    retry_state: str = ""            # "", "running", "ok", "failed: ..."
    retry_result: Any = None

    @property
    def task(self) -> Any:
        return None if self.attempt is None else self.attempt.task


def watches_failures(run: Any) -> bool:
    """Does ``run`` record its failures (a RunHandle: ``failures``, ``on_failure``,
    ``retry``)?"""
    return run is not None and all(callable(getattr(run, a, None)) for a in ("on_failure",
                                                                              "retry")) \
        and hasattr(run, "failures")


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


class FailuresPanel:
    """The last ``keep`` failures, newest first, each with a retry button when live.

    ``run``: a run that records its failures (:func:`watches_failures`), else None (the
    panel is then fed by log events only)."""

    title = "Failures"

    def __init__(self, run: Any = None, *, sources: dict[str, str] | None = None,
                 keep: int = 8) -> None:
        self.run = run if watches_failures(run) else None
        self.sources = sources or {}
        self.failures: deque[Failure] = deque(maxlen=keep)
        self.total = 0
        self.jobs: dict[str, tuple[str, str, str]] = {}  # jobid -> (tr, arguments, host)
        self._dirty = False
        self._rendered: tuple = ()
        self.retries: list[asyncio.Task] = []
        self.retried: list[Failure] = []     # every failure retried (also those scrolled out)
        self.header = W.HTML(value="no failures")
        self.list = W.VBox([])
        self.widget = W.VBox([self.header, self.list])
        self.rows: list[tuple[W.HBox, W.Button, W.HTML]] = []
        self._unsubscribe: Callable[[], None] | None = None
        if self.run is not None:
            for attempt in self.run.failures:      # those before the panel was opened
                self.record(attempt)
            self._unsubscribe = self.run.on_failure(self.record)

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

    def record(self, attempt: Any) -> None:
        """A failed attempt recorded by the run (a :class:`swiftnb.attempts.Failure`)."""
        self.failures.appendleft(Failure(
            jobid=attempt.jobid, command=attempt.command, exit_code=attempt.exit_code,
            stderr=_tail(attempt.stderr_tail), source=attempt.source,
            source_line=self._source_line(attempt.source), site=attempt.site,
            message=attempt.message, attempt=attempt))
        self.total += 1
        self._dirty = True

    def stop(self) -> None:
        """Stop listening to the run (rows and retry buttons stay)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # ------------------------------------------------------------ events (logs)
    def apply(self, events: list[Event]) -> None:
        if self.run is not None:
            return  # live: the run records its failures, with more detail
        for e in events:
            kind = e.kind
            if kind == "JOB_START":
                f = e.fields
                self.jobs[f.get("jobid")] = (str(f.get("tr")), str(f.get("arguments") or ""),
                                             str(f.get("host") or ""))
            elif kind == "APPLICATION_EXCEPTION":
                jobid = e.fields.get("jobid")
                tr, args, host = self.jobs.get(jobid, ("", "", ""))
                message = str(e.fields.get("message") or e.text or "")
                m = _EXIT.search(message)
                stderr = ""
                if "stderr" in message.lower():
                    stderr = _tail(message.split("tderr", 1)[1].lstrip(":\n "))
                self.failures.appendleft(Failure(
                    jobid=str(jobid), command=f"{tr} {args.strip('[]').replace(',', '')}".strip(),
                    exit_code=int(m.group(1)) if m else None, stderr=stderr, source="",
                    source_line="", site=host, message=message.strip()))
                self.total += 1
                self._dirty = True

    # ------------------------------------------------------------ retry
    def retry(self, index: int) -> asyncio.Task | None:
        """Retry failure ``index`` (0 = newest) through ``run.retry``; the asyncio task."""
        failure = list(self.failures)[index]
        if failure.attempt is None or self.run is None:
            failure.retry_state = "failed: no task to retry (watching a log)"
            self._dirty = True
            return None
        failure.retry_state = "running"
        self.retried.append(failure)
        self._dirty = True

        async def again() -> Any:
            try:
                result = await self.run.retry(failure.attempt)
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
    def _text(self, f: Failure) -> str:
        where = f"{html.escape(f.source)} <code>{html.escape(f.source_line)}</code>" \
            if f.source else ""
        return (f"<div style='font-family:monospace;font-size:12px'>"
                f"<b>{html.escape(f.command)}</b> &nbsp; exit code {f.exit_code} "
                f"{'on ' + html.escape(f.site) if f.site else ''}<br>{where}"
                f"<pre style='margin:2px 0;color:#900'>{html.escape(f.stderr or f.message)}</pre>"
                f"{'retry: ' + html.escape(f.retry_state) if f.retry_state else ''}</div>")

    def _row(self, i: int) -> tuple[W.HBox, W.Button, W.HTML]:
        """Row ``i`` of a fixed pool: widgets are made once and then only updated, so a
        new failure costs a few trait updates, not new comms."""
        while len(self.rows) <= i:
            j = len(self.rows)
            button = W.Button(description="retry", button_style="warning",
                              layout=W.Layout(width="70px"))
            button.on_click(lambda _b, j=j: self.retry(j))
            text = W.HTML(value="")
            self.rows.append((W.HBox([button, text]), button, text))
        return self.rows[i]

    def render(self) -> bool:
        if not self._dirty:
            return False
        self._dirty = False
        header = f"{self.total} failed attempt{'s' if self.total != 1 else ''}" \
            if self.total else "no failures"
        changed = False
        if self.header.value != header:
            self.header.value = header
            changed = True
        failures = list(self.failures)
        for i, f in enumerate(failures):
            box, button, text = self._row(i)
            value = self._text(f)
            if text.value != value:
                text.value = value
                changed = True
            live = self.run is not None and f.attempt is not None
            visibility = "visible" if live else "hidden"
            if button.layout.visibility != visibility:
                button.layout.visibility = visibility
            disabled = f.retry_state == "running"
            if button.disabled != disabled:
                button.disabled = disabled
        shown = tuple(row[0] for row in self.rows[:len(failures)])
        if tuple(self.list.children) != shown:
            self.list.children = shown
            changed = True
        return changed

    @property
    def buttons(self) -> list[W.Button]:
        """The retry buttons of the rows shown (0 = newest failure)."""
        return [row[1] for row in self.rows[:len(self.failures)]]
