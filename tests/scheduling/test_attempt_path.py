"""One attempt path: the single local site, the multi-site scheduler and its clusters run
an attempt through the same steps (prepare, announce, hold the submit throttles,
execute, finish), and a provider executes exactly the job it prepared."""

from __future__ import annotations

import asyncio

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import Event, EventBus, TaskStatus
from swiftnb.scheduling.clustering import ClusteringSettings
from swiftnb.scheduling.provider import Job, Provider, ProviderState, StatusReporter, swift_job_dir
from swiftnb.scheduling.scheduler import Scheduler
from swiftnb.scheduling.single import DryRunExecutor, SingleSiteExecutor
from swiftnb.scheduling.sites import Site
from swiftnb.scheduling.throttles import ThrottleControl


class _Checking(Provider):
    """Runs nothing; checks that every job it executes is one it prepared, once."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.prepared: list[Job] = []
        self.executed: list[Job] = []

    async def start(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    def state(self) -> ProviderState:
        return ProviderState(site=self.name, type="checking")

    def prepare(self, task: Task) -> Job:
        job = Job(task, swift_job_dir("run", task.jobid, task.attempt))
        self.prepared.append(job)
        return job

    async def execute(self, job: Job, attempt: StatusReporter) -> TaskResult:
        assert any(job is p for p in self.prepared), "a job this provider did not prepare"
        assert not any(job is e for e in self.executed), "a job executed twice"
        self.executed.append(job)
        attempt.status(TaskStatus.SUBMITTING)
        attempt.status(TaskStatus.SUBMITTED)
        attempt.status(TaskStatus.ACTIVE)
        attempt.status(TaskStatus.COMPLETED)
        return TaskResult(ok=True, exit_code=0)


def _task(n: int, walltime: float | None = None) -> Task:
    return Task(jobid=f"echo-{n}", tr="echo", args=[str(n)], base_dir=".", run_dir="run",
                maxwalltime=walltime)


def _attempt_events(events: list[Event]) -> list[tuple[str, object]]:
    """The attempt's events in order (site selection's own left out)."""
    keep = ("JOB_SITE_SELECT", "THREAD_ASSOCIATION", "JOB_START", "JOB_TASK",
            "TASK_STATUS_CHANGE")
    return [(e.kind, e.fields.get("status")) for e in events if e.kind in keep]


def _run(executor: SingleSiteExecutor | Scheduler, tasks: list[Task]) -> list[TaskResult]:
    async def main() -> list[TaskResult]:
        try:
            return list(await asyncio.gather(*(executor.submit(t) for t in tasks)))
        finally:
            await executor.close()

    return asyncio.run(main())


def test_the_single_site_and_the_scheduler_take_the_same_steps() -> None:
    seen: dict[str, list[Event]] = {"single": [], "scheduler": []}
    single_bus, sched_bus = EventBus(), EventBus()
    single_bus.subscribe(seen["single"].append)
    sched_bus.subscribe(seen["scheduler"].append)
    one = _Checking("local")
    many = _Checking("a")
    assert all(r.ok for r in _run(SingleSiteExecutor(one, single_bus), [_task(1)]))
    assert all(r.ok for r in _run(Scheduler([Site("a", many)], sched_bus), [_task(1)]))
    expected = [("JOB_SITE_SELECT", None), ("THREAD_ASSOCIATION", None), ("JOB_START", None),
                ("JOB_TASK", None)] + [("TASK_STATUS_CHANGE", int(s)) for s in (
                    TaskStatus.SUBMITTING, TaskStatus.SUBMITTED, TaskStatus.ACTIVE,
                    TaskStatus.COMPLETED)]
    assert _attempt_events(seen["single"]) == expected
    assert _attempt_events(seen["scheduler"]) == expected
    assert len(one.executed) == len(many.executed) == 1


def test_a_cluster_executes_the_jobs_it_prepared() -> None:
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    provider = _Checking("a")
    sched = Scheduler([Site("a", provider)], bus,
                      clustering=ClusteringSettings(True, min_time=60.0, queue_delay=0.1))
    results = _run(sched, [_task(n, walltime=5.0) for n in range(3)])
    assert all(r.ok and r.site == "a" for r in results)
    assert [j.task.jobid for j in provider.executed] == ["echo-0", "echo-1", "echo-2"]
    taskids = {e["taskid"] for e in events if e.kind == "JOB_TASK"}
    assert len(taskids) == 1                 # one submission for the whole cluster
    starts = [e for e in events if e.kind == "JOB_START"]
    assert [e["tmpdir"] for e in starts] == [j.dir for j in provider.prepared]


def test_panels_reach_providers_through_the_throttle_control_interface() -> None:
    bus = EventBus()
    a, b = _Checking("a"), _Checking("b")
    sched = Scheduler([Site("a", a), Site("b", b)], bus)
    single = SingleSiteExecutor(_Checking("local"), bus)
    assert isinstance(sched, ThrottleControl) and isinstance(single, ThrottleControl)
    assert sched.providers() == [a, b]
    assert [p.name for p in single.providers()] == ["local"]
    assert not isinstance(DryRunExecutor(bus), ThrottleControl)


def test_a_call_reaching_a_stopped_run_is_canceled_not_an_error() -> None:
    """Ctrl-C closes the executor while the engine still hands it calls: those end as
    canceled (status 6), with nothing executed and no traceback in the log."""
    for executor, provider in _closed_executors():
        async def late_call() -> TaskResult:
            await executor.close()
            return await executor.submit(_task(9))

        result = asyncio.run(late_call())
        assert not result.ok and result.failure is FailureKind.CANCELED
        assert "stopped" in result.message and provider.executed == []


def _closed_executors() -> list[tuple[SingleSiteExecutor | Scheduler, _Checking]]:
    one, many = _Checking("local"), _Checking("a")
    return [(SingleSiteExecutor(one, EventBus()), one),
            (Scheduler([Site("a", many)], EventBus()), many)]
