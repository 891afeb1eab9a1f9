"""The run model's task fold (swiftnb.monitor.state), which the notebook panels read
too: tasks by CoG status, a task's site and block, and when each block was requested,
started and ended; from a real Swift/K 0.96 coaster log and from event orders a live run
makes."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from swiftnb.events import Event
from swiftnb.logs.reader import read_events
from swiftnb.monitor.state import RunState

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"


def _status(t: float, taskid: str, status: int, **more: str) -> Event:
    return Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": status, **more})


def test_a_swift_096_coaster_log_folds_into_tasks_sites_and_blocks(tmp_path):
    log = tmp_path / "swift.log"
    log.write_bytes(bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()))
    state = RunState()
    state.fold(read_events(str(log)))
    assert state.tasks == 32 and state.task_counts.get(7) == 32
    assert all(n == 0 for code, n in state.task_counts.items() if code != 7)
    assert sum(site.completed for site in state.site_rows()) == 32
    assert all(site.queued == site.running == 0 for site in state.site_rows())
    blocks = list(state.blocks.values())
    assert len(blocks) == 2 and sum(b.done for b in blocks) == 32
    for block in blocks:
        assert block.state == "done" and block.running == 0 and not block.workers
        assert block.started is not None and block.ended is not None
        assert block.requested <= block.started <= block.ended
        assert block.shape == "16x1" and block.walltime == "1440"


def test_a_status_before_the_task_s_site_is_known_counts_there_once():
    state = RunState()
    state.fold([
        Event(1.0, "JOB_START", {"jobid": "j1", "host": "here"}),
        _status(1.1, "t1", 8),                          # submitting, site not yet tied
        Event(1.2, "JOB_TASK", {"jobid": "j1", "taskid": "t1"}),
    ])
    assert (state.sites["here"].queued, state.sites["here"].running) == (1, 0)
    state.fold([_status(1.3, "t1", 2), _status(1.4, "t1", 2)])   # a repeat: no change
    assert (state.sites["here"].queued, state.sites["here"].running) == (0, 1)
    assert state.task_counts == {8: 0, 2: 1}
    state.apply(_status(2.0, "t1", 7))
    site = state.sites["here"]
    assert (site.queued, site.running, site.done, site.failed) == (0, 0, 1, 0)
    assert state.tasks == 1 and state.task_counts[7] == 1


def test_a_canceled_task_leaves_its_site_and_block_without_a_result():
    state = RunState()
    state.fold([
        Event(1.0, "BLOCK_REQUESTED", {"id": "b1", "cores": "4", "coresPerWorker": "1"}),
        Event(2.0, "WORKER_ACTIVE", {"blockid": "b1", "id": "w1"}),
        Event(2.5, "JOB_START", {"jobid": "j1", "host": "cluster"}),
        Event(2.6, "JOB_TASK", {"jobid": "j1", "taskid": "t1"}),
        _status(3.0, "t1", 2, workerid="b1:w1"),
    ])
    block = state.blocks["b1"]
    assert (block.state, block.started, block.running) == ("active", 2.0, 1)
    assert state.sites["cluster"].running == 1
    state.fold([_status(4.0, "t1", 6), Event(5.0, "WORKER_LOST", {"blockid": "b9", "id": "x"})])
    assert (block.running, block.done) == (0, 0)
    site = state.sites["cluster"]
    assert (site.running, site.done, site.failed) == (0, 0, 0)
    assert "b9" not in state.blocks               # a stray worker makes no block
    state.fold([Event(6.0, "BLOCK_SHUTDOWN", {"id": "b1"}), Event(7.0, "BLOCK_DONE", {"id": "b1"})])
    assert (block.state, block.ended) == ("done", 7.0)
