"""LogFrame: the entities of a run (jobs, tasks, blocks, workers) and their timings.

Built from the event table (:func:`swiftnb.logs.reader.read_log`, or a live run's events
through :func:`events_frame`), so a Swift/K 0.96 log, a swiftnb log and a live event
stream give the same tables.  Every state time is the *first* event of that state in
log order (Swift's time stamps can run slightly backwards between threads, and some
lines repeat, e.g. ``BLOCK_DONE``).  All times are float epoch seconds, true UTC.

The timings follow the AIMES analysis of Swift runs (see docs/logs.md):

======  =========  ==================================  ===============================
name    entity     start event                         end event
======  =========  ==================================  ===============================
TTC     run        first log record                    ``Swift finished with ...``
Tss     job        ``JOB_INIT``                        first ``JOB_TASK``
Tse     job        first ``JOB_TASK``                  ``JOB_END``
Tw      job        first ``JOB_TASK``                  its task's ``status=2``
Te      task       ``status=2`` (active)               ``status=7`` (completed)
Tsi     task       ``status=16`` (stage in)            ``status=2``
Tso     task       ``status=17`` (stage out)           ``status=7``
Tq      block      ``BLOCK_REQUESTED``                 ``BLOCK_ACTIVE``
Ta      block      ``BLOCK_ACTIVE``                    ``BLOCK_DONE``
Tb      worker     its block's ``BLOCK_ACTIVE``        ``WORKER_ACTIVE``
Twe     worker     ``WORKER_ACTIVE``                   ``WORKER_SHUTDOWN``
======  =========  ==================================  ===============================
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO, Any, cast

import numpy as np
import pandas as pd

from swiftnb.events import Event

__all__ = ["LogFrame", "events_frame", "STATUS_NAMES", "TIMINGS"]

#: CoG status code -> state name (the AIMES analysis' names)
STATUS_NAMES: dict[int, str] = {
    0: "unsubmitted", 8: "submitting", 1: "submitted", 16: "stage_in", 2: "active",
    17: "stage_out", 7: "completed", 5: "failed", 6: "canceled", 3: "suspended",
    4: "resumed", 9999: "unknown",
}
JOB_STATES = {"JOB_INIT": "init", "JOB_SITE_SELECT": "sselect", "JOB_START": "start",
              "JOB_TASK": "task", "JOB_END": "end", "APPLICATION_EXCEPTION": "exception",
              "JOB_CANCELED": "canceled"}
BLOCK_STATES = {"BLOCK_REQUESTED": "requested", "BLOCK_ACTIVE": "active",
                "BLOCK_SHUTDOWN": "shutdown", "BLOCK_DONE": "done", "BLOCK_FAILED": "failed"}
WORKER_STATES = {"WORKER_ACTIVE": "active", "WORKER_LOST": "lost",
                 "WORKER_SHUTDOWN": "shutdown"}

#: name -> (entity table, start column, end column, description)
TIMINGS: dict[str, tuple[str, str, str, str]] = {
    "TTC": ("run", "start", "finish", "time to completion of the whole run"),
    "Tss": ("jobs", "init", "task", "from the app call to its submission: setting up, "
            "and waiting for a free slot (throttles)"),
    "Tse": ("jobs", "task", "end", "the job executing, as Swift saw it"),
    "Tw": ("jobs", "task", "active", "from submission until active: the provider's queue "
           "(and the block queue)"),
    "Te": ("tasks", "active", "completed", "the task executing on a worker"),
    "Tsi": ("tasks", "stage_in", "active", "staging in on the worker"),
    "Tso": ("tasks", "stage_out", "completed", "staging out"),
    "Tq": ("blocks", "requested", "active", "the block queued in the batch system"),
    "Ta": ("blocks", "active", "done", "the block running"),
    "Tb": ("workers", "block_active", "active", "the worker bootstrapping"),
    "Twe": ("workers", "active", "shutdown", "the worker running"),
}


#: the field columns the tables use (added, empty, to an event table without them)
FIELD_COLUMNS = ("text", "jobid", "tr", "taskid", "status", "workerid", "message", "host",
                 "thread", "id", "blockid", "node", "cores", "coresPerWorker", "walltime",
                 "u")


def _fmt(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    from swiftnb.logs.writer import format_value

    return format_value(value)


def events_frame(events: Iterable[Event]) -> pd.DataFrame:
    """The event table of a sequence of events (a live run), in the reader's schema.

    Field values are rendered as the log writer renders them, so a frame built here and
    the frame read back from the log written from the same events compare equal.
    """
    from swiftnb.logs.reader import _TAGGED_KINDS, _empty_frame, _to_int

    events = list(events)
    n = len(events)
    if not n:
        return _empty_frame()
    kinds = [e.kind for e in events]
    tagged = [k in _TAGGED_KINDS for k in kinds]
    columns: dict[str, list[Any]] = {}
    for i, event in enumerate(events):  # one pass over Python objects: they are events
        for key, value in event.fields.items():
            column = columns.get(key)
            if column is None:
                column = columns[key] = [None] * n
            column[i] = value
    data: dict[str, Any] = {
        "line": np.arange(1, n + 1, dtype="int64"),
        "time": np.fromiter((float(e.time) for e in events), "float64", n),
        "kind": pd.Categorical(kinds),
        "level": pd.Categorical([e.level for e in events]),
        "logger": pd.Categorical([e.logger for e in events]),
        "tag": pd.Categorical([k if t else "" for k, t in zip(kinds, tagged)]),
        "text": pd.Series([None if t else e.text for e, t in zip(events, tagged)],
                          dtype=object),
    }
    for key, values in columns.items():
        name = "procline" if key == "line" else key
        if name == "status":
            arr = np.array([None if v is None else str(int(v)) for v in values], dtype=object)
            data[name] = _to_int(arr)
            continue
        data[name] = pd.Series([v if v is None or type(v) is str else _fmt(v) for v in values],
                               dtype=object)
    return pd.DataFrame(data)


def _col(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame:
        return frame[name]
    return pd.Series(None, index=frame.index, dtype=object)


def _event_table(ev: pd.DataFrame, texts: tuple[str, ...],
                 numbers: tuple[str, ...]) -> pd.DataFrame:
    """Events' time and fields, ``texts`` as written and ``numbers`` as floats (NaN where a
    record's value is not a number): one shape for every table of one kind of event."""
    columns: dict[str, np.ndarray] = {"time": ev["time"].to_numpy() if len(ev) else np.zeros(0)}
    columns.update((name, _col(ev, name).to_numpy(dtype=object)) for name in texts)
    columns.update((name, pd.to_numeric(_col(ev, name), errors="coerce").to_numpy(dtype=float))
                   for name in numbers)
    return pd.DataFrame(columns)


