"""Coasters: Swift's pilot-job layer (blocks of workers that run many short tasks).

``planner`` decides the blocks (pure functions), ``service`` queues tasks, runs the
planner and dispatches tasks to connected workers, ``blocks`` starts blocks through a
block provider chosen by ``jobManager``, ``worker`` is the stdlib-only program a block
runs, and ``provider.CoasterProvider`` is the scheduler-facing Provider.

``make_provider(site, ctx)`` is what ``swiftnb.scheduling.build`` calls for sites with
``execution.type: "coaster"`` (or ``coaster-persistent``).
"""

from typing import Any

from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings

__all__ = ["CoasterConfigError", "CoasterSettings", "make_provider"]


def make_provider(site: Any, ctx: Any) -> Any:
    """A CoasterProvider for a SiteConfig, in a run described by a BuildContext."""
    from swiftnb.coasters.provider import CoasterProvider

    try:
        return CoasterProvider.from_site(
            site, getattr(ctx, "bus", None), site_run=getattr(ctx, "site_run", None),
            keep=bool(getattr(ctx, "keep_site_dir", False)))
    except CoasterConfigError as exc:
        try:
            from swiftnb.scheduling.scheduler import SchedulerError
        except ImportError:
            raise exc from None
        raise SchedulerError(f"site '{getattr(site, 'name', '?')}': {exc}") from None
