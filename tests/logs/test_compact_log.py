"""The compact log (issue 30, ``-compactLogging``): what it leaves out of each call, and
that the readers (timings, the monitor's replay) get the same answers from it as from the full log."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from swiftnb.events import Event
from swiftnb.logs.frame import LogFrame
from swiftnb.logs.reader import parse_text, read_events
from swiftnb.logs.writer import LogWriter
from swiftnb.monitor.state import RunState

T0 = 1795935291.0


def _call(i: int, t: float, *, submit_gap: float = 0.0) -> list[Event]:
    """One app call's events, as the engine and the local site emit them."""
    jobid, thread = f"echo-{i:08d}", f"R-{i}"
    taskid, jdir = f"urn:{thread}-1795935291696", f"echo-run001/jobs/e/echo-{i:08d}"
    return [
        Event(t, "JOB_INIT", {"jobid": jobid, "tr": "echo"}),
        Event(t, "PROCEDURE", {"line": 2, "thread": thread, "name": "echo"}),
        Event(t, "JOB_SITE_SELECT", {"jobid": jobid}),
        Event(t, "THREAD_ASSOCIATION", {"jobid": jobid, "thread": thread, "host": "local",
                                        "replicationGroup": None}),
        Event(t, "JOB_START", {"jobid": jobid, "tr": "echo", "arguments": [str(i)],
                               "tmpdir": jdir, "host": "local"}),
        Event(t, "JOB_TASK", {"jobid": jobid, "taskid": taskid, "exec": "echo", "dir": jdir,
                              "args": str(i)}),
        Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 8}),
        Event(t + submit_gap, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 1}),
        Event(t + submit_gap, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2}),
        Event(t + submit_gap + 0.25, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 7}),
        Event(t + submit_gap + 0.25, "JOB_END", {"jobid": jobid}),
        Event(t + submit_gap + 0.25, "PROCEDURE_END", {"line": 2, "thread": thread,
                                                       "name": "echo"}),
        Event(t + submit_gap + 0.25, "END_SUCCESS", {"thread": thread, "tr": "echo"}),
    ]


def _run_events() -> list[Event]:
    events = [Event(T0, "RUN_START", {}, "INFO", "Loader")]
    events += _call(1, T0 + 1.0)
    events += _call(2, T0 + 2.0, submit_gap=3.0)  # waits 3 s between submitting and active
    events.append(Event(T0 + 6.0, "RUN_SUCCESS", {}, "INFO", "Loader"))
    return events


def _write(events: list[Event], **options: bool) -> str:
    buf = io.StringIO()
    writer = LogWriter(buf, flush_interval=-1, **options)
    for event in events:
        writer.write(event)
    writer.close()
    return buf.getvalue()


def test_compact_lines_of_a_call():
    text = _write(_call(1, T0), compact=True)
    messages = [line.split(None, 4)[4] for line in text.splitlines()]
    assert messages == [
        "JOB_INIT jobid=echo-00000001 tr=echo",
        "JOB_START jobid=echo-00000001 tr=echo arguments=[1] "
        "tmpdir=echo-run001/jobs/e/echo-00000001 host=local",
        "JOB_TASK jobid=echo-00000001 taskid=urn:R-1-1795935291696",
        "TASK_STATUS_CHANGE taskid=urn:R-1-1795935291696 status=2",
        "TASK_STATUS_CHANGE taskid=urn:R-1-1795935291696 status=7",
        "END_SUCCESS jobid=echo-00000001 tr=echo",
    ]
    full = _write(_call(1, T0))
    assert len(full.splitlines()) == 13 and len(text) < 0.6 * len(full)


def test_a_job_directory_where_the_last_one_was_goes_without_saying():
    events = _call(1, T0) + _call(2, T0 + 1)
    events += [Event(T0 + 2, "JOB_START", {"jobid": "cat-1", "tr": "cat", "arguments": [],
                                           "tmpdir": "elsewhere/cat-1", "host": "local"}),
               Event(T0 + 2, "JOB_START", {"jobid": "cat-2", "tr": "cat", "arguments": [],
                                           "tmpdir": "echo-run001/jobs/c/cat-2",
                                           "host": "local"})]
    starts = [line for line in _write(events, compact=True).splitlines() if "JOB_START" in line]
    assert [line.partition(" tmpdir=")[2].partition(" ")[0] for line in starts] == [
        "echo-run001/jobs/e/echo-00000001", "", "elsewhere/cat-1",
        "echo-run001/jobs/c/cat-2"]


