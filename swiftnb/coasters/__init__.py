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
    from swiftnb.config.model import AppConfig, SiteConfig
    from swiftnb.scheduling.build import BuildContext

from swiftnb.coasters.appoptions import AppOption, app_options_of
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
                                         warn=ctx.warn, app_options=_app_options(site, ctx),
                                         always_info=ctx.config.always_transfer_wrapper_log,
                                         info_per_job=ctx.config.wrapper_log_per_job)
    except CoasterConfigError as exc:
        try:
            from swiftnb.scheduling.errors import SchedulerError
        except ImportError:
            raise exc from None
        text = str(exc)
        raise SchedulerError(text if f"site.{site.name}." in text
                             else f"site '{site.name}': {text}") from None


def _app_options(site: SiteConfig, ctx: BuildContext) -> list[AppOption]:
    """The ``options`` of the app definitions this site's tasks use, each with where it
    was written: the global ones first, then the site's (which win), ``app.ALL`` before
    the named apps."""
    from swiftnb.config.types import flatten_options

    def place(name: str) -> str:
        config = ctx.config
        found = config.origin_detail(name) or config.origin_detail(name.rsplit(".options.", 1)[0]
                                                                  + ".options")
        return found.location() if found is not None else ""

    def ordered(prefix: str, apps: dict[str, AppConfig]) -> list[tuple[str, dict[str, str]]]:
        names = sorted(apps, key=lambda n: (n != "ALL", n))
        return [(f"{prefix}app.{n}", flatten_options(apps[n].options)) for n in names]

    pairs = ordered("", ctx.config.apps) + ordered(f"site.{site.name}.", site.apps)
    return app_options_of(pairs, place)
