"""What a run waits for, as WAITING events (docs/design.md, "Events").

The batch layer says why a job pends (execution/batch/waiting.py); this module holds
the event both layers emit and the one wait the scheduler itself sees: a site whose
parallel-task throttle is full while calls queue for it.  That is the normal state of a
large run, so it is said once when it begins and withdrawn (a WAITING with an empty
reason) when no call waits any more: a person who wonders why only two calls run at a
time reads which limit holds them and how to raise it."""

from __future__ import annotations

from dataclasses import dataclass

from swiftnb.events import EventBus

__all__ = ["Waiting", "emit_waiting", "SiteWaits", "THROTTLE_FULL"]

#: the reason code of a site whose parallel-task throttle holds its queued calls
THROTTLE_FULL = "throttle-full"


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why something waits: a short code (Slurm's ``PartitionConfig``, Grid Engine's
    ``pe-slots``, ``throttle-full``) and one sentence that says what to do; an empty
    reason says it no longer waits."""

    reason: str
    detail: str


def emit_waiting(bus: EventBus, subject: str, ident: str, site: str, waiting: Waiting,
                 lrm: str = "", job: str = "") -> None:
    """A WAITING event: ``subject`` (block, site, worker, task) ``ident`` of ``site``
    waits, as batch system ``lrm``'s job ``job`` when it is one; ``detail`` last (it has
    spaces: the log reader takes the rest of the line)."""
    fields: dict[str, str] = {"subject": subject, "id": ident, "site": site,
                              "reason": waiting.reason}
    if lrm and job:
        fields.update(lrm=lrm, job=job)
    fields["detail"] = waiting.detail
    bus.emit("WAITING", fields)


class SiteWaits:
    """The sites whose throttle holds queued calls, each said once until it clears.

    Cheap on the call path: :meth:`full` and :meth:`clear` test a set before they emit."""

    def __init__(self, bus: EventBus) -> None:
        self.bus = bus
        self._full: set[str] = set()

    def full(self, site: str, limit: float) -> None:
        """Calls wait for ``site``, which runs its limit of ``limit`` calls at once."""
        if site in self._full:
            return
        self._full.add(site)
        shown = "unlimited" if limit == float("inf") else f"{int(limit)}"
        emit_waiting(self.bus, "site", site, site, Waiting(
            THROTTLE_FULL,
            f"site {site} runs its limit of {shown} calls at once (maxParallelTasks, "
            f"which a site's score also moves between initialParallelTasks and it); "
            f"the other calls queue: raise maxParallelTasks or add sites"))

    def clear(self, site: str) -> None:
        """No call waits for ``site`` any more."""
        if site in self._full:
            self._full.discard(site)
            emit_waiting(self.bus, "site", site, site, Waiting("", ""))

    def clear_all(self) -> None:
        """No call waits for any site (on every release of a slot: cheap when none was
        said)."""
        if self._full:
            for site in sorted(self._full):
                self.clear(site)
