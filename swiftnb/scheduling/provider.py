"""The provider contract: how the scheduler runs a task on one site.

Providers (local, ssh, sim, coasters, and the batch systems to come) implement
:class:`Provider`; the scheduler owns the contract and knows nothing of how a provider
reaches its machines.  As asyncio states its transports, the contract is an abstract
class: what a provider must do is written here once, and a provider that forgets a
method fails when it is made, not in the middle of a run.

An attempt goes through the same steps on every executor (the one attempt path of
``swiftnb/scheduling/attempt.py``), in this order and each once:

1. prepare: ``provider.prepare(task) -> Job``: the provider says where the attempt's
   job runs (its job directory, JOB_START's ``tmpdir=``) and makes what it needs to run
   it (the wrapper's job spec), which travels in the Job, never in the provider.
   Nothing starts and nothing is sent yet.
2. announce: the scheduler writes THREAD_ASSOCIATION, JOB_START and JOB_TASK.
3. hold the submit throttles: hostJobSubmitThrottle, then jobSubmitThrottle, held from
   SUBMITTING until the provider's next status.
4. execute: ``provider.execute(job, attempt) -> TaskResult``: the provider submits the
   job, runs it to its end and reports its statuses (SUBMITTING, SUBMITTED, ACTIVE,
   COMPLETED or FAILED) to the attempt.  A site that refuses the job raises
   :class:`ProviderError` (its kind typed); an app that fails is a result, not an
   exception.  Cancelling ``execute`` (asyncio.CancelledError) cancels the job: the
   provider kills what it started, in the batch system too, then lets the cancellation
   go on.
5. finish: the scheduler reports the last status if the provider did not, gives the
   throttles back and moves the site's score.

Around these, ``start`` before the site's first job and ``shutdown`` at the end of the
run; ``state`` whenever a panel asks.

A provider reports an attempt's progress to a :class:`StatusReporter` with CoG status
codes, so that every provider produces the same TASK_STATUS_CHANGE stream, and it holds
the run's file throttles (fileTransfersThrottle, fileOperationsThrottle) through the
same object while it moves files.  How an attempt ended is a typed
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
from swiftnb.errors import SwiftnbError
from swiftnb.events import TaskStatus
from swiftnb.remote.wrapper import JobSpec, job_dir

__all__ = ["Provider", "ProviderError", "StatusReporter", "RecordingReporter", "ProviderState",
           "BlockState", "Job", "swift_job_dir"]


class ProviderError(SwiftnbError):
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
        return contextlib.nullcontext()

    def file_operation(self) -> AbstractAsyncContextManager[None]:
        return contextlib.nullcontext()


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


@dataclass(frozen=True, slots=True)
class Job:
    """One attempt of a task as its provider prepared it (:meth:`Provider.prepare`).

    ``task`` is the attempt's task, filled in from the site's app definitions; ``dir`` its
    job directory relative to the site work directory (JOB_START's ``tmpdir=``); ``spec``
    the wrapper's job spec where the provider runs the task through the wrapper and made
    it to know ``dir`` (made once: ``execute`` runs what was announced).
    """

    task: Task
    dir: str
    spec: JobSpec | None = None


class Provider(abc.ABC):
    """Runs tasks on one site, through the steps of the module docstring.

    ``start`` is called once before the site's first job (and may be called again after
    ``shutdown``); ``prepare`` makes each attempt's :class:`Job`, which ``execute`` then
    runs to its end, reporting through the attempt, and which it must kill when it is
    cancelled (asyncio.CancelledError); ``shutdown`` releases everything the site holds
    (processes, blocks, connections, and the site's run directory unless keepSiteDir).
    A job is executed at most once, and only by the provider that prepared it.
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
    def prepare(self, task: Task) -> Job:
        """Step 1 (prepare): the attempt's job (its directory, and what the provider needs
        to run it), made before it is announced; ``swift_job_dir`` gives Swift's directory
        layout.  Nothing runs yet."""

    @abc.abstractmethod
    async def execute(self, job: Job, attempt: StatusReporter) -> TaskResult:
        """Step 4 (execute): run the job this provider prepared; its result says how it
        ended."""

    @abc.abstractmethod
    async def shutdown(self) -> None:
        """Release everything the site holds."""

    @abc.abstractmethod
    def state(self) -> ProviderState:
        """A snapshot for people and panels."""

    def allow_parallel(self, n: int) -> None:
        """The site may now run ``n`` tasks at once (a throttle moved, or its score grew
        its limit).  A provider that sized something for fewer (the slots of the worker
        on an SSH host) grows it; the default has nothing to grow."""

    async def execute_cluster(self, jobs: list[Job], attempt: StatusReporter) -> list[TaskResult]:
        """Step 4 for a cluster of short jobs run as one (clustering.enabled), where
        ``runs_clusters`` says the provider can; otherwise the scheduler runs the members
        one after another through :meth:`execute`."""
        raise NotImplementedError(f"provider of site {self.name} does not run clusters")


def swift_job_dir(site_run: str, jobid: str, attempt: int = 0) -> str:
    """Swift's job directory of an attempt, relative to the site work directory
    (``SCRIPT-RUNID/jobs/X/JOBID``).

    Retries get ``JOBID-ATTEMPT`` so that every attempt has its own workspace (Guide 5.1).
    """
    return job_dir(site_run, jobid, attempt)  # the wrapper's layout, defined once there


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
