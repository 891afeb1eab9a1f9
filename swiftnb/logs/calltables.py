"""The jobs and tasks tables of :class:`swiftnb.logs.frame.LogFrame`, from the integer
columns of :mod:`swiftnb.logs.callscan` instead of the event table.

Every rule is LogFrame's (docs/logs.md, "LogFrame: entities and timings"): a state is its
first line in log order, a job's host is its JOB_START's else its THREAD_ASSOCIATION's,
its outcome comes from END_SUCCESS/END_FAILURE through its id or thread, else from its
last task's status, else from JOB_END...; here each is one array operation on codes
("first per code" is an assignment in reverse row order, where the last write wins), and
strings are made once per distinct id.  tests/logs/test_call_tables.py checks that both
give the same tables on real Swift 0.96 logs and on our own.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pandas as pd

from swiftnb.logs.callscan import Bytes, CallColumns, Tag, scan_calls
from swiftnb.logs.frame import STATUS_NAMES
from swiftnb.logs.reader import (
    COMPRESSION_MAGIC,
    LogFormatError,
    open_log_path,
    check_damage,
    check_head,
    parse_bytes,
    read_text,
    run_starts,
)


__all__ = ["CallTables", "read_call_tables", "job_table", "task_table"]

_JOB_TAGS = ((Tag.JOB_INIT, "init"), (Tag.JOB_SITE_SELECT, "sselect"), (Tag.JOB_START, "start"),
             (Tag.JOB_TASK, "task"), (Tag.JOB_END, "end"))
#: job states whose lines stay with the reader (rare, and may span several lines)
_REST_JOB_KINDS = (("APPLICATION_EXCEPTION", "exception"), ("JOB_CANCELED", "canceled"))


@dataclass
class CallTables:
    """What a LogFrame needs besides the event table of the other lines (``rest``)."""

    jobs: pd.DataFrame
    tasks: pd.DataFrame
    rest: pd.DataFrame
    records: int                # records in the log, the rest's included
    first: float | None         # time of the log's first record
    last: float | None          # ... and of its last


def _first_per(codes: np.ndarray, values: np.ndarray, size: int, fill: Any) -> np.ndarray:
    """The value of each code's first row (rows in log order; -1 codes skipped)."""
    out = np.full(size, fill, dtype=values.dtype if fill is not None else object)
    keep = codes >= 0
    out[codes[keep][::-1]] = values[keep][::-1]
    return out


#: codes of a value: -1 a line without it (None, as the reader leaves it), -2 no line
#: at all (NaN, as pandas aligns a table without that entity)
_NONE, _NO_LINE = -1, -2


