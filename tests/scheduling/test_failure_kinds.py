"""A failure's kind, not its text, decides scores and retries; providers are found by
their entry points, and a missing dependency is named."""

from __future__ import annotations

import asyncio
import importlib.metadata
import sys

import pytest

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus
from swiftnb.scheduling.provider import Job, Provider, ProviderState, StatusReporter, swift_job_dir
from swiftnb.scheduling.scheduler import Scheduler, SchedulerError
from swiftnb.scheduling.sites import ScoreFactors, Site


class _Failing(Provider):
    """Ends every attempt with the result it was given (a real provider's shape)."""

    def __init__(self, name: str, result: TaskResult) -> None:
        self.name = name
        self.result = result

    async def start(self) -> None:
        pass

    async def shutdown(self) -> None:
        pass

    def prepare(self, task: Task) -> Job:
        return Job(task, swift_job_dir("run", task.jobid, task.attempt))

    def state(self) -> ProviderState:
        return ProviderState(site=self.name, type="failing")

    async def execute(self, job: Job, attempt: StatusReporter) -> TaskResult:
        attempt.status(1)
        return self.result


def _score_after_one(result: TaskResult) -> float:
    site = Site("s", _Failing("s", result), max_parallel_tasks=None, initial_parallel_tasks=None)
    site.score = 50.0  # far above Swift's floor of -10, so no penalty is clipped
    sched = Scheduler([site], EventBus())

    async def main() -> None:
        await sched.submit(Task(jobid="t-1", tr="t", args=[], base_dir=".", run_dir="run"))
        await sched.close()

    asyncio.run(main())
    return site.score


@pytest.mark.parametrize("kind, extra", [
    (FailureKind.APP_EXIT, 0.0),
    (FailureKind.CONNECTION_LOST, ScoreFactors().connection_refused),
    (FailureKind.SUBMIT_REFUSED, ScoreFactors().connection_refused),
    (FailureKind.TIMEOUT, ScoreFactors().timeout),
])
def test_scores_follow_the_kind_of_failure(kind, extra):
    baseline = _score_after_one(TaskResult(ok=False, message="x", failure=FailureKind.APP_EXIT))
    # the text says "connection refused" and "timeout" for every kind: it must not matter
    text = "Connection refused ... timeout"
    assert _score_after_one(TaskResult(ok=False, message=text, failure=kind)) == \
        pytest.approx(baseline - extra)


def test_retryable_follows_the_kind():
    assert TaskResult(ok=False, failure=FailureKind.CONNECTION_LOST).retryable
    assert not TaskResult(ok=False, failure=FailureKind.NOT_EXECUTABLE).retryable
    assert not TaskResult.cancel().retryable and TaskResult.cancel().canceled
    assert TaskResult(ok=False).failure is FailureKind.APP_EXIT  # a failure has a kind
    assert not TaskResult(ok=True).retryable and TaskResult(ok=True).failure is None


def test_a_provider_is_found_by_its_entry_point_and_a_missing_dependency_is_named(
        tmp_path, monkeypatch):
    from swiftnb.scheduling import build

    (tmp_path / "needs_dep_provider.py").write_text(
        "import swiftnb_no_such_package_xyz\n\ndef make_provider(site, ctx):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    point = importlib.metadata.EntryPoint(
        name="needsdep", value="needs_dep_provider:make_provider", group=build.ENTRY_POINT_GROUP)
    real = importlib.metadata.entry_points

    def entry_points(**kw):
        found = list(real(**kw))
        return found + [point] if kw.get("group") == build.ENTRY_POINT_GROUP else found

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    assert build.provider_factory("local").__module__ == "swiftnb.execution.local"
    with pytest.raises(SchedulerError, match=r"needs the Python package "
                       r"swiftnb_no_such_package_xyz, which is not installed"):
        build.provider_factory("needsdep")
    with pytest.raises(SchedulerError, match=r'"nosuchtype" has no provider .*available: .*ssh'):
        build.provider_factory("nosuchtype")
    sys.modules.pop("needs_dep_provider", None)


def test_the_ssh_session_limiter_backs_off_and_recovers():
    from swiftnb.execution.ssh import SessionRateLimiter

    limiter = SessionRateLimiter()
    assert limiter.rate == 6.0  # Swift's ssh provider started at 6 a second
    limiter.failed()
    limiter.failed()
    assert limiter.rate == 1.5
    for _ in range(40):
        limiter.succeeded()
    assert limiter.rate == 6.0  # back to the start, never above it
    for _ in range(10):
        limiter.failed()
    assert limiter.rate == 0.5  # the floor


def test_swiftnbs_own_types_are_found_without_reading_installed_packages(tmp_path):
    """The built-in types need no entry-point scan (a tenth of every start) and no
    installed metadata: a source checkout on PYTHONPATH runs them too."""
    import os
    import subprocess

    from swiftnb.scheduling import build

    probe = ("import sys\nfrom swiftnb.scheduling.build import BUILT_IN, provider_factory\n"
             "made = [provider_factory(t).__module__ for t in sorted(BUILT_IN)]\n"
             "print(len(made), 'importlib.metadata' in sys.modules)\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(build.__file__)))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(len(build.BUILT_IN)), "False"]
    assert {"local", "ssh", "coaster", "slurm", "sge", "pbs"} <= set(build.BUILT_IN)
