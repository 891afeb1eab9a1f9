"""Throttle sliders on an ssh site (the test sshd on 127.0.0.1, tests/sshd.py).

The site's worker on the host runs as many apps at once as the site's configured
maxParallelTasks (its ``--cores``): a slider lowers the site's width and raises it again up
to that; beyond it the worker would queue what the scheduler sends (docs/widgets.md).
"""

from __future__ import annotations

import pytest

from test_live_throttles import NAPS, _run, check_plan

pytestmark = pytest.mark.timeout(240)


def test_an_ssh_site_moves_live(sshd, tmp_path, browser, monkeypatch):
    monkeypatch.setenv("HOME", str(sshd.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    conf = f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/throttles"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
"""
    moved = _run(browser, NAPS % ("0.3", 40), conf, tmp_path, site="remote",
                 plan=((6, 1), (16, 4)))
    check_plan(moved, "remote", browser, (4, 1, 4))
