"""Coaster blocks: each block's shape, state, workers and tasks, and a live timeline.

The blocks are the run's :class:`~swiftnb.monitor.state.RunState`'s (the one model the
monitors read too), fed by the coaster events (BLOCK_REQUESTED cores/coresPerWorker/
walltime, BLOCK_ACTIVE, WORKER_ACTIVE/LOST/SHUTDOWN, BLOCK_SHUTDOWN/DONE/FAILED,
BLOCK_UTILIZATION) and by the ``workerid=BLOCK:WORKER`` of TASK_STATUS_CHANGE, which ties
each task to its block, so a Swift/K coaster log shows the same panel as a live run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as W

from swiftnb.monitor.state import RunState
from swiftnb.scheduling.provider import Provider
from swiftnb.widgets._util import table
from swiftnb.widgets.modelpanel import ModelPanel

if TYPE_CHECKING:  # bokeh is imported when a chart is first drawn
    from swiftnb.widgets.chart import BlockTimeline

__all__ = ["BlocksPanel"]

#: a row of the table: block, shape, walltime, state, workers, running, done, util, time left
Row = tuple[str, str, str, str, int, int, int, float | None, float | None]


class BlocksPanel(ModelPanel):
    """Blocks table and timeline (``state``: see :class:`ModelPanel`)."""

    title = "Coaster blocks"
    HEADERS = ("block", "shape", "walltime", "state", "workers", "running", "done", "util",
               "time left")

    def __init__(self, providers: list[Provider] | None = None, *, chart: bool = True,
                 state: RunState | None = None) -> None:
        # live providers' snapshots (``state().blocks``) add each block's time left
        self.providers = list(providers or ())
        super().__init__(state)
        self.time_left: dict[str, float] = {}
        self.table = W.HTML(value=table(self.HEADERS, [], cls="blocks"))
        self.timeline: BlockTimeline | None = None
        self._chart = chart
        self.widget = W.VBox([self.table])

    def rows(self) -> list[Row]:
        left = self.time_left
        return [(b.id, f"{b.shape} cores" if b.shape else "", b.walltime, b.state,
                 len(b.workers), b.running, b.done, b.utilization,
                 left.get(b.id) if b.ended is None else None)
                for b in self.state.blocks.values()]

    def _live(self) -> None:
        for provider in self.providers:
            for block in provider.state().blocks:
                if block.time_left is not None:
                    self.time_left[block.id] = round(block.time_left)

    def render(self) -> bool:
        if not self.state.blocks:
            return False
        self._live()
        changed = False
        html = table(self.HEADERS, self.rows(), cls="blocks")
        if html != self.table.value:
            self.table.value = html
            changed = True
        if self._chart:
            if self.timeline is None:
                from swiftnb.widgets.chart import BlockTimeline

                self.timeline = BlockTimeline()
                self.widget.children = (self.table, self.timeline.widget)
            t0 = self.state.t0 or 0.0
            now = (self.state.last or t0) - t0
            rows = [{"id": b.id, "state": b.state, "requested": b.requested - t0,
                     "started": None if b.started is None else b.started - t0,
                     "end": now if b.ended is None else b.ended - t0}
                    for b in self.state.blocks.values()]
            if self.timeline.update(rows):
                changed = True
        return changed

    def snapshot(self) -> dict[str, dict[str, object]]:
        return {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()}