def test_a_thread_two_running_jobs_share_keeps_its_association():
    events = [Event(T0, "THREAD_ASSOCIATION", {"jobid": j, "thread": "R", "host": "local",
                                               "replicationGroup": None}) for j in ("a", "b")]
    events += [Event(T0 + 1, "END_SUCCESS", {"thread": "R", "tr": "echo"})] * 2
    lines = [line.split(None, 4)[4] for line in _write(events, compact=True).splitlines()]
    assert lines == ["THREAD_ASSOCIATION jobid=b thread=R host=local",
                     "END_SUCCESS jobid=a tr=echo", "END_SUCCESS thread=R tr=echo"]


def test_a_passing_status_in_another_millisecond_is_kept_in_order():
    text = _write(_call(2, T0, submit_gap=3.0), compact=True)
    statuses = [line.rsplit("=", 1)[1] for line in text.splitlines() if "STATUS" in line]
    # 8 is followed by 1 three seconds later: kept; 1 is superseded by 2 in its millisecond
    assert statuses == ["8", "2", "7"]


def test_a_held_status_reaches_the_file_at_a_flush(tmp_path):
    path = tmp_path / "held.log"
    writer = LogWriter(path, compact=True, flush_interval=-1)
    writer.write(Event(T0, "TASK_STATUS_CHANGE", {"taskid": "urn:t-1", "status": 1}))
    assert "status=1" not in path.read_text()
    writer.flush()
    assert path.read_text().rstrip().endswith("TASK_STATUS_CHANGE taskid=urn:t-1 status=1")
    writer.close()


def test_a_job_end_is_kept_unless_its_success_follows_in_the_same_millisecond():
    ends = [Event(T0, "JOB_END", {"jobid": "a"}),
            Event(T0 + 0.002, "END_SUCCESS", {"jobid": "a", "tr": "echo"}),  # later
            Event(T0 + 1, "JOB_END", {"jobid": "b"}),
            Event(T0 + 1, "END_FAILURE", {"jobid": "b", "tr": "echo"}),  # failed
            Event(T0 + 2, "JOB_END", {"jobid": "c"}),
            Event(T0 + 2, "END_SUCCESS", {"jobid": "d", "tr": "echo"}),  # another job's
            Event(T0 + 3, "JOB_END", {"jobid": "e"}),
            Event(T0 + 3, "END_SUCCESS", {"jobid": "e", "tr": "echo"})]  # goes
    messages = [line.split(None, 4)[4] for line in _write(ends, compact=True).splitlines()]
    assert messages == ["JOB_END jobid=a", "END_SUCCESS jobid=a tr=echo",
                        "JOB_END jobid=b", "END_FAILURE jobid=b tr=echo",
                        "JOB_END jobid=c", "END_SUCCESS jobid=d tr=echo",
                        "END_SUCCESS jobid=e tr=echo"]


def test_different_dir_and_args_are_kept():
    events = [Event(T0, "JOB_START", {"jobid": "j", "tr": "sh", "arguments": ["-c", "x y"],
                                      "tmpdir": "r/jobs/j/j", "host": "local"}),
              Event(T0, "JOB_TASK", {"jobid": "j", "taskid": "urn:1", "exec": "/bin/sh",
                                     "dir": "/elsewhere", "args": "-c x y"}),
              Event(T0, "THREAD_ASSOCIATION", {"jobid": "j", "thread": "R-1", "host": "s",
                                               "replicationGroup": "g1"})]
    lines = _write(events, compact=True).splitlines()
    assert lines[1].endswith("JOB_TASK jobid=j taskid=urn:1 exec=/bin/sh dir=/elsewhere")
    assert lines[2].endswith("host=s replicationGroup=g1")


