"""The Swift-format log writer: every event on the bus becomes one Swift 0.96 log line.

Swift/K wrote its log through log4j with the pattern
``%d{yyyy-MM-dd HH:mm:ss,SSSZ} %-5p %c{1} %m``, e.g.::

    2016-01-25 01:08:24,537+0000 DEBUG swift JOB_INIT jobid=sleep-gfl3orkm tr=sleep

Writing the same lines (same loggers, levels, field order and comma style per tag) means
the existing Swift log tools, and our own reader (:mod:`swiftnb.logs.reader`), work on
swiftnb logs unchanged.  swiftnb writes true UTC instants with the ``+0000`` zone.

The writer sits on the hot path of a run (a 10k-task run emits ~100k events), so it
formats with plain string joins, caches the date part per second, buffers in a large
file buffer and flushes at most a few times a second (enough for a tailing reader),
at the end of a run and when detached.
"""

from __future__ import annotations

import asyncio
import io
import os
import sys
import time as _time
from collections.abc import Callable
from typing import IO, Any

from swiftnb.events import Event, EventBus

__all__ = ["LogWriter", "format_event", "format_value", "LINE_SPEC"]

#: kind -> (level, logger, style).  style: "kv" = ``KIND k=v k=v``; "comma" =
#: ``KIND k=v, k=v`` (the coaster block lines); anything else is special-cased below.
LINE_SPEC: dict[str, tuple[str, str, str]] = {
    # run level (Loader)
    "RUN_START": ("INFO", "Loader", "bare"),
    "RUN_SUCCESS": ("INFO", "Loader", "finished"),
    "RUN_FAILURE": ("INFO", "Loader", "finished"),
    "RUN_ID": ("INFO", "Loader", "value"),
    "VERSION": ("INFO", "Loader", "value"),
    "ARGUMENTS": ("INFO", "Loader", "value"),
    "CWD": ("INFO", "Loader", "value"),
    "CONFIG": ("DEBUG", "Loader", "config"),
    "TRACE": ("WARN", "trace", "text"),
    "WARNING": ("INFO", "Warnings", "warning"),
    "PROGRESS": ("INFO", "RuntimeStats$ProgressTicker", "text"),
    # dataflow (swift, DEBUG)
    "PROCEDURE": ("DEBUG", "swift", "kv"),
    "PROCEDURE_END": ("DEBUG", "swift", "kv"),
    "FOREACH_IT_START": ("DEBUG", "swift", "kv"),
    "FOREACH_IT_END": ("DEBUG", "swift", "kv"),
    "SCOPE": ("DEBUG", "swift", "kv"),
    "STARTCOMPOUND": ("INFO", "swift", "kv"),
    "ENDCOMPOUND": ("INFO", "swift", "kv"),
    # application jobs
    "JOB_INIT": ("DEBUG", "swift", "kv"),
    "JOB_SITE_SELECT": ("DEBUG", "swift", "kv"),
    "THREAD_ASSOCIATION": ("DEBUG", "swift", "kv"),
    "JOB_START": ("DEBUG", "swift", "kv"),
    "JOB_END": ("DEBUG", "swift", "kv"),
    "JOB_CANCELED": ("DEBUG", "swift", "kv"),
    "JOB_RESTARTED": ("DEBUG", "swift", "kv"),
    # memoization: reason last (it has spaces), so the reader takes the rest of the line
    "JOB_CACHED": ("INFO", "swift", "kv"),
    "JOB_NOT_CACHED": ("INFO", "swift", "kv"),
    "FILE_STAGE_IN_START": ("DEBUG", "swift", "kv"),
    "FILE_STAGE_IN_END": ("DEBUG", "swift", "kv"),
    "FILE_STAGE_OUT_START": ("DEBUG", "swift", "kv"),
    "FILE_STAGE_OUT_END": ("DEBUG", "swift", "kv"),
    "APPLICATION_EXCEPTION": ("DEBUG", "swift", "exception"),
    "END_SUCCESS": ("INFO", "swift", "kv"),
    "END_FAILURE": ("INFO", "swift", "kv"),
    "JOB_TASK": ("INFO", "Execute", "kv"),
    "TASK_STATUS_CHANGE": ("INFO", "Execute", "status"),
    # scheduling
    "CONTACT_SELECTED": ("DEBUG", "WeightedHostScoreScheduler", "comma"),
    "SITE_SET": ("INFO", "WeightedHostScoreScheduler", "kv"),
    "THROTTLE": ("INFO", "WeightedHostScoreScheduler", "kv"),
    "REPLICA_START": ("DEBUG", "swift", "kv"),
    "REPLICA_CANCEL": ("DEBUG", "swift", "kv"),
    # coasters (forwarded by the service, logged by the client's RemoteLogHandler)
    "BLOCK_REQUESTED": ("INFO", "RemoteLogHandler", "comma"),
    "BLOCK_ACTIVE": ("INFO", "RemoteLogHandler", "kv"),
    "BLOCK_SHUTDOWN": ("INFO", "RemoteLogHandler", "kv"),
    "BLOCK_DONE": ("INFO", "RemoteLogHandler", "kv"),
    "BLOCK_FAILED": ("INFO", "RemoteLogHandler", "kv"),
    "BLOCK_UTILIZATION": ("INFO", "RemoteLogHandler", "comma"),
    "WORKER_ACTIVE": ("INFO", "RemoteLogHandler", "kv"),
    "WORKER_LOST": ("INFO", "RemoteLogHandler", "kv"),
    "WORKER_SHUTDOWN": ("INFO", "RemoteLogHandler", "kv"),
    "PLANNER": ("INFO", "BlockQueueProcessor", "text"),
    # why a block, site, worker or task waits: detail last (it has spaces), so the
    # reader takes the rest of the line
    "WAITING": ("INFO", "swift", "kv"),
}

