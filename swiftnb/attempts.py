"""The failed attempts of a run, recorded by the run itself.

Why: people watching a run (the dashboard's failures panel, a notebook cell) want each
failed app attempt with everything needed to understand and retry it: the
:class:`~swiftnb.engine.task.Task` (argv, source position, attempt), the
:class:`~swiftnb.engine.task.TaskResult` (exit code, stderr tail, site) and when it
happened.  The event stream only carries what Swift logged, so the runner wraps the
executor it builds in a :class:`RecordingExecutor`, which hands every failed attempt to a
:class:`FailureLog`.  Observers read ``log.items`` and ``subscribe`` for new ones; nobody
needs to patch the executor, and any number of observers can come and go at any time.

Cost on the hot path: one extra ``await`` per submit and, for failed or retried attempts
only, a small record.
"""

from __future__ import annotations

import dataclasses
import time as _time
from collections.abc import Callable, Iterator

from swiftnb.engine.task import Executor, Task, TaskResult

__all__ = ["Failure", "FailureLog", "RecordingExecutor"]



@dataclasses.dataclass(eq=False)
class Failure:
    """One failed attempt of an app call (never a canceled one).

    ``id`` numbers the failures of a run from 1 in the order they happened; ``time`` is on
    the clock of the run's event bus (wall clock, or virtual time on sim sites), like the
    events'; ``source`` is the Swift position of the call (``script.swift:12:5``).
    ``retries`` are the results of :meth:`swiftnb.runner.RunHandle.retry`, oldest first.
    """

    id: int
    task: Task
    result: TaskResult
    site: str
    time: float
    source: str
    retries: list[TaskResult] = dataclasses.field(default_factory=list)

    @property
    def jobid(self) -> str:
        return self.task.jobid

    @property
    def argv(self) -> list[str]:
        """The command line as run (executable, then arguments)."""
        return [self.task.executable or self.task.tr, *self.task.args]

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    @property
    def exit_code(self) -> int | None:
        """The app's exit code (None when it did not exit: never started, killed by the
        site, lost with its connection)."""
        return self.result.exit_code

    @property
    def message(self) -> str:
        return (self.result.message or "").strip()

    @property
    def stderr_tail(self) -> str:
        return self.result.stderr_tail or ""

    def __repr__(self) -> str:
        return (f"<Failure {self.id}: {self.command!r} exit code {self.exit_code} "
                f"on {self.site or '?'} at {self.source or '?'}>")


class FailureLog:
    """The failures of one run, in order, and the callbacks told of each new one."""

    def __init__(self, clock: Callable[[], float] = _time.time) -> None:
        self.clock = clock
        self.items: list[Failure] = []
        self._listeners: list[Callable[[Failure], None]] = []
        self._attempts: dict[str, int] = {}   # jobid -> highest attempt number seen

    def record(self, task: Task, result: TaskResult) -> Failure:
        failure = Failure(id=len(self.items) + 1, task=task, result=result,
                          site=result.site or "", time=self.clock(),
                          source=task.source)
        self.items.append(failure)
        self.saw_attempt(task)
        for callback in list(self._listeners):
            try:
                callback(failure)
            except Exception:  # noqa: BLE001 - an observer never breaks the run
                pass
        return failure

    def saw_attempt(self, task: Task) -> None:
        attempt = task.attempt
        if attempt > self._attempts.get(task.jobid, -1):
            self._attempts[task.jobid] = attempt

    def next_attempt(self, jobid: str) -> int:
        """The attempt number a new try of ``jobid`` gets (one more than any so far)."""
        return self._attempts.get(jobid, -1) + 1

    def subscribe(self, callback: Callable[[Failure], None]) -> Callable[[], None]:
        """Call ``callback(failure)`` for each new failure; returns the unsubscribe."""
        self._listeners.append(callback)

        def unsubscribe() -> None:
            try:
                self._listeners.remove(callback)
            except ValueError:
                pass

        return unsubscribe

    def get(self, failure_id: int) -> Failure:
        if not 1 <= failure_id <= len(self.items):
            raise KeyError(f"no failure {failure_id} (this run has {len(self.items)})")
        return self.items[failure_id - 1]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[Failure]:
        return iter(list(self.items))


class RecordingExecutor:
    """An Executor that submits through ``inner`` and records failed attempts in ``log``.

    Canceled attempts (the run was stopped, a replica lost the race) are not failures.
    """

    def __init__(self, inner: Executor, log: FailureLog) -> None:
        self.inner = inner
        self.log = log

    async def submit(self, task: Task) -> TaskResult:
        result = await self.inner.submit(task)
        if not result.ok and not result.canceled:
            self.log.record(task, result)
        elif task.attempt:
            self.log.saw_attempt(task)
        return result

    def app_executable(self, tr: str) -> str | None:
        """The inner executor's answer (the recording changes no app)."""
        return self.inner.app_executable(tr)

    def capacity(self) -> float:
        return self.inner.capacity()

    async def close(self) -> None:
        await self.inner.close()