def test_timings_and_monitor_counts_are_those_of_the_full_log(tmp_path):
    events = _run_events()
    full, compact = _write(events), _write(events, compact=True)
    assert len(compact) < 0.7 * len(full)
    frames = [LogFrame(parse_text(text)) for text in (full, compact)]
    summaries = [f.summary()[["count", "mean"]].round(3) for f in frames]
    assert summaries[0].equals(summaries[1])
    tasks = [f.tasks[["submitting", "submitted", "active", "completed"]] for f in frames]
    assert tasks[0].equals(tasks[1])
    jobs = [f.jobs[["init", "sselect", "task", "end", "host", "outcome"]] for f in frames]
    assert jobs[0].equals(jobs[1])
    states = []
    for name, text in (("full", full), ("compact", compact)):
        (tmp_path / name).write_text(text)
        state = RunState()
        for event in read_events(tmp_path / name):
            state.apply(event)
        states.append((state.known, state.ok, state.failed, state.sites["local"].done))
    assert states[0] == states[1] == (2, 2, 0, 2)


SCRIPT = """\
type file;
app (file o) echo (int i) {
    echo i stdout=@filename(o);
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:20] {
    f[i] = echo(i);
}
"""


def test_compact_logging_asks_for_the_compact_log_and_the_default_is_swifts(tmp_path):
    (tmp_path / "e.swift").write_text(SCRIPT)
    swiftnb = str(Path(sys.executable).parent / "swiftnb")
    for args, runid in ((["-compactLogging"], "compact"), ([], "full")):
        proc = subprocess.run([swiftnb, "run", *args, "-runid", runid, "e.swift"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
    compact = (tmp_path / "compact" / "e-compact.log").read_text()
    full = (tmp_path / "full" / "e-full.log").read_text()
    assert " PROCEDURE " not in compact and " JOB_SITE_SELECT " not in compact
    assert full.count(" PROCEDURE ") == 20 and full.count(" JOB_SITE_SELECT ") == 20
    assert compact.count(" END_SUCCESS jobid=") == 20 and compact.count(" status=7\n") == 20
    assert full.count(" JOB_END ") == 20
    lf = LogFrame.read(tmp_path / "compact" / "e-compact.log")
    assert lf.run["jobs_succeeded"] == 20 and lf.run["tasks_completed"] == 20
    assert lf.jobs["end"].notna().all()
    assert lf.tasks["submitted"].notna().all() and lf.jobs["sselect"].notna().all()


def test_the_report_of_a_large_run_samples_its_task_view_and_says_so():
    from swiftnb.logs.report import report_html

    events = []
    for i in range(12_000):
        taskid = f"urn:R-{i}-1"
        t = T0 + i * 0.01
        events += [Event(t, "JOB_INIT", {"jobid": f"j{i}", "tr": "echo"}),
                   Event(t, "JOB_TASK", {"jobid": f"j{i}", "taskid": taskid, "exec": "echo"}),
                   Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2}),
                   Event(t + 0.5, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 7}),
                   Event(t + 0.5, "JOB_END", {"jobid": f"j{i}"})]
    page = report_html(LogFrame.from_events(events))
    assert "This run has 12,000 tasks: the task timeline draws one task in every 3 " in page
    assert "Tasks (one in every 3 of 12,000)" in page


def test_a_failed_call_ends_naming_its_job_and_reads_as_failed():
    jobid, thread, taskid = "sh-00000001", "R-7", "urn:R-7-1795935291696"
    events = [Event(T0, "JOB_INIT", {"jobid": jobid, "tr": "sh"}),
              Event(T0, "THREAD_ASSOCIATION", {"jobid": jobid, "thread": thread,
                                               "host": "local", "replicationGroup": None}),
              Event(T0, "JOB_START", {"jobid": jobid, "tr": "sh", "arguments": ["-c", "exit 3"],
                                      "tmpdir": "x-run001/jobs/s/sh-00000001", "host": "local"}),
              Event(T0, "JOB_TASK", {"jobid": jobid, "taskid": taskid, "exec": "sh"}),
              Event(T0, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2}),
              Event(T0 + 0.1, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 5,
                                                     "message": "exit code 3"}),
              Event(T0 + 0.1, "END_FAILURE", {"thread": thread, "tr": "sh"}),
              Event(T0 + 0.2, "RUN_FAILURE", {}, "INFO", "Loader")]
    compact = _write(events, compact=True)
    assert "END_FAILURE jobid=sh-00000001 tr=sh" in compact and "THREAD_ASSOCIATION" not in compact
    outcomes = [LogFrame(parse_text(text)).jobs.loc[jobid, "outcome"]
                for text in (_write(events), compact)]
    assert outcomes == ["failure", "failure"]
