"""The progress ticker: Swift's ``Progress: <date>  Selecting site:4  Active:2`` lines.

Driven only by the event stream (so it works the same for a live run, any scheduler and a
simulated grid): each app invocation's state follows its jobid through JOB_INIT,
JOB_SITE_SELECT, TASK_STATUS_CHANGE, JOB_END, APPLICATION_EXCEPTION, END_FAILURE and
JOB_RESTARTED (and JOB_CACHED: a call memoization reused is ``Cached``, after
``Finished successfully``).  As in Swift (reference 5.4): checked every second, printed when the
summary changed or 30 s passed since the last line, zero counts omitted, states in
Swift's order, ``Final status:`` always printed at the end.  The summary also goes to the
log as a PROGRESS event.  The periodic check is one ``call_later`` handle, not a task.

A WAITING event (a block, site, worker or task that waits, and why) is printed under the
ticker at once, once per change of its reason or detail (one with an empty reason, the
wait over, prints nothing): a run that shows ``Submitted:32``
for minutes says why (``Waiting: block 1 (slurm job 2) pending: PartitionConfig - ...``).
One whose emitter says it is ``expected`` (the normal state of a busy run) is printed
only once it has lasted ``force_every``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from swiftnb.events import Event, EventBus
from swiftnb.scheduling.waiting import is_expected

__all__ = ["ProgressTicker", "STATE_ORDER", "ticker_date", "waiting_line"]

#: Swift's printed order; other states follow in first-seen order.
STATE_ORDER = (
    "uninitialized", "Initializing", "Selecting site", "Initializing site shared directory",
    "Stage in", "Submitting", "Submitted", "Active", "Checking status", "Stage out", "Failed",
    "Replicating", "Finished in previous run", "Finished successfully", "Cached",
)

_STATUS_STATE = {
    8: "Submitting", 1: "Submitted", 2: "Active", 16: "Stage in", 17: "Stage out",
    7: "Checking status", 5: "Failed but can retry", 6: "Canceled",
}
_COMPLETED = 7

#: the run's own words when it is stopped (runner, RunHandle.cancel, engine): calls that
#: end after them were canceled, not failed or finished
_STOP_MESSAGES = ("Execution interrupted", "Execution canceled")
_ENDED = frozenset({"Finished successfully", "Failed", "Finished in previous run", "Canceled",
                    "Cached"})


_JAVA_FIELDS = (
    ("EEEE", "%A"), ("EEE", "%a"), ("E", "%a"), ("yyyy", "%Y"), ("yy", "%y"),
    ("MMMM", "%B"), ("MMM", "%b"), ("MM", "%m"), ("dd", "%d"), ("d", "%-d"), ("HH", "%H"),
    ("hh", "%I"), ("mm", "%M"), ("ss", "%S"), ("SSS", "{ms}"), ("a", "%p"), ("ZZZZZ", "%z"),
    ("Z", "%z"), ("z", "%Z"),
)


def java_date_format(pattern: str) -> Callable[..., str]:  # (t: float | None = None)
    """A formatter for a Java SimpleDateFormat pattern (``tickerDateFormat``).

    Letters map to strftime fields; text in single quotes is literal, ``''`` a quote.
    """
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "'":
            if pattern.startswith("''", i):
                out.append("'")
                i += 2
                continue
            i += 1
            literal = []
            while i < len(pattern):
                if pattern.startswith("''", i):
                    literal.append("'")
                    i += 2
                elif pattern[i] == "'":
                    i += 1
                    break
                else:
                    literal.append(pattern[i])
                    i += 1
            out.append("".join(literal).replace("%", "%%").replace("{", "{{").replace("}", "}}"))
            continue
        for java, py in _JAVA_FIELDS:
            if pattern.startswith(java, i):
                out.append(py)
                i += len(java)
                break
        else:
            out.append(ch.replace("%", "%%").replace("{", "{{").replace("}", "}}"))
            i += 1
    fmt = "".join(out)

    def format_date(t: float | None = None) -> str:
        now = time.time() if t is None else t
        text = time.strftime(fmt, time.localtime(now))
        return text.format(ms=f"{int(now * 1000) % 1000:03d}") if "{" in text else text

    return format_date


def ticker_date(t: float | None = None) -> str:
    """Java ``E, dd MMM yyyy HH:mm:ssZ``: ``Sun, 22 Nov 2026 10:14:09+0000`` (local time)."""
    return time.strftime("%a, %d %b %Y %H:%M:%S%z", time.localtime(time.time() if t is None else t))


def waiting_line(fields: dict[str, str]) -> str:
    """``block 1 (slurm job 2) pending: PartitionConfig - the job asks ...``, for people."""
    what = f"{fields.get('subject', '?')} {fields.get('id', '')}".rstrip()
    if fields.get("lrm") and fields.get("job"):
        what += f" ({fields['lrm']} job {fields['job']}) pending"
    else:
        what += " waits"
    return f"{what}: {fields.get('reason', '')} - {fields.get('detail', '')}"


class ProgressTicker:
    """Counts app invocations per state from a bus and prints Swift's ticker lines."""

    def __init__(
        self,
        bus: EventBus,
        *,
        stream: IO[str] | None = None,
        interval: float = 1.0,
        force_every: float = 30.0,
        prefix: str = "Progress: ",
        date: Callable[[], str] = ticker_date,
        log: bool = True,
    ) -> None:
        self.bus = bus
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.force_every = force_every
        self.prefix = prefix
        self.date = date
        self.log = log
        self.states: dict[str, str] = {}
        self.counts: dict[str, int] = {}
        self._task_job: dict[str, str] = {}
        self._thread_job: dict[str, str] = {}
        self._tr: dict[str, str | None] = {}
        self._last_init: str | None = None
        self._cached_last: str | None = None
        self._stopping = False
        self._last_summary: str | None = None
        self._last_print = 0.0
        self._handle: asyncio.TimerHandle | None = None
        self._unsubscribe = bus.subscribe(self.on_event)
        self.lines: list[str] = []
        #: (subject, id) -> the last WAITING line printed for it
        self._waits: dict[tuple[str, str], str] = {}
        #: (subject, id) -> (since, line) of expected waits not printed yet
        self._held_waits: dict[tuple[str, str], tuple[float, str]] = {}

    # -- state tracking ----------------------------------------------------------------

    def _set(self, jobid: str, state: str) -> None:
        old = self.states.get(jobid)
        if old == state:
            return
        if old is not None:
            n = self.counts[old] - 1
            if n:
                self.counts[old] = n
            else:
                del self.counts[old]
        self.states[jobid] = state
        self.counts[state] = self.counts.get(state, 0) + 1

    def _settled(self, jobid: str) -> None:
        """A call that no later event of the ticker's can change: counted, not kept (a
        run of a million calls would keep a million ids)."""
        self.states.pop(jobid, None)
        self._tr.pop(jobid, None)

    def on_event(self, event: Event) -> None:
        kind = event.kind
        f = event.fields
        if kind == "TASK_STATUS_CHANGE":
            status = int(f.get("status", 0))
            # a task completes once (a failed one may be submitted again): forgotten then
            jobid = (self._task_job.pop(event.get("taskid"), None) if status == _COMPLETED
                     else self._task_job.get(event.get("taskid")))
            state = _STATUS_STATE.get(status)
            if jobid is not None and state is not None:
                self._set(jobid, state)
        elif kind == "JOB_TASK":
            self._task_job[f["taskid"]] = f["jobid"]
        elif kind == "JOB_INIT":
            self._tr[f["jobid"]] = f.get("tr")
            self._last_init = f["jobid"]
            self._set(f["jobid"], "Initializing")
        elif kind == "JOB_CACHED":
            # memoization reused an earlier call's outputs: counted apart from the calls
            # that ran, after them, as ``Cached:N`` (docs/memoization.md)
            self._set(f["jobid"], "Cached")
            self._settled(f["jobid"])
            self._cached_last = f["jobid"]  # a JOB_END of its own may follow at once
        elif kind == "JOB_SITE_SELECT":
            self._set(f["jobid"], "Selecting site")
        elif kind == "THREAD_ASSOCIATION":
            if f.get("thread") is not None:
                self._thread_job[str(f["thread"])] = f["jobid"]
        elif kind == "PROCEDURE":
            # the engine emits PROCEDURE {thread} right after JOB_INIT {jobid}: a call that
            # never reached a site (the run stopped first) is still found by its thread
            if self._last_init is not None and f.get("thread") is not None:
                self._thread_job.setdefault(str(f["thread"]), self._last_init)
        elif kind == "JOB_END":
            # the engine ends failed calls with JOB_END too; END_FAILURE settles those
            if f["jobid"] == self._cached_last:
                return
            state = self.states.get(f["jobid"])
            if self._stopping and state not in ("Finished successfully", "Cached"):
                self._set(f["jobid"], "Canceled")
            elif state not in ("Failed but can retry", "Canceled", "Cached"):
                self._set(f["jobid"], "Finished successfully")
                self._settled(f["jobid"])
        elif kind == "MESSAGE":
            if str(event.text or "").startswith(_STOP_MESSAGES):
                self._stopping = True
        elif kind == "JOB_RESTARTED":
            self._set(f["jobid"], "Finished in previous run")
            self._settled(f["jobid"])
        elif kind == "END_SUCCESS":
            if f.get("thread") is not None:
                self._thread_job.pop(str(f["thread"]), None)
        elif kind == "APPLICATION_EXCEPTION":
            self._set(f["jobid"], "Failed but can retry")
        elif kind == "END_FAILURE":
            jobid = f.get("jobid") or self._thread_job.get(str(f.get("thread")))
            if jobid is None:
                tr = f.get("tr")
                failing = [j for j, s in self.states.items() if s == "Failed but can retry"]
                jobid = next((j for j in failing if self._tr.get(j) == tr), None) or next(
                    iter(failing), None)
            if jobid is not None and self.states.get(jobid) != "Canceled":
                self._set(jobid, "Failed")
                self._settled(jobid)
            if f.get("thread") is not None:
                self._thread_job.pop(str(f["thread"]), None)
        elif kind == "WAITING":
            self._waiting(f)
        elif kind == "JOB_CANCELED":
            pass

    def _waiting(self, fields: dict[str, Any]) -> None:
        """Print why something waits, once per change.  A wait its emitter calls
        ``expected`` (the normal state of a busy run: a site's full throttle, tasks queued
        for busy coaster slots) is printed only once it has lasted ``force_every`` seconds
        (a long run, where a person wonders why only N calls run), by :meth:`tick`."""
        key = (str(fields.get("subject")), str(fields.get("id")))
        if not fields.get("reason"):  # it no longer waits: its line, if said, stays said
            self._held_waits.pop(key, None)
            return
        line = waiting_line({k: str(v) for k, v in fields.items()})
        if self._waits.get(key) == line:
            return
        if is_expected(fields):
            self._held_waits.setdefault(key, (time.monotonic(), line))
            return
        self._say_waiting(key, line)

    def _say_waiting(self, key: tuple[str, str], line: str) -> None:
        self._waits[key] = line
        self._print(f"Waiting: {line}")

    def _lasting_waits(self, now: float) -> None:
        for key, (since, line) in list(self._held_waits.items()):
            if now - since >= self.force_every:
                del self._held_waits[key]
                if self._waits.get(key) != line:
                    self._say_waiting(key, line)

    # -- output ------------------------------------------------------------------------

    def summary(self) -> str:
        """The counts part of a ticker line: ``  Selecting site:4  Active:2``."""
        parts = [f"  {s}:{self.counts[s]}" for s in STATE_ORDER if self.counts.get(s)]
        parts += [f"  {s}:{n}" for s, n in self.counts.items() if s not in STATE_ORDER and n]
        return "".join(parts)

    def _print(self, line: str) -> None:
        self.lines.append(line)
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass

    def _write(self, prefix: str, summary: str) -> None:
        self._print(f"{prefix}{self.date()}{summary}")
        if self.log:
            self.bus.emit("PROGRESS", {}, text=summary)

    def tick(self, now: float | None = None) -> bool:
        """Print a line if the summary changed or ``force_every`` passed; True if printed."""
        now = time.monotonic() if now is None else now
        if self._held_waits:
            self._lasting_waits(now)
        summary = self.summary()
        if summary != self._last_summary or now - self._last_print >= self.force_every:
            self._last_summary = summary
            self._last_print = now
            self._write(self.prefix, summary)
            return True
        return False

    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Check every ``interval`` seconds on the running loop."""
        loop = loop or asyncio.get_running_loop()

        def again() -> None:
            self.tick()
            self._handle = loop.call_later(self.interval, again)

        self._handle = loop.call_later(self.interval, again)

    def stop(self, final: bool = True) -> None:
        """Stop ticking, detach from the bus and print ``Final status:``."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if final:
            if self._stopping:  # the run was stopped: what had not ended was canceled
                for jobid, state in list(self.states.items()):
                    if state not in _ENDED:
                        self._set(jobid, "Canceled")
            self._write("Final status: ", self.summary())
        self._unsubscribe()

    def snapshot(self) -> dict[str, Any]:
        return dict(self.counts)
