"""The typed event stream every part of swiftnb reports through.

Kinds are named after the tags Swift/K 0.96 wrote in its logs (see docs/design.md, "Events"),
so that a live run, the log file we write and a Swift/K log read back later all share one
vocabulary.  An event is a wall-clock (or, on a simulated grid, virtual-clock) time, a kind
and the ``key=value`` fields of its log line, in log order.
"""

from __future__ import annotations

import enum
import time as _time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Event",
    "EventBus",
    "TaskStatus",
    "KINDS",
]


class TaskStatus(enum.IntEnum):
    """CoG task status codes, as TASK_STATUS_CHANGE lines carry them."""

    UNSUBMITTED = 0
    SUBMITTED = 1
    ACTIVE = 2
    SUSPENDED = 3
    RESUMED = 4
    FAILED = 5
    CANCELED = 6
    COMPLETED = 7
    SUBMITTING = 8
    STAGE_IN = 16
    STAGE_OUT = 17


#: Every kind the stream carries.  Free-text log lines travel as kind "MESSAGE" with the
#: text in ``Event.text``; trace output as "TRACE".
KINDS = frozenset(
    {
        # run level
        "RUN_START", "RUN_SUCCESS", "RUN_FAILURE", "CONFIG", "MESSAGE", "TRACE",
        "WARNING", "PROGRESS",
        # procedures and dataflow
        "PROCEDURE", "PROCEDURE_END", "FOREACH_IT_START", "FOREACH_IT_END",
        "SCOPE", "STARTCOMPOUND", "ENDCOMPOUND",
        # application jobs
        "JOB_INIT", "JOB_SITE_SELECT", "THREAD_ASSOCIATION", "JOB_START", "JOB_TASK",
        "TASK_STATUS_CHANGE", "JOB_END", "APPLICATION_EXCEPTION", "JOB_CANCELED",
        "END_SUCCESS", "END_FAILURE", "JOB_RESTARTED",
        # memoization (docs/memoization.md): a call reused, or run and why
        "JOB_CACHED", "JOB_NOT_CACHED",
        # staging (remote sites): each copy while it holds a fileTransfersThrottle slot
        "FILE_STAGE_IN_START", "FILE_STAGE_IN_END", "FILE_STAGE_OUT_START",
        "FILE_STAGE_OUT_END",
        # scheduling
        "CONTACT_SELECTED", "SITE_SET", "THROTTLE", "REPLICA_START", "REPLICA_CANCEL",
        # coasters
        "BLOCK_REQUESTED", "BLOCK_ACTIVE", "BLOCK_SHUTDOWN", "BLOCK_DONE", "BLOCK_FAILED",
        "BLOCK_UTILIZATION", "WORKER_ACTIVE", "WORKER_LOST", "WORKER_SHUTDOWN",
        "PLANNER",
        # something the run waits for, and why (docs/design.md, "Events"): subject=block|
        # site|worker|task, id, site, reason (a short code such as Slurm's PartitionConfig),
        # detail (one sentence for a person); the latest per (subject, id) holds until that
        # subject starts or ends
        "WAITING",
    }
)


@dataclass(slots=True)
class Event:
    """One thing that happened: when, what, and the fields of its log line."""

    time: float
    kind: str
    fields: dict[str, Any] = field(default_factory=dict)
    level: str = "INFO"
    logger: str = "swift"
    text: str | None = None

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


Subscriber = Callable[[Event], None]


class EventBus:
    """Fan-out of events to subscribers, in emission order, on the caller's thread.

    Subscribers must be cheap (docs/design.md): a slow consumer batches on its own.  The clock
    is injectable so that a simulated grid can run the whole stream on virtual time.
    """

    def __init__(self, clock: Callable[[], float] = _time.time) -> None:
        self.clock = clock
        # a tuple replaced on (un)subscribe: emit, once per log line, iterates it as it
        # is, and a subscriber that (un)subscribes while called changes the next emit only
        self._subscribers: tuple[Subscriber, ...] = ()

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns the function that removes it again."""
        self._subscribers = (*self._subscribers, callback)

        def unsubscribe() -> None:
            subscribers = list(self._subscribers)
            try:
                subscribers.remove(callback)
            except ValueError:
                return
            self._subscribers = tuple(subscribers)

        return unsubscribe

    def emit(
        self,
        kind: str,
        fields: dict[str, Any] | None = None,
        *,
        level: str = "INFO",
        logger: str = "swift",
        text: str | None = None,
        time: float | None = None,
    ) -> Event:
        """Create an event stamped by the bus clock and hand it to every subscriber."""
        event = Event(
            self.clock() if time is None else time,
            kind,
            fields if fields is not None else {},
            level,
            logger,
            text,
        )
        for callback in self._subscribers:
            callback(event)
        return event

    def publish(self, event: Event) -> None:
        """Forward an already-built event (a log being tailed, a remote service)."""
        for callback in self._subscribers:
            callback(event)


def replay(bus: EventBus, events: Iterable[Event]) -> None:
    """Publish a recorded sequence, e.g. to feed panels from a log read back."""
    for event in events:
        bus.publish(event)
