"""Throttle sliders on a batch site: the session's real one-node Slurm (tests/slurm.py),
one Slurm job per task, statuses from squeue every half second."""

from __future__ import annotations

import pytest

from test_live_throttles import NAPS, _run, check_plan

pytestmark = pytest.mark.timeout(300)


def test_a_slurm_site_moves_live(slurm, tmp_path, browser, monkeypatch):
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    conf = f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "slurm", options {{ pollInterval: 0.5 }} }}
    workDirectory: "{tmp_path / 'swiftwork'}"
    app.ALL {{ executable: "*" }}
}}
"""
    moved = _run(browser, NAPS % ("2", 24), conf, tmp_path, site="cluster",
                 plan=((4, 6), (14, 1)), timeout=280)
    check_plan(moved, "cluster", browser)
