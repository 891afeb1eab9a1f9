"""Helpers for coaster integration tests: a real local coaster site on real processes."""

from __future__ import annotations

import asyncio
import itertools
from collections import defaultdict
from typing import Any

import pytest

from swiftnb.coasters.provider import CoasterProvider
from swiftnb.engine.task import Task
from swiftnb.events import Event, EventBus
from swiftnb.scheduling.provider import RecordingReporter

_urn = itertools.count(1)


class Site:
    """A CoasterProvider plus what a scheduler would do around it: JOB_TASK, taskids,
    and turning ``report`` calls into TASK_STATUS_CHANGE events."""

    def __init__(self, tmp_path, options: dict[str, Any], **kwargs: Any) -> None:
        self.tmp = tmp_path
        self.bus = EventBus()
        self.events: list[Event] = []
        self.bus.subscribe(self.events.append)
        self.provider = CoasterProvider("coast", options, bus=self.bus,
                                        log_dir=str(tmp_path / "workerlogs"), **kwargs)
        self.statuses: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)

    def task(self, i: int, tr: str = "echo", args: list[str] | None = None, **kw: Any) -> Task:
        return Task(jobid=f"{tr}-{i:05d}", tr=tr, args=args if args is not None else [str(i)],
                    base_dir=str(self.tmp), run_dir=str(self.tmp / "run001"), **kw)

    async def run(self, task: Task):
        taskid = f"urn:R-{next(_urn)}-1"
        self.bus.emit("JOB_INIT", {"jobid": task.jobid, "tr": task.tr})
        self.bus.emit("JOB_START", {"jobid": task.jobid, "tr": task.tr, "host": "coast"})
        self.bus.emit("JOB_TASK", {"jobid": task.jobid, "taskid": taskid})

        statuses, bus = self.statuses[task.jobid], self.bus

        class Report(RecordingReporter):
            def status(self, status, *, message=None, workerid=None):
                fields = {k: v for k, v in (("message", message), ("workerid", workerid)) if v}
                statuses.append((int(status), fields))
                bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": int(status), **fields})

        return await self.provider.execute(self.provider.prepare(task), Report())

    def kinds(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.kind == kind]

    async def wait_for(self, predicate, timeout: float = 20.0, step: float = 0.02) -> None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not predicate():
            if loop.time() > end:
                raise AssertionError("condition not reached in time")
            await asyncio.sleep(step)


@pytest.fixture
def make_site(tmp_path):
    def make(options: dict[str, Any], **kwargs: Any) -> Site:
        return Site(tmp_path, options, **kwargs)

    return make
