"""What the executors tell the engine's call gate (engine/callgate.py) of how many calls
they run at once: the single site its live maxParallelTasks, the scheduler the sum of its
sites' limits (unlimited when one has none), a dry run and the failure recorder as
documented."""

from __future__ import annotations

import math

from swiftnb.attempts import FailureLog, RecordingExecutor
from swiftnb.engine.task import Task, TaskResult
from swiftnb.events import EventBus
from swiftnb.scheduling.provider import Job, Provider, ProviderState, StatusReporter, swift_job_dir
from swiftnb.scheduling.scheduler import Scheduler
from swiftnb.scheduling.single import DryRunExecutor, SingleSiteExecutor
from swiftnb.scheduling.sites import Site


class _FakeIdleProvider(Provider):
    """A fake provider: the capacity is read from the configuration, no job runs."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def start(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    def state(self) -> ProviderState:
        return ProviderState(site=self.name, type="idle")

    def prepare(self, task: Task) -> Job:
        return Job(task, swift_job_dir("run", task.jobid, task.attempt))

    async def execute(self, job: Job, attempt: StatusReporter) -> TaskResult:
        raise AssertionError("nothing runs here")


def test_the_single_site_follows_its_live_limit() -> None:
    bus = EventBus()
    single = SingleSiteExecutor(_FakeIdleProvider("local"), bus, max_parallel=4)
    assert single.capacity() == 4
    single.set_throttle("maxParallelTasks", 12)
    assert single.capacity() == 12
    recording = RecordingExecutor(single, FailureLog(bus.clock))
    assert recording.capacity() == 12


def test_the_scheduler_sums_its_sites() -> None:
    bus = EventBus()
    sites = [Site("a", _FakeIdleProvider("a"), max_parallel_tasks=3, initial_parallel_tasks=1),
             Site("b", _FakeIdleProvider("b"), max_parallel_tasks=5, initial_parallel_tasks=5)]
    assert Scheduler(sites, bus).capacity() == 8
    unlimited = [Site("c", _FakeIdleProvider("c"), max_parallel_tasks=None,
                      initial_parallel_tasks=None), *sites]
    assert math.isinf(Scheduler(unlimited, EventBus()).capacity())


def test_a_dry_run_never_holds_a_call() -> None:
    assert math.isinf(DryRunExecutor(EventBus()).capacity())
