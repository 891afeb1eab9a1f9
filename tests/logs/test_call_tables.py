"""LogFrame.scan (issue 30): the per-call lines read as integer columns
(swiftnb/logs/callscan.py, calltables.py) give the same tables as the whole event table
(LogFrame.read), on real Swift 0.96 logs and on ours (full and compact, with failures and
retries), and a log the columns do not model is read whole, never answered differently."""

from __future__ import annotations

import bz2
import gzip
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from swiftnb.events import Event
from swiftnb.logs.callscan import CHUNK_BYTES
from swiftnb.logs.cli import _json_default, _timings_doc, timings_main
from swiftnb.logs.frame import LogFrame
from swiftnb.logs.writer import LogWriter

from ._helpers import DATA, EXPERIMENTS
from .synthetic import record


def assert_same_tables(path: Path, *, scanned: bool = True) -> LogFrame:
    """LogFrame.scan and LogFrame.read of ``path`` agree on every table and figure;
    ``scanned``: the columns read it (else it was read whole)."""
    fast, whole = LogFrame.scan(path), LogFrame.read(path)
    assert fast.is_scanned is scanned
    pd.testing.assert_frame_equal(fast.jobs, whole.jobs, check_dtype=False)
    pd.testing.assert_frame_equal(fast.tasks, whole.tasks, check_dtype=False)
    pd.testing.assert_frame_equal(fast.blocks, whole.blocks)
    pd.testing.assert_frame_equal(fast.workers, whole.workers)
    assert fast.run == whole.run
    pd.testing.assert_frame_equal(fast.timings(), whole.timings())
    pd.testing.assert_frame_equal(fast.summary(), whole.summary())
    return fast


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_real_swift_logs_compressed_and_plain(name: str, tmp_path: Path) -> None:
    """Swift/K 0.96's own logs: as shipped (bz2, read into memory) and plain (mapped)."""
    assert_same_tables(DATA / name / "swift.log.bz2")
    plain = tmp_path / "swift.log"
    plain.write_bytes(bz2.decompress((DATA / name / "swift.log.bz2").read_bytes()))
    assert_same_tables(plain)


def _write(path: Path, events: list[Event], **options: bool) -> Path:
    with LogWriter(str(path), flush_interval=-1, **options) as writer:
        writer.write_header(run_id="run001", arguments=["t.swift"], cwd="/tmp", time=events[0].time)
        for event in events:
            writer.write(event)
    return path


@pytest.mark.parametrize("compact", [False, True])
def test_our_logs_with_a_failure_and_a_retry(compact: bool, tmp_path: Path) -> None:
    """A coaster run of ours: workers on the status lines, a failed first attempt with its
    exception (a line the reader keeps), its retry; full and -compactLogging."""
    events = record(njobs=40, fail_first=True)
    path = _write(tmp_path / "run.log", events, compact=compact)
    frame = assert_same_tables(path)
    assert frame.run["njobs"] == 40 and frame.run["tasks_failed"] == 1
    assert frame.tasks["workerid"].notna().sum() == 41  # read from the status lines (a retry)


def _echo_calls(n: int, t0: float = 1795935291.0) -> list[Event]:
    events = [Event(t0, "RUN_START", {}, "INFO", "Loader")]
    for i in range(1, n + 1):
        t, jobid, thread = t0 + i * 0.01, f"echo-{i:08x}", f"R-{i}"
        taskid = f"urn:{thread}-1795935291696"
        events += [
            Event(t, "JOB_INIT", {"jobid": jobid, "tr": "echo"}),
            Event(t, "PROCEDURE", {"line": 2, "thread": thread, "name": "echo"}),
            Event(t, "JOB_SITE_SELECT", {"jobid": jobid}),
            Event(t, "THREAD_ASSOCIATION", {"jobid": jobid, "thread": thread, "host": "local",
                                            "replicationGroup": None}),
            Event(t, "JOB_START", {"jobid": jobid, "tr": "echo", "arguments": [str(i), "a b"],
                                   "tmpdir": f"r/jobs/{jobid}", "host": "local"}),
            Event(t, "JOB_TASK", {"jobid": jobid, "taskid": taskid, "exec": "echo",
                                  "dir": f"r/jobs/{jobid}", "args": str(i)}),
            Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2}),
            Event(t + 0.004, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 7}),
            Event(t + 0.004, "JOB_END", {"jobid": jobid}),
            Event(t + 0.004, "END_SUCCESS", {"thread": thread, "tr": "echo"}),
        ]
    events.append(Event(t0 + n * 0.01 + 1, "RUN_SUCCESS", {}, "INFO", "Loader"))
    return events


def test_a_log_of_many_chunks(tmp_path: Path) -> None:
    """Ids that recur across the chunks the scan reads keep one code each."""
    path = _write(tmp_path / "big.log", _echo_calls(40_000))
    assert path.stat().st_size > 2 * CHUNK_BYTES
    frame = assert_same_tables(path)
    assert frame.run["njobs"] == 40_000 and frame.run["jobs_succeeded"] == 40_000


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines(keepends=True)


