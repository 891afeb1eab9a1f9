"""The per-call paths made cheaper for large runs (issue 30): job ids, calls that run
nothing (``-dryrun``, ``-resume``) ending without a coroutine each, and retries done
in the call's own coroutine."""

from __future__ import annotations

import asyncio
import itertools

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.engine.taskbuild import TaskBuilding

from engine_support import RecordingRestartLog

DIGITS = "0123456789abcdefghijklmnopqrstuvxyz"  # Swift's base 35: no "w"


def _reference_id(tr: str, counter: int) -> str:
    """A job id as Swift's form has it: the app's name, then eight base-35 digits of
    the scattered counter, least significant first."""
    n = (counter * 7919) % 35**8
    digits = ""
    for _ in range(8):
        n, digit = divmod(n, 35)
        digits += DIGITS[digit]
    name = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in tr.rsplit("/", 1)[-1])
    return f"{name}-{digits}"


class _Ids(TaskBuilding):
    def __init__(self) -> None:
        self._uid = itertools.count(0)


def test_job_ids_are_swifts_form_and_never_repeat() -> None:
    ids = _Ids()
    apps = ["echo", "/usr/bin/my.app", "a b"]
    made = [(apps[i % 3], ids._jobid(apps[i % 3])) for i in range(50_000)]
    assert [jobid for _, jobid in made[:3]] == ["echo-00000000", "my_app-9g600000",
                                                 "a_b-ixc00000"]
    assert all(jobid == _reference_id(tr, i) for i, (tr, jobid) in enumerate(made))
    assert len({jobid.split("-")[-1] for _, jobid in made}) == len(made)


def _tasks_seen_at(kind: str, seen: list[int]):
    """A subscriber noting how many asyncio tasks exist each time ``kind`` is emitted."""
    def note(event) -> None:
        if event.kind == kind:
            seen.append(len(asyncio.all_tasks()))
    return note


BAG = """type file;
app (file o) echo (int i) { echo i stdout=@filename(o); }
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:300] { f[i] = echo(i); }
"""


class _NeverCalled:
    """A fake executor for runs that must submit nothing."""

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    async def submit(self, task: Task) -> TaskResult:
        self.tasks.append(task)
        return TaskResult(ok=False, message="submitted")

    def app_executable(self, tr: str) -> str | None:
        return tr

    async def close(self) -> None:
        return None


def test_a_dry_run_submits_nothing_and_ends_every_call(swift, tmp_path) -> None:
    ex = _NeverCalled()
    r = swift(BAG, executor=ex, dry_run=True)
    assert r.outcome.ok, r.outcome.errors
    kinds = [e.kind for e in r.events]
    assert kinds.count("JOB_INIT") == 300 and ex.tasks == []
    out = tmp_path / "out"
    assert not out.exists() or not any(out.iterdir())
    assert r.run.active == 0 and not r.run.tasks


def test_calls_end_at_once_without_a_task_each(swift, tmp_path, monkeypatch) -> None:
    """Counted while the run goes: at every JOB_INIT of a dry run, the event loop holds
    the run's own task only (before, one task per call was pending)."""
    from swiftnb import events as E

    seen: list[int] = []
    real_init = E.EventBus.__init__

    def with_counter(self, *args, **kwargs) -> None:
        real_init(self, *args, **kwargs)
        self.subscribe(_tasks_seen_at("JOB_INIT", seen))

    monkeypatch.setattr(E.EventBus, "__init__", with_counter)
    r = swift(BAG, executor=_NeverCalled(), dry_run=True)
    assert r.outcome.ok, r.outcome.errors
    assert len(seen) == 300 and max(seen) <= 2


def test_resumed_calls_are_not_submitted(swift, tmp_path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    done = set()
    for i in range(1, 301):
        (out / f"f{i:04d}.txt").write_text(f"{i}\n")
        done.add(f"out/f{i:04d}.txt")
    ex = _NeverCalled()
    r = swift(BAG, executor=ex, restart=RecordingRestartLog(done))
    assert r.outcome.ok, r.outcome.errors
    kinds = [e.kind for e in r.events]
    assert kinds.count("JOB_RESTARTED") == 300 and ex.tasks == []


class _FailsThenWorks:
    """A fake executor: fails each call's first ``failures`` attempts with ``kind``."""

    def __init__(self, failures: int, kind: FailureKind) -> None:
        self.failures = failures
        self.kind = kind
        self.tasks: list[Task] = []

    async def submit(self, task: Task) -> TaskResult:
        self.tasks.append(task)
        if task.attempt < self.failures:
            return TaskResult(ok=False, message=f"attempt {task.attempt}", failure=self.kind)
        return TaskResult(ok=True, exit_code=0)

    def app_executable(self, tr: str) -> str | None:
        return tr

    async def close(self) -> None:
        return None


ONE = 'type file;\napp (file o) g() { echo "x" stdout=@o; }\nfile o <"o.out">;\no = g();\n'


def test_retries_number_their_attempts_and_stop_when_none_would_differ(swift) -> None:
    ex = _FailsThenWorks(2, FailureKind.APP_EXIT)
    r = swift(ONE, executor=ex, execution_retries=3)
    assert r.outcome.ok, r.outcome.errors
    assert [t.attempt for t in ex.tasks] == [0, 1, 2]
    assert [e.get("message") for e in r.events if e.kind == "APPLICATION_EXCEPTION"] == [
        "attempt 0", "attempt 1"]
    ex = _FailsThenWorks(5, FailureKind.APP_EXIT)
    r = swift(ONE, executor=ex, execution_retries=2)
    assert not r.outcome.ok and [t.attempt for t in ex.tasks] == [0, 1, 2]
    assert [e.kind for e in r.events].count("APPLICATION_EXCEPTION") == 3
    ex = _FailsThenWorks(5, FailureKind.NOT_EXECUTABLE)
    r = swift(ONE, executor=ex, execution_retries=3)
    assert not r.outcome.ok and [t.attempt for t in ex.tasks] == [0]
    assert [e.kind for e in r.events].count("APPLICATION_EXCEPTION") == 1
