"""The Dashboard: progress, sites, coaster blocks, throttles and failures of one run.

``Dashboard(run)`` watches a live run: anything with ``.bus`` (the RunHandle of
``swiftnb.runner.start_run``, an engine ``Run``) and, for steering, a scheduler
(``.scheduler`` or ``.executor`` with ``set_throttle``).  ``Dashboard.from_log(path)``
watches a log file instead (ours or Swift/K 0.96's), following it while it grows, so a
run executed elsewhere can be watched too.  Either way the panels are fed through one
:class:`~swiftnb.widgets.feed.Feed`: batched, at most 5 widget updates per second per
panel, and detached (final flush, unsubscribe, timer cancelled) when the run ends.
"""

from __future__ import annotations

import asyncio
import html
import os
from typing import Any

import ipywidgets as W

from swiftnb.events import EventBus
from swiftnb.widgets._util import providers_of, scheduler_of
from swiftnb.widgets.blocks import BlocksPanel
from swiftnb.widgets.failures import FailuresPanel
from swiftnb.widgets.feed import DEFAULT_INTERVAL, Feed
from swiftnb.widgets.progress import ProgressPanel
from swiftnb.widgets.sites import SitesPanel
from swiftnb.widgets.throttles import ThrottlesPanel

__all__ = ["Dashboard"]


def _sources_of(run: Any) -> dict[str, str]:
    """Script texts by file name (for the failures panel's source lines)."""
    seen = set()
    obj = run
    for _ in range(4):
        if obj is None or id(obj) in seen:
            break
        seen.add(id(obj))
        for attr in ("checked", "program", "checked_program"):
            sources = getattr(getattr(obj, attr, None), "sources", None)
            if isinstance(sources, dict):
                return sources
        sources = getattr(obj, "sources", None)
        if isinstance(sources, dict):
            return sources
        obj = getattr(obj, "run", None) or getattr(obj, "engine_run", None)
    return {}


class Dashboard:
    """Live panels of one run, composed in one ipywidgets Tab-free VBox."""

    def __init__(self, run: Any = None, *, bus: EventBus | None = None,
                 interval: float = DEFAULT_INTERVAL, charts: bool = True,
                 start: bool = True) -> None:
        self.run = run
        self.bus = bus if bus is not None else getattr(run, "bus", None)
        if self.bus is None:
            raise TypeError("Dashboard needs a run with a .bus (or bus=)")
        self.scheduler = scheduler_of(run)
        self.progress = ProgressPanel()
        self.sites = SitesPanel(self.scheduler, chart=charts)
        self.blocks = BlocksPanel(providers_of(run), chart=charts)
        self.throttles = ThrottlesPanel(self.scheduler)
        self.failures = FailuresPanel(run, sources=_sources_of(run))
        self.panels = [self.progress, self.sites, self.blocks, self.throttles, self.failures]
        self.label = "run"
        self.title = W.HTML(value="<b>swiftnb</b> run")
        acc = W.Accordion(children=[p.widget for p in self.panels],
                          titles=tuple(p.title for p in self.panels))
        acc.selected_index = 0
        self.accordion = acc
        self.widget = W.VBox([self.title, acc])
        self.feed = Feed(self.bus, self.panels, interval=interval, on_end=self._ended)
        past = getattr(run, "event_list", None)   # RunHandle: everything emitted so far
        if past:
            self.feed.prime(past)
        self._tail_task: asyncio.Task | None = None
        self._watch_handle(run)
        if start:
            self.feed.start()

    def _watch_handle(self, run: Any) -> None:
        """Stop when the run's handle says it has ended (after its sites are closed, so
        the blocks' shutdown is shown); without such a handle, a few quiet ticks after
        RUN_SUCCESS / RUN_FAILURE."""
        add = getattr(run, "add_done_callback", None)
        if callable(add) and not isinstance(run, asyncio.Future):
            self.feed.stop_on_end = False
            add(lambda _h: self._run_done())
            return
        for attr in ("task", "_task", "future"):
            fut = getattr(run, attr, None)
            if isinstance(fut, asyncio.Future):
                self.feed.stop_on_end = False
                fut.add_done_callback(lambda _f: self._run_done())
                return

    def _run_done(self) -> None:
        # the run's task ended: let the feed see the last events, then stop
        try:
            asyncio.get_running_loop().call_soon(self.stop)
        except RuntimeError:
            self.stop()

    def _ended(self) -> None:
        self.failures.stop()
        text = "ended"
        if self.progress.jobs_failed:
            text += f", {self.progress.jobs_failed} failed"
        self.title.value = f"<b>swiftnb</b> {html.escape(self.label)} {text}"

    # ------------------------------------------------------------------ public
    @classmethod
    def from_log(cls, path: str | os.PathLike[str], *, follow: bool = True,
                 interval: float = DEFAULT_INTERVAL, poll: float = 0.5,
                 idle_timeout: float | None = None, charts: bool = True) -> "Dashboard":
        """Panels fed by a log file.  ``follow``: keep tailing it (needs a running loop)
        until the run's end is logged; otherwise read it whole now."""
        bus = EventBus()
        dash = cls(None, bus=bus, interval=interval, charts=charts, start=follow)
        dash.label = f"log {os.fspath(path)}"
        dash.title.value = f"<b>swiftnb</b> {html.escape(dash.label)}"
        try:
            loop = asyncio.get_running_loop() if follow else None
        except RuntimeError:
            loop = None
        if loop is None:
            from swiftnb.events import replay
            from swiftnb.logs.reader import read_events

            replay(bus, read_events(path))
            dash.feed.stop()
            return dash
        from swiftnb.logs.tail import tail_to_bus

        async def tail() -> None:
            try:
                await tail_to_bus(path, bus, interval=poll, idle_timeout=idle_timeout,
                                  stop=lambda: dash.feed.stopped)
            finally:
                dash.feed.stop()

        dash._tail_task = loop.create_task(tail())
        return dash

    def stop(self) -> None:
        """Detach now: final flush, unsubscribe, timers and log tailing stopped."""
        self.feed.stop()
        if self._tail_task is not None and not self._tail_task.done():
            self._tail_task.cancel()

    def flush(self) -> None:
        self.feed.flush()

    @property
    def widgets(self) -> list[W.Widget]:
        return [self.widget]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
