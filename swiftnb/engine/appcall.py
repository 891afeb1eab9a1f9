"""Running an app call: the restart log check, dry runs, the attempts (retries) on the
executor, the call's log events, and handing the result back to the call.

A part of :class:`swiftnb.engine.run.Run` (a mixin): the state it reads is the run's,
declared below.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

from swiftnb.engine import values as V
from swiftnb.engine.memo import CallMemo, MemoDecision
from swiftnb.engine.restart import RestartLog, RestartLogError
from swiftnb.engine.task import Executor, Task, TaskResult

if TYPE_CHECKING:
    from swiftnb.engine.pgraph import PGraph
    from swiftnb.engine.procedures import AppCall
    from swiftnb.events import EventBus

__all__ = ["AppCalls", "attempts"]


async def attempts(submit: Callable[[Task], Awaitable[TaskResult]], task: Task, retries: int,
                   emit: Callable[..., object]) -> TaskResult:
    """Run ``task`` up to ``1 + retries`` times (executionRetries) until it succeeds, is
    canceled or fails in a way no retry would change; the last attempt's result."""
    result = None
    for attempt in range(1 + retries):
        # each attempt is its own Task (executors may keep the one they ran)
        result = await submit(dataclasses.replace(task, attempt=attempt))
        if result.ok or result.canceled:
            break
        emit("APPLICATION_EXCEPTION", {"jobid": task.jobid, "message": result.message})
        if not result.retryable:
            break  # e.g. no executable bit: Swift did not retry, nothing would differ
    assert result is not None
    return result


class AppCalls:
    """The run's app calls: submit and _run_app."""

    bus: EventBus
    executor: Executor
    restart: RestartLog | None
    pgraph: PGraph | None
    dry_run: bool
    retries: int
    aborted: bool
    active: int
    _thread: itertools.count
    #: memoization (engine/memo.py): None when it is off
    memo: CallMemo | None = None

    if TYPE_CHECKING:  # the run's own, used here
        def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
            ...

        def records_lost(self, message: str) -> None:
            ...

        def _error(self, msg: str) -> None:
            ...

        def _engine_bug(self, exc: BaseException, where: str = "") -> None:
            ...

    def submit(self, call: AppCall, task: Task) -> None:
        if self.aborted:
            call.finish(False, "run aborted")
            return
        self.active += 1
        self.spawn(self._run_app(call, task))

    def _record_restart(self, task: Task) -> None:
        """A finished call's outputs into the restart log (for ``-resume``)."""
        if self.restart is not None and task.outputs:
            try:
                self.restart.record(task.outputs)
            except RestartLogError as exc:
                self.records_lost(str(exc))

    async def _run_app(self, call: AppCall, task: Task) -> None:
        emit = self.bus.emit
        info = call.info
        thread = task.thread or f"R-{next(self._thread)}"
        ok = False
        message = ""
        try:
            if self.pgraph is not None:
                self.pgraph.call(info.name, task)
            emit("JOB_INIT", {"jobid": task.jobid, "tr": task.tr})
            if self.restart is not None and task.outputs and self.restart.is_done(task.outputs):
                emit("JOB_RESTARTED", {"jobid": task.jobid})
                ok = True
                return
            if self.dry_run:
                ok = True
                return
            memo = self.memo
            decision: MemoDecision | None = None
            if memo is not None:
                decision = await memo.decide(task)
                if decision.reuse:
                    emit("JOB_CACHED", {"jobid": task.jobid, "tr": task.tr,
                                        "restored": "true" if decision.restored else "false",
                                        "reason": decision.reason})
                    emit("END_SUCCESS", {"thread": thread, "tr": task.tr})
                    # not written to the restart log: the store has it, and a write per
                    # reused call would dominate the re-run of a large unchanged workflow
                    ok = True
                    return
                emit("JOB_NOT_CACHED", {"jobid": task.jobid, "tr": task.tr,
                                        "reason": decision.reason})
                task.digest_outputs = True
            emit("PROCEDURE", {"line": info.proc.pos.line, "thread": thread, "name": info.name},
                 level="DEBUG")
            started = time.time()
            result = await attempts(self.executor.submit, task, self.retries, emit)
            if memo is not None and decision is not None and not result.canceled:
                await memo.remember(task, result, decision, started, time.time())
            emit("JOB_END", {"jobid": task.jobid})
            emit("PROCEDURE_END", {"line": info.proc.pos.line, "thread": thread, "name": info.name},
                 level="DEBUG")
            if result.ok:
                ok = True
                emit("END_SUCCESS", {"thread": thread, "tr": task.tr})
                self._record_restart(task)
            else:
                emit("END_FAILURE", {"thread": thread, "tr": task.tr})
                message = result.message or (
                    f"Exception in {task.tr}:\n    Arguments: [{', '.join(task.args)}]\n"
                    f"Caused by: Application {task.tr} failed with an exit code of "
                    f"{result.exit_code}")
                if not result.canceled:
                    self._error(message)
        except asyncio.CancelledError:
            message = "canceled"
            raise
        except Exception as exc:  # noqa: BLE001 - a bug below must end the run, visibly
            self._engine_bug(exc, f" in the call of {info.name} ({task.source})")
        finally:
            self.active -= 1
            try:
                if not self.aborted or ok:
                    call.finish(ok, message)
                V.drain()
            except Exception as exc:  # noqa: BLE001 - an engine bug must end the run
                self._engine_bug(exc)
