"""What the run model and the task stream keep of a call once it ended (issue 30: a
million calls through a notebook's panels): counts, not a record per call, while a
failure still names its app and site."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from swiftnb.events import Event
from swiftnb.monitor.state import RunState
from swiftnb.widgets.taskstream import TaskStream

pytestmark = pytest.mark.timeout(120)


def _call(i: int, t: float, end: int = 7) -> list[Event]:
    """The events of one local call, in the engine's order."""
    jobid, taskid = f"echo-{i}", f"R-1-{i}"
    return [
        Event(t, "JOB_INIT", {"jobid": jobid, "tr": "echo"}),
        Event(t, "JOB_START", {"jobid": jobid, "tr": "echo", "host": "local"}),
        Event(t, "JOB_TASK", {"jobid": jobid, "taskid": taskid}),
        Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 8}),
        Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2}),
        Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": end}),
        *([Event(t, "APPLICATION_EXCEPTION", {"jobid": jobid, "message": "exit code 3"})]
          if end == 5 else []),
        Event(t, "JOB_END", {"jobid": jobid}),
        Event(t, "END_SUCCESS" if end == 7 else "END_FAILURE", {"thread": f"R-{i}", "tr": "echo"}),
    ]


def _fold(n: int, first: int) -> tuple[RunState, TaskStream, int]:
    """Fold ``n`` ended calls into fresh models; the bytes still allocated after."""
    events = [e for i in range(first, first + n) for e in _call(i, 1.0 + i)]
    gc.collect()
    tracemalloc.start()
    try:
        state, stream = RunState(), TaskStream()
        state.fold(events)
        stream.apply(events)
        stream.done.clear()          # what the panel draws and lets go
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return state, stream, kept


def test_ended_calls_are_counted_not_kept():
    small_state, _, small = _fold(500, 0)
    state, stream, large = _fold(5500, 0)
    assert (small_state.tasks, state.tasks) == (500, 5500)
    assert state.ok == 5500 and state.task_counts[7] == 5500
    assert state.sites["local"].done == 5500 and stream.finished == 5500
    per_call = (large - small) / 5000
    assert per_call < 24, f"{per_call:.0f} B kept per ended call"


def test_a_failure_still_names_its_app_and_site():
    state = RunState()
    state.fold(_call(1, 1.0, end=5))
    row = state.failures[-1]
    assert (row.app, row.site, row.exit_code) == ("echo", "local", 3)
    assert state.failed == 1 and state.tasks == 1 and state.task_counts[5] == 1