def test_what_the_columns_do_not_model_is_read_whole(tmp_path: Path) -> None:
    """A continuation line under a per-call line, a per-call tag under another head, a
    non-ASCII id, a last line cut short, CRLF ends, gzip: each read whole or in
    memory, with the same tables (and the reader's warning for the cut line)."""
    base = _write(tmp_path / "base.log", _echo_calls(30))
    lines = _lines(base)
    task = next(i for i, line in enumerate(lines) if " JOB_TASK " in line)
    end = next(i for i, line in enumerate(lines) if " JOB_END " in line)
    cases = {
        "continued.log": lines[:task + 1] + ["  a continuation line\n"] + lines[task + 1:],
        "other-head.log": lines[:end] + [lines[end].replace(" DEBUG swift ", " WARN  swift ")]
        + lines[end + 1:],
        "non-ascii.log": [line.replace("echo-00000003", "echo-0000000\u00e9") for line in lines],
    }
    for name, text in cases.items():
        assert_same_tables(_write_text(tmp_path / name, "".join(text)), scanned=False)
    cut = _write_text(tmp_path / "cut.log", "".join(lines)[:-5])
    with pytest.warns(UserWarning, match="ends in the middle of a line"):
        assert_same_tables(cut)
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes("".join(lines).replace("\n", "\r\n").encode())
    assert_same_tables(crlf)
    packed = tmp_path / "run.log.gz"
    packed.write_bytes(gzip.compress(base.read_bytes()))
    assert_same_tables(packed)


def _write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_two_runs_in_one_log_are_told_apart(tmp_path: Path) -> None:
    """Runs appended to one file (the same -logfile twice): read whole and split."""
    one = _write(tmp_path / "a.log", _echo_calls(5))
    two = tmp_path / "two.log"
    two.write_bytes(one.read_bytes() * 2)
    frame = LogFrame.scan(two)
    assert not frame.is_scanned
    assert [r.run["njobs"] for r in frame.runs()] == [5, 5]


def test_timings_command_prints_what_the_whole_table_gives(tmp_path: Path) -> None:
    """`swiftnb timings --format json` (scanned) against the document of LogFrame.read."""
    path = _write(tmp_path / "run.log", record(njobs=12, fail_first=True))
    out, err = io.StringIO(), io.StringIO()
    assert timings_main([str(path), "--format", "json"], out=out, err=err) == 0
    expected = json.dumps(_timings_doc(LogFrame.read(path)), indent=1, default=_json_default)
    assert out.getvalue() == expected + "\n"
    assert err.getvalue() == ""


def test_events_of_a_scanned_frame_are_the_whole_table(tmp_path: Path) -> None:
    """.events of a scanned frame is read on first use: the same table as read_log's."""
    path = _write(tmp_path / "run.log", _echo_calls(20))
    frame = LogFrame.scan(path)
    assert frame.is_scanned
    pd.testing.assert_frame_equal(frame.events, LogFrame.read(path).events)


def test_a_continuation_line_at_a_chunk_boundary(tmp_path: Path) -> None:
    """A line without a stamp that starts the scan's second chunk continues the first
    chunk's last line: not modelled, so the log is read whole."""
    base = _write(tmp_path / "big.log", _echo_calls(20_000)).read_bytes()
    assert len(base) > CHUNK_BYTES
    boundary = base.rfind(b"\n", 0, CHUNK_BYTES) + 1
    assert b" swift " in base[base.rfind(b"\n", 0, boundary - 1):boundary]  # a per-call line
    path = tmp_path / "continued.log"
    path.write_bytes(base[:boundary] + b"  continued\n" + base[boundary:])
    assert_same_tables(path, scanned=False)


def test_a_job_end_left_out_is_the_end_success_that_names_the_job(tmp_path: Path) -> None:
    """A compact log may leave out a call's JOB_END when its END_SUCCESS, which names the
    job by ``jobid=``, follows in the same millisecond: that line is the job's end, for
    the scan and the whole read alike."""
    compact = _write(tmp_path / "compact.log", record(njobs=40, fail_first=True), compact=True)
    lines = _lines(compact)
    assert sum(" END_SUCCESS jobid=" in line for line in lines) == 40
    dropped = _write_text(tmp_path / "dropped.log",
                          "".join(line for line in lines if " JOB_END " not in line))
    frame = assert_same_tables(dropped)
    events = LogFrame.read(compact).events
    success = events[events["kind"] == "END_SUCCESS"].drop_duplicates("jobid")
    expected = success.set_index("jobid")["time"].astype("float64")
    assert len(expected) == 40 and frame.run["jobs_succeeded"] == 40
    pd.testing.assert_series_equal(frame.jobs["end"], expected.reindex(frame.jobs.index),
                                   check_names=False)
    assert "Tse" in frame.summary().index
