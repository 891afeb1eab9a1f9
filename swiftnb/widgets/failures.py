"""Recent failures: command, exit code, stderr tail, the Swift source line, retry.

On a live run the panel records the failed attempts themselves: it wraps the ``submit``
of the run's executor (an instance attribute, removed again when the dashboard stops),
so it has the :class:`~swiftnb.engine.task.Task` (argv, source position) and the
:class:`~swiftnb.engine.task.TaskResult` (exit code, stderr tail, site).  From a log it
only has what Swift logged: APPLICATION_EXCEPTION's message, and JOB_START's app and
arguments.

**Retry** submits the failed call again through the same executor, as a new attempt
(``attempt + 1``; the scheduler selects a site again and the attempt gets its own task id
and events), and shows how it ended.  It does not change the Swift run's outcome: the
run already recorded the error (its dataflow does not wait for a retry).  What it is for:
after fixing the cause (a missing input, a broken site), check that the call now works,
and produce its outputs in their mapped places; with ``-resume`` the next run then skips
it.  While the run lives, the retry goes through the run's own executor (its sites, scores
and throttles).  Once the run has ended and closed its sites, the retry goes through a
fresh executor built from the run's configuration (``reopen``), which is closed again
after the call.
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

__all__ = ["FailuresPanel", "Failure", "SubmitRecorder"]

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
    task: Any = None                 # the Task, when recorded live (retry needs it)
    retry_state: str = ""            # "", "running", "ok", "failed: ..."
    retry_result: Any = None


class SubmitRecorder:
    """Wraps ``executor.submit`` to hand failed (task, result) pairs to a callback."""

    def __init__(self, executor: Any, on_failure: Callable[[Any, Any], None]) -> None:
        self.executor = executor
        self.original = executor.submit
        self.on_failure = on_failure
        executor.submit = self.submit

    async def submit(self, task: Any) -> Any:
        result = await self.original(task)
        if not result.ok and not getattr(result, "canceled", False):
            try:
                self.on_failure(task, result)
            except Exception:  # noqa: BLE001 - a panel never breaks a run
                pass
        return result

    def remove(self) -> None:
        if self.executor.__dict__.get("submit") == self.submit:
            del self.executor.submit


def _tail(text: str, lines: int = 6) -> str:
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


class FailuresPanel:
    """The last ``keep`` failures, newest first, each with a retry button when live."""

    title = "Failures"

    def __init__(self, executor: Any = None, *, sources: dict[str, str] | None = None,
                 keep: int = 8, is_done: Callable[[], bool] | None = None,
                 reopen: Callable[[], Any] | None = None) -> None:
        self.executor = executor
        self.is_done = is_done
        self.reopen = reopen
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
        self.recorder = SubmitRecorder(executor, self.record) if executor is not None else None
        self.rows: list[tuple[W.HBox, W.Button, W.HTML]] = []

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

    def record(self, task: Any, result: Any) -> None:
        """A failed attempt from the executor (called by the recorder)."""
        argv = [task.executable or task.tr, *task.args]
        exit_code = result.exit_code
        if exit_code is None:
            m = _EXIT.search(result.message or "")
            exit_code = int(m.group(1)) if m else None
        self.failures.appendleft(Failure(
            jobid=task.jobid, command=" ".join(argv), exit_code=exit_code,
            stderr=_tail(result.stderr_tail), source=task.source,
            source_line=self._source_line(task.source), site=result.site,
            message=(result.message or "").strip(), task=task))
        self.total += 1
        self._dirty = True

    def stop(self) -> None:
        if self.recorder is not None:
            self.recorder.remove()

    # ------------------------------------------------------------ events (logs)
    def apply(self, events: list[Event]) -> None:
        if self.recorder is not None:
            return  # live: failures are recorded from the executor, with more detail
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
        """Submit failure ``index`` (0 = newest) again; returns the asyncio task."""
        failure = list(self.failures)[index]
        if failure.task is None or self.recorder is None:
            failure.retry_state = "failed: no task to retry (watching a log)"
            self._dirty = True
            return None
        task = dataclasses.replace(failure.task, attempt=failure.task.attempt + 1)
        failure.retry_state = "running"
        self.retried.append(failure)
        self._dirty = True
        submit = self.recorder.original
        fresh = None
        if self.is_done is not None and self.reopen is not None and self.is_done():
            try:
                fresh = self.reopen()
            except Exception as exc:  # noqa: BLE001 - shown in the panel
                failure.retry_state = f"failed: {exc}"
                return None
            submit = fresh.submit

        async def again() -> Any:
            try:
                result = await submit(task)
            except Exception as exc:  # noqa: BLE001 - e.g. the run's sites are closed
                failure.retry_state = f"failed: {exc or type(exc).__name__}"
                self._dirty = True
                self.render()
                return None
            finally:
                if fresh is not None:
                    try:
                        await fresh.close()
                    except Exception:  # noqa: BLE001
                        pass
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
            live = self.recorder is not None and f.task is not None
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