#: how far back from its end a log that could not be written is searched for a whole line
_TAIL = 1 << 16

_LEVEL_PAD = {"INFO": "INFO ", "WARN": "WARN ", "DEBUG": "DEBUG", "ERROR": "ERROR",
              "TRACE": "TRACE", "FATAL": "FATAL", "WARNING": "WARN "}


#: the lines -reducedLogging leaves out (Swift 0.96: the task-level ones)
_TASK_LEVEL = frozenset({"JOB_TASK", "TASK_STATUS_CHANGE", "THREAD_ASSOCIATION",
                         "JOB_SITE_SELECT", "PROCEDURE", "PROCEDURE_END", "FOREACH_IT_START",
                         "FOREACH_IT_END", "CONTACT_SELECTED", "SCOPE", "STARTCOMPOUND",
                         "ENDCOMPOUND"})

#: the lines a compact log leaves out: the app procedure's dataflow lines (its thread and
#: name are the job's; the -debug dataflow lines are a full log's) and the site
#: selection, logged in the millisecond of the job's JOB_INIT
_NOT_COMPACT = frozenset({"PROCEDURE", "PROCEDURE_END", "JOB_SITE_SELECT"})
#: the call's end lines a compact log writes with the job's id instead of its thread
_CALL_ENDS = frozenset({"END_SUCCESS", "END_FAILURE"})
#: task states a compact log leaves out when the same task's next state follows in the
#: same millisecond (submitting, submitted: a local or coaster task passes them at once)
_PASSING = frozenset({8, 1})

#: " LEVEL logger " of the kinds written as plain ``KIND k=v ...`` (the hot path)
_FAST_HEAD = {kind: f" {_LEVEL_PAD[level]} {logger} "
              for kind, (level, logger, style) in LINE_SPEC.items()
              if style == "kv" or kind == "TASK_STATUS_CHANGE"}


def format_value(value: Any) -> str:
    """Render a field value as Java's toString did (lists ``[a, b]``, ``null``, booleans)."""
    kind = type(value)
    if kind is str:
        return value
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, int):  # IntEnum (TaskStatus) -> its code
        return str(int(value))
    return str(value)


