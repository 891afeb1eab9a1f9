"""The sim provider on its own: statuses, outputs, durations, failures, outages, seeds."""

import asyncio

import pytest

from swiftnb.engine.task import Task
from swiftnb.events import TaskStatus
from swiftnb.execution.sim import SimProvider
from swiftnb.scheduling.clock import VirtualClock
from swiftnb.scheduling.provider import RecordingReporter


def _task(tmp_path, i=0, **kw):
    return Task(jobid=f"j{i}", tr="sim", args=[], base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"), **kw)


def _run(provider, tasks):
    async def main():
        reports = {t.jobid: [] for t in tasks}

        def reporter(t):
            class Report(RecordingReporter):
                def status(self, status, *, message=None, workerid=None):
                    f = {"message": message} if message is not None else {}
                    reports[t.jobid].append((int(status), provider.clock.now(), f))
            return Report()

        results = await asyncio.gather(*(provider.execute(provider.prepare(t), reporter(t))
                                         for t in tasks))
        return results, reports

    return asyncio.run(main())


def test_statuses_outputs_and_virtual_durations(tmp_path):
    clock = VirtualClock(start=0.0)
    sim = SimProvider("grid", {"slots": 1, "queueTime": 20, "taskDuration": 30}, clock=clock)
    tasks = [_task(tmp_path, i, outputs=[f"out/f{i}.txt"], stdout=f"out/o{i}.txt")
             for i in range(2)]
    results, reports = _run(sim, tasks)
    assert all(r.ok and r.site == "grid" for r in results)
    assert [s for s, _, _ in reports["j0"]] == [1, 2, 7]
    # one slot: the second job waits for the first one's 30 s
    assert [t for _, t, _ in reports["j0"]] == [0.0, 20.0, 50.0]
    assert [t for _, t, _ in reports["j1"]] == [0.0, 50.0, 80.0]
    for i in range(2):
        assert (tmp_path / f"out/f{i}.txt").read_text().startswith("simulated output of j")
        assert (tmp_path / f"out/o{i}.txt").exists()
    assert sim.state().completed == 2


def test_speed_divides_durations(tmp_path):
    clock = VirtualClock(start=0.0)
    sim = SimProvider("fast", {"taskDuration": 60, "speed": 3, "writeOutputs": False},
                      clock=clock)
    _run(sim, [_task(tmp_path)])
    assert clock.now() == pytest.approx(20.0)


def test_failures_report_a_message(tmp_path):
    sim = SimProvider("bad", {"failureProbability": 1.0, "taskDuration": 10},
                      clock=VirtualClock(start=0.0))
    results, reports = _run(sim, [_task(tmp_path, outputs=["x.txt"])])
    assert not results[0].ok and "simulated failure" in results[0].message
    assert reports["j0"][-1][0] == TaskStatus.FAILED
    assert reports["j0"][-1][2]["message"] == results[0].message
    assert not (tmp_path / "x.txt").exists()


def test_outages_refuse_and_kill(tmp_path):
    clock = VirtualClock(start=0.0)
    sim = SimProvider("flaky", {"taskDuration": 100, "outages": "50+20", "slots": 4,
                                "writeOutputs": False}, clock=clock)

    async def main():
        first = asyncio.ensure_future(sim.execute(sim.prepare(_task(tmp_path, 0)),
                                                  RecordingReporter()))
        await clock.sleep(55)
        during = await sim.execute(sim.prepare(_task(tmp_path, 1)), RecordingReporter())
        return await first, during

    first, during = asyncio.run(main())
    assert not first.ok and "went down" in first.message
    assert not during.ok and "Connection refused" in during.message


def test_same_seed_same_draws_other_seed_differs(tmp_path):
    def times(seed):
        clock = VirtualClock(start=0.0)
        sim = SimProvider("s", {"slots": 100, "queueTime": "exp:20", "taskDuration":
                                "normal:60:10", "seed": seed, "writeOutputs": False},
                          clock=clock)
        _, reports = _run(sim, [_task(tmp_path, i) for i in range(20)])
        return [tuple(t for _, t, _ in reports[f"j{i}"]) for i in range(20)]

    assert times(1) == times(1)
    assert times(1) != times(2)


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="did you mean slots"):
        SimProvider("s", {"slot": 3})
    with pytest.raises(ValueError, match="queueTime"):
        SimProvider("s", {"queueTime": "gamma:3"})
    with pytest.raises(ValueError, match="failureProbability"):
        SimProvider("s", {"failureProbability": 2})


def test_cancellation_frees_the_slot(tmp_path):
    clock = VirtualClock(start=0.0)
    sim = SimProvider("s", {"slots": 1, "taskDuration": 100, "writeOutputs": False},
                      clock=clock)

    async def main():
        first = asyncio.ensure_future(sim.execute(sim.prepare(_task(tmp_path, 0)),
                                                  RecordingReporter()))
        await clock.sleep(10)
        first.cancel()
        second = await sim.execute(sim.prepare(_task(tmp_path, 1)), RecordingReporter())
        return second, clock.now()

    second, now = asyncio.run(main())
    assert second.ok and now == pytest.approx(110.0)
    assert sim.state().canceled == 1 and sim.state().free_slots == 1
