"""Each task's CoG state, folded from TASK_STATUS_CHANGE events, as the task stream needs
it: each change as it happens (the counts by state that the other panels show are the run
model's, :mod:`swiftnb.monitor.state`).

A task id is one attempt.  A live run and a Swift 0.96 log both carry its status as a
number (``status=2``); an event that repeats a task's status changes nothing, and one
whose status is not a number is skipped, so each panel reacts to real changes only.
"""

from __future__ import annotations

from swiftnb.events import Event

__all__ = ["StatusChange", "TaskStates"]

#: a task's move: (task id, old status or None when first seen, new status), CoG codes;
#: a plain tuple, since every status event of a run makes one (a NamedTuple's
#: construction doubled the panels' time per event)
StatusChange = tuple[str, int | None, int]


class TaskStates:
    """task id -> latest status; :meth:`change` folds one event in."""

    __slots__ = ("latest",)

    def __init__(self) -> None:
        self.latest: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.latest)

    def change(self, event: Event) -> StatusChange | None:
        """The change a TASK_STATUS_CHANGE event makes, now recorded; None if none."""
        fields = event.fields
        status = fields.get("status")
        if status is None:
            return None
        try:
            new = int(status)
        except (TypeError, ValueError):
            return None
        taskid = fields.get("taskid")
        if taskid is None:  # (a status line always names its task: a log's and a run's)
            return None
        old = self.latest.get(taskid)
        if old == new:
            return None
        self.latest[taskid] = new
        return taskid, old, new

    def forget(self, taskid: str) -> None:
        """Drop a finished task (a panel that needs no count of all tasks keeps memory
        bounded)."""
        self.latest.pop(taskid, None)
