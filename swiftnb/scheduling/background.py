"""Background tasks of providers and coaster services (a poll loop, a reader, a block's
submission) that are never dropped: each is held until it ends (asyncio keeps only a
weak reference to a task, so one nobody holds can vanish mid-flight), and an exception
it raises goes to the failure path its owner names (the jobs it served fail, a block
fails) instead of asyncio's "Task exception was never retrieved" at garbage collection,
with the run hanging or ending 0."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

#: what an owner does with the exception that ended one of its background tasks
FailureHandler = Callable[[BaseException], None]


def start_background(coro: Coroutine[Any, Any, Any], held: set[asyncio.Task[Any]],
                     on_failure: FailureHandler) -> asyncio.Task[Any]:
    """Run ``coro`` as a task kept in ``held`` until it ends; an exception it raises (not
    its cancellation) is handed to ``on_failure``."""
    task = asyncio.get_running_loop().create_task(coro)
    held.add(task)
    task.add_done_callback(lambda t: _ended(t, held, on_failure))
    return task


def _ended(task: asyncio.Task[Any], held: set[asyncio.Task[Any]],
           on_failure: FailureHandler) -> None:
    held.discard(task)
    if task.cancelled():
        return
    exc = task.exception()
    if exc is not None:
        on_failure(exc)


def internal_error(what: str, exc: BaseException) -> str:
    """The message of a background task's bug, for people: what it was doing and the
    exception (its traceback is not theirs)."""
    return f"swiftnb internal error {what}: {type(exc).__name__}: {exc}"
