"""Live panels for Jupyter: ipywidgets fed by the event stream (or a tailed log).

``Dashboard(run)`` composes the panels (progress, sites, coaster blocks, throttles,
failures); ``Dashboard.from_log(path)`` watches a log file.  Updates are batched and
rate-limited by :class:`~swiftnb.widgets.feed.Feed` (<= 5 per second per panel).  See
docs/widgets.md.
"""

from swiftnb.widgets.blocks import BlocksPanel
from swiftnb.widgets.dashboard import Dashboard
from swiftnb.widgets.failures import Failure, FailuresPanel
from swiftnb.widgets.feed import Feed
from swiftnb.widgets.progress import ProgressPanel
from swiftnb.widgets.sites import SitesPanel
from swiftnb.widgets.throttles import ThrottlesPanel

__all__ = ["Dashboard", "Feed", "ProgressPanel", "SitesPanel", "BlocksPanel",
           "ThrottlesPanel", "FailuresPanel", "Failure"]
