"""Throttle sliders on an ssh site (the test sshd on 127.0.0.1, tests/sshd.py).

The site's worker on the host starts with as many slots as the site's configured
maxParallelTasks (its ``--cores``); a slider lowers the site's width, raises it again, and
raises it beyond the configured value: the worker is told to start more slots.
"""

from __future__ import annotations

import pytest

from test_live_throttles import NAPS, _run, check_plan

pytestmark = pytest.mark.timeout(240)

CONF = """
sites: [remote]
site.remote {
    execution { type: "ssh", URL: "%s" }
    filesystem { type: "ssh" }
    workDirectory: "%s/throttles"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL { executable: "*" }
}
"""


def test_an_ssh_site_moves_live(sshd, tmp_path, browser, monkeypatch):
    monkeypatch.setenv("HOME", str(sshd.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    conf = CONF % (sshd.alias, sshd.remote_work)
    moved = _run(browser, NAPS % ("0.3", 40), conf, tmp_path, site="remote",
                 plan=((6, 1), (16, 4)))
    check_plan(moved, "remote", browser, (4, 1, 4))


def test_an_ssh_site_widens_past_its_configured_slots(sshd, tmp_path, browser, monkeypatch):
    """maxParallelTasks raised from the configured 4 to 8: the worker starts 4 more slots
    and 8 apps run at once on the host."""
    monkeypatch.setenv("HOME", str(sshd.home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    moved = _run(browser, NAPS % ("0.3", 40), CONF % (sshd.alias, sshd.remote_work),
                 tmp_path, site="remote", plan=((4, 8),))
    check_plan(moved, "remote", browser, (4, 8))
