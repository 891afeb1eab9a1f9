"""The ticker counts the calls memoization reused as ``Cached:N`` (after ``Finished
successfully``), from the JOB_CACHED events of the stream, in live lines and at the end."""

from __future__ import annotations

import io

from swiftnb.events import EventBus
from swiftnb.logs.ticker import ProgressTicker


def _ran(bus: EventBus, jobid: str) -> None:
    bus.emit("JOB_INIT", {"jobid": jobid, "tr": "cat"})
    bus.emit("JOB_NOT_CACHED", {"jobid": jobid, "tr": "cat", "reason": "no earlier call"})
    bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
    bus.emit("JOB_TASK", {"jobid": jobid, "taskid": f"urn:{jobid}"})
    for status in (8, 1, 2, 7):
        bus.emit("TASK_STATUS_CHANGE", {"taskid": f"urn:{jobid}", "status": status})
    bus.emit("JOB_END", {"jobid": jobid})
    bus.emit("END_SUCCESS", {"thread": f"R-{jobid}", "tr": "cat"})


def _cached(bus: EventBus, jobid: str, *, job_end: bool) -> None:
    bus.emit("JOB_INIT", {"jobid": jobid, "tr": "cat"})
    bus.emit("JOB_CACHED", {"jobid": jobid, "tr": "cat", "reason": "same inputs",
                            "restored": 0})
    if job_end:   # whether the engine ends a reused call with JOB_END too changes nothing
        bus.emit("JOB_END", {"jobid": jobid})
    bus.emit("END_SUCCESS", {"thread": f"R-{jobid}", "tr": "cat"})


def test_cached_calls_are_counted_apart_after_finished_ones():
    bus = EventBus()
    out = io.StringIO()
    logged: list[str] = []
    bus.subscribe(lambda e: e.kind == "PROGRESS" and logged.append(str(e.text)))
    ticker = ProgressTicker(bus, stream=out, date=lambda: "DATE")
    _cached(bus, "a", job_end=False)
    _cached(bus, "b", job_end=True)
    _ran(bus, "c")
    bus.emit("JOB_INIT", {"jobid": "d", "tr": "cat"})
    assert ticker.tick(now=1.0)
    assert out.getvalue() == (
        "Progress: DATE  Initializing:1  Finished successfully:1  Cached:2\n")
    _cached(bus, "d", job_end=True)
    ticker.stop()
    assert out.getvalue().splitlines()[-1] == (
        "Final status: DATE  Finished successfully:1  Cached:3")
    assert logged[-1] == "  Finished successfully:1  Cached:3"


def test_a_stopped_run_keeps_its_cached_calls():
    bus = EventBus()
    out = io.StringIO()
    ticker = ProgressTicker(bus, stream=out, date=lambda: "DATE")
    _cached(bus, "a", job_end=True)
    bus.emit("JOB_INIT", {"jobid": "b", "tr": "cat"})
    bus.emit("MESSAGE", {}, text="Execution canceled")
    ticker.stop()
    assert out.getvalue().splitlines()[-1] == "Final status: DATE  Cached:1  Canceled:1"
