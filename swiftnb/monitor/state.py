"""A run as the monitors see it: a plain, typed model folded from the event stream.

The terminal monitor (:mod:`swiftnb.monitor.tui`) and any other monitor outside a notebook
read a :class:`RunState`: no ipywidgets and no bokeh are imported, so ``swiftnb run -tui``
starts fast.  The rules are the notebook panels' (docs/widgets.md), applied to the same
events so that a live run and a log read back show the same figures:

* progress: JOB_INIT makes M (it grows as dataflow unfolds), END_SUCCESS / END_FAILURE
  make N, JOB_CACHED counts reused calls apart; the rate and ETA count only the calls that
  ran (a reused call takes no time), as :mod:`swiftnb.widgets.progress` says;
* tasks: TASK_STATUS_CHANGE keeps each task id's latest CoG status (a repeated status
  changes nothing) and how many tasks are in each status, ended ones included;
* sites: JOB_START gives a job's host, JOB_TASK ties its task to it, TASK_STATUS_CHANGE
  moves the task between queued/running/done; CONTACT_SELECTED's score, THROTTLE
  parallelTasks' limit and SITE_SET's set, overridden by the executor's live snapshot
  (with the failure debt);
* blocks: BLOCK_* and WORKER_* events (when each block was requested, started, ended),
  the ``workerid=BLOCK:WORKER`` of TASK_STATUS_CHANGE that ties a task to its block, and
  the latest WAITING reason of the block (what its local resource manager says it waits
  for) as its LRM state;
* throttles: the executor's values (live; :meth:`RunState.set_throttle` steers them, one
  THROTTLE event per change) or, from a log, its configuration and THROTTLE lines;
* failures: each failed attempt (live: ``RunHandle.on_failure``; a log:
  APPLICATION_EXCEPTION's message) with its stderr tail;
* waiting: the latest WAITING per (subject, id), until that subject starts or ends, or a
  WAITING with an empty reason withdraws it (a site's full throttle);
* feed: the last lines worth a person's eye (failures, warnings, throttle changes, ...).

Each event costs a few dict updates (subscribers must be cheap, docs/design.md); the
monitors redraw from the model at their own bounded rate, checking :attr:`version`.  The
notebook's panels (:mod:`swiftnb.widgets`) read the same model, so that every view of a
run counts it one way.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from swiftnb.attempts import Failure as Attempt
from swiftnb.display import last_lines, num, progress_parts, rate_eta, run_time
from swiftnb.events import Event, EventBus
from swiftnb.scheduling.sites import SATURATED
from swiftnb.scheduling.throttles import (
    OFF_NAMES,
    ThrottleControl,
    parse_throttle,
    shown_limit,
)

__all__ = ["RunState", "AppProgress", "SiteRow", "BlockRow", "FailureRow", "WaitingRow",
           "Throttle", "GLOBAL_THROTTLES", "SITE_THROTTLES", "ThrottleValues",
           "throttle_value", "logged_throttles"]

#: throttles a person may change while the run goes: name -> a sensible largest value
GLOBAL_THROTTLES = {"jobSubmitThrottle": 256, "fileTransfersThrottle": 256,
                    "fileOperationsThrottle": 256}
SITE_THROTTLES = {"maxParallelTasks": 1024, "hostJobSubmitThrottle": 256}
#: how many failures and feed lines are kept (a long run must not grow the model)
FAILURES_KEPT = 50
FEED_KEPT = 200

_QUEUED = frozenset({1, 8})
_RUNNING = frozenset({2, 16, 17})
_ENDED = frozenset({5, 6, 7})
_COMPLETED, _FAILED = 7, 5
_EXIT = re.compile(r"exit code (?:of )?(-?\d+)")
_WAITING_ENDS = {
    "block": ("BLOCK_ACTIVE", "BLOCK_DONE", "BLOCK_FAILED", "BLOCK_SHUTDOWN"),
    "worker": ("WORKER_ACTIVE", "WORKER_LOST", "WORKER_SHUTDOWN"),
}


#: (throttle name, site or None for a global one) -> its value (:func:`throttle_value`)
ThrottleValues = dict[tuple[str, str | None], int | float | str | None]


def throttle_value(value: object) -> int | float | str | None:
    """A throttle value from an event, a log or the executor as people read it: a number,
    "off" for no limit, or None (unknown) when it is missing (a log writes null) or is no
    Throttle value (Swift's parsing, :func:`parse_throttle`)."""
    if value in (None, "null"):
        return None
    try:
        return shown_limit(parse_throttle(value))
    except ValueError:
        return None


@functools.lru_cache(maxsize=4)
def logged_throttles(dump: str) -> tuple[Mapping[tuple[str, str | None], int | float | str | None],
                                         tuple[str, ...]]:
    """The throttle values and enabled sites a log's configuration dump states.

    The dump is the text after ``SWIFT_CONFIGURATION``: the files it came from, then the
    resolved configuration in braces.  It is read by the configuration loader, so values
    it leaves out are the defaults Swift used for them.  A dump that cannot be read gives
    nothing (the throttles are then unknown).  Read once per dump (the run model and the
    throttles panel both ask): what it returns is shared, hence read-only.
    """
    from swiftnb.config import ConfigError, load_config_text  # (a log's monitors only)

    start = dump.find("{")
    if start < 0:
        return {}, ()
    try:
        config = load_config_text(dump[start:], name="log")
    except ConfigError:
        return {}, ()
    values: ThrottleValues = {
        ("jobSubmitThrottle", None): throttle_value(config.job_submit_throttle),
        ("fileTransfersThrottle", None): throttle_value(config.file_transfers_throttle),
        ("fileOperationsThrottle", None): throttle_value(config.file_operations_throttle),
    }
    sites = []
    for site in config.enabled_sites:
        sites.append(site.name)
        values[("maxParallelTasks", site.name)] = throttle_value(site.max_parallel_tasks)
        values[("hostJobSubmitThrottle", site.name)] = throttle_value(
            config.host_job_submit_throttle)
    return values, tuple(sites)


@dataclass(slots=True)
class AppProgress:
    """Calls of one app name: known, done well (some of them reused), done badly."""

    known: int = 0
    ok: int = 0
    failed: int = 0
    cached: int = 0

    @property
    def done(self) -> int:
        return self.ok + self.failed


@dataclass(slots=True)
class SiteRow:
    """One site: its score (None unknown, ``inf`` saturated) and failure debt, limit,
    load and set."""

    name: str
    score: float | None = None
    tscore: float | None = None
    debt: float | None = None
    limit: int | float | str | None = None
    queued: int = 0
    running: int = 0
    done: int = 0
    failed: int = 0
    set: str = "candidate"

    @property
    def completed(self) -> int:
        """Its tasks done well (the sites panel's column name)."""
        return self.done


@dataclass(slots=True)
class BlockRow:
    """One coaster block: its shape, state, workers and tasks, what its LRM says, and
    when it was requested, started (BLOCK_ACTIVE or its first worker) and ended."""

    id: str
    requested: float
    site: str = ""
    cores: int | None = None
    per_worker: int = 1
    walltime: str = ""
    state: str = "requested"
    lrm: str = ""
    workers: set[str] = field(default_factory=set)
    running: int = 0
    done: int = 0
    utilization: float | None = None
    started: float | None = None
    ended: float | None = None

    @property
    def shape(self) -> str:
        if self.cores is None:
            return ""
        return f"{max(1, self.cores // self.per_worker)}x{self.per_worker}"


@dataclass(frozen=True, slots=True)
class FailureRow:
    """One failed attempt: when, which app on which site, its exit code, command line and
    the last lines of its stderr."""

    time: float
    jobid: str
    app: str
    site: str
    exit_code: int | None
    command: str
    stderr: str


@dataclass(frozen=True, slots=True)
class WaitingRow:
    """What a block, site, worker or task waits for, as the latest WAITING said."""

    time: float
    subject: str
    id: str
    site: str
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class Throttle:
    """One throttle: name, site (None: global), value (None unknown, "off" no limit), the
    largest value a monitor offers, and whether it can be changed (a live run)."""

    name: str
    site: str | None
    value: int | float | str | None
    top: int
    steerable: bool

    @property
    def off_allowed(self) -> bool:
        return self.name in OFF_NAMES

    def stepped(self, step: int) -> int | str:
        """The value one step up or down (``off`` past the top, where Swift allows it)."""
        value = self.value
        if value is None:
            value = 1
        if value == "off" or (isinstance(value, (int, float)) and math.isinf(value)):
            return self.top if step < 0 else "off" if self.off_allowed else self.top
        assert not isinstance(value, str)
        new = int(value) + step
        if new > self.top:
            return "off" if self.off_allowed else self.top
        return max(1, new)


class RunState:
    """The model: feed it events (:meth:`apply`, or :meth:`follow` a bus) and read it.

    ``clock``: the run's clock for a live run (time goes on between events); without it (a
    log) the run's time is that of its last event.  ``control``: the live executor, for
    scores, limits and throttles, and to steer them.
    """

    def __init__(self, *, clock: Callable[[], float] | None = None,
                 control: ThrottleControl | None = None) -> None:
        self.clock = clock
        self.control = control
        self.version = 0
        self.label = "run"
        self.t0: float | None = None
        self.last: float | None = None
        self.ended_at: float | None = None
        self.outcome: str | None = None          # "success" / "failure" once ended
        self.known = 0
        self.ok = 0
        self.failed = 0
        self.cached = 0
        self.apps: dict[str, AppProgress] = {}
        self.task_counts: dict[int, int] = {}    # CoG status -> tasks whose latest it is
        self.sites: dict[str, SiteRow] = {}
        self.blocks: dict[str, BlockRow] = {}
        self.failures: deque[FailureRow] = deque(maxlen=FAILURES_KEPT)
        self.failure_count = 0
        self.waiting: dict[tuple[str, str], WaitingRow] = {}
        self.feed: deque[str] = deque(maxlen=FEED_KEPT)
        self.logged_throttles: ThrottleValues = {}
        self._job_app: dict[str, str] = {}
        self._job_host: dict[str, str] = {}
        self._task_host: dict[str, str] = {}
        self._task_status: dict[str, int] = {}   # taskid -> status, until it ends
        self._tasks_seen = 0
        self._task_block: dict[str, str] = {}
        self._unsubscribe: list[Callable[[], None]] = []
        if control is not None:
            for name in control.throttles().get("sites", {}):
                self._site(str(name))

    # ------------------------------------------------------------------ feeding
    def follow(self, bus: EventBus, history: Iterable[Event] = ()) -> None:
        """Fold ``history`` (what was emitted before), then every event of ``bus``."""
        self.fold(history)
        self._unsubscribe.append(bus.subscribe(self.apply))

    def watch_failures(self, subscribe: Callable[[Callable[[Attempt], None]], Callable[[], None]],
                       recorded: Iterable[Attempt] = ()) -> None:
        """Take failed attempts from a live run (``RunHandle.on_failure``), which have
        the stderr tail a log's line lacks."""
        for attempt in recorded:
            self.record_failure(attempt)
        self._unsubscribe.append(subscribe(self.record_failure))

    def close(self) -> None:
        """Stop following."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    def record_failure(self, attempt: Attempt) -> None:
        jobid = attempt.jobid
        self._add_failure(FailureRow(
            attempt.time, jobid, self._job_app.get(jobid, attempt.task.tr or "?"),
            attempt.site or self._job_host.get(jobid, ""), attempt.exit_code,
            attempt.command, last_lines(attempt.stderr_tail or attempt.message)))

    def _add_failure(self, row: FailureRow) -> None:
        self.failures.append(row)
        self.failure_count += 1
        code = "" if row.exit_code is None else f" exit {row.exit_code}"
        self._say(row.time, f"failed: {row.app} on {row.site or '?'}{code}")
        self.version += 1

    def _say(self, t: float, text: str) -> None:
        self.feed.append(f"{time.strftime('%H:%M:%S', time.localtime(t))} {text}"
                         if t > 978307200.0 else f"t={t:.1f} {text}")

    def _app(self, tr: object) -> AppProgress:
        name = str(tr or "?")
        app = self.apps.get(name)
        if app is None:
            app = self.apps[name] = AppProgress()
        return app

    def _site(self, name: str) -> SiteRow:
        site = self.sites.get(name)
        if site is None:
            site = self.sites[name] = SiteRow(name)
        return site

    def _block(self, bid: str, t: float) -> BlockRow:
        block = self.blocks.get(bid)
        if block is None:
            block = self.blocks[bid] = BlockRow(bid, t)
        return block

    def fold(self, events: Iterable[Event]) -> None:
        """Fold events in, in their order."""
        apply = self.apply
        for e in events:
            apply(e)

    def apply(self, e: Event) -> None:
        """Fold one event in."""
        kind = e.kind
        f = e.fields
        if self.t0 is None:
            self.t0 = e.time
        self.last = e.time
        self.version += 1
        if kind == "TASK_STATUS_CHANGE":
            self._status(f)
        elif kind == "JOB_INIT":
            self.known += 1
            tr = str(f.get("tr") or "?")
            self._app(tr).known += 1
            jobid = f.get("jobid")
            if jobid is not None:
                self._job_app[str(jobid)] = tr
        elif kind == "JOB_START":
            host, jobid = f.get("host"), f.get("jobid")
            if host and jobid is not None:
                self._job_host[str(jobid)] = str(host)
                self._site(str(host))
        elif kind == "JOB_TASK":
            host = self._job_host.get(str(f.get("jobid")))
            taskid = f.get("taskid")
            if host is not None and taskid is not None:
                self._tie(str(taskid), host)
        elif kind == "JOB_END":
            self._job_ended(f.get("jobid"))
        elif kind == "JOB_CACHED":
            self.cached += 1
            self._app(f.get("tr")).cached += 1
            self._job_ended(f.get("jobid"))
        elif kind == "JOB_RESTARTED":
            self._job_ended(f.get("jobid"))
        elif kind == "END_SUCCESS":
            self.ok += 1
            self._app(f.get("tr")).ok += 1
        elif kind == "END_FAILURE":
            self.failed += 1
            self._app(f.get("tr")).failed += 1
        elif kind == "APPLICATION_EXCEPTION" and self.control is None:
            self._logged_failure(e)
        elif kind in ("RUN_SUCCESS", "RUN_FAILURE"):
            self.ended_at = e.time
            self.outcome = "success" if kind == "RUN_SUCCESS" else "failure"
            self._say(e.time, f"run ended: {self.outcome}")
        elif kind == "CONTACT_SELECTED":
            host = f.get("host")
            if host:
                self._site(str(host)).tscore = num(f.get("score"))
        elif kind == "SITE_SET":
            host = f.get("host")
            if host:
                site = self._site(str(host))
                site.set = str(f.get("set"))
                self._say(e.time, f"site {host}: {site.set} {f.get('reason') or ''}".rstrip())
        elif kind == "THROTTLE":
            self._throttle(e)
        elif kind == "CONFIG" and e.text:
            self._config(e.text)
        elif kind == "WAITING":
            self._waiting(e)
        elif kind.startswith(("BLOCK_", "WORKER_")):
            self._coaster(e)
        elif kind == "WARNING" or e.level in ("WARN", "ERROR"):
            self._say(e.time, f"{kind.lower()}: {e.text or ''}".rstrip(": "))

    def _job_ended(self, jobid: object) -> None:
        """A job no later failure can name: its app and site are no longer kept (a run
        of a million calls would otherwise keep both for each)."""
        self._job_app.pop(str(jobid), None)
        self._job_host.pop(str(jobid), None)

    def _status(self, f: dict[str, object]) -> None:
        taskid = f.get("taskid")
        status = f.get("status")
        try:
            new = status if isinstance(status, int) else int(str(status))
        except ValueError:
            return
        if taskid is None:
            return
        tid = str(taskid)
        worker = f.get("workerid")
        if worker and tid not in self._task_block:
            block = self.blocks.get(str(worker).split(":", 1)[0])
            if block is not None:
                self._task_block[tid] = block.id
                block.running += 1
        old = self._task_status.get(tid)
        if old == new:
            return
        if old is None:
            self._tasks_seen += 1
        if new in _ENDED:   # no later status: the task is counted, not kept
            self._task_status.pop(tid, None)
        else:
            self._task_status[tid] = new
        counts = self.task_counts
        if old is not None:
            counts[old] -= 1
        counts[new] = counts.get(new, 0) + 1
        host = self._task_host.get(tid)
        if new in _RUNNING or new in _ENDED:
            self.waiting.pop(("task", tid), None)
        if new in _ENDED:
            self._task_host.pop(tid, None)
            bid = self._task_block.pop(tid, None)
            if bid is not None:
                block = self.blocks[bid]
                block.running -= 1
                block.done += new == _COMPLETED
        if host is not None:
            self._site_moves(self._site(host), old, new)

    def _tie(self, tid: str, host: str) -> None:
        """A task's site is known (JOB_TASK): a status it already has counts there now."""
        self._task_host[tid] = host
        status = self._task_status.get(tid)
        if status is not None and status not in _ENDED:
            self._site_moves(self._site(host), None, status)

    @staticmethod
    def _site_moves(site: SiteRow, old: int | None, new: int) -> None:
        if old in _QUEUED:
            site.queued -= 1
        elif old in _RUNNING:
            site.running -= 1
        if new in _QUEUED:
            site.queued += 1
        elif new in _RUNNING:
            site.running += 1
        elif new == _COMPLETED:
            site.done += 1
        elif new == _FAILED:
            site.failed += 1

    def _logged_failure(self, e: Event) -> None:
        message = str(e.fields.get("message") or e.text or "")
        jobid = str(e.fields.get("jobid") or "")
        m = _EXIT.search(message)
        stderr = message.split("tderr", 1)[1].lstrip(":\n ") if "stderr" in message.lower() \
            else message
        self._add_failure(FailureRow(e.time, jobid, self._job_app.get(jobid, "?"),
                                     self._job_host.get(jobid, ""),
                                     int(m.group(1)) if m else None, "", last_lines(stderr)))

    def _throttle(self, e: Event) -> None:
        f = e.fields
        name = str(f.get("name"))
        host = f.get("host")
        site = None if host in (None, "", "null") else str(host)
        new = throttle_value(f.get("new"))
        if name == "parallelTasks":   # the limit following a site's score
            if site is not None:
                self._site(site).limit = new
            return
        self.logged_throttles[(name, site)] = new
        where = f" on {site}" if site else ""
        self._say(e.time, f"throttle {name}{where}: {throttle_value(f.get('old'))} -> {new}")

    def _config(self, dump: str) -> None:
        """A log's configuration (``SWIFT_CONFIGURATION``): the throttles it starts with."""
        if self.control is not None:
            return
        values, sites = logged_throttles(dump)
        for key, value in values.items():
            self.logged_throttles.setdefault(key, value)
        for name in sites:
            self._site(name)

    def _waiting(self, e: Event) -> None:
        f = e.fields
        subject, sid = str(f.get("subject") or "?"), str(f.get("id") or "")
        if not f.get("reason"):  # it no longer waits
            self.waiting.pop((subject, sid), None)
            return
        row = WaitingRow(e.time, subject, sid, str(f.get("site") or ""),
                         str(f.get("reason") or ""), str(f.get("detail") or ""))
        self.waiting[(subject, sid)] = row
        if subject == "block":
            block = self._block(sid, e.time)
            block.lrm = row.reason
            if row.site:
                block.site = row.site
        self._say(e.time, f"{subject} {sid} waits: {row.reason} {row.detail}".rstrip())

    def _coaster(self, e: Event) -> None:
        kind = e.kind
        f = e.fields
        t = e.time
        if kind.startswith("WORKER_"):
            wid = str(f.get("id"))
            self.waiting.pop(("worker", wid), None)
            if kind == "WORKER_ACTIVE":
                block = self._block(str(f.get("blockid")), t)
                block.workers.add(wid)
                if block.started is None:
                    block.started = t
                    block.state = "active"
            elif (known := self.blocks.get(str(f.get("blockid")))) is not None:
                known.workers.discard(wid)
            return
        bid = str(f.get("id"))
        if kind == "BLOCK_UTILIZATION":
            if (known := self.blocks.get(bid)) is not None:
                known.utilization = num(f.get("u"))
            return
        block = self._block(bid, t)
        if kind == "BLOCK_REQUESTED":
            cores = num(f.get("cores"))
            block.cores = int(cores) if cores else None
            block.per_worker = int(num(f.get("coresPerWorker")) or 1)
            block.walltime = str(f.get("walltime") or "")
            if f.get("site"):
                block.site = str(f.get("site"))
        elif kind in ("BLOCK_ACTIVE", "BLOCK_SHUTDOWN", "BLOCK_DONE", "BLOCK_FAILED"):
            block.state = kind[len("BLOCK_"):].lower()
            block.lrm = ""
            self.waiting.pop(("block", bid), None)
            if kind == "BLOCK_ACTIVE":
                block.started = t
            else:
                block.workers.clear()
                if kind != "BLOCK_SHUTDOWN" or block.ended is None:
                    block.ended = t
            self._say(t, f"block {bid} {block.state}")

    # ------------------------------------------------------------------ reading
    @property
    def done(self) -> int:
        return self.ok + self.failed

    @property
    def tasks(self) -> int:
        """Task ids seen (an attempt is one)."""
        return self._tasks_seen

    def elapsed(self) -> float:
        """Run time so far (to the run's end once it ended)."""
        return run_time(self.t0, self.last, self.ended_at, self.clock)

    def rate_eta(self) -> tuple[float | None, float | None]:
        """Overall calls per second and seconds left, reused calls left out."""
        return rate_eta(self.done - self.cached, self.known - self.cached, self.elapsed())

    def headline(self) -> str:
        """``37 of 120 done (5 cached, 2 failed) · elapsed 1 min 05 s · 0.57/s · ETA 25 s``."""
        count, notes, rest = self.headline_parts()
        return " · ".join([count + notes, *rest])

    def headline_parts(self) -> tuple[str, str, list[str]]:
        """The headline in parts a view styles and joins (:func:`display.progress_parts`)."""
        rate, eta = self.rate_eta()
        return progress_parts(self.done, self.known, self.cached, self.failed,
                              self.elapsed(), rate, eta, self.ended_at is not None)

    def app_rows(self) -> list[tuple[str, AppProgress, float | None, float | None]]:
        """Per app name: its counts, rate and ETA (the ETA None once the run ended)."""
        elapsed = self.elapsed()
        rows = []
        for name, app in sorted(self.apps.items()):
            rate, eta = rate_eta(app.done - app.cached, app.known - app.cached, elapsed)
            rows.append((name, app, rate, None if self.ended_at is not None else eta))
        return rows

    def site_rows(self) -> list[SiteRow]:
        """The sites, with the executor's live score, tscore and limit when there is one."""
        if self.control is not None:
            try:
                snaps = self.control.state().get("sites", ())
            except Exception:  # noqa: BLE001 - a monitor never breaks a run
                snaps = ()
            for snap in snaps:
                site = self._site(str(snap["site"]))
                score = num(snap.get("score"))
                site.score = math.inf if score is not None and score >= SATURATED / 2 \
                    else score
                site.tscore = num(snap.get("tscore"))
                site.debt = num(snap.get("debt"))
                site.limit = throttle_value(snap.get("limit"))
        return list(self.sites.values())

    def throttles(self) -> list[Throttle]:
        """Global throttles, then each site's, with their current values."""
        live = self.control is not None
        if self.control is not None:
            values = self.control.throttles()
            site_values = values.get("sites", {})
            out = [Throttle(n, None, throttle_value(values.get(n)), top, True)
                   for n, top in GLOBAL_THROTTLES.items()]
            for site, per in site_values.items():
                out += [Throttle(n, str(site), throttle_value(per.get(n)), top, True)
                        for n, top in SITE_THROTTLES.items()]
            return out
        logged = self.logged_throttles
        out = [Throttle(n, None, logged.get((n, None)), top, live)
               for n, top in GLOBAL_THROTTLES.items()]
        sites = list(dict.fromkeys(s for (_n, s) in logged if s is not None))
        for site in sites:
            out += [Throttle(n, site, logged.get((n, site)), top, live)
                    for n, top in SITE_THROTTLES.items()]
        return out

    def set_throttle(self, name: str, value: int | float | str, site: str | None = None
                     ) -> str | None:
        """Change a throttle of the live run; why it was refused, or None when done."""
        if self.control is None:
            return "nothing to steer: this is not a live run"
        try:
            self.control.set_throttle(name, value, site=site)
        except ValueError as exc:
            return str(exc)
        self.version += 1
        return None

    def waiting_rows(self) -> list[WaitingRow]:
        """What the run waits for, oldest first."""
        return sorted(self.waiting.values(), key=lambda w: w.time)
