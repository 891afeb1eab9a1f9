"""Coasters: Swift's pilot-job layer (blocks of workers that run many short tasks).

``planner`` decides the blocks (pure functions), ``service`` queues tasks, runs the
planner and dispatches tasks to connected workers, ``blocks`` starts blocks through a
block provider chosen by ``jobManager``, ``worker`` is the stdlib-only program a block
runs, and ``provider.CoasterProvider`` is the scheduler-facing Provider.

``make_provider(site, ctx)`` is what ``swiftnb.scheduling.build`` calls for sites with
``execution.type: "coaster"`` (or ``coaster-persistent``: ``persistent`` is the client of a
running service, ``gateway`` and ``servicecmd`` that service, ``swiftnb coaster-service``).
``listener`` admits the service's connections, ``secretfile`` keeps its secret.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swiftnb.coasters.provider import CoasterProvider
    from swiftnb.config.model import SiteConfig
    from swiftnb.scheduling.build import BuildContext

from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings

__all__ = ["CoasterConfigError", "CoasterSettings", "make_provider"]


def make_provider(site: SiteConfig, ctx: BuildContext) -> CoasterProvider:
    """A CoasterProvider for a SiteConfig, in a run described by a BuildContext."""
    from swiftnb.coasters.provider import CoasterProvider

    try:
        return CoasterProvider.from_site(site, ctx.bus, site_run=ctx.site_run,
                                         keep=ctx.keep_site_dir, origin=ctx.origin(site),
                                         host_name=ctx.config.host_name,
                                         port_range=ctx.config.TCP_port_range,
                                         warn=ctx.warn)
    except CoasterConfigError as exc:
        try:
            from swiftnb.scheduling.errors import SchedulerError
        except ImportError:
            raise exc from None
        text = str(exc)
        raise SchedulerError(text if f"site.{site.name}." in text
                             else f"site '{site.name}': {text}") from None
