"""The Dashboard: what a person watching a run wants in view at once.

Layout (one ipywidgets VBox):

* a header: run id, script, start date, status, ``N of M done`` and the failure count
  (red when there are failures, so it shows without opening anything), and the buttons
  **cancel**, **open report** and **dock** (beside the notebook, in JupyterLab);
* a grid of two panels side by side: progress (N of M, elapsed, rate, ETA, per app name,
  bars by task state) and the task stream (one bar per task per slot over time);
* tabs for the rest, their titles carrying counts: failures (rows that open the command
  line, stdout, stderr and -info file; retry), sites, coaster blocks, throttles, the
  dataflow graph and the history of past runs in the run's directory.

``Dashboard(run)`` watches a live :class:`~swiftnb.runner.RunHandle`;
``Dashboard(bus=bus)`` a bare event bus; ``Dashboard.from_log(path)`` a log file (ours or
Swift/K 0.96's), following it while it grows.  Either way the panels are fed through one
:class:`~swiftnb.widgets.feed.Feed`: batched, at most 5 widget updates per second per
panel, and detached (final flush, unsubscribe, timer cancelled) when the run ends.
"""

from __future__ import annotations

import asyncio
import html
import os
from typing import TYPE_CHECKING, Any, Protocol

import ipywidgets as W

from swiftnb.bokehjs import load_once
from swiftnb.events import Event, EventBus
from swiftnb.lang.checked import CheckedProgram
from swiftnb.monitor.state import RunState
from swiftnb.runner import RunHandle
from swiftnb.scheduling.throttles import ThrottleControl
from swiftnb.display import when
from swiftnb.widgets.blocks import BlocksPanel
from swiftnb.widgets.failures import FailuresPanel
from swiftnb.widgets.feed import DEFAULT_INTERVAL, Feed, Panel
from swiftnb.widgets.graph import GraphPanel
from swiftnb.widgets.history import HistoryPanel, report_link
from swiftnb.widgets.progress import ProgressPanel
from swiftnb.widgets.sites import SitesPanel
from swiftnb.widgets.taskstream import TaskStreamPanel
from swiftnb.widgets.throttles import ThrottlesPanel

if TYPE_CHECKING:
    from sidecar import Sidecar

__all__ = ["Dashboard"]


class _Tab(Protocol):
    """What a tab needs of its panel."""

    @property
    def title(self) -> str: ...

    @property
    def widget(self) -> W.Widget: ...


def _steering(run: RunHandle | None) -> ThrottleControl | None:
    """What the throttle sliders steer, the sites' scores and the providers come from:
    the run's executor where it offers that interface (a dry run's does not)."""
    if run is not None and isinstance(run.executor, ThrottleControl):
        return run.executor
    return None


