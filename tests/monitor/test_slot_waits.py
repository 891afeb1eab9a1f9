"""Tasks of a coaster site that wait for a slot say so (issue 29, "a task waiting for a
slot"): a real ``swiftnb run`` on a local coaster block of one worker with two slots and
six tasks of 1.5 s.  The log holds a WAITING for the site's queue (said once tasks
waited, ``expected``: the normal state of more tasks than slots), withdrawn when the last
waiting task started, while it still ran; the monitors' model lists it while it holds,
and the console ticker prints it once it has lasted."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.coasters.servicerecords import Block
from swiftnb.coasters.slotwaits import NO_BLOCK, SLOTS_BUSY, WORKERS_STARTING, slot_waiting
from swiftnb.events import EventBus
from swiftnb.logs.reader import read_log, to_events
from swiftnb.logs.ticker import ProgressTicker
from swiftnb.monitor.state import RunState

pytestmark = pytest.mark.timeout(180)

CONF = """
sites: [localhost]
site.localhost {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "00:10:00" }
    }
    staging: "local"
    workDirectory: "work"
    maxParallelTasks: 8
    initialParallelTasks: 8
    app.nap { executable: "/bin/sleep", maxWallTime: "00:01:00" }
}
"""
SCRIPT = """
app () nap () { nap "1.5"; }
foreach i in [1:6] { nap(); }
"""
QUEUE_WAIT = re.compile(r" WAITING subject=queue id=localhost site=localhost reason=(\S*) "
                        r"expected=(\S+)")


@pytest.fixture(scope="module")
def coaster_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """stderr and the log of one run: six tasks, two slots."""
    tmp_path = tmp_path_factory.mktemp("slots")
    (tmp_path / "swift.conf").write_text(CONF)
    (tmp_path / "naps.swift").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-config", "swift.conf",
                           "naps.swift"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=150)
    assert done.returncode == 0, done.stdout + done.stderr
    [log] = tmp_path.glob("run*/naps-*.log")
    return done.stderr, log


def test_the_queue_says_its_tasks_wait_for_busy_slots_and_withdraws_it(coaster_run):
    _, log = coaster_run
    lines = log.read_text().splitlines()
    said = [(i, *QUEUE_WAIT.search(line).groups()) for i, line in enumerate(lines)
            if QUEUE_WAIT.search(line)]
    reasons = [reason for _, reason, _ in said]
    # said (workers starting, then all slots busy), each as expected, then withdrawn once
    assert SLOTS_BUSY in reasons, said
    assert set(reasons) <= {WORKERS_STARTING, SLOTS_BUSY, ""}, said
    assert reasons[-1] == "" and reasons.count("") == 1, said
    assert all(expected == "true" for _, reason, expected in said if reason), said
    busy = next(line for line in lines if f"reason={SLOTS_BUSY}" in line)
    assert "all 2 slot(s) of its 1 worker(s) run tasks" in busy, busy
    # withdrawn when the last waiting task started: tasks still ended after it
    withdrawn = said[-1][0]
    ends = [i for i, line in enumerate(lines) if " JOB_END " in line]
    assert len(ends) == 6
    assert ends[-1] > withdrawn > said[0][0]


def test_the_monitor_model_lists_it_while_it_holds(coaster_run):
    _, log = coaster_run
    state = RunState()
    seen: set[tuple[str, str, str]] = set()
    for event in to_events(read_log(log)):
        state.apply(event)
        seen.update((w.subject, w.id, w.reason) for w in state.waiting_rows())
    assert ("queue", "localhost", SLOTS_BUSY) in seen
    assert [w for w in state.waiting_rows() if w.subject == "queue"] == []   # withdrawn


def test_the_console_prints_it_once_it_has_lasted(coaster_run):
    stderr, log = coaster_run
    assert "Waiting: queue" not in stderr   # a run of seconds: the normal state, unsaid
    out = io.StringIO()
    bus = EventBus()
    ticker = ProgressTicker(bus, stream=out, log=False, force_every=0.0)
    for event in to_events(read_log(log)):
        bus.publish(event)
        ticker.tick()
    ticker.stop(final=False)
    printed = [line for line in out.getvalue().splitlines()
               if line.startswith("Waiting: queue localhost waits: ")]
    assert any(f": {SLOTS_BUSY} - " in line and "wait for a free worker slot" in line
               for line in printed), out.getvalue()


def test_tasks_with_no_block_or_no_worker_yet_say_which():
    assert slot_waiting("c", 0, [], passive=False) is None
    nothing = slot_waiting("c", 3, [], passive=False)
    assert nothing is not None and nothing.reason == NO_BLOCK and not nothing.expected
    assert "3 task(s) of coaster site c" in nothing.detail
    queued = Block(id="0101-1", workers=1, walltime=600, requested=0.0)
    starting = slot_waiting("c", 3, [queued], passive=False)
    assert starting is not None and starting.reason == WORKERS_STARTING and starting.expected
    assert "(1 still queued in the batch system" in starting.detail
    passive = slot_waiting("c", 3, [], passive=True)
    assert passive is not None and passive.reason == NO_BLOCK
    assert "workerManager is passive" in passive.detail
    queued.state = "failed"     # a block that ended is no block for them
    ended = slot_waiting("c", 3, [queued], passive=False)
    assert ended is not None and ended.reason == NO_BLOCK
