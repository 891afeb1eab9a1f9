"""Run directories (runNNN) and the progress ticker driven by events."""

from __future__ import annotations

import asyncio
import io
import os

import pytest

from swiftnb.events import EventBus
from swiftnb.logs.ticker import ProgressTicker, ticker_date
from swiftnb.rundir import make_run_dir, next_run_number, script_stem

pytestmark = pytest.mark.timeout(20)


def test_run_numbers_follow_the_highest_existing(tmp_path):
    assert next_run_number(str(tmp_path)) == 1
    first = make_run_dir("wf/foo.swift", cwd=str(tmp_path))
    assert first.runid == "run001" and os.path.isdir(first.path)
    (tmp_path / "run007").mkdir()
    second = make_run_dir("foo.swift", cwd=str(tmp_path))
    assert second.runid == "run008"
    assert second.log_file == str(tmp_path / "run008" / "foo-run008.log")
    assert second.restart_file == str(tmp_path / "run008" / "foo-run008.0.rlog")
    assert second.site_run == "foo-run008"


def test_explicit_runid_and_logfile(tmp_path):
    rd = make_run_dir("foo.swift", cwd=str(tmp_path), runid="myrun", logfile="x.log")
    assert rd.path == str(tmp_path / "myrun") and rd.log_file == str(tmp_path / "x.log")
    assert script_stem("a/b/c.swift") == "c"


def emit_job(bus, jobid, taskid, statuses, end=True):
    bus.emit("JOB_INIT", {"jobid": jobid, "tr": "echo"})
    bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
    bus.emit("THREAD_ASSOCIATION", {"jobid": jobid, "thread": "R-" + jobid, "host": "local",
                                    "replicationGroup": None})
    bus.emit("JOB_TASK", {"jobid": jobid, "taskid": taskid, "exec": "echo", "dir": "d", "args": ""})
    for s in statuses:
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": s})
    if end:
        bus.emit("JOB_END", {"jobid": jobid})


def test_ticker_counts_states_in_swift_order():
    bus = EventBus()
    out = io.StringIO()
    logged = []
    bus.subscribe(lambda e: e.kind == "PROGRESS" and logged.append(e.text))
    t = ProgressTicker(bus, stream=out, date=lambda: "DATE")
    emit_job(bus, "a", "urn:1", [8, 1, 2])
    emit_job(bus, "b", "urn:2", [8, 1, 2, 7])
    emit_job(bus, "c", "urn:3", [], end=False)
    bus.emit("JOB_INIT", {"jobid": "d", "tr": "cat"})
    assert t.tick(now=1.0)
    assert out.getvalue() == (
        "Progress: DATE  Initializing:1  Selecting site:1  Finished successfully:2\n")
    assert not t.tick(now=2.0)            # unchanged: not printed again
    assert t.tick(now=40.0)               # ...unless 30 s passed
    bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:3", "status": 8})
    bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:3", "status": 5})
    bus.emit("APPLICATION_EXCEPTION", {"jobid": "c", "message": "boom"})
    bus.emit("END_FAILURE", {"thread": "R-c", "tr": "echo"})
    bus.emit("JOB_RESTARTED", {"jobid": "e"})
    t.stop()
    assert out.getvalue().splitlines()[-1] == (
        "Final status: DATE  Initializing:1  Failed:1  Finished in previous run:1"
        "  Finished successfully:2")
    assert logged[-1] == "  Initializing:1  Failed:1  Finished in previous run:1  Finished successfully:2"


def test_ticker_runs_on_the_loop_and_date_format():
    bus = EventBus()
    out = io.StringIO()

    async def main():
        t = ProgressTicker(bus, stream=out, interval=0.05)
        t.start()
        emit_job(bus, "a", "urn:1", [8, 1, 2], end=False)
        await asyncio.sleep(0.2)
        bus.emit("JOB_END", {"jobid": "a"})
        await asyncio.sleep(0.2)
        t.stop()

    asyncio.run(main())
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Progress: ") and lines[0].endswith("  Active:1")
    assert lines[1].endswith("  Finished successfully:1")
    assert lines[-1].startswith("Final status: ")
    import re
    assert re.fullmatch(r"\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d[+-]\d{4}", ticker_date(0))


