"""Running an app call: the restart log check, dry runs, the attempts (retries) on the
executor, the call's log events, and handing the result back to the call.

A part of :class:`swiftnb.engine.run.Run` (a mixin): the state it reads is the run's,
declared below.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import itertools
import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from swiftnb.engine import values as V
from swiftnb.engine.callgate import CallGate
from swiftnb.engine.memo import CallMemo, MemoDecision
from swiftnb.engine.restart import RestartLog, RestartLogError
from swiftnb.engine.task import Executor, Task

if TYPE_CHECKING:
    from swiftnb.engine.pgraph import PGraph
    from swiftnb.engine.procedures import AppCall
    from swiftnb.events import EventBus

__all__ = ["AppCalls"]


class AppCalls:
    """The run's app calls: submit, and _run_app for a call that runs (or is memoized)."""

    bus: EventBus
    executor: Executor
    restart: RestartLog | None
    pgraph: PGraph | None
    dry_run: bool
    retries: int
    aborted: bool
    active: int
    gate: CallGate
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
        if self._ends_at_once(call, task):
            return
        self.active += 1
        self.spawn(self._run_app(call, task))

    def _ends_at_once(self, call: AppCall, task: Task) -> bool:
        """A call that runs nothing (``-dryrun``, ``-resume`` finds its outputs, or the
        memo reuses it without waiting: :meth:`CallMemo.decide_now`) ends from the
        engine's queue, without a coroutine of its own: a dry run or an unchanged
        re-run of 100,000 calls would otherwise hold 100,000 pending asyncio tasks."""
        restarted = bool(self.restart is not None and task.outputs
                         and self.restart.is_done(task.outputs))
        reused: MemoDecision | None = None
        if not restarted and not self.dry_run:
            memo = self.memo
            if memo is None:
                return False
            reused = memo.decide_now(task)
            if reused is None:
                return False
        if self.pgraph is not None:
            self.pgraph.call(call.info.name, task)
        emit = self.bus.emit
        emit("JOB_INIT", {"jobid": task.jobid, "tr": task.tr})
        if restarted:
            emit("JOB_RESTARTED", {"jobid": task.jobid})
        elif reused is not None:
            self._reused(task, reused, task.thread or f"R-{next(self._thread)}")
        V.schedule(functools.partial(call.finish, True))
        return True

    def _reused(self, task: Task, decision: MemoDecision, thread: str) -> None:
        """The events of a call the memo reuses.  Not written to the restart log: the
        store has it, and a write per reused call would dominate the re-run of a large
        unchanged workflow."""
        emit = self.bus.emit
        emit("JOB_CACHED", {"jobid": task.jobid, "tr": task.tr,
                            "restored": "true" if decision.restored else "false",
                            "reason": decision.reason})
        emit("END_SUCCESS", {"thread": thread, "tr": task.tr})

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
            memo = self.memo
            decision: MemoDecision | None = None
            if memo is not None:
                decision = await memo.decide(task)
                if decision.reuse:
                    self._reused(task, decision, thread)
                    ok = True
                    return
                emit("JOB_NOT_CACHED", {"jobid": task.jobid, "tr": task.tr,
                                        "reason": decision.reason})
                task.digest_outputs = True
            emit("PROCEDURE", {"line": info.proc.pos.line, "thread": thread, "name": info.name},
                 level="DEBUG")
            started = time.time()
            # up to 1 + executionRetries attempts, here rather than in a coroutine of
            # their own: each frame is held by every call waiting for a slot
            submit = self.executor.submit
            result = await submit(task)
            attempt = 0
            while not result.ok and not result.canceled:
                emit("APPLICATION_EXCEPTION", {"jobid": task.jobid, "message": result.message})
                if attempt == self.retries or not result.retryable:
                    break  # not retryable, e.g. no executable bit: nothing would differ
                attempt += 1
                # each retry is its own Task (executors may keep the one they ran)
                result = await submit(dataclasses.replace(task, attempt=attempt))
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
                if self.gate.holding:
                    self.gate.call_ended(self.active)
                if not self.aborted or ok:
                    call.finish(ok, message)
                V.drain()
            except Exception as exc:  # noqa: BLE001 - an engine bug must end the run
                self._engine_bug(exc)
