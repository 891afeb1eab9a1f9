"""The web monitor's server refuses what does not carry its token (issue 29).

A real bokeh server on 127.0.0.1 on a free port, asked over real HTTP and websocket
connections: without the URL's token, with a wrong one, and with a websocket session
token not signed by this server, it answers 403 before any handler runs; with them, the
page and its websocket open.
"""

from __future__ import annotations

import asyncio
import re
import socket

from bokeh.models import Div
from tornado.httpclient import AsyncHTTPClient, HTTPClientError
from tornado.websocket import websocket_connect

from swiftnb.monitor.http import WebServer
from swiftnb.monitor.options import web_monitor_port


def _page(doc) -> None:
    doc.add_root(Div(text="the run"))


async def _status(url: str, **kwargs) -> int:
    try:
        reply = await AsyncHTTPClient().fetch(url, **kwargs)
    except HTTPClientError as exc:
        return exc.code
    return reply.code


async def _websocket(url: str, protocols: list[str] | None) -> int:
    """101 when the websocket opened, else the HTTP status of the refusal."""
    try:
        connection = await asyncio.wait_for(websocket_connect(url, subprotocols=protocols), 20)
    except HTTPClientError as exc:
        return exc.code
    connection.close()
    return 101


def test_token_guards_page_and_websocket() -> None:
    async def scenario() -> None:
        server = WebServer(_page)
        try:
            assert server.address == "127.0.0.1"
            assert re.fullmatch(rf"swiftnb monitor: http://127\.0\.0\.1:{server.port}/"
                                r"\?token=[0-9a-f]{48}", server.announcement())
            base = f"http://127.0.0.1:{server.port}"
            assert await _status(f"{base}/") == 403
            assert await _status(f"{base}/?token=") == 403
            assert await _status(f"{base}/?token={server.token[:-1]}0") in (403,)
            assert await _status(f"{base}/autoload.js?bokeh-autoload-element=x"
                                 f"&bokeh-absolute-url={base}") == 403
            page = await AsyncHTTPClient().fetch(server.url)
            assert page.code == 200
            found = re.search(r'"token":\s*"([^"]+)"', page.body.decode())
            assert found, "the page carries no bokeh session token"
            session = found.group(1)
            ws = f"ws://127.0.0.1:{server.port}/ws"
            assert await _websocket(ws, None) == 403
            assert await _websocket(ws, ["bokeh", "eyJ4IjogMX0.forged"]) == 403
            # signed by another server's key: refused as well
            other = WebServer(_page)
            try:
                theirs = await AsyncHTTPClient().fetch(other.url)
                foreign = re.search(r'"token":\s*"([^"]+)"', theirs.body.decode())
                assert foreign is not None
                assert await _websocket(ws, ["bokeh", foreign.group(1)]) == 403
            finally:
                other.stop()
            assert await _websocket(ws, ["bokeh", session]) == 101
        finally:
            server.stop()

    asyncio.run(scenario())


def test_listens_on_loopback_only() -> None:
    async def scenario() -> None:
        server = WebServer(_page)
        try:
            sockets = [s for s in server._server._http._sockets.values()]
            assert sockets and {s.getsockname()[0] for s in sockets} == {"127.0.0.1"}
        finally:
            server.stop()
        # stopped: nothing listens there any more
        probe = socket.socket()
        try:
            assert probe.connect_ex(("127.0.0.1", server.port)) != 0
        finally:
            probe.close()

    asyncio.run(scenario())


def test_web_monitor_options() -> None:
    assert web_monitor_port(None, ()) is None
    assert web_monitor_port("none", ["-monitor"]) == 0
    assert web_monitor_port("http", ()) == 0
    assert web_monitor_port("http:8123", ()) == 8123
    assert web_monitor_port("text", ()) is None
    for bad in ("http:abc", "http:70000", "http:-1"):
        try:
            web_monitor_port(bad, ())
        except ValueError as exc:
            assert bad in str(exc)
        else:
            raise AssertionError(f"-ui {bad} accepted")
