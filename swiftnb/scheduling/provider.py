"""The provider contract: how the scheduler runs a task on one site.

Providers (local, ssh, sim, coasters, and the batch systems to come) implement
:class:`Provider`; the scheduler owns the contract and knows nothing of how a provider
reaches its machines.  As asyncio states its transports, the contract is an abstract
class: what a provider must do is written here once, and a provider that forgets a
method fails when it is made, not in the middle of a run.

A provider reports an attempt's progress to a :class:`StatusReporter` with CoG status
codes, so that every provider produces the same TASK_STATUS_CHANGE stream, and it holds
the run's file throttles (fileTransfersThrottle, fileOperationsThrottle) through the same
object while it moves files.  How an attempt ended is a typed
:class:`~swiftnb.engine.task.TaskResult` whose ``failure`` kind the scores, retries and
messages read.  What people and panels see of a site is a :class:`ProviderState`.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import ClassVar

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import TaskStatus

__all__ = ["Provider", "ProviderError", "StatusReporter", "RecordingReporter", "ProviderState",
           "BlockState", "swift_job_dir"]


class ProviderError(Exception):
    """A site could not take or finish an attempt for a reason of a known kind (its host
    unreachable, its connection lost, its batch system refusing the job).  The message
    is for people: it names the site, the host and what to do."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class StatusReporter(abc.ABC):
    """What a provider tells the scheduler about one attempt while it runs it."""

    @abc.abstractmethod
    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        """The attempt reached ``status`` (a CoG code; ``message`` with FAILED,
        ``workerid`` where a coaster worker runs it)."""

    @abc.abstractmethod
    def file_transfer(self) -> AbstractAsyncContextManager[None]:
        """Hold one of the run's fileTransfersThrottle slots while moving a file."""

    @abc.abstractmethod
    def file_operation(self) -> AbstractAsyncContextManager[None]:
        """Hold one of the run's fileOperationsThrottle slots during a remote mkdir,
        rm, ls or the like."""


class RecordingReporter(StatusReporter):
    """A reporter that keeps what it is told, with no throttles: for running a provider
    on its own (a test, a notebook trying a provider out)."""

    def __init__(self) -> None:
        self.statuses: list[tuple[int, str | None, str | None]] = []

    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        self.statuses.append((int(status), message, workerid))

    @property
    def codes(self) -> list[int]:
        return [code for code, _message, _worker in self.statuses]

    def file_transfer(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # type: ignore[return-value]

    def file_operation(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class BlockState:
    """One coaster block as a panel shows it."""

    id: str
    state: str
    workers: int = 0
    running: int = 0
    time_left: float | None = None   # seconds of walltime left, while it runs


@dataclass(frozen=True, slots=True)
class ProviderState:
    """A snapshot of a site's provider for people and panels.

    The counters are the provider's own (attempts it was handed, and how they ended);
    ``connection`` says how a remote site's connection is ("connected", "reconnecting",
    "down: ...") and is None for this machine; ``blocks`` are coaster blocks; ``slots``
    and ``free_slots`` a simulated site's.
    """

    site: str
    type: str
    submitted: int = 0
    queued: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    canceled: int = 0
    connection: str | None = None
    slots: int | None = None
    free_slots: int | None = None
    blocks: tuple[BlockState, ...] = ()
    detail: Mapping[str, object] = field(default_factory=dict)  # for people only


class Provider(abc.ABC):
    """Runs tasks on one site.

    ``start`` is called once before the site's first task (and may be called again after
    ``shutdown``); ``execute`` runs one attempt to its end, reporting through the
    reporter, and must kill what it started when it is cancelled
    (asyncio.CancelledError); ``shutdown`` releases everything the site holds
    (processes, blocks, connections, and the site's run directory unless keepSiteDir).
    """

    #: the site's name (the ``site.NAME`` of swift.conf)
    name: str
    #: whether :meth:`execute_cluster` runs a cluster of tasks as one job
    runs_clusters: ClassVar[bool] = False
    #: whether the provider reads (and checks) the job keys of apps' ``options``
    #: (``jobQueue``, ``count``, ``jobType``, ``mpi.*``, LRM options): a batch site runs
    #: each task as a job of its own; on other sites these keys would be dropped, so
    #: the builder refuses them there
    takes_app_job_options: ClassVar[bool] = False

    @abc.abstractmethod
    async def start(self) -> None:
        """Prepare the site: connections, work directory, services."""

    @abc.abstractmethod
    async def execute(self, task: Task, attempt: StatusReporter) -> TaskResult:
        """Run one attempt of ``task``; its result says how it ended."""

    @abc.abstractmethod
    async def shutdown(self) -> None:
        """Release everything the site holds."""

    @abc.abstractmethod
    def job_dir(self, task: Task) -> str:
        """The attempt's job directory relative to the site work directory (JOB_START's
        ``tmpdir=``): ``SCRIPT-RUNID/jobs/X/JOBID`` in Swift's layout."""

    @abc.abstractmethod
    def state(self) -> ProviderState:
        """A snapshot for people and panels."""

    def allow_parallel(self, n: int) -> None:
        """The site may now run ``n`` tasks at once (a throttle moved, or its score grew
        its limit).  A provider that sized something for fewer (the slots of the worker
        on an SSH host) grows it; the default has nothing to grow."""

    async def execute_cluster(self, tasks: list[Task], attempt: StatusReporter) -> list[TaskResult]:
        """Run a cluster of short tasks as one job (clustering.enabled), where
        ``runs_clusters`` says the provider can; otherwise the scheduler runs the members
        one after another through :meth:`execute`."""
        raise NotImplementedError(f"provider of site {self.name} does not run clusters")


def swift_job_dir(site_run: str, jobid: str, attempt: int = 0) -> str:
    """Swift's job directory of an attempt, relative to the site work directory.

    Retries get ``JOBID-ATTEMPT`` so that every attempt has its own workspace (Guide 5.1).
    """
    name = jobid if not attempt else f"{jobid}-{attempt}"
    return f"{site_run}/jobs/{jobid[:1] or '_'}/{name}"


#: app option prefixes that providers of other Swift distributions read and none of this
#: build's does, with what they did there: a warning names them, the app runs as it is
FOREIGN_APP_OPTIONS = {
    "docker.": "Parallel Works' Swift ran the app in that container image; here the app "
               "runs on the site's machine as it is",
}


def foreign_option(key: str) -> str | None:
    """Why app option ``key`` is ignored (another distribution's provider key), or None."""
    for prefix, why in FOREIGN_APP_OPTIONS.items():
        if key.startswith(prefix):
            return f"this build of swiftnb ignores it ({why})"
    return None
