"""The base of the panels drawn from the run's :class:`~swiftnb.monitor.state.RunState`
(progress, sites, coaster blocks): one model of a run for every view of it, the
terminal and web monitors included, so that no panel counts the events its own way."""

from __future__ import annotations

from collections.abc import Callable

from swiftnb.events import Event
from swiftnb.monitor.state import RunState
from swiftnb.scheduling.throttles import ThrottleControl

__all__ = ["ModelPanel"]


class ModelPanel:
    """``state``: the run's model, shared and folded by its owner (the dashboard, before
    any panel renders); without it the panel keeps one of its own (``clock``: the run's
    clock of a live run; ``control``: its executor) and folds the events it is given."""

    def __init__(self, state: RunState | None, *, clock: Callable[[], float] | None = None,
                 control: ThrottleControl | None = None) -> None:
        self.folds = state is None
        self.state = RunState(clock=clock, control=control) if state is None else state

    def apply(self, events: list[Event]) -> None:
        if self.folds:
            self.state.fold(events)
