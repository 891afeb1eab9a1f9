"""A run's panels on the web: the run's state, the page, the server, wired together.

:func:`serve_run` serves a live run (``swiftnb run -ui http``, ``run.serve()`` in a
notebook): the state follows the run's event bus, the sliders steer its executor.
:class:`WebMonitor` of a :class:`~swiftnb.monitor.state.RunState` without a control
serves a log being followed (``swiftnb monitor``): nothing to steer there.  Both print
the URL, token included, as Jupyter does.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from swiftnb.monitor.http import DEFAULT_ADDRESS, WebServer
from swiftnb.monitor.page import build_page
from swiftnb.monitor.state import RunState
from swiftnb.monitor.webview import StateView
from swiftnb.scheduling.throttles import ThrottleControl

if TYPE_CHECKING:
    from swiftnb.runner import RunHandle

__all__ = ["WebMonitor", "serve_run"]


class WebMonitor:
    """A run's state kept from its events and served to browsers with a token."""

    def __init__(self, state: RunState, label: str, *, address: str = DEFAULT_ADDRESS,
                 port: int = 0) -> None:
        self.state = state
        self.view = StateView(state, label)
        self.server = WebServer(build_page(self.view), address=address, port=port)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def token(self) -> str:
        return self.server.token

    def announce(self, stream: TextIO | None = None) -> None:
        """Print where the monitor is (stderr: the console of a command-line run)."""
        print(self.server.announcement(), file=stream or sys.stderr, flush=True)

    def stop(self) -> None:
        """Stop serving and stop following the bus."""
        self.server.stop()
        self.state.close()

    def __repr__(self) -> str:
        return f"<WebMonitor {self.url}>"


def serve_run(handle: RunHandle, *, port: int = 0, address: str | None = None,
              stream: TextIO | None = None) -> WebMonitor:
    """Serve ``handle``'s panels on this loop; the events it kept before count too."""
    if address is None:
        address = handle.config.monitor_listen_address
    control = handle.executor if isinstance(handle.executor, ThrottleControl) else None
    state = RunState(clock=handle.bus.clock, control=control)
    state.follow(handle.bus, handle.event_list)
    state.watch_failures(handle.on_failure, handle.failures)
    monitor = WebMonitor(state, f"swiftnb run {handle.runid}", address=address, port=port)
    handle.add_done_callback(lambda h: monitor.view.ended(h.status()))
    monitor.announce(stream)
    return monitor