def test_java_ticker_date_formats():
    from swiftnb.logs.ticker import java_date_format

    t = 1795385119.143
    import time as _t
    local = _t.localtime(t)
    assert java_date_format("E, dd MMM yyyy HH:mm:ssZ")(t) == ticker_date(t)
    assert java_date_format("yyyy-MM-dd'T'HH:mm:ss.SSS")(t) == (
        _t.strftime("%Y-%m-%dT%H:%M:%S", local) + ".143")
    assert java_date_format("'at' HH 'o''clock' 100%")(t) == _t.strftime("at %H o'clock 100%%", local)


def test_ticker_counts_calls_of_a_stopped_run_as_canceled():
    """Ctrl-C: running calls report 6, waiting ones end without a task; none of them is
    "Finished successfully" (the engine ends every call with JOB_END) or "Failed"."""
    bus = EventBus()
    out = io.StringIO()
    t = ProgressTicker(bus, stream=out, date=lambda: "DATE")
    emit_job(bus, "done", "urn:0", [8, 1, 2, 7])
    for jobid, taskid, thread in (("a", "urn:1", "R-1"), ("b", "urn:2", "R-2")):
        bus.emit("JOB_INIT", {"jobid": jobid, "tr": "sh"})
        bus.emit("PROCEDURE", {"line": 2, "thread": thread, "name": "f"})
        bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
        if taskid == "urn:1":  # a is running; b waits for a slot
            bus.emit("JOB_TASK", {"jobid": jobid, "taskid": taskid})
            bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2})
    bus.emit("MESSAGE", {}, text="Execution interrupted")
    bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:1", "status": 6})
    for jobid, thread in (("a", "R-1"), ("b", "R-2")):
        bus.emit("JOB_END", {"jobid": jobid})
        bus.emit("END_FAILURE", {"thread": thread, "tr": "sh"})
    t.stop()
    assert out.getvalue().splitlines()[-1] == (
        "Final status: DATE  Finished successfully:1  Canceled:2")


def test_runid_is_a_name_and_a_reused_runid_keeps_old_restart_logs(tmp_path):
    from swiftnb.rundir import RunDirError, release_run_dir

    for bad in ("a/b", "..", "."):
        with pytest.raises(RunDirError, match="a run id is a name, not a path"):
            make_run_dir("wf.swift", cwd=str(tmp_path), runid=bad)
    first = make_run_dir("wf.swift", cwd=str(tmp_path), runid="same")
    assert first.restart_file.endswith("wf-same.0.rlog")
    open(first.restart_file, "w").close()  # a failed run left it to resume from
    release_run_dir(first)  # and ended
    second = make_run_dir("wf.swift", cwd=str(tmp_path), runid="same")
    assert second.restart_file.endswith("wf-same.1.rlog")


def test_unwritable_logfile_is_refused_before_the_run(tmp_path):
    from swiftnb.rundir import RunDirError

    (tmp_path / "afile").write_text("x")
    with pytest.raises(RunDirError, match=r"-logfile afile/x\.log: cannot write the log"):
        make_run_dir("wf.swift", cwd=str(tmp_path), logfile="afile/x.log")
    rd = make_run_dir("wf.swift", cwd=str(tmp_path), logfile="logs/deep/x.log")
    assert os.path.isfile(rd.log_file) and rd.log_file.endswith("logs/deep/x.log")


def test_stopped_run_counts_unended_calls_as_canceled():
    bus = EventBus()
    out = io.StringIO()
    t = ProgressTicker(bus, stream=out, date=lambda: "DATE")
    emit_job(bus, "a", "urn:1", [8, 1, 2], end=False)   # no event ever ends it
    emit_job(bus, "b", "urn:2", [8, 1, 2, 7])
    bus.emit("MESSAGE", {}, text="Execution interrupted")
    t.stop()
    assert out.getvalue().splitlines()[-1] == (
        "Final status: DATE  Finished successfully:1  Canceled:1")