def _kv(fields: dict[str, Any], sep: str) -> str:
    # grown in place, without a list: a line has a few fields, and this runs per line
    text = ""
    for k, v in fields.items():
        if type(v) is not str:
            v = format_value(v)
        text = f"{text}{sep}{k}={v}" if text else f"{k}={v}"
    return text


def format_message(event: Event) -> tuple[str, str, str]:
    """(level, logger, message) of one event, as Swift 0.96 would have logged it."""
    kind = event.kind
    spec = LINE_SPEC.get(kind)
    fields = event.fields
    if spec is None:  # MESSAGE and kinds we do not know: trust the emitter
        text = event.text
        if text is None:
            text = f"{kind} {_kv(fields, ' ')}" if fields else kind
            if kind == "MESSAGE":
                text = _kv(fields, " ")
        return event.level, event.logger, text
    level, logger, style = spec
    if style == "kv":
        if kind == "JOB_START" and "arguments" in fields and not fields["arguments"]:
            fields = {k: v for k, v in fields.items() if k != "arguments"}
        msg = f"{kind} {_kv(fields, ' ')}" if fields else kind
        if event.text:
            msg = f"{msg} - {event.text}"
    elif style == "comma":
        if kind == "CONTACT_SELECTED" and isinstance(fields.get("score"), float):
            fields = dict(fields, score=f"{fields['score']:.3f}")
        msg = f"{kind} {_kv(fields, ', ')}" if fields else kind
    elif style == "status":
        parts = [kind]
        message = None
        for k, v in fields.items():
            if k == "message":
                message = v
            elif v is not None:
                parts.append(f"{k}={format_value(v)}")
        if message is None:
            message = event.text
        if message:
            parts.append(str(message))
        msg = " ".join(parts)
    elif style == "bare":
        msg = kind if not fields else f"{kind} {_kv(fields, ' ')}"
    elif style == "finished":
        msg = "Swift finished with no errors" if kind == "RUN_SUCCESS" else (
            "Swift finished with errors")
    elif style == "value":
        value = event.text if event.text is not None else " ".join(
            format_value(v) for v in fields.values())
        msg = f"{kind} {value}"
    elif style == "config":
        msg = "SWIFT_CONFIGURATION \n" + (event.text or _kv(fields, "\n"))
    elif style == "exception":
        jobid = fields.get("jobid", "")
        message = fields.get("message", event.text or "")
        msg = f"APPLICATION_EXCEPTION jobid={jobid} - Application exception: {message}"
    elif style == "warning":
        text = event.text if event.text is not None else str(fields.get("message", ""))
        msg = text if text.startswith("Warning") else f"Warning: {text}"
    else:  # "text"
        msg = event.text if event.text is not None else str(
            fields.get("text", _kv(fields, " ")))
    return level, logger, msg


class _Stamp:
    """Formats epoch seconds as ``yyyy-MM-dd HH:mm:ss,SSS+0000``, caching the seconds."""

    __slots__ = ("_sec", "_prefix", "_millis", "_stamp", "_low", "_high")

    def __init__(self) -> None:
        self._sec = -1
        self._prefix = ""
        self._millis = -1
        self._stamp = ""
        #: the open interval of ``t * 1000`` that rounds to ``_millis`` for sure (its
        #: ends, exact halves, go the long way: round() takes them to the even side)
        self._low = self._high = 0.0

    def __call__(self, t: float) -> str:
        scaled = t * 1000.0
        if self._low < scaled < self._high:  # a busy run logs many lines a millisecond
            return self._stamp
        millis = int(round(scaled))
        if millis == self._millis:
            return self._stamp
        self._low = millis - 0.5
        self._high = millis + 0.5
        sec, ms = divmod(millis, 1000)
        if sec != self._sec:
            self._sec = sec
            self._prefix = _time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(sec))
        self._millis = millis
        self._stamp = stamp = f"{self._prefix},{ms:03d}+0000"
        return stamp


