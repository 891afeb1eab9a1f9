"""The terminal monitor's screen (swiftnb.monitor.screen) fits an 80x24 terminal whatever
the run holds, keeps the throttles the keys act on, and the keys step throttles as Swift
allows (a number from 1, then ``off`` where the name takes it)."""

from __future__ import annotations

import re

import pytest

from swiftnb.events import Event
from swiftnb.monitor.painter import LineRenderer
from swiftnb.monitor.screen import draw
from swiftnb.monitor.state import RunState, Throttle

pytestmark = pytest.mark.timeout(60)


def _busy_state() -> RunState:
    """Many apps, sites, blocks, failures and waits: more than 24 lines' worth."""
    state = RunState()
    t = 1000.0
    for i in range(30):
        app = f"app{i % 9}"
        state.apply(Event(t, "JOB_INIT", {"jobid": f"j{i}", "tr": app}))
        state.apply(Event(t, "JOB_START", {"jobid": f"j{i}", "tr": app, "host": f"site{i % 7}"}))
        state.apply(Event(t, "JOB_TASK", {"jobid": f"j{i}", "taskid": f"t{i}"}))
        state.apply(Event(t, "TASK_STATUS_CHANGE", {"taskid": f"t{i}", "status": 2}))
        state.apply(Event(t, "BLOCK_REQUESTED", {"id": f"b{i}", "cores": 8,
                                                  "coresPerWorker": 4}))
        state.apply(Event(t, "WAITING", {"subject": "block", "id": f"b{i}", "site": "slurm",
                                          "reason": "Priority", "detail": "behind " * 30}))
        state.apply(Event(t, "APPLICATION_EXCEPTION", {
            "jobid": f"j{i}", "message": f"exit code 3 stderr: line one\nno such file {i}"}))
        state.apply(Event(t, "THROTTLE", {"name": "maxParallelTasks", "host": f"site{i % 7}",
                                          "old": 1, "new": 4}))
    return state


def _screen(state: RunState, selected: int = 0) -> list[str]:
    renderer = LineRenderer(color=False)   # as the painter thread renders, without colour
    return [renderer.render(row, 80) for row in draw(state, width=80, height=24,
                                                    selected=selected)]


def test_a_busy_run_fits_80x24_with_every_section_and_the_keys_line():
    lines = _screen(_busy_state())
    assert len(lines) <= 24
    assert max(len(line) for line in lines) <= 80
    text = "\n".join(lines)
    assert "0 of 30 done" in lines[0]
    for heading in ("app ", "site ", "block ", "throttles", "failures (30)", "waiting"):
        assert heading in text, heading
    assert "no such file 29" in text         # the newest failure's last stderr line
    assert "q leave" in lines[-1]


def test_the_selected_throttle_stays_on_screen():
    state = _busy_state()
    count = len(state.throttles())
    assert count > 12     # more than the throttle rows show at once
    lines = _screen(state, selected=count - 1)
    # the last row of throttles holds site6's two (the selected one cut to its cell)
    [row] = [line for line in lines if "maxParallelTasks@site6 4" in line]
    assert re.search(r"hostJobSubmitThro\S*… \?", row), row  # its value shown whole
    assert not any("jobSubmitThrottle ?" in line for line in lines)  # scrolled past


@pytest.mark.parametrize(("name", "value", "step", "expected"), [
    ("maxParallelTasks", 4, 1, 5),
    ("maxParallelTasks", 1, -1, 1),
    ("maxParallelTasks", 1024, 1, 1024),        # no "off" for maxParallelTasks
    ("jobSubmitThrottle", 256, 1, "off"),
    ("jobSubmitThrottle", "off", -1, 256),
    ("jobSubmitThrottle", None, 1, 2),
])
def test_a_key_steps_a_throttle_as_swift_allows(name, value, step, expected):
    assert Throttle(name, None, value, 1024 if name == "maxParallelTasks" else 256,
                    True).stepped(step) == expected
