"""The provider interface: how the scheduler runs a task on one site.

Providers (local, ssh, batch, sim, coasters) implement it; the scheduler owns it and
knows nothing of how a provider reaches its machines.  A provider reports progress
through ``report`` with CoG status codes, so that every provider produces the same
TASK_STATUS_CHANGE stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from swiftnb.engine.task import Task, TaskResult

#: report(status, **fields): e.g. report(TaskStatus.ACTIVE, workerid="0000-01:000001")
StatusReporter = Callable[..., None]


class Provider(Protocol):
    """Runs tasks on one site."""

    name: str

    async def start(self) -> None:
        """Prepare the site (work directory, services); called once before the first task."""

    async def execute(self, task: Task, report: StatusReporter) -> TaskResult:
        """Run one task to its end.  Cancellation (asyncio.CancelledError) must kill it."""

    async def shutdown(self) -> None:
        """Release everything the site holds (processes, blocks, connections)."""

    def state(self) -> dict[str, Any]:
        """A snapshot for people and panels (queued, running, blocks...)."""

    # Optional: ``job_dir(task) -> str``, the task's job directory relative to the site
    # work directory (JOB_START's ``tmpdir=``), for providers with a layout of their own.


def job_dir_of(provider: Any, task: Task, site_run: str | None = None) -> str:
    """Where ``task`` runs on ``provider``, as Swift's ``SCRIPT-RUNID/jobs/X/JOBID``.

    The provider's own answer when it has one (it alone knows its layout: retries get
    their own directory), else Swift's layout.
    """
    job_dir = getattr(provider, "job_dir", None)
    if job_dir is not None:
        return job_dir(task)
    prefix = f"{site_run}/" if site_run else ""
    return f"{prefix}jobs/{task.jobid[:1]}/{task.jobid}"