def _first(frame: pd.DataFrame, key: str, value: str = "time") -> pd.Series:
    """First value per key in log order (rows with no key dropped)."""
    if key not in frame or not len(frame):
        return pd.Series([], dtype=object)
    sub = frame[[key, value]] if value in frame else frame[[key]].assign(**{value: None})
    sub = sub[sub[key].notna()]
    sub = sub.drop_duplicates(key, keep="first")
    return sub.set_index(key)[value]


def _with_schema(events: pd.DataFrame) -> pd.DataFrame:
    """``events`` with every field column the tables read (empty where absent)."""
    missing = {col: None for col in FIELD_COLUMNS if col not in events}
    if missing:
        events = events.assign(**missing)
        if "status" in missing:
            events["status"] = events["status"].astype("Int64")
    return events


#: the kinds of the lines a frame made by LogFrame.scan holds as columns, not events
_PER_CALL_KINDS = frozenset(("JOB_INIT", "JOB_SITE_SELECT", "JOB_START", "JOB_TASK", "JOB_END",
                             "TASK_STATUS_CHANGE", "THREAD_ASSOCIATION", "END_SUCCESS",
                             "END_FAILURE"))


class LogFrame:
    """The analysis model of one run: events plus entity tables and timings.

    ``LogFrame.read("run001/swift.log")`` reads any Swift log; ``LogFrame(run.events)``
    or ``LogFrame.from_events(events)`` wraps a live run.  Tables are computed on first
    use and cached.
    """

    def __init__(self, events: pd.DataFrame, *, name: str | None = None) -> None:
        self._events: pd.DataFrame | None = _with_schema(events)
        self.name = name
        self._cache: dict[str, Any] = {}
        #: a frame made by :meth:`scan`: the log, the event table of its lines other
        #: than the per-call ones, and its record count and first and last times
        self._source: str | None = None
        self._rest: pd.DataFrame | None = None
        self._extent: tuple[int, float | None, float | None] = (0, None, None)

    @property
    def events(self) -> pd.DataFrame:
        """The event table (of a frame made by :meth:`scan`: read on first use)."""
        if self._events is None:
            from swiftnb.logs.reader import read_log

            self._events = _with_schema(read_log(cast(str, self._source)))  # scan's log
        return self._events

    @property
    def is_scanned(self) -> bool:
        """Made by :meth:`scan` with the per-call lines held as columns (not read whole)."""
        return self._rest is not None

    @classmethod
    def read(cls, source: str | os.PathLike[str] | IO[Any], **kwargs: Any) -> LogFrame:
        from swiftnb.logs.reader import read_log

        name = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
        return cls(read_log(source, **kwargs), name=name)

    @classmethod
    def scan(cls, source: str | os.PathLike[str]) -> LogFrame:
        """A log's tables without its whole event table: the per-call lines are read
        as integer columns (:mod:`swiftnb.logs.calltables`), the rest by the reader;
        ``.events`` is read whole only when asked for.  The same tables as
        :meth:`read` (a log those columns do not model is read by it), at a fraction of
        the time and memory on a large run's log (docs/logs.md, "Speed")."""
        from swiftnb.logs.calltables import read_call_tables

        tables = read_call_tables(source)
        if tables is None:
            return cls.read(source)
        frame = cls(tables.rest, name=os.fspath(source))
        frame._source, frame._rest, frame._events = os.fspath(source), frame._events, None
        frame._extent = (tables.records, tables.first, tables.last)
        frame._cache.update(jobs=tables.jobs, tasks=tables.tasks)
        return frame

    @classmethod
    def from_events(cls, events: Iterable[Event], *, name: str | None = None) -> LogFrame:
        return cls(events_frame(events), name=name)

    def runs(self) -> list[LogFrame]:
        """One LogFrame per run in the log: runs appended to one file (the same
        ``-logfile`` given twice) are told apart by their header lines, so that the
        timings of one are not mixed with another's.  ``[self]`` for a log of one run."""
        from swiftnb.logs.reader import split_runs

        if self._rest is not None:  # scan reads logs of one run only
            return [self]
        parts = split_runs(self.events)
        if len(parts) == 1:
            return [self]
        return [LogFrame(part, name=self.name) for part in parts]

    def _of(self, *kinds: str, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
        """The events of ``kinds``; with ``columns``, only those (and time and kind): a
        table of a million events has some twenty columns, and each selection of rows
        copies every column it holds.  A frame made by :meth:`scan` looks at the rest
        of its lines for the kinds it does not hold as columns."""
        scanned = self._rest is not None and _PER_CALL_KINDS.isdisjoint(kinds)
        ev = self._rest if scanned and self._rest is not None else self.events
        if columns is not None:
            ev = ev[["time", "kind", *(c for c in columns if c in ev)]]
        if not len(ev):
            return ev
        return ev[ev["kind"].isin(kinds)]

    # -- entities ----------------------------------------------------------------
    @property
    def jobs(self) -> pd.DataFrame:
        """One row per jobid: state times, tr, host, first task id, attempts, outcome."""
        if "jobs" in self._cache:
            return self._cache["jobs"]
        ev = self._of(*JOB_STATES, "THREAD_ASSOCIATION", "END_SUCCESS", "END_FAILURE",
                      "TASK_STATUS_CHANGE",
                      columns=("jobid", "tr", "host", "taskid", "thread", "status"))
        index = pd.Index(_first(ev[ev["kind"] == "JOB_INIT"], "jobid").index, name="jobid") \
            if "jobid" in ev else pd.Index([], name="jobid")
        # jobs seen only after JOB_INIT-less starts (truncated head) still count
        if "jobid" in ev:
            others = pd.Index(ev["jobid"].dropna().unique())
            index = index.append(others.difference(index, sort=False)).rename("jobid")
        jobs = pd.DataFrame(index=index)
        for kind, state in JOB_STATES.items():
            jobs[state] = _first(ev[ev["kind"] == kind], "jobid") if "jobid" in ev else np.nan
        jobs = jobs.astype("float64")
        # a compact log has no JOB_SITE_SELECT: the site was chosen in JOB_INIT's millisecond
        jobs["sselect"] = jobs["sselect"].fillna(jobs["init"])
        if "jobid" in ev:
            # nor, when its END_SUCCESS names the job in the same millisecond, a JOB_END:
            # that line is its end (an END_FAILURE never is: the writer keeps that JOB_END)
            jobs["end"] = jobs["end"].fillna(
                _first(ev[ev["kind"] == "END_SUCCESS"], "jobid").astype("float64"))
            init = ev[ev["kind"] == "JOB_INIT"]
            jobs["tr"] = _first(init, "jobid", "tr") if "tr" in init else None
            start = ev[ev["kind"] == "JOB_START"]
            assoc = ev[ev["kind"] == "THREAD_ASSOCIATION"]
            host = _first(start, "jobid", "host") if "host" in start else pd.Series(dtype=object)
            if "host" in assoc:
                host = host.combine_first(_first(assoc, "jobid", "host"))
            jobs["host"] = host
            tasks = ev[ev["kind"] == "JOB_TASK"]
            jobs["taskid"] = _first(tasks, "jobid", "taskid") if "taskid" in tasks else None
            jobs["attempts"] = tasks.groupby("jobid", sort=False).size() if len(tasks) else 0
            jobs["attempts"] = jobs["attempts"].fillna(0).astype("int64")
            thread = _first(assoc, "jobid", "thread") if "thread" in assoc else pd.Series(dtype=object)
            jobs["thread"] = thread
            outcome = pd.Series(None, index=jobs.index, dtype=object)
            for kind, word in (("END_SUCCESS", "success"), ("END_FAILURE", "failure")):
                ends = ev[ev["kind"] == kind]
                if not len(ends):
                    continue
                if "jobid" in ends and ends["jobid"].notna().any():
                    outcome = outcome.where(~outcome.index.isin(ends["jobid"].dropna()) |
                                            outcome.notna(), word)
                if "thread" in ends:
                    done_threads = set(ends["thread"].dropna())
                    outcome = outcome.where(~jobs["thread"].isin(done_threads) |
                                            outcome.notna(), word)
            # threads may not match (an emitter without the procedure's thread): then
            # the job's last attempt decides (completed / failed or canceled); else a
            # job that logged JOB_END succeeded; one that failed and never ended, once
            # the run is over, failed
            if len(tasks) and "taskid" in tasks:
                last = tasks.drop_duplicates("jobid", keep="last").set_index("jobid")["taskid"]
                status = ev[ev["kind"] == "TASK_STATUS_CHANGE"]
                if len(status) and "status" in status:
                    done = set(status.loc[(status["status"] == 7).fillna(False).to_numpy(),
                                          "taskid"])
                    bad = set(status.loc[status["status"].isin([5, 6]).fillna(False).to_numpy(),
                                         "taskid"])
                    last_of = jobs.index.map(last)
                    ok = pd.Series([t in done for t in last_of], index=jobs.index)
                    ko = pd.Series([t in bad and t not in done for t in last_of],
                                   index=jobs.index)
                    outcome = outcome.where(outcome.notna() | ~ok, "success")
                    outcome = outcome.where(outcome.notna() | ~ko, "failure")
            outcome = outcome.where(outcome.notna() | jobs["end"].isna(), "success")
            run_over = self.events["kind"].isin(["RUN_SUCCESS", "RUN_FAILURE"]).any()
            if run_over:
                failed = jobs["exception"].notna() & jobs["end"].isna()
                outcome = outcome.where(outcome.notna() | ~failed, "failure")
            jobs["outcome"] = outcome
        self._cache["jobs"] = jobs
        return jobs

    def _tasks(self, *, aimes: bool = False) -> pd.DataFrame:
        ev = self._of("TASK_STATUS_CHANGE", "JOB_TASK",
                      columns=("jobid", "taskid", "status", "workerid", "message"))
        status_rows = ev[ev["kind"] == "TASK_STATUS_CHANGE"]
        status_rows = status_rows[status_rows["status"].notna().to_numpy()
                                  & _col(status_rows, "taskid").notna().to_numpy()]
        if aimes and len(status_rows):
            # the AIMES analysis: only lines ending at status=N count, except for 2 and 16
            # (which carry workerid=); a worker "<block>:-" gives no stage in
            extra = (_col(status_rows, "message").notna() | _col(status_rows, "workerid").notna()) \
                & ~status_rows["status"].isin([2, 16]).fillna(False)
            dash = (status_rows["status"] == 16) & _col(status_rows, "workerid").fillna("").str.endswith(":-")
            status_rows = status_rows[~(extra | dash).to_numpy()]
        job_task = ev[ev["kind"] == "JOB_TASK"]
        order = pd.Index(pd.concat([_col(job_task, "taskid"), _col(status_rows, "taskid")])
                         .dropna().unique(), name="taskid")
        tasks = pd.DataFrame(index=order)
        if len(status_rows):
            first = status_rows.drop_duplicates(["taskid", "status"], keep="first")
            wide = first.pivot(index="taskid", columns="status", values="time")
        else:
            wide = pd.DataFrame()
        for code, state in STATUS_NAMES.items():
            tasks[state] = wide[code] if code in wide.columns else np.nan
        tasks = tasks.astype("float64")
        if not aimes:
            # a compact log leaves out submitting and submitted when the task's next state
            # came in the same millisecond: they took place then
            tasks["submitted"] = tasks["submitted"].fillna(
                tasks[["stage_in", "active"]].min(axis=1))
            tasks["submitting"] = tasks["submitting"].fillna(tasks["submitted"])
        if len(status_rows):
            with_worker = status_rows[_col(status_rows, "workerid").notna()]
            if aimes:
                with_worker = with_worker[~with_worker["workerid"].str.endswith(":-")]
            tasks["workerid"] = _first(with_worker, "taskid", "workerid")
            failed = status_rows[status_rows["status"] == 5]
            tasks["message"] = _first(failed, "taskid", "message") if len(failed) else None
        else:
            tasks["workerid"] = None
            tasks["message"] = None
        tasks["blockid"] = tasks["workerid"].str.rsplit(":", n=1).str[0] \
            if tasks["workerid"].notna().any() else None
        tasks["jobid"] = _first(job_task, "taskid", "jobid") if len(job_task) else None
        jobs = self.jobs
        host = tasks["jobid"].map(jobs["host"]) if len(jobs) and "host" in jobs else None
        if host is not None:
            first_task = tasks["jobid"].map(jobs["taskid"]) == tasks.index
            host = host.where(first_task, None)
        tasks["host"] = host
        return tasks

    @property
    def tasks(self) -> pd.DataFrame:
        """One row per task (submission attempt): first time of each CoG state,
        workerid, blockid, jobid, host, failure message."""
        if "tasks" not in self._cache:
            self._cache["tasks"] = self._tasks()
        return self._cache["tasks"]

    @property
    def blocks(self) -> pd.DataFrame:
        """One row per coaster block: state times, cores, walltime, utilization,
        worker count and nodes."""
        if "blocks" in self._cache:
            return self._cache["blocks"]
        ev = self._of(*BLOCK_STATES, "BLOCK_UTILIZATION", "WORKER_ACTIVE")
        block_ev = ev[ev["kind"].isin(list(BLOCK_STATES) + ["BLOCK_UTILIZATION"])]
        ids = pd.Index(_col(block_ev, "id").dropna().unique(), name="id")
        blocks = pd.DataFrame(index=ids)
        for kind, state in BLOCK_STATES.items():
            blocks[state] = _first(ev[ev["kind"] == kind], "id") if len(ids) else np.nan
        blocks = blocks.astype("float64")
        req = ev[ev["kind"] == "BLOCK_REQUESTED"]
        for col in ("cores", "coresPerWorker", "walltime"):
            blocks[col] = _first(req, "id", col) if col in req else None
        util = ev[ev["kind"] == "BLOCK_UTILIZATION"]
        blocks["utilization"] = _first(util, "id", "u") if "u" in util else None
        workers = ev[ev["kind"] == "WORKER_ACTIVE"]
        if len(workers) and len(ids):
            workers = workers.assign(wid=workers["blockid"] + ":" + workers["id"])
            workers = workers.drop_duplicates("wid")
            grouped = workers.groupby("blockid", sort=False)
            blocks["workers"] = grouped["wid"].agg(list)
            blocks["nodes"] = grouped["node"].agg(lambda s: list(dict.fromkeys(s.dropna())))
        else:
            blocks["workers"] = None
            blocks["nodes"] = None
        blocks["nworkers"] = blocks["workers"].map(lambda w: len(w) if isinstance(w, list) else 0)
        self._cache["blocks"] = blocks
        return blocks

    @property
    def workers(self) -> pd.DataFrame:
        """One row per worker (``block:id``): state times, node, cores, block, tasks run."""
        if "workers" in self._cache:
            return self._cache["workers"]
        ev = self._of(*WORKER_STATES)
        if len(ev):
            ev = ev.assign(wid=ev["blockid"] + ":" + ev["id"])
        ids = pd.Index(_col(ev, "wid").dropna().unique() if len(ev) else [], name="workerid")
        workers = pd.DataFrame(index=ids)
        for kind, state in WORKER_STATES.items():
            workers[state] = _first(ev[ev["kind"] == kind], "wid") if len(ids) else np.nan
        workers = workers.astype("float64")
        act = ev[ev["kind"] == "WORKER_ACTIVE"] if len(ev) else ev
        workers["block"] = _first(ev, "wid", "blockid") if len(ids) else None
        workers["node"] = _first(act, "wid", "node") if "node" in act else None
        workers["cores"] = _first(act, "wid", "cores") if "cores" in act else None
        blocks = self.blocks
        workers["block_active"] = workers["block"].map(blocks["active"]) if len(ids) else np.nan
        tasks = self.tasks
        counts = tasks.groupby("workerid").size() if tasks["workerid"].notna().any() else {}
        workers["ntasks"] = workers.index.map(lambda w: int(counts.get(w, 0)))
        self._cache["workers"] = workers
        return workers

    @property
    def scores(self) -> pd.DataFrame:
        """Site scores as the scheduler used them: time, host, score (CONTACT_SELECTED)."""
        return _event_table(self._of("CONTACT_SELECTED"), ("host",), ("score",))

    @property
    def throttles(self) -> pd.DataFrame:
        """Throttle changes: time, name, host, old, new (THROTTLE; numbers where numeric)."""
        return _event_table(self._of("THROTTLE"), ("name", "host"), ("old", "new"))

    @property
    def run(self) -> dict[str, Any]:
        """Run-level facts: run id, start/finish, outcome and counts."""
        if "run" in self._cache:
            return self._cache["run"]
        ev = self.events if self._rest is None else self._rest
        records, first, last = self._extent if self._rest is not None else (
            len(ev), float(ev["time"].iloc[0]) if len(ev) else None,
            float(ev["time"].iloc[-1]) if len(ev) else None)
        info: dict[str, Any] = {"run_id": None, "start": None, "run_start": None,
                                "finish": None, "outcome": None}
        if records:
            info["start"] = first
            text = ev["text"]
            runid = ev[(ev["tag"] == "RUN_ID")]
            if len(runid):
                info["run_id"] = str(text.loc[runid.index[0]]).split(" ", 1)[-1].strip()
            rs = ev[ev["kind"] == "RUN_START"]
            if len(rs):
                info["run_start"] = float(rs["time"].iloc[0])
            end = ev[ev["kind"].isin(["RUN_SUCCESS", "RUN_FAILURE"])]
            if len(end):
                info["finish"] = float(end["time"].iloc[0])
                info["outcome"] = "success" if end["kind"].iloc[0] == "RUN_SUCCESS" else "failure"
            else:
                info["finish"] = last
        jobs, tasks, blocks, workers = self.jobs, self.tasks, self.blocks, self.workers
        info.update(
            njobs=len(jobs), ntasks=len(tasks), nblocks=len(blocks), nworkers=len(workers),
            tasks_completed=int(tasks["completed"].notna().sum()),
            tasks_failed=int(tasks["failed"].notna().sum()),
            jobs_succeeded=int((jobs.get("outcome") == "success").sum()) if len(jobs) else 0,
            jobs_failed=int((jobs.get("outcome") == "failure").sum()) if len(jobs) else 0,
            hosts=sorted(jobs["host"].dropna().unique().tolist()) if "host" in jobs else [],
            nevents=records,
        )
        if info["start"] is not None and info["finish"] is not None:
            info["ttc"] = info["finish"] - info["start"]
        self._cache["run"] = info
        return info

    # -- timings -----------------------------------------------------------------
    def _spans(self, names: Iterable[str] | None) -> list[tuple[str, str, pd.DataFrame]]:
        """(timing, entity, its entities' start and end) of each timing named, entities
        missing either left out."""
        spans = []
        wanted = list(TIMINGS) if names is None else list(names)
        for name in wanted:
            if name not in TIMINGS:
                raise KeyError(f"unknown timing {name!r}; known: {', '.join(TIMINGS)}")
            entity, start_col, end_col, _ = TIMINGS[name]
            if entity == "run":
                run = self.run
                table = pd.DataFrame({"start": [run["start"]], "finish": [run["finish"]]},
                                     index=pd.Index([run["run_id"] or "run"]))
            elif name == "Tw":
                table = self.jobs[["task"]].copy()
                table["active"] = self.jobs["taskid"].map(self.tasks["active"]) \
                    if len(self.jobs) else np.nan
            else:
                table = getattr(self, entity)
            if start_col not in table or end_col not in table or not len(table):
                continue
            sub = pd.DataFrame({"start": pd.to_numeric(table[start_col], errors="coerce"),
                                "end": pd.to_numeric(table[end_col], errors="coerce")})
            sub = sub.dropna()
            if len(sub):
                spans.append((name, entity.rstrip("s") if entity != "run" else "run", sub))
        return spans

    def timings(self, names: Iterable[str] | None = None) -> pd.DataFrame:
        """Long table of durations: timing, entity, id, start, end, duration (seconds).

        Entities that never reached both states are left out.
        """
        parts = []
        for name, entity, sub in self._spans(names):
            sub.insert(0, "id", sub.index.astype(str))
            sub.insert(0, "entity", entity)
            sub.insert(0, "timing", name)
            sub["duration"] = sub["end"] - sub["start"]
            parts.append(sub.reset_index(drop=True))
        if not parts:
            return pd.DataFrame(columns=["timing", "entity", "id", "start", "end", "duration"])
        return pd.concat(parts, ignore_index=True)

    def summary(self) -> pd.DataFrame:
        """count, mean, min, median, max of each timing (its durations only: no table
        of every entity's id)."""
        spans = self._spans(None)
        if not spans:
            return pd.DataFrame(columns=["count", "mean", "min", "50%", "max"])
        # each timing's own describe: the numbers a groupby gives, without a column of
        # timing names per entity to group by (a tenth of `swiftnb timings` at 100,000 calls)
        stats = pd.DataFrame([(sub["end"] - sub["start"]).describe() for _, _, sub in spans],
                             index=pd.Index([name for name, _, _ in spans], name="timing"))
        return stats[["count", "mean", "min", "50%", "max"]]

    def plot(self) -> Any:
        """The report as one bokeh layout (``bokeh.io.show(lf.plot())`` in a notebook)."""
        from swiftnb.logs.report import report_layout

        return report_layout(self)

    def report(self, path: str | os.PathLike[str], *, title: str | None = None) -> str:
        """Write the offline HTML report (BokehJS inlined); returns its path."""
        from swiftnb.logs.report import write_report

        return write_report(self, path, title=title)

    def __repr__(self) -> str:
        run = self.run
        return (f"<LogFrame {self.name or ''} events={run['nevents']} jobs={run['njobs']} "
                f"tasks={run['ntasks']} blocks={run['nblocks']} workers={run['nworkers']}>")
