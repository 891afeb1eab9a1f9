"""``run.serve()`` (a run started from Python, as in a notebook) and the command line's
``-ui http`` options (issue 29), on real runs of the local site.

The monitor serves on the loop the run runs on: the test's ``asyncio.run`` stands for the
notebook kernel's loop.  What a browser would be sent is read from the page's view (the
browser tests, test_web_browser.py, read it in Chromium); the run's own log says that a
throttle moved through that view took effect.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from swiftnb.runner import start_run

SCRIPT = textwrap.dedent("""\
    type file;
    app (file o) say(int i) { echo i stdout=@filename(o); }
    app (file o) fail() { ls "/no/such/file/here" stdout=@filename(o); }
    foreach i in [1:3] {
      file f <single_file_mapper; file=strcat("out/say", i, ".txt")>;
      f = say(i);
    }
    file g <"out/fail.txt"> = fail();
    """)


def test_serve_a_run_from_python(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "say.swift").write_text(SCRIPT)

    async def scenario() -> None:
        handle = start_run(str(tmp_path / "say.swift"), base_dir=str(tmp_path),
                           properties={"lazyErrors": True})
        monitor = handle.serve()
        try:
            printed = capsys.readouterr().err
            assert re.fullmatch(r"swiftnb monitor: http://127\.0\.0\.1:(\d+)/\?token=[0-9a-f]"
                                r"{48}\n", printed), printed
            assert monitor.url in printed
            assert monitor.view.set_throttle("maxParallelTasks", 3, "local") is None
            refusal = monitor.view.set_throttle("initialParallelTasks", 5, "local")
            assert refusal is not None and "initialParallelTasks" in refusal
            try:
                await handle
            except Exception:  # noqa: BLE001  the failing call fails the run
                pass
            page = await AsyncHTTPClient().fetch(monitor.url)
            assert page.code == 200 and b"swiftnb monitor" in page.body
            try:
                await AsyncHTTPClient().fetch(monitor.url.split("?")[0])
            except HTTPClientError as exc:
                assert exc.code == 403
            else:
                raise AssertionError("served without the token")
            view = monitor.view
            assert "4 of 4 done (1 failed)" in view.counts()
            assert "ended: failed" in view.title()
            apps = view.apps_table()
            assert dict(zip(apps["app"], apps["done"])) == {"echo": 3, "ls": 1}
            sites = view.sites_table()
            assert sites["site"] == ["local"] and sites["done"] == [3]
            assert sites["limit"] == [3]  # the throttle moved through the view
            failures = view.failures_table()
            assert failures["app"] == ["ls"] and failures["exit"] == [2]
            assert "No such file" in str(failures["stderr"][0])
            settings = {(t.name, t.site): t.value for t in view.throttles()}
            assert settings[("maxParallelTasks", "local")] == 3
        finally:
            monitor.stop()

    asyncio.run(scenario())
    log = next((tmp_path / "run001").glob("*.log")).read_text()
    assert re.search(r"THROTTLE name=maxParallelTasks host=local old=2 new=3", log)


def test_bad_ui_port_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "say.swift").write_text(SCRIPT)
    done = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-ui", "http:web",
                           "say.swift"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1, done.stderr
    assert "-ui http:web: expected http or http:PORT" in done.stderr
    assert not (tmp_path / "run001").exists()


def test_configured_listen_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``monitorListenAddress`` chooses the interface (here loopback by name) and the
    printed URL names it."""
    (tmp_path / "say.swift").write_text(SCRIPT)

    async def scenario() -> None:
        handle = start_run(str(tmp_path / "say.swift"), base_dir=str(tmp_path),
                           properties={"monitorListenAddress": "localhost"})
        monitor = handle.serve()
        try:
            assert monitor.server.address == "localhost"
            assert monitor.url.startswith(f"http://localhost:{monitor.server.port}/?token=")
            assert monitor.url in capsys.readouterr().err
            page = await AsyncHTTPClient().fetch(
                monitor.url.replace("localhost", "127.0.0.1"))
            assert page.code == 200
            try:
                await handle
            except Exception:  # noqa: BLE001  the failing call fails the run
                pass
        finally:
            monitor.stop()

    asyncio.run(scenario())


def test_a_port_in_use_is_a_clear_error_and_nothing_runs(tmp_path: Path) -> None:
    import socket

    (tmp_path / "s.swift").write_text('type file;\napp (file o) e () { echo "x" stdout=@o; }\n'
                                      'file f <"out.txt">;\nf = e();\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-ui",
                               f"http:{port}", "s.swift"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert (f"swiftnb: web monitor: cannot listen on 127.0.0.1:{port}: Address already in use"
            in done.stderr), done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out.txt").exists()
