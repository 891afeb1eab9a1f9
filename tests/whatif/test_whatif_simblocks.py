"""The sim provider's coaster blocks, in virtual time: queue, start-up, slots, walltime
fit, idle shutdown, maxBlocks; and the empirical distribution kind."""

import asyncio
import random

import pytest

from swiftnb.config.types import BadValue, parse_distribution
from swiftnb.engine.task import Task
from swiftnb.events import EventBus
from swiftnb.execution.sim import SimProvider
from swiftnb.scheduling.clock import VirtualClock
from swiftnb.scheduling.provider import RecordingReporter


def _run_tasks(tmp_path, n, options, maxwalltime=None):
    """Run n tasks at once on one sim site; (start, end) clock offsets per task, events."""

    async def main():
        clock = VirtualClock(start=0.0)
        bus = EventBus(clock=clock.now)
        events = []
        bus.subscribe(events.append)
        site = SimProvider("grid", {"writeOutputs": False, **options}, clock=clock, bus=bus)

        async def one(i):
            task = Task(f"work-{i}", "work", [str(i)], str(tmp_path), str(tmp_path),
                        maxwalltime=maxwalltime)
            job = site.prepare(task)
            reporter = RecordingReporter()
            result = await site.execute(job, reporter)
            assert result.ok
            return reporter

        reporters = await asyncio.wait_for(asyncio.gather(*(one(i) for i in range(n))), 60)
        end = clock.now()
        await site.shutdown()
        return reporters, events, end

    return asyncio.run(main())


BLOCKS = {"blockSlots": 4, "maxBlocks": 1, "blockQueueTime": 100, "blockStartup": 10,
          "blockIdleTime": 5, "taskDuration": 50}


def test_tasks_wait_for_the_block_then_share_its_slots(tmp_path):
    reporters, events, end = _run_tasks(tmp_path, 8, BLOCKS)
    kinds = [e.kind for e in events]
    assert kinds.count("BLOCK_REQUESTED") == 1
    assert kinds.count("WORKER_ACTIVE") == 1
    # block active at 100, worker at 110: four tasks 110-160, four more 160-210
    assert end == pytest.approx(210)
    active = next(e for e in events if e.kind == "BLOCK_ACTIVE")
    assert active.time == pytest.approx(100)
    workers = {w for r in reporters for (_s, _m, w) in r.statuses if w}
    assert workers == {"grid-000001:000000"}


def test_a_task_longer_than_what_is_left_of_a_block_waits_for_a_new_one(tmp_path):
    # walltime 100 s from BLOCK_ACTIVE (100): at 160 only 40 s are left for a 60 s task,
    # so the block idles out (done at 165) and a second block is requested then
    options = {**BLOCKS, "blockWalltime": 100}
    _reporters, events, end = _run_tasks(tmp_path, 8, options, maxwalltime=60)
    requested = [e.time for e in events if e.kind == "BLOCK_REQUESTED"]
    done = [e.time for e in events if e.kind == "BLOCK_DONE"]
    assert requested == pytest.approx([0, 165])
    assert done[0] == pytest.approx(165)
    assert end == pytest.approx(165 + 100 + 10 + 50)


def test_max_blocks_bounds_the_blocks_alive_at_once(tmp_path):
    options = {**BLOCKS, "maxBlocks": 2, "blockSubmitTime": 1}
    _reporters, events, end = _run_tasks(tmp_path, 16, options)
    requested = [e.time for e in events if e.kind == "BLOCK_REQUESTED"]
    assert requested == pytest.approx([0, 1])  # one request after the other
    assert end == pytest.approx(1 + 110 + 50 + 50)


def test_durations_scale_with_an_argument(tmp_path):
    options = {"taskDuration": {"work": "empirical:2"}, "durationArgument": {"work": 0},
               "slots": 100}
    _reporters, _events, end = _run_tasks(tmp_path, 5, options)
    assert end == pytest.approx(2 * 4)  # the task "work 4" lasts 2 x 4 s


def test_empirical_distribution_resamples_what_it_was_given():
    dist = parse_distribution("empirical:3, 5,7.5")
    rng = random.Random(1)
    draws = {dist.sample(rng) for _ in range(200)}
    assert draws == {3.0, 5.0, 7.5}
    assert dist.mean == pytest.approx(5.1666667)
    for bad in ("empirical:", "empirical:1,-2", "empirical:1,x"):
        with pytest.raises(BadValue):
            parse_distribution(bad)


def test_a_cluster_of_jobs_takes_one_block_slot(tmp_path):
    async def main():
        clock = VirtualClock(start=0.0)
        site = SimProvider("grid", {"writeOutputs": False, **BLOCKS}, clock=clock)
        tasks = [Task(f"work-{i}", "work", [], str(tmp_path), str(tmp_path)) for i in range(3)]
        reporter = RecordingReporter()
        results = await asyncio.wait_for(
            site.execute_cluster([site.prepare(t) for t in tasks], reporter), 60)
        await site.shutdown()
        return results, reporter, clock.now()

    results, reporter, end = asyncio.run(main())
    assert all(r.ok for r in results)
    assert end == pytest.approx(110 + 3 * 50)  # one block, the three jobs back to back
    assert ("grid-000001:000000" in {w for (_s, _m, w) in reporter.statuses})
