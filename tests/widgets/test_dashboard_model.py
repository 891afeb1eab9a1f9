"""The dashboard's progress, sites and blocks panels read one model of the run, the
monitors' RunState: the figures they show are the model's, and a panel used alone (its
own model, fed by a Feed) shows what it shows inside the dashboard."""

from __future__ import annotations

import bz2
from pathlib import Path

import pytest

from swiftnb.events import EventBus, replay
from swiftnb.logs.reader import read_events
from swiftnb.monitor.state import RunState
from swiftnb.widgets import BlocksPanel, Dashboard, Feed, ProgressPanel, SitesPanel
from swiftnb.widgets.progress import STATES

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"


def test_panels_show_the_run_model_alone_or_in_the_dashboard(tmp_path, browser):
    log = tmp_path / "swift.log"
    log.write_bytes(bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()))
    dash = Dashboard.from_log(log, follow=False, charts=False)
    assert dash.progress.state is dash.state is dash.sites.state is dash.blocks.state
    model = RunState()
    model.fold(read_events(str(log)))
    assert dash.progress.snapshot() == {label: model.task_counts.get(code, 0)
                                        for code, label, _ in STATES}
    assert (dash.state.known, dash.state.done) == (model.known, model.done) == (32, 32)
    assert {b: row["done"] for b, row in dash.blocks.snapshot().items()} == \
        {b.id: b.done for b in model.blocks.values()}
    # the same panels on their own, fed by a feed of a bus that replays the log
    bus = EventBus()
    alone = [ProgressPanel(), SitesPanel(chart=False), BlocksPanel(chart=False)]
    feed = Feed(bus, alone)
    replay(bus, read_events(str(log)))
    feed.stop()
    progress, sites, blocks = alone
    assert progress.state is not sites.state
    assert browser.state(progress.headline)["value"] == browser.state(dash.progress.headline)["value"]
    assert browser.state(sites.table)["value"] == browser.state(dash.sites.table)["value"]
    assert sites.snapshot()["stampede"]["completed"] == 32
    assert browser.state(blocks.table)["value"] == browser.state(dash.blocks.table)["value"]
    assert "16x1 cores" in browser.state(blocks.table)["value"]
