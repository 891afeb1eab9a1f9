"""The log writer produces Swift 0.96 lines: logger, level, field order, commas."""

from __future__ import annotations

import io

from swiftnb.events import EventBus, TaskStatus
from swiftnb.logs.writer import LogWriter, write_events

T0 = 1453684104.537  # 2016-01-25 01:08:24,537 UTC


def _lines(emit) -> list[str]:
    bus = EventBus(clock=lambda: T0)
    buf = io.StringIO()
    detach = LogWriter(buf).attach(bus)
    emit(bus)
    detach()
    return buf.getvalue().splitlines()


def test_job_and_task_lines_match_swift():
    lines = _lines(lambda bus: (
        bus.emit("JOB_INIT", {"jobid": "sleep-gfl3orkm", "tr": "sleep"}),
        bus.emit("JOB_START", {"jobid": "sleep-gfl3orkm", "tr": "sleep", "arguments": ["900"],
                               "tmpdir": "b-run019/jobs/s/sleep-gfl3orkm", "host": "stampede"}),
        bus.emit("JOB_TASK", {"jobid": "sleep-gfl3orkm", "taskid": "urn:R-2-8-1",
                              "exec": "/bin/bash", "dir": "d", "args": "_swiftwrap.staging -e sleep"}),
        bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:R-2-8-1", "status": TaskStatus.STAGE_IN,
                                        "workerid": "0124-4207540-000000:000000"}),
        bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:R-2-8-1", "status": 5,
                                        "message": "Walltime exceeded"}),
    ))
    assert lines == [
        "2016-01-25 01:08:24,537+0000 DEBUG swift JOB_INIT jobid=sleep-gfl3orkm tr=sleep",
        "2016-01-25 01:08:24,537+0000 DEBUG swift JOB_START jobid=sleep-gfl3orkm tr=sleep "
        "arguments=[900] tmpdir=b-run019/jobs/s/sleep-gfl3orkm host=stampede",
        "2016-01-25 01:08:24,537+0000 INFO  Execute JOB_TASK jobid=sleep-gfl3orkm "
        "taskid=urn:R-2-8-1 exec=/bin/bash dir=d args=_swiftwrap.staging -e sleep",
        "2016-01-25 01:08:24,537+0000 INFO  Execute TASK_STATUS_CHANGE taskid=urn:R-2-8-1 "
        "status=16 workerid=0124-4207540-000000:000000",
        "2016-01-25 01:08:24,537+0000 INFO  Execute TASK_STATUS_CHANGE taskid=urn:R-2-8-1 "
        "status=5 Walltime exceeded",
    ]


def test_coaster_lines_use_commas_where_swift_did():
    lines = _lines(lambda bus: (
        bus.emit("BLOCK_REQUESTED", {"id": "0124-4207540-000000", "cores": 16,
                                     "coresPerWorker": 1, "walltime": 1440}),
        bus.emit("WORKER_ACTIVE", {"blockid": "0124-4207540-000000", "id": "000000",
                                   "node": "c401-204", "cores": 16}),
        bus.emit("BLOCK_UTILIZATION", {"id": "0124-4207540-000000", "u": 99.99}),
    ))
    assert [line[29:] for line in lines] == [
        "INFO  RemoteLogHandler BLOCK_REQUESTED id=0124-4207540-000000, cores=16, "
        "coresPerWorker=1, walltime=1440",
        "INFO  RemoteLogHandler WORKER_ACTIVE blockid=0124-4207540-000000 id=000000 "
        "node=c401-204 cores=16",
        "INFO  RemoteLogHandler BLOCK_UTILIZATION id=0124-4207540-000000, u=99.99",
    ]


def test_run_level_lines_and_multiline_text():
    lines = _lines(lambda bus: (
        bus.emit("CONFIG", text="[D] etc/swift.conf\n{\n\tsites: [local]\n}"),
        bus.emit("RUN_START", {}),
        bus.emit("TRACE", text="SwiftScript trace: 1, a"),
        bus.emit("THREAD_ASSOCIATION", {"jobid": "j", "thread": "R-2", "host": "local",
                                        "replicationGroup": None}),
        bus.emit("RUN_FAILURE", {}),
    ))
    assert lines[0][29:] == "DEBUG Loader SWIFT_CONFIGURATION "
    assert lines[1:4] == ["[D] etc/swift.conf", "{", "\tsites: [local]"]
    assert lines[5][29:] == "INFO  Loader RUN_START"
    assert lines[6][29:] == "WARN  trace SwiftScript trace: 1, a"
    assert lines[7].endswith("host=local replicationGroup=null")
    assert lines[8][29:] == "INFO  Loader Swift finished with errors"


def test_file_target_is_flushed_and_closed_on_detach(tmp_path):
    path = tmp_path / "run001" / "swift.log"
    bus = EventBus(clock=lambda: T0)
    writer = LogWriter(path)
    detach = writer.attach(bus)
    for i in range(1000):
        bus.emit("JOB_INIT", {"jobid": f"a-{i}", "tr": "a"})
    detach()
    detach()  # twice is harmless
    assert writer.closed
    assert len(path.read_text().splitlines()) == 1000
    bus.emit("JOB_END", {"jobid": "late"})  # detached: not written, no error
    assert len(path.read_text().splitlines()) == 1000


def test_write_events_and_timezone_is_utc(tmp_path):
    from swiftnb.events import Event

    n = write_events([Event(0.001, "RUN_START", {})], tmp_path / "x.log")
    assert n == 1
    assert (tmp_path / "x.log").read_text().startswith("1970-01-01 00:00:00,001+0000 INFO  Loader")


def test_last_lines_reach_the_file_without_further_events(tmp_path):
    """A run waiting on long tasks: what was written is flushed by a timer on the loop."""
    import asyncio

    path = tmp_path / "swift.log"

    async def main():
        bus = EventBus(clock=lambda: T0)
        writer = LogWriter(path, flush_interval=0.05)
        detach = writer.attach(bus)
        await asyncio.sleep(0.1)
        bus.emit("JOB_INIT", {"jobid": "a-1", "tr": "a"})
        bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:1", "status": 2})
        for _ in range(100):  # no more events: the timer must flush within a few ticks
            await asyncio.sleep(0.02)
            if len(path.read_text().splitlines()) == 2:
                break
        seen = len(path.read_text().splitlines())
        detach()
        return seen

    assert asyncio.run(asyncio.wait_for(main(), timeout=20)) == 2


def test_writer_does_not_import_pandas_or_bokeh():
    """The writer is on every run's path: importing it must stay cheap."""
    import subprocess
    import sys

    code = ("import sys, swiftnb.logs, swiftnb.logs.writer; "
            "print(sorted(m for m in ('pandas', 'bokeh', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_minimal_and_reduced_logging():
    def emit(bus):
        bus.emit("JOB_INIT", {"jobid": "a-1", "tr": "a"})
        bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:1", "status": 2})
        bus.emit("TRACE", text="SwiftScript trace: 1")
        bus.emit("MESSAGE", text="chatter", level="INFO", logger="Loader")
        bus.emit("MESSAGE", text="careful", level="WARN", logger="Loader")

    for options, kinds in (({"minimal": True}, ["trace", "Loader careful"]),
                           ({"reduced": True}, ["JOB_INIT", "trace", "chatter", "careful"])):
        bus = EventBus(clock=lambda: T0)
        buf = io.StringIO()
        detach = LogWriter(buf, **options).attach(bus)
        emit(bus)
        detach()
        lines = buf.getvalue().splitlines()
        assert len(lines) == len(kinds), (options, lines)
        for line, word in zip(lines, kinds):
            assert word in line
