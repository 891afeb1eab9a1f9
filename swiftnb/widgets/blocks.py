"""Coaster blocks: each block's shape, state, workers and tasks, and a live timeline.

Fed by the coaster events (BLOCK_REQUESTED cores/coresPerWorker/walltime, BLOCK_ACTIVE,
WORKER_ACTIVE/LOST/SHUTDOWN, BLOCK_SHUTDOWN/DONE/FAILED, BLOCK_UTILIZATION) and by the
``workerid=BLOCK:WORKER`` of TASK_STATUS_CHANGE, which ties each task to its block, so a
Swift/K coaster log shows the same panel as a live run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ipywidgets as W

from swiftnb.events import Event
from swiftnb.scheduling.provider import Provider
from swiftnb.display import num
from swiftnb.widgets._util import table

if TYPE_CHECKING:  # bokeh is imported when a chart is first drawn
    from swiftnb.widgets.chart import BlockTimeline

__all__ = ["BlocksPanel"]


class _Block:
    __slots__ = ("id", "cores", "per_worker", "walltime", "state", "workers", "running",
                 "done", "requested", "started", "ended", "utilization")

    def __init__(self, bid: str, t: float) -> None:
        self.id = bid
        self.cores: int | None = None
        self.per_worker: int | None = None
        self.walltime: object = None  # as BLOCK_REQUESTED gave it
        self.state = "requested"
        self.workers: set[str] = set()
        self.running = 0
        self.done = 0
        self.requested = t
        self.started: float | None = None
        self.ended: float | None = None
        self.utilization: float | None = None

    @property
    def shape(self) -> str:
        if self.cores is None:
            return ""
        per = self.per_worker or 1
        return f"{max(1, self.cores // per)}x{per} cores"


class BlocksPanel:
    """Blocks table and timeline."""

    title = "Coaster blocks"
    HEADERS = ("block", "shape", "walltime", "state", "workers", "running", "done", "util",
               "time left")

    def __init__(self, providers: list[Provider] | None = None, *, chart: bool = True) -> None:
        # live providers' snapshots (``state().blocks``) add each block's time left
        self.providers = list(providers or ())
        self.time_left: dict[str, float] = {}
        self.blocks: dict[str, _Block] = {}
        self.task_block: dict[str, str] = {}
        self.t0: float | None = None
        self.now: float | None = None
        self.table = W.HTML(value=table(self.HEADERS, [], cls="blocks"))
        self.timeline: BlockTimeline | None = None
        self._chart = chart
        self.widget = W.VBox([self.table])

    def _block(self, bid: str, t: float) -> _Block:
        b = self.blocks.get(bid)
        if b is None:
            b = self.blocks[bid] = _Block(bid, t)
        return b

    def apply(self, events: list[Event]) -> None:
        if events:
            if self.t0 is None:
                self.t0 = events[0].time
            self.now = events[-1].time
        for e in events:
            kind = e.kind
            if kind == "TASK_STATUS_CHANGE":
                if not self.blocks:
                    continue  # not a coaster run (yet)
                f = e.fields
                status = f.get("status")
                wid = f.get("workerid")
                tid = f.get("taskid")
                if tid is None:  # (a status line always names its task: log and run)
                    continue
                if wid:
                    bid = str(wid).split(":", 1)[0]
                    if tid not in self.task_block and bid in self.blocks:
                        self.task_block[tid] = bid
                        self.blocks[bid].running += 1
                elif str(status) in ("7", "5", "6"):
                    ran_in = self.task_block.pop(tid, None)
                    if ran_in is not None:
                        b = self.blocks[ran_in]
                        b.running -= 1
                        if str(status) == "7":
                            b.done += 1
                continue
            if not kind.startswith(("BLOCK_", "WORKER_")):
                continue
            f = e.fields
            t = e.time
            if kind == "BLOCK_REQUESTED":
                b = self._block(str(f.get("id")), t)
                b.cores = int(num(f.get("cores"), 0) or 0) or None
                b.per_worker = int(num(f.get("coresPerWorker"), 1) or 1)
                b.walltime = f.get("walltime")
            elif kind == "BLOCK_ACTIVE":
                b = self._block(str(f.get("id")), t)
                b.state = "active"
                b.started = t
            elif kind == "WORKER_ACTIVE":
                b = self._block(str(f.get("blockid")), t)
                b.workers.add(str(f.get("id")))
                if b.started is None:
                    b.started = t
                    b.state = "active"
            elif kind in ("WORKER_LOST", "WORKER_SHUTDOWN"):
                known = self.blocks.get(str(f.get("blockid")))
                if known is not None:
                    known.workers.discard(str(f.get("id")))
            elif kind in ("BLOCK_SHUTDOWN", "BLOCK_DONE", "BLOCK_FAILED"):
                b = self._block(str(f.get("id")), t)
                b.state = {"BLOCK_SHUTDOWN": "shutdown", "BLOCK_DONE": "done",
                           "BLOCK_FAILED": "failed"}[kind]
                if kind != "BLOCK_SHUTDOWN" or b.ended is None:
                    b.ended = t
                b.workers.clear()
            elif kind == "BLOCK_UTILIZATION":
                known = self.blocks.get(str(f.get("id")))
                if known is not None:
                    known.utilization = num(f.get("u"))

    def rows(self) -> list[tuple]:
        left = self.time_left
        return [(b.id, b.shape, b.walltime, b.state, len(b.workers), b.running, b.done,
                 b.utilization, left.get(b.id) if b.ended is None else None)
                for b in self.blocks.values()]

    def _live(self) -> None:
        for provider in self.providers:
            for block in provider.state().blocks:
                if block.time_left is not None:
                    self.time_left[block.id] = round(block.time_left)

    def render(self) -> bool:
        if not self.blocks:
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
            t0 = self.t0 or 0.0
            now = (self.now or t0) - t0
            rows = [{"id": b.id, "state": b.state, "requested": b.requested - t0,
                     "started": None if b.started is None else b.started - t0,
                     "end": now if b.ended is None else b.ended - t0}
                    for b in self.blocks.values()]
            if self.timeline.update(rows):
                changed = True
        return changed

    def snapshot(self) -> dict[str, dict[str, Any]]:
        return {r[0]: dict(zip(self.HEADERS[1:], r[1:])) for r in self.rows()}
