"""Live panels for Jupyter: ipywidgets fed by the event stream (or a tailed log).

``Dashboard(run)`` composes the panels (a header with the failure count and the cancel /
open report / dock buttons; progress and the task stream side by side; tabs for failures,
sites, coaster blocks, throttles, the dataflow graph and the run history);
``Dashboard.from_log(path)`` watches a log file.  Updates are batched and rate-limited by
:class:`~swiftnb.widgets.feed.Feed` (<= 5 per second per panel).  See docs/widgets.md.
"""

from swiftnb.widgets.blocks import BlocksPanel
from swiftnb.widgets.dashboard import Dashboard
from swiftnb.widgets.failures import FailuresPanel, PanelFailure
from swiftnb.widgets.feed import Feed
from swiftnb.widgets.graph import GraphPanel
from swiftnb.widgets.history import HistoryPanel
from swiftnb.widgets.progress import ProgressPanel
from swiftnb.widgets.sites import SitesPanel
from swiftnb.widgets.taskstream import TaskStreamPanel
from swiftnb.widgets.throttles import ThrottlesPanel

__all__ = ["Dashboard", "Feed", "ProgressPanel", "SitesPanel", "BlocksPanel",
           "ThrottlesPanel", "FailuresPanel", "PanelFailure", "TaskStreamPanel", "GraphPanel",
           "HistoryPanel"]
