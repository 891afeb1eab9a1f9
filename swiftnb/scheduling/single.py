"""The simplest scheduler: every task goes to one provider, at most ``max_parallel`` at once.

It implements the engine's Executor interface (``submit``/``close``) and emits the
per-attempt scheduling events of a Swift 0.96 run on one site, in Swift's order::

    JOB_SITE_SELECT jobid=J
    THREAD_ASSOCIATION jobid=J thread=T host=local replicationGroup=null
    JOB_START jobid=J tr=TR arguments=[a, b] tmpdir=SCRIPT-RUNID/jobs/X/J host=local
    JOB_TASK jobid=J taskid=urn:... exec=... dir=... args=...
    TASK_STATUS_CHANGE taskid=urn:... status=8 / 1 / 2 / 7 (or 5 + message)

The multi-site scheduler (sites, scores, throttles, replication) replaces it behind the
same interface.  One ``submit`` is one attempt: the engine counts attempts
(``executionRetries``) and sets ``Task.attempt``.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from typing import Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.scheduling.provider import Provider, ProviderError, ProviderState, StatusReporter
from swiftnb.scheduling.throttles import Throttle

__all__ = ["SingleSiteExecutor", "DryRunExecutor"]


class _Report(StatusReporter):
    """One attempt's statuses, straight to TASK_STATUS_CHANGE."""

    __slots__ = ("executor", "taskid")

    def __init__(self, executor: "SingleSiteExecutor", taskid: str) -> None:
        self.executor = executor
        self.taskid = taskid

    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        payload: dict[str, Any] = {"taskid": self.taskid, "status": int(status)}
        if workerid is not None:
            payload["workerid"] = workerid
        if message is not None and int(status) == TaskStatus.FAILED:
            payload["message"] = message
        self.executor.bus.emit("TASK_STATUS_CHANGE", payload)

    def file_transfer(self):
        return self.executor.file_transfers.slot()

    def file_operation(self):
        return self.executor.file_operations.slot()


class SingleSiteExecutor:
    """Executor over a single provider with a concurrency limit (maxParallelTasks)."""

    def __init__(
        self,
        provider: Provider,
        bus: EventBus,
        max_parallel: int = 2,
        *,
        file_transfers: float = 4,
        file_operations: float = 8,
        app_lookup: Callable[[str], tuple[str, dict[str, str], float | None] | None] | None = None,
    ) -> None:
        """``app_lookup(tr)`` is the site's app catalogue: (executable, env, maxwalltime
        seconds) or None when the app is not available there (default: any app runs the
        program of its name, Swift's ``app.ALL { executable: "*" }``)."""
        self.provider = provider
        self.app_lookup = app_lookup
        self.bus = bus
        self.max_parallel = max(1, int(max_parallel))
        self._slots = asyncio.Semaphore(self.max_parallel)
        self.file_transfers = Throttle("fileTransfersThrottle", file_transfers)
        self.file_operations = Throttle("fileOperationsThrottle", file_operations)
        self._started = False
        self._start_lock: asyncio.Lock | None = None
        self._ids = itertools.count(1)
        self._epoch_ms = int(time.time() * 1000)
        self.closed = False

    async def _ensure_started(self) -> None:
        if self._started:
            return
        if self._start_lock is None:
            self._start_lock = asyncio.Lock()
        async with self._start_lock:
            if not self._started:
                await self.provider.start()
                self._started = True

    async def submit(self, task: Task) -> TaskResult:
        """Run one attempt of a task on the provider; returns when it has ended."""
        if self.closed:
            raise RuntimeError("executor is closed")
        emit = self.bus.emit
        jobid = task.jobid
        emit("JOB_SITE_SELECT", {"jobid": jobid})
        if self.app_lookup is not None and task.executable is None:
            app = self.app_lookup(task.tr)
            if app is None:
                return TaskResult(
                    ok=False, message=f'The application "{task.tr}" is not available on any of the sites',
                    failure=FailureKind.NOT_EXECUTABLE)
            executable, env, walltime = app
            task.executable = executable
            if env:
                task.env = {**env, **task.env}
            if task.maxwalltime is None and walltime is not None:
                task.maxwalltime = float(walltime)
        await self._ensure_started()
        async with self._slots:
            host = self.provider.name
            if self.closed:  # the run stopped while this call waited for a slot
                return TaskResult(ok=False, message="Canceled: the run was stopped", site=host,
                                  failure=FailureKind.CANCELED)
            thread = getattr(task, "thread", None) or "R"
            emit("THREAD_ASSOCIATION", {"jobid": jobid, "thread": thread, "host": host,
                                        "replicationGroup": None})
            tmpdir = self.provider.job_dir(task)
            args = [str(a) for a in task.args]
            emit("JOB_START", {"jobid": jobid, "tr": task.tr, "arguments": args,
                               "tmpdir": tmpdir, "host": host})
            taskid = f"urn:R-{next(self._ids)}-{self._epoch_ms}"
            emit("JOB_TASK", {"jobid": jobid, "taskid": taskid,
                              "exec": task.executable or task.tr, "dir": tmpdir,
                              "args": " ".join(args)})
            try:
                result = await self.provider.execute(task, _Report(self, taskid))
            except ProviderError as exc:
                result = TaskResult(ok=False, message=str(exc), failure=exc.kind)
        if not result.site:
            result.site = host
        return result

    async def close(self) -> None:
        """Shut the provider down (kills what still runs, removes site dirs)."""
        if self.closed:
            return
        self.closed = True
        await self.provider.shutdown()

    def state(self) -> ProviderState:
        return self.provider.state()


class DryRunExecutor:
    """``-dryrun``: the script runs, apps do not (Guide 4.1: "without submitting any jobs").

    Each call is reported as selected and completed at once, without a process or files,
    so a dry run still shows the call graph (``-pgraph``) and the log's job lines.
    """

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self.submitted = 0

    async def submit(self, task: Task) -> TaskResult:
        self.submitted += 1
        self.bus.emit("JOB_SITE_SELECT", {"jobid": task.jobid})
        return TaskResult(ok=True, exit_code=0, site="dryrun")

    async def close(self) -> None:
        return None
