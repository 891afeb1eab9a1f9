"""Tasks of a coaster site waiting for a slot, as a WAITING event (docs/design.md, "Events").

A task given to the coaster service runs when a worker of one of its blocks has a free
slot.  Until then it waits: for the blocks' workers to connect (a block's job still pends
in its batch system, or its workers start), for a slot while every slot runs a task, or
for a block it fits (its walltime against a block's time left, an MPI task's slots).

It is said as one WAITING for the site's queue (subject ``queue``, id the site), not one
per task: a bag of 10,000 tasks on 8 slots would otherwise say the same 10,000 times and
flood the console and every monitor; the detail says how many tasks wait.  It is said
once tasks have waited :data:`NOTICE` seconds (a task that waits a moment for the slot
the next result frees is no wait worth saying), said again when its reason changes, and
withdrawn (an empty reason) as soon as no task waits.  Waiting for busy slots or for
starting workers is the normal state of a run of more tasks than slots, so those are
``expected`` (the console prints them once they have lasted); tasks that wait while
no block runs or is requested for them are not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable

from swiftnb.coasters.servicerecords import Block
from swiftnb.events import EventBus
from swiftnb.scheduling.waiting import Waiting, emit_waiting

__all__ = ["SlotWaits", "slot_waiting", "NOTICE", "SLOTS_BUSY", "WORKERS_STARTING",
           "NO_FIT", "NO_BLOCK"]

#: seconds tasks wait before it is said (and between looks while they wait)
NOTICE = 1.0
#: every slot of the site's connected workers runs a task
SLOTS_BUSY = "slots-busy"
#: blocks are requested or running, but none of their workers has connected yet
WORKERS_STARTING = "workers-starting"
#: slots are free, but none fits the waiting tasks
NO_FIT = "no-fit"
#: no block runs or is requested for them
NO_BLOCK = "no-block"


def slot_waiting(site: str, waiting: int, blocks: Iterable[Block], *,
                 passive: bool) -> Waiting | None:
    """Why ``waiting`` queued tasks of coaster site ``site`` wait, given its ``blocks``
    (None when none waits)."""
    if waiting <= 0:
        return None
    live = [b for b in blocks if b.live and not b.shutdown]
    conns = [c for b in live for c in b.conns.values() if not c.closing]
    tasks = f"{waiting} task(s) of coaster site {site} wait for a free worker slot"
    if not conns and passive:
        return Waiting(NO_BLOCK, f"{tasks}: no worker has connected, and workerManager is "
                                 "passive: start workers with the service's worker "
                                 "command", expected=False)
    if not live:
        return Waiting(NO_BLOCK, f"{tasks}: no block runs or is requested for them; the "
                                 "planner's notes in the log say why (maxJobs, maxJobTime "
                                 "against the apps' maxWallTime)", expected=False)
    if not conns:
        pending = sum(1 for b in live if b.started is None)
        return Waiting(WORKERS_STARTING,
                       f"{tasks}: none of the workers of its {len(live)} block(s) has "
                       f"connected yet ({pending} still queued in the batch system, whose "
                       "WAITING says why)", expected=True)
    slots = sum(c.cores for c in conns)
    if any(c.idle for c in conns):
        return Waiting(NO_FIT, f"{tasks}: {sum(c.idle for c in conns)} of {slots} slot(s) "
                               "are free but none fits them (a block's time left against "
                               "their maxWallTime, or the slots an MPI task needs at once); "
                               "the planner starts blocks that fit", expected=True)
    return Waiting(SLOTS_BUSY, f"{tasks}: all {slots} slot(s) of its {len(conns)} worker(s) "
                               "run tasks; more blocks start up to maxJobs (raise it, or "
                               "tasksPerNode, for more at once)", expected=True)


class SlotWaits:
    """Says whether tasks of one coaster site wait for a slot.  ``describe`` tells why
    they wait now (None: none waits).  :meth:`tasks_queued` and :meth:`queue_empty` are
    on the service's hot path and cost an attribute test when nothing is to be said."""

    def __init__(self, bus: EventBus, site: str, describe: Callable[[], Waiting | None],
                 notice: float = NOTICE) -> None:
        self.bus = bus
        self.site = site
        self.describe = describe
        self.notice = notice
        #: the reason said and not withdrawn ("" when none)
        self.said = ""
        self._timer: asyncio.TimerHandle | None = None

    def tasks_queued(self) -> None:
        """Tasks are queued: look again in :attr:`notice` seconds."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(self.notice, self._look)

    def queue_empty(self) -> None:
        """No task waits any more: withdraw what was said."""
        if self.said:
            self.said = ""
            emit_waiting(self.bus, "queue", self.site, self.site, Waiting("", ""))

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.queue_empty()

    def _look(self) -> None:
        self._timer = None
        waiting = self.describe()
        if waiting is None:
            self.queue_empty()
            return
        if waiting.reason != self.said:
            self.said = waiting.reason
            emit_waiting(self.bus, "queue", self.site, self.site, waiting)
        self.tasks_queued()