def _jobs_dir_of(tmpdir: str, jobid: object) -> str | None:
    """``SCRIPT-RUNID/jobs/`` of a job directory named the usual way, else None."""
    if type(jobid) is not str or not jobid:
        return None
    tail = f"/jobs/{jobid[0]}/{jobid}"
    return tmpdir[:-len(tail)] + "/jobs/" if tmpdir.endswith(tail) else None


def _printable(text: str) -> str:
    """``text`` with the bytes of a name that is not UTF-8 as ``\\xff`` escapes."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def format_event(event: Event, stamp: Callable[[float], str] | None = None) -> str:
    """One complete log line (with trailing newline) for an event."""
    level, logger, msg = format_message(event)
    when = (stamp or _Stamp())(event.time)
    return f"{when} {_LEVEL_PAD.get(level, level)} {logger} {msg}\n"


def stream_name(stream: IO[Any]) -> str | None:
    """The name of the file under a stream open() made (``<stdout>`` for sys.stdout);
    None for an in-memory one (StringIO, BytesIO), which has no name."""
    f: Any = stream
    if isinstance(f, io.TextIOWrapper):
        f = f.buffer
    if isinstance(f, (io.BufferedReader, io.BufferedWriter, io.BufferedRandom)):
        f = f.raw
    return str(f.name) if isinstance(f, io.FileIO) else None


class LogWriter:
    """Subscribe to a bus and write Swift 0.96 log lines to a file or a text stream.

    ``LogWriter("run001/swift.log").attach(bus)`` returns the function that detaches it
    (unsubscribes, flushes and closes the file it opened).  A stream passed in is flushed
    but left open.  ``flush_interval`` bounds how stale the file can be for a tailing
    reader; events at WARN or run end flush at once.  ``minimal=True`` writes only WARN
    lines (``-minimalLogging``), ``reduced=True`` leaves out the task-level lines
    (``-reducedLogging``: JOB_TASK, TASK_STATUS_CHANGE, THREAD_ASSOCIATION, ...).

    ``compact=True`` (``-compactLogging``) writes what the readers need of each call and
    leaves out what repeats (docs/logs.md, "The compact log"): no PROCEDURE,
    PROCEDURE_END or JOB_SITE_SELECT lines, no THREAD_ASSOCIATION without a replication
    group (the call's ``END_SUCCESS``/``END_FAILURE`` names its job: ``jobid=J tr=TR``),
    no JOB_START ``tmpdir=`` that is ``SCRIPT-RUNID/jobs/X/JOBID`` under the last one
    written, no JOB_TASK ``dir=``/``args=`` equal to its JOB_START's
    ``tmpdir=``/``arguments=``, no JOB_TASK ``exec=`` equal to its JOB_START's ``tr=``, no
    ``status=8``/``status=1`` line that the same task's next status follows in the same
    millisecond, and no JOB_END that the call's ``END_SUCCESS jobid=J`` follows in the
    same millisecond (the readers take its time for the job's end).  Every line written is still a line
    Swift's readers parse.
    """

    def __init__(
        self,
        target: str | os.PathLike[str] | IO[str],
        *,
        flush_interval: float = 0.5,
        buffer_size: int = 1 << 20,
        minimal: bool = False,
        reduced: bool = False,
        compact: bool = False,
    ) -> None:
        # -minimalLogging: WARN and above only; -reducedLogging: no task-level lines
        self._skip: frozenset[str] = frozenset()
        if minimal:
            self._skip = frozenset(k for k, (lvl, _, _) in LINE_SPEC.items()
                                   if lvl not in ("WARN", "ERROR"))
        elif reduced:
            self._skip = _TASK_LEVEL
        if compact:
            self._skip = self._skip | _NOT_COMPACT
        self._minimal = minimal
        self._compact = compact
        #: (jobid, tmpdir, arguments joined, tr) of the last JOB_START: its JOB_TASK follows
        self._started: tuple[Any, Any, str, Any] | None = None
        #: the job of each thread whose THREAD_ASSOCIATION was left out: its END_SUCCESS
        #: or END_FAILURE names the job instead (an entry lives as long as the call)
        self._thread_jobs: dict[str, str] = {}
        #: ``SCRIPT-RUNID/jobs/`` of the last tmpdir= written: a job directory there,
        #: named after its job, goes without saying
        self._jobs_dir: str | None = None
        #: a line held back: (what drops it, stamp, line).  A passing status line
        #: (taskid) is dropped if the task's next status comes in the same millisecond,
        #: a JOB_END (("end", jobid)) if the call's END_SUCCESS naming that job does
        self._held: tuple[object, str, str] | None = None
        if isinstance(target, (str, os.PathLike)):
            path = os.fspath(target)
            parent = os.path.dirname(path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            # names are bytes on POSIX: one that is not UTF-8 is written as its bytes
            self._stream: IO[str] = open(path, "a", encoding="utf-8", errors="surrogateescape",
                                         buffering=buffer_size)
            self._owned = True
            self.path: str | None = path
        else:
            self._stream = target
            self._owned = False
            self.path = stream_name(target)
        self._stamp = _Stamp()
        self._flush_interval = flush_interval
        self._last_flush = _time.monotonic()
        self._unsubscribe: Callable[[], None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self.closed = False
        self.lines = 0
        #: the error that stopped the writing (a full disk...): the log is incomplete
        self.failure: OSError | None = None
        #: told once, with a message for people, when the log cannot be written
        self.on_failure: Callable[[str], None] | None = None

    # -- writing -----------------------------------------------------------------
    def write(self, event: Event) -> None:
        """Write one event (the bus subscriber)."""
        if self.closed:
            return
        kind = event.kind
        if self._skip and (kind in self._skip or (
                self._minimal and kind not in LINE_SPEC and event.level not in ("WARN", "ERROR"))):
            return
        head = _FAST_HEAD.get(kind)
        fields = event.fields
        if self._compact and head is not None:
            compacted = self._compacted(kind, fields)
            if compacted is None:
                return
            fields = compacted
        if head is not None and event.text is None and (
                kind != "JOB_START" or fields.get("arguments", True)):
            # the common case (job, task and coaster lines): no special layout
            if kind == "TASK_STATUS_CHANGE":
                if (len(fields) == 2 and type(fields.get("taskid")) is str
                        and isinstance(fields.get("status"), int)):  # the usual line
                    msg = f"TASK_STATUS_CHANGE taskid={fields['taskid']} status={int(fields['status'])}"
                else:
                    msg = format_message(event)[2]
            else:
                msg = f"{kind} {_kv(fields, ' ')}" if fields else kind
            level = ""
        else:
            level, logger, msg = format_message(event)
            head = f" {_LEVEL_PAD.get(level, level)} {logger} "
        stamp = self._stamp(event.time)
        line = f"{stamp}{head}{msg}\n"
        if self._compact and self._hold(kind, fields, stamp, line):
            return
        try:  # _put, inline: once per line
            self._stream.write(line)
        except UnicodeEncodeError:  # a stream of someone else's that cannot take the bytes
            if not self._put(_printable(line)):
                return
        except OSError as exc:
            self._failed(exc)
            return
        else:
            self.lines += 1
        if level == "WARN" or kind in ("RUN_SUCCESS", "RUN_FAILURE"):
            self.flush()
        elif self._flush_interval >= 0:
            now = _time.monotonic()
            if now - self._last_flush >= self._flush_interval:
                self.flush(now)
            elif not self._timer:
                self._schedule_flush()

    def _put(self, line: str) -> bool:
        """Write one line; False once the log cannot be written."""
        try:
            self._stream.write(line)
        except UnicodeEncodeError:  # a stream of someone else's that cannot take the bytes
            self._stream.write(_printable(line))
        except OSError as exc:
            self._failed(exc)
            return False
        self.lines += 1
        return True

    def _compacted(self, kind: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """The fields a compact log writes: those another line of the job repeats go;
        None: the line goes (a THREAD_ASSOCIATION whose thread the call's end names)."""
        if kind == "JOB_START":
            args = fields.get("arguments")
            joined = " ".join(format_value(a) for a in args) if isinstance(args, list) else ""
            tmpdir = fields.get("tmpdir")
            self._started = (fields.get("jobid"), tmpdir, joined, fields.get("tr"))
            if type(tmpdir) is str:
                if self._implied_dir(tmpdir, fields.get("jobid")):
                    fields = {k: v for k, v in fields.items() if k != "tmpdir"}
                else:
                    self._jobs_dir = _jobs_dir_of(tmpdir, fields.get("jobid"))
        elif kind == "JOB_TASK" and self._started is not None \
                and self._started[0] == fields.get("jobid"):
            _, tmpdir, joined, tr = self._started
            if fields.get("dir") == tmpdir or fields.get("args") == joined \
                    or fields.get("exec") == tr:
                fields = {k: v for k, v in fields.items()
                          if not (k == "dir" and v == tmpdir or k == "args" and v == joined
                                  or k == "exec" and v == tr)}
        elif kind == "THREAD_ASSOCIATION":
            if fields.get("replicationGroup") is not None:  # replicas: the group is news
                return fields
            thread, jobid = fields.get("thread"), fields.get("jobid")
            if type(thread) is str and type(jobid) is str \
                    and self._thread_jobs.setdefault(thread, jobid) == jobid:
                return None  # (a thread another running job has is written, as in full)
            return {k: v for k, v in fields.items() if k != "replicationGroup"}
        elif kind in _CALL_ENDS and "jobid" not in fields:
            jobid = self._thread_jobs.pop(str(fields.get("thread")), None)
            if jobid is not None:
                fields = {"jobid": jobid, **{k: v for k, v in fields.items() if k != "thread"}}
        return fields

    def _implied_dir(self, tmpdir: str, jobid: object) -> bool:
        """Whether ``tmpdir`` is ``SCRIPT-RUNID/jobs/X/JOBID`` under the last one written
        (X the job id's first character, as every site names job directories)."""
        jobs_dir = self._jobs_dir
        return (jobs_dir is not None and type(jobid) is str and bool(jobid)
                and tmpdir == f"{jobs_dir}{jobid[0]}/{jobid}")

    def _hold(self, kind: str, fields: dict[str, Any], stamp: str, line: str) -> bool:
        """Hold back a line the next event may make redundant (True: this line is held,
        nothing to write now): a passing status line, dropped when the same task's next
        status follows in the same millisecond; a JOB_END, dropped when the call's
        ``END_SUCCESS jobid=J`` (whose time the readers take for the job's end) follows
        in the same millisecond (a failed call's JOB_END is always written).  Any other
        next event writes the held line first, so that the lines keep their order."""
        if kind == "TASK_STATUS_CHANGE":
            key: object = fields.get("taskid")
        elif kind == "END_SUCCESS":
            key = ("end", fields.get("jobid"))
        else:
            key = None
        held = self._held
        if held is not None:
            self._held = None
            if not (key == held[0] and stamp == held[1]):
                self._put(held[2])
        if kind == "TASK_STATUS_CHANGE":
            if (type(key) is str and len(fields) == 2
                    and fields.get("status") in _PASSING):
                self._held = (key, stamp, line)
                return True
        elif kind == "JOB_END":
            jobid = fields.get("jobid")
            if type(jobid) is str and len(fields) == 1:
                self._held = (("end", jobid), stamp, line)
                return True
        return False

    def _release(self) -> None:
        """Write the held status line (before a flush: a tailing reader sees it)."""
        if self._held is not None:
            held, self._held = self._held, None
            self._put(held[2])

    __call__ = write

    def _schedule_flush(self) -> None:
        """Flush soon even if no further event comes (a run waiting on long tasks), so a
        tailing reader sees the last lines: one timer on the running loop, if any."""
        loop = asyncio._get_running_loop()  # None outside a loop, without raising
        if loop is not None:
            self._timer = loop.call_later(self._flush_interval, self._timed_flush)

    def _timed_flush(self) -> None:
        self._timer = None
        self.flush()

    def write_header(
        self,
        *,
        run_id: str,
        arguments: list[str] | None = None,
        cwd: str | None = None,
        config_text: str | None = None,
        time: float | None = None,
    ) -> None:
        """The Loader lines Swift wrote before RUN_START (version, run id, arguments)."""
        from swiftnb import SWIFT_VERSION, __version__

        t = _time.time() if time is None else time
        cwd = os.getcwd() if cwd is None else cwd
        # 0.96 wrote "VERSION Swift 0.96.2 git-rev: ..."; tools look for "VERSION Swift"
        self.write(Event(t, "VERSION", {}, text=f"Swift {SWIFT_VERSION} swiftnb {__version__}"))
        self.write(Event(t, "RUN_ID", {}, text=run_id))
        if arguments is not None:
            self.write(Event(t, "ARGUMENTS", {}, text=format_value(list(arguments))))
        self.write(Event(t, "CWD", {}, text=cwd.rstrip("/") + "/."))
        if config_text is not None:
            self.write(Event(t, "CONFIG", {}, text=config_text))

    def flush(self, now: float | None = None) -> None:
        if self.closed:
            return
        self._release()
        try:
            self._stream.flush()
        except OSError as exc:
            self._failed(exc)
        except ValueError:  # a stream its owner closed
            pass
        self._last_flush = _time.monotonic() if now is None else now

    def _failed(self, exc: OSError) -> None:
        """The log cannot be written (a full disk, a quota, an I/O error): stop writing,
        so that nothing half-written follows, and say so once: the run's records are
        lost from here on, which its user must learn (Swift's log4j only printed
        ``log4j:ERROR`` and went on)."""
        if self.failure is not None:
            return
        self.failure = exc
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        message = (f"Could not write the log {self.path or '(a stream)'}: "
                   f"{exc.strerror or exc}; the run's log lines from then on are lost")
        if self.on_failure is not None:
            self.on_failure(message)
        else:
            print(f"Error: {message}", file=sys.stderr, flush=True)

    # -- life cycle --------------------------------------------------------------
    def attach(self, bus: EventBus) -> Callable[[], None]:
        """Subscribe to ``bus``; returns ``detach`` (unsubscribe, flush, close)."""
        self._unsubscribe = bus.subscribe(self.write)
        return self.detach

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.close()

    def close(self) -> None:
        """Flush; close the file if this writer opened it.  Safe to call twice."""
        if self.closed:
            if self.failure is not None and self._owned:
                self._drop_stream()
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.flush()
        self.closed = True
        if not self._owned:
            return
        if self.failure is not None:
            self._drop_stream()
            return
        try:
            self._stream.close()
        except OSError as exc:
            self._failed(exc)
            self._drop_stream()

    def _drop_stream(self) -> None:
        """Close a file that could not be written without writing what its buffer still
        holds: the disk may have room again by now, and a line cut at the point of the
        failure would be followed by the rest of the buffer."""
        stream = self._stream
        try:
            buffered = stream.buffer if isinstance(stream, io.TextIOWrapper) else None
            raw = buffered.raw if isinstance(buffered, io.BufferedWriter) else None
            if raw is not None:
                raw.close()  # the descriptor goes; the buffers above it are dropped
            stream.close()
        except (OSError, ValueError):
            pass
        self._cut_to_whole_lines()

    def _cut_to_whole_lines(self) -> None:
        """Take back the line the failed write cut short, so that a reader of the log
        (ours, Swift's tools) finds whole lines only.  A shorter file needs no room."""
        if self.path is None:
            return
        try:
            with open(self.path, "r+b") as fh:
                end = fh.seek(0, os.SEEK_END)
                start = max(0, end - _TAIL)
                fh.seek(start)
                last = fh.read().rfind(b"\n")
                if last >= 0 and start + last + 1 < end:
                    fh.truncate(start + last + 1)
        except OSError:
            pass

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.detach()


def write_events(events, target: str | os.PathLike[str] | IO[str]) -> int:
    """Write a recorded event sequence as a log; returns the number of lines."""
    with LogWriter(target, flush_interval=-1) as writer:
        for event in events:
            writer.write(event)
        return writer.lines

