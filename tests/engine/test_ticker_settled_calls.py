"""The console ticker counts a call that has ended and keeps nothing of it (issue 30: a
run of a million calls kept a million ids in four dicts, ~260 bytes a call).  The counts
must stay those of every path a call ends by: success, a failure found by its thread, a
coaster task that fails on a lost worker and runs again, a reuse (with or without a
JOB_END of its own), a call finished in a previous run, and a stopped run."""

from __future__ import annotations

import io
import tracemalloc

import pytest

from swiftnb.events import EventBus
from swiftnb.logs.ticker import ProgressTicker

pytestmark = pytest.mark.timeout(60)


def _ticker(bus: EventBus) -> tuple[ProgressTicker, io.StringIO]:
    out = io.StringIO()
    return ProgressTicker(bus, stream=out, date=lambda: "DATE", log=False), out


def _ran(bus: EventBus, i: int, statuses: tuple[int, ...] = (8, 1, 2, 7),
         ok: bool = True) -> None:
    jobid, thread, taskid = f"echo-{i}", f"R-{i}", f"urn:{i}"
    bus.emit("JOB_INIT", {"jobid": jobid, "tr": "echo"})
    bus.emit("PROCEDURE", {"line": 2, "thread": thread, "name": "echo"})
    bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
    bus.emit("JOB_TASK", {"taskid": taskid, "jobid": jobid})
    for status in statuses:
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": status})
    if not ok:
        bus.emit("APPLICATION_EXCEPTION", {"jobid": jobid, "message": "exit 1"})
    bus.emit("JOB_END", {"jobid": jobid})
    bus.emit("END_SUCCESS" if ok else "END_FAILURE", {"thread": thread, "tr": "echo"})


def test_every_way_a_call_ends_is_counted_once() -> None:
    bus = EventBus()
    ticker, out = _ticker(bus)
    _ran(bus, 1)
    _ran(bus, 2, statuses=(8, 1, 2, 5), ok=False)      # failed, found by its thread
    _ran(bus, 3, statuses=(8, 1, 2, 5, 1, 2, 7))        # worker lost, ran again
    bus.emit("JOB_INIT", {"jobid": "echo-4", "tr": "echo"})
    bus.emit("JOB_CACHED", {"jobid": "echo-4", "tr": "echo", "reason": "same"})
    bus.emit("JOB_END", {"jobid": "echo-4"})           # a reuse's own JOB_END: no change
    bus.emit("END_SUCCESS", {"thread": "R-4", "tr": "echo"})
    bus.emit("JOB_INIT", {"jobid": "echo-5", "tr": "echo"})
    bus.emit("JOB_CACHED", {"jobid": "echo-5", "tr": "echo", "reason": "same"})
    bus.emit("JOB_INIT", {"jobid": "echo-6", "tr": "echo"})
    bus.emit("JOB_RESTARTED", {"jobid": "echo-6"})
    bus.emit("JOB_INIT", {"jobid": "echo-7", "tr": "echo"})  # still running when stopped
    bus.emit("MESSAGE", {}, text="Execution canceled")
    ticker.stop()
    assert out.getvalue().splitlines()[-1] == (
        "Final status: DATE  Failed:1  Finished in previous run:1  "
        "Finished successfully:2  Cached:2  Canceled:1")
    assert list(ticker.states) == ["echo-7"]  # only the call that had not ended


def test_ended_calls_keep_no_memory() -> None:
    bus = EventBus()
    ticker, _ = _ticker(bus)
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i in range(20_000):
            _ran(bus, i)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename")
                if s.traceback[0].filename.endswith("ticker.py"))
    assert grown < 20_000 * 4, f"{grown / 20_000:.0f} B a call"
    assert ticker.summary() == "  Finished successfully:20000"
