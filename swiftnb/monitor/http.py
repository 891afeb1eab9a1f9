"""The web monitor's server: bokeh's, on the run's own asyncio loop.

``swiftnb run -ui http``, ``run.serve()`` and ``swiftnb monitor RUN.log`` all show their
panels through one :class:`WebServer`: a bokeh server (tornado) started inside the loop
that already runs the run, so the pages read the run's state and move its throttles
without threads or locks.  It listens on 127.0.0.1 unless told otherwise
(``monitorListenAddress``), on a free port by default, and every page needs the token of
the URL it prints (:mod:`swiftnb.monitor.webauth`), so that ``ssh -L PORT:127.0.0.1:PORT``
from a laptop shows a run on a login node to its owner only.
"""

from __future__ import annotations

import secrets
import socket
from collections.abc import Callable

from bokeh.application import Application
from bokeh.application.handlers.function import FunctionHandler
from bokeh.document import Document
from bokeh.server.server import BaseServer
from bokeh.server.tornado import BokehTornado
from bokeh.server.util import bind_sockets
from tornado.httpserver import HTTPServer
from tornado.ioloop import IOLoop

from swiftnb.monitor.options import MonitorListenError
from swiftnb.monitor.webauth import TokenAuth, new_token

__all__ = ["WebServer", "DEFAULT_ADDRESS"]

DEFAULT_ADDRESS = "127.0.0.1"


def _shown_host(address: str) -> str:
    """The host to put in the printed URL: a wildcard address is reached by name."""
    return socket.gethostname() if address in ("0.0.0.0", "::", "") else address


class WebServer:
    """A token-guarded bokeh server; ``build_page(doc)`` fills each browser's document."""

    def __init__(self, build_page: Callable[[Document], None], *,
                 address: str = DEFAULT_ADDRESS, port: int = 0,
                 token: str | None = None) -> None:
        self.token = token or new_token()
        self.address = address
        try:
            sockets, self.port = bind_sockets(address, port)
        except OSError as exc:
            raise MonitorListenError(
                f"web monitor: cannot listen on {address}:{port}: {exc.strerror or exc}; "
                f"choose another port (-ui http:PORT, or none for a free one) or "
                f"monitorListenAddress") from exc
        auth = TokenAuth(self.token, secrets.token_bytes(32))
        try:
            app = BokehTornado(
                {"/": Application(FunctionHandler(build_page))},
                # the websocket is let in by its signed session token (webauth), not by
                # its origin: a tunnel's local port (ssh -L 8888:...) is any port
                extra_websocket_origins=["*"],
                auth_provider=auth, secret_key=auth.secret_key, sign_sessions=True,
                generate_session_ids=True)
            http = HTTPServer(app, xheaders=False)
            http.add_sockets(sockets)
        except Exception:
            for s in sockets:
                s.close()
            raise
        self._server = BaseServer(IOLoop.current(), app, http)
        self._server.start()

    @property
    def url(self) -> str:
        """Where a browser opens the monitor, token included (as Jupyter prints it)."""
        host = _shown_host(self.address)
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/?token={self.token}"

    def announcement(self) -> str:
        """The console line that says where the monitor is."""
        return f"swiftnb monitor: {self.url}"

    def stop(self) -> None:
        """Stop listening and close the browsers' connections."""
        self._server.stop(wait=False)
        self._server.unlisten()
