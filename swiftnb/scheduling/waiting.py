"""What a run waits for, as WAITING events (docs/design.md, "Events").

The batch layer says why a job pends (execution/batch/waiting.py); this module holds
the event both layers emit and the one wait the scheduler itself sees: a site whose
parallel-task throttle is full while calls queue for it.  That is the normal state of a
large run, so it is said once when it begins and withdrawn (a WAITING with an empty
reason) when no call waits any more: a person who wonders why only two calls run at a
time reads which limit holds them and how to raise it.

Whoever emits a wait says whether it is the normal state of a busy run (``expected``: a
full throttle, tasks queued for busy slots) or a sign that something is wrong (a job the
batch system will not start, a worker that never connects); the console prints an
expected wait only once it has lasted, an unexpected one at once, by that field alone."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from swiftnb.events import EventBus

__all__ = ["Waiting", "emit_waiting", "is_expected", "SiteWaits", "THROTTLE_FULL"]

#: the reason code of a site whose parallel-task throttle holds its queued calls
THROTTLE_FULL = "throttle-full"


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why something waits: a short code (Slurm's ``PartitionConfig``, Grid Engine's
    ``pe-slots``, ``throttle-full``) and one sentence that says what to do; an empty
    reason says it no longer waits.  ``expected``: the normal state of a busy run, not a
    problem to show at once."""

    reason: str
    detail: str
    expected: bool = False


def emit_waiting(bus: EventBus, subject: str, ident: str, site: str, waiting: Waiting,
                 lrm: str = "", job: str = "") -> None:
    """A WAITING event: ``subject`` (block, site, worker, task) ``ident`` of ``site``
    waits, as batch system ``lrm``'s job ``job`` when it is one; then ``expected``;
    ``detail`` last (it has spaces: the log reader takes the rest of the line)."""
    fields: dict[str, str | bool] = {"subject": subject, "id": ident, "site": site,
                                     "reason": waiting.reason}
    if lrm and job:
        fields.update(lrm=lrm, job=job)
    fields["expected"] = waiting.expected
    fields["detail"] = waiting.detail
    bus.emit("WAITING", fields)


def is_expected(fields: Mapping[str, object]) -> bool:
    """Whether a WAITING event's fields say its wait is the normal state: ``True`` on a
    live bus, ``"true"`` read back from a log (where a log without the field, such as
    one written before it existed, reads as not expected)."""
    return fields.get("expected") in (True, "true")


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
            f"the other calls queue: raise maxParallelTasks or add sites", expected=True))

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
