"""Which web monitor a command line asks for: ``-ui http[:PORT]`` or ``-monitor``.

Swift/K's ``-ui http:PORT`` served its monitor on PORT and ``-monitor`` opened its own
window; here both are the web monitor (``-monitor`` and ``-ui http`` on a free port).
Kept free of bokeh so that reading the options costs nothing.
"""

from __future__ import annotations

from collections.abc import Collection

from swiftnb.errors import SwiftnbError

__all__ = ["web_monitor_port", "MonitorListenError"]


class MonitorListenError(SwiftnbError):
    """The web monitor cannot listen where it was asked to (a port in use, an address
    not of this host); the message names both and what to change."""


def web_monitor_port(ui: str | None, flags: Collection[str]) -> int | None:
    """The port the web monitor listens on (0: a free one), or None for no web monitor;
    ValueError for an ``-ui http:PORT`` whose PORT is no port number."""
    if ui is not None and (ui == "http" or ui.startswith("http:")):
        text = ui[len("http:"):] if ui.startswith("http:") else ""
        if not text:
            return 0
        if not text.isdigit() or not 0 <= int(text) <= 65535:
            raise ValueError(f"-ui {ui}: expected http or http:PORT, PORT a number "
                             f"from 0 (a free port) to 65535")
        return int(text)
    return 0 if "-monitor" in flags else None