class Dashboard:
    """Live panels of one run (see the module docstring for the layout)."""

    def __init__(self, run: RunHandle | None = None, *, bus: EventBus | None = None,
                 interval: float = DEFAULT_INTERVAL, charts: bool = True,
                 start: bool = True, history: str | None = None) -> None:
        if bus is None:
            if run is None:
                raise TypeError("Dashboard needs a run (a swiftnb.runner.RunHandle) or bus=")
            bus = run.bus
        self.run = run
        self.bus: EventBus = bus
        live = run is not None
        clock = self.bus.clock if live else None
        self.scheduler = _steering(run)
        # one model of the run that the panels read (the monitors' too); this dashboard
        # folds the events into it, before any panel renders
        self.state = RunState(clock=clock, control=self.scheduler)
        self.progress = ProgressPanel(state=self.state)
        self.stream = TaskStreamPanel(chart=charts, clock=clock)
        self.sites = SitesPanel(self.scheduler, chart=charts, state=self.state)
        self.blocks = BlocksPanel(self.scheduler.providers() if self.scheduler else [],
                                  chart=charts, state=self.state)
        self.throttles = ThrottlesPanel(self.scheduler)
        sources = run.program.sources if run is not None \
            and isinstance(run.program, CheckedProgram) else {}
        self.failures = FailuresPanel(run, sources=sources)
        self.graph = GraphPanel(run.run.pgraph if run is not None else None)
        directory = history if history is not None else (
            os.path.dirname(run.run_dir.path) if run is not None else os.getcwd())
        self.history = HistoryPanel(directory, store=os.path.join(
            run.base_dir, run.config.memoize_store) if run is not None else None)
        self.panels: list[Panel] = [self.progress, self.stream, self.sites, self.blocks,
                                    self.throttles, self.failures, self.graph]
        self.label = f"run {run.runid}" if run is not None else "run"
        self.started: float | None = None
        self.log: str | None = None        # the log file a dashboard from_log follows
        self.tail_error: str | None = None  # why following that log stopped early
        self._build(live)
        self.feed = Feed(self.bus, [*self.panels, self], interval=interval,
                         on_end=self._ended)
        if run is not None and run.event_list:  # all emitted before the dashboard opened
            self.feed.prime(run.event_list)
        self._tail_task: asyncio.Task[None] | None = None
        if run is not None:
            self.feed.stop_on_end = False   # the handle says when it has ended
            run.add_done_callback(lambda _h: self._run_done())
        self.sidecar: Sidecar | None = None
        if start:
            self.feed.start()

    # ------------------------------------------------------------ layout
    def _build(self, live: bool) -> None:
        self.title = W.HTML(value=f"<b>swiftnb</b> {html.escape(self.label)}")
        self.counts = W.HTML(value="")
        self.cancel_button = W.Button(description="cancel", icon="stop",
                                      button_style="danger", disabled=not live,
                                      layout=W.Layout(width="90px"))
        self.cancel_button.on_click(lambda _b: self.cancel())
        self.report_button = W.Button(description="open report", icon="external-link",
                                      layout=W.Layout(width="120px"))
        self.report_button.on_click(lambda _b: self.open_report())
        self.dock_button = W.Button(description="dock", icon="columns",
                                    tooltip="show the dashboard beside the notebook",
                                    layout=W.Layout(width="80px"))
        self.dock_button.on_click(lambda _b: self.dock())
        self.link = W.HTML(value="")
        header = W.HBox([self.title, self.counts, self.cancel_button, self.report_button,
                         self.dock_button],
                        layout=W.Layout(align_items="center", grid_gap="12px",
                                        flex_flow="row wrap"))
        self.grid = W.GridBox([self._boxed(self.progress.widget),
                               self._boxed(self.stream.widget)],
                              layout=W.Layout(grid_template_columns="repeat(auto-fit, "
                                              "minmax(420px, 1fr))", grid_gap="8px"))
        tabbed: list[_Tab] = [self.failures, self.sites, self.blocks, self.throttles,
                              self.graph, self.history]
        self.tabbed = tabbed
        self.tabs = W.Tab(children=[p.widget for p in tabbed],
                          titles=tuple(p.title for p in tabbed))
        self.tabs.observe(self._tab_chosen, names="selected_index")
        self.widget = W.VBox([header, self.link, self.grid, self.tabs])

    def _tab_chosen(self, change: dict[str, Any]) -> None:
        if self.tabbed[change["new"] or 0] is self.history and not self.history.loaded:
            self.history.refresh()

    @staticmethod
    def _boxed(widget: W.Widget) -> W.Box:
        return W.Box([widget], layout=W.Layout(border="1px solid #ddd", padding="4px",
                                               overflow="auto"))

    def status(self) -> str:
        """running; ended: ok, failed or canceled; from a log: following, ended."""
        if self.run is not None:
            status = self.run.status()
            return f"ended: {status}" if self.run.done else status
        return "ended" if self.feed.stopped else "following"

    def _header(self) -> bool:
        p = self.state
        changed = False
        if self.started is None and p.t0 is not None:
            self.started = p.t0
        failed = self.failures.total
        color = "#c00" if failed else "#888"
        cached = (f"<span class='swiftnb-cached'>{p.cached} cached</span> &middot; "
                  if p.cached else "")
        counts = (f"<span class='swiftnb-done'>{p.done} of {p.known} done</span> &middot; "
                  f"{cached}"
                  f"<span class='swiftnb-failcount' style='color:{color};font-weight:bold'>"
                  f"{failed} failed</span>")
        if self.counts.value != counts:
            self.counts.value = counts
            changed = True
        title = (f"<b>swiftnb</b> {html.escape(self.label)} &middot; "
                 f"{html.escape(self.status())}"
                 + (f" &middot; started {html.escape(when(self.started))}"
                    if self.started is not None else ""))
        if self.title.value != title:
            self.title.value = title
            changed = True
        titles = tuple(f"{p.title} ({self.failures.total})" if p is self.failures
                       else p.title for p in self.tabbed)
        if tuple(self.tabs.titles) != titles:
            self.tabs.titles = titles
            changed = True
        return changed

    def render(self) -> bool:
        """Header and tab titles (the feed renders the panels before them)."""
        return self._header()

    def apply(self, events: list[Event]) -> None:
        """Fold the events into the run's model (the feed applies every batch to all its
        panels before it renders any)."""
        self.state.fold(events)

    # ------------------------------------------------------------ lifecycle
    def _run_done(self) -> None:
        # the run's task ended: let the feed see the last events, then stop
        try:
            asyncio.get_running_loop().call_soon(self.stop)
        except RuntimeError:
            self.stop()

    def _ended(self) -> None:
        self.failures.stop()
        self.sites.finish()
        self.stream.finish()
        self.graph.finish()
        self.cancel_button.disabled = True
        if self.history.loaded:
            self.history.refresh()
        self._header()

    @classmethod
    def from_log(cls, path: str | os.PathLike[str], *, follow: bool = True,
                 interval: float = DEFAULT_INTERVAL, poll: float = 0.5,
                 idle_timeout: float | None = None, charts: bool = True) -> Dashboard:
        """Panels fed by a log file.  ``follow``: keep tailing it (needs a running loop)
        until the run's end is logged; otherwise read it whole now."""
        bus = EventBus()
        log = os.path.abspath(os.fspath(path))
        run_dir = os.path.dirname(log)
        dash = cls(None, bus=bus, interval=interval, charts=charts, start=follow,
                   history=os.path.dirname(run_dir))
        dash.log = log
        dash.label = f"log {os.fspath(path)}"
        dash._header()
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
        from swiftnb.logs.reader import LogFormatError
        from swiftnb.logs.tail import tail_to_bus

        async def tail() -> None:
            # a log that turns out not to be one (binary data appended, replaced by a
            # directory or a device) ends the following with the reader's own message in
            # the panel, not an exception nobody retrieves from this task
            try:
                await tail_to_bus(path, bus, interval=poll, idle_timeout=idle_timeout,
                                  stop=lambda: dash.feed.stopped)
            except (LogFormatError, OSError) as exc:
                dash.tail_error = str(exc)
                dash.link.value = ("<b style='color:#c00'>stopped following the log:</b> "
                                   f"{html.escape(str(exc))}")
            finally:
                dash.feed.stop()

        dash._tail_task = loop.create_task(tail())
        return dash

    # ------------------------------------------------------------ actions
    def cancel(self) -> None:
        """Stop the run (the cancel button): its apps are killed, the log says so."""
        if self.run is not None:
            self.run.cancel()
            self.cancel_button.disabled = True

    def open_report(self) -> str:
        """Write the HTML report (of the events so far) and show a link that opens it."""
        if self.run is not None:
            path = self.run.report()
        else:
            from swiftnb.logs import LogFrame, write_report

            assert self.log is not None
            path = write_report(LogFrame.read(self.log),
                                os.path.join(os.path.dirname(self.log), "report.html"),
                                title=f"swiftnb {self.label}")
        self.link.value = report_link(path)
        return path

    def dock(self, *, title: str | None = None,
             anchor: str = "split-right") -> Sidecar | None:
        """Show the dashboard in a JupyterLab side panel (the ``sidecar`` widget), so it
        stays in view while the notebook scrolls; the Sidecar (close it with
        ``.close()``).  ``anchor``: where JupyterLab puts it (``split-right``,
        ``split-bottom``, ``right``, ``tab-after``...)."""
        try:
            from sidecar import Sidecar
        except ImportError:
            self.link.value = ("<b>dock needs the sidecar package</b>: "
                               "<code>pip install sidecar</code> (or swiftnb[lab]), "
                               "then reload JupyterLab")
            return None
        from IPython.display import display

        if self.sidecar is None:
            self.sidecar = Sidecar(title=title or f"swiftnb {self.label}", anchor=anchor)
            with self.sidecar:
                display(self.widget)
        return self.sidecar

    def stop(self) -> None:
        """Detach now: final flush, unsubscribe, timers and log tailing stopped."""
        self.feed.stop()
        if self._tail_task is not None and not self._tail_task.done():
            self._tail_task.cancel()

    def flush(self) -> None:
        self.feed.flush()
        self._header()

    @property
    def widgets(self) -> list[W.Widget]:
        return [self.widget]

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        load_once()  # BokehJS before any chart of the panels, however late they come
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        load_once()
        display(self.widget)