def _named(values: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Strings of codes (None for -1, NaN for -2: the event table's way)."""
    out = np.full(len(codes), np.nan, dtype=object)
    out[codes == _NONE] = None
    known = codes >= 0
    out[known] = values[codes[known]]
    return out


def _rows(cols: CallColumns, tag: Tag) -> np.ndarray:
    return np.flatnonzero(cols.tag == tag)


def job_table(cols: CallColumns, rest: pd.DataFrame, run_over: bool) -> pd.DataFrame | None:
    """LogFrame.jobs of these columns (and the rest's exception and cancel lines), or
    None when the rest holds a job the columns do not know (the log is read whole)."""
    ids = cols.jobid
    njobs = len(ids.values)
    init_rows = _rows(cols, Tag.JOB_INIT)
    init = pd.unique(ids.codes[init_rows][ids.codes[init_rows] >= 0])
    seen = np.zeros(njobs, dtype=bool)
    seen[init] = True
    order = np.concatenate([init, np.flatnonzero(~seen)]).astype(np.int64)
    states: dict[str, np.ndarray] = {}
    for tag, state in _JOB_TAGS:
        rows = _rows(cols, tag)
        states[state] = _first_per(ids.codes[rows], cols.time[rows], njobs, np.nan)[order]
    for kind, state in _REST_JOB_KINDS:
        states[state] = np.full(len(order), np.nan)
        sub = rest[rest["kind"] == kind] if len(rest) else rest
        if not len(sub) or "jobid" not in sub:
            continue
        sub = sub[sub["jobid"].notna()]
        codes = pd.Index(ids.values[order]).get_indexer(sub["jobid"].to_numpy(dtype=object))
        if (codes < 0).any() or (codes >= len(init)).any():
            return None  # a job without a JOB_INIT line: its place in the index is unknown
        states[state] = _first_per(codes, sub["time"].to_numpy(dtype=float), len(order), np.nan)
    states["sselect"] = np.where(np.isnan(states["sselect"]), states["init"], states["sselect"])
    success = _rows(cols, Tag.END_SUCCESS)  # a compact log's JOB_END left out: LogFrame.jobs
    implied = _first_per(ids.codes[success], cols.time[success], njobs, np.nan)[order]
    states["end"] = np.where(np.isnan(states["end"]), implied, states["end"])
    jobs = pd.DataFrame(states, index=pd.Index(ids.values[order], name="jobid"))

    def first_of(tag: Tag, space: str) -> np.ndarray:
        rows = _rows(cols, tag)
        other = getattr(cols, space)
        return _first_per(ids.codes[rows], other.codes[rows], njobs, _NO_LINE)[order]

    jobs["tr"] = _named(cols.tr.values, first_of(Tag.JOB_INIT, "tr"))
    host = first_of(Tag.JOB_START, "host")
    assoc_host = first_of(Tag.THREAD_ASSOCIATION, "host")
    host = np.where(host >= 0, host, assoc_host)  # combine_first: an NA takes the other's
    jobs["host"] = _named(cols.host.values, host)
    task_rows = _rows(cols, Tag.JOB_TASK)
    jobs["taskid"] = _named(cols.taskid.values, first_of(Tag.JOB_TASK, "taskid"))
    attempts = np.bincount(ids.codes[task_rows][ids.codes[task_rows] >= 0], minlength=njobs)
    jobs["attempts"] = attempts[order].astype("int64")
    thread = first_of(Tag.THREAD_ASSOCIATION, "thread")
    jobs["thread"] = _named(cols.thread.values, thread)
    jobs["outcome"] = _outcomes(cols, order, thread, task_rows, states, run_over)
    return jobs


def _outcomes(cols: CallColumns, order: np.ndarray, thread: np.ndarray,
              task_rows: np.ndarray, states: dict[str, np.ndarray],
              run_over: bool) -> np.ndarray:
    """success / failure / None per job, by LogFrame.jobs' rules in its order."""
    outcome = np.full(len(order), None, dtype=object)
    for tag, word in ((Tag.END_SUCCESS, "success"), (Tag.END_FAILURE, "failure")):
        rows = _rows(cols, tag)
        if not len(rows):
            continue
        ended = cols.jobid.codes[rows]
        threads = cols.thread.codes[rows]
        hit = np.isin(order, ended[ended >= 0]) | (
            (thread >= 0) & np.isin(thread, threads[threads >= 0]))
        outcome[hit & (outcome == None)] = word  # noqa: E711  (elementwise)
    if len(task_rows):
        status_rows = _rows(cols, Tag.TASK_STATUS_CHANGE)
        if len(status_rows):
            last = np.full(len(cols.jobid.values), -1, dtype=np.int64)
            jobs_of = cols.jobid.codes[task_rows]
            keep = jobs_of >= 0
            last[jobs_of[keep]] = cols.taskid.codes[task_rows][keep]  # the last write wins
            last = last[order]
            status = cols.status[status_rows]
            tasks = cols.taskid.codes[status_rows]
            done = np.isin(last, tasks[status == 7]) & (last >= 0)
            bad = np.isin(last, tasks[(status == 5) | (status == 6)]) & (last >= 0) & ~done
            outcome[done & (outcome == None)] = "success"  # noqa: E711
            outcome[bad & (outcome == None)] = "failure"  # noqa: E711
    outcome[(outcome == None) & ~np.isnan(states["end"])] = "success"  # noqa: E711
    if run_over:
        failed = ~np.isnan(states["exception"]) & np.isnan(states["end"])
        outcome[(outcome == None) & failed] = "failure"  # noqa: E711
    return outcome


def task_table(cols: CallColumns, jobs: pd.DataFrame) -> pd.DataFrame:
    """LogFrame.tasks of these columns (``jobs``: their job table)."""
    ids = cols.taskid
    ntasks = len(ids.values)
    task_rows = _rows(cols, Tag.JOB_TASK)
    status_rows = _rows(cols, Tag.TASK_STATUS_CHANGE)
    order = pd.unique(np.concatenate([ids.codes[task_rows], ids.codes[status_rows]]))
    order = order[order >= 0].astype(np.int64)
    status = cols.status[status_rows]
    codes = ids.codes[status_rows]
    times = cols.time[status_rows]
    data: dict[str, Any] = {}
    for code, state in STATUS_NAMES.items():
        hit = status == code
        data[state] = _first_per(codes[hit], times[hit], ntasks, np.nan)[order]
    tasks = pd.DataFrame(data, index=pd.Index(ids.values[order], name="taskid"))
    tasks["submitted"] = tasks["submitted"].fillna(
        pd.Series(np.fmin(data["stage_in"], data["active"]), index=tasks.index))
    tasks["submitting"] = tasks["submitting"].fillna(tasks["submitted"])
    position = np.full(ntasks, -1, dtype=np.int64)
    position[order] = np.arange(len(order))
    if len(status_rows):
        workerid = np.full(len(order), np.nan, dtype=object)
        for row, value in sorted(cols.workerid.items(), reverse=True):
            workerid[position[ids.codes[row]]] = value
        tasks["workerid"] = workerid
        failed = status_rows[status == 5]
        if len(failed):
            message = np.full(len(order), np.nan, dtype=object)
            for row in failed[::-1].tolist():
                message[position[ids.codes[row]]] = cols.message.get(row)
            tasks["message"] = message
        else:
            tasks["message"] = None
    else:
        tasks["workerid"] = None
        tasks["message"] = None
    tasks["blockid"] = tasks["workerid"].str.rsplit(":", n=1).str[0] \
        if tasks["workerid"].notna().any() else None
    if len(task_rows):
        job_of = _first_per(ids.codes[task_rows], cols.jobid.codes[task_rows], ntasks,
                            _NO_LINE)
        tasks["jobid"] = _named(cols.jobid.values, job_of[order])
    else:
        tasks["jobid"] = None
    if len(jobs):
        host = tasks["jobid"].map(jobs["host"])
        first_task = tasks["jobid"].map(jobs["taskid"]) == tasks.index
        tasks["host"] = host.where(first_task, None)
    else:
        tasks["host"] = None
    return tasks


_PAGE = mmap.PAGESIZE


@contextmanager
def _log_text(source: str | os.PathLike[str] | IO[Any],
              ) -> Iterator[tuple[Bytes, str, Callable[[int], None] | None]]:
    """A log's text, its name, and how to give back the part read: a plain file is
    mapped and its pages returned as the scan passes them (so the file is never all
    resident); anything else (compressed, a stream, CRLF ends, a last line cut short)
    is read as the reader reads it."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        with open(_checked(name), "rb") as fh:
            head = fh.read(65536)
            size = os.fstat(fh.fileno()).st_size
            plain = size > 0 and not head.startswith(COMPRESSION_MAGIC) and b"\r\n" not in head
            if plain:
                with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                    if mapped[-1:] == b"\n":
                        def release(offset: int) -> None:
                            mapped.madvise(mmap.MADV_DONTNEED, 0, offset - offset % _PAGE)

                        yield mapped, name, release
                        return
    data, name = read_text(source)
    yield data, name, None


def _checked(name: str) -> str:
    """``name``, a regular file (the reader refuses anything else, and says why)."""
    open_log_path(name).close()
    return name


def read_call_tables(source: str | os.PathLike[str] | IO[Any]) -> CallTables | None:
    """The jobs and tasks tables of a log of one run and the event table of its other
    lines, or None when the log is not in the shape the columns model (then read it
    with :func:`swiftnb.logs.reader.read_log`)."""
    with _log_text(source) as (data, name, release):
        cols = scan_calls(data, release)
        if cols is None:
            return None
        if isinstance(data, mmap.mmap):
            check_head(data, name)  # mapped only when it ends with a whole line
        else:
            check_damage(data, name)
    if cols.rest:
        rest = parse_bytes(cols.rest, name=name, check=False)
        rest["line"] = cols.rest_lines[rest["line"].to_numpy() - 1]
    else:
        rest = parse_bytes(b"", name=name)
    if len(run_starts(rest)) > 1:
        return None  # several runs in one file: LogFrame.runs() splits the whole table
    per_call = {tag.name for tag in Tag}
    if len(rest) and rest["kind"].isin(per_call).any():
        return None  # a per-call line under another head: the reader's alone
    run_over = bool(len(rest)) and bool(rest["kind"].isin(["RUN_SUCCESS", "RUN_FAILURE"]).any())
    jobs = job_table(cols, rest, run_over)
    if jobs is None:
        return None
    tasks = task_table(cols, jobs)
    bounds = [(cols.first[0], cols.first[1]), (cols.last[0], cols.last[1])] if cols.first \
        and cols.last else []
    if len(rest):
        lines = rest["line"].to_numpy()
        times = rest["time"].to_numpy()
        bounds += [(int(lines[0]), float(times[0])), (int(lines[-1]), float(times[-1]))]
    first = min(bounds)[1] if bounds else None
    last = max(bounds)[1] if bounds else None
    if not bounds:
        raise LogFormatError(f"{name}: the log holds no records")
    return CallTables(jobs=jobs, tasks=tasks, rest=rest, records=cols.records + len(rest),
                      first=first, last=last)
