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
