"""The dashboard on a real run over simulated sites, seen through the widget comms."""

from __future__ import annotations

import asyncio
from collections import Counter
from html.parser import HTMLParser

import pytest

from swiftnb.widgets import Dashboard
from widget_helpers import BAG, SIM_CONF, run_async, start

pytestmark = pytest.mark.timeout(120)


class _Rows(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def table_rows(html: str) -> list[dict[str, str]]:
    """The rows of an HTML table widget value, keyed by the header cells."""
    p = _Rows()
    p.feed(html)
    header, *rows = p.rows
    return [dict(zip(header, r)) for r in rows]


def _final_status(events):
    last = {}
    for e in events:
        if e.kind == "TASK_STATUS_CHANGE":
            last[e["taskid"]] = int(e["status"])
    return Counter(last.values())


def test_progress_sites_and_chart_as_the_browser_sees_them(tmp_path, browser):
    async def main():
        handle = start(BAG % 300, SIM_CONF, tmp_path)
        dash = Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash

    handle, dash = run_async(main())
    assert dash.feed.stopped
    status = _final_status(handle.event_list)
    assert status[7] > 0 and status[5] > 0  # the flaky site failed some attempts
    # progress bars: value = tasks in that state, max = all tasks
    bars = dash.progress.bars
    completed = browser.state(bars[7])
    failed = browser.state(bars[5])
    assert completed["value"] == status[7]
    assert failed["value"] == status[5]
    assert completed["max"] == sum(status.values())
    assert browser.state(bars[2])["value"] == 0  # nothing left active
    labels = dash.progress._labels
    assert browser.state(labels[7])["value"] == str(status[7])
    summary = browser.state(dash.progress.summary)["value"]
    assert "<b>jobs</b> 300 " in summary
    # sites table: the scheduler's final scores and counts
    rows = {r["site"]: r for r in table_rows(browser.state(dash.sites.table)["value"])}
    assert set(rows) == {"good", "flaky"}
    for snap in handle.scheduler.state()["sites"]:
        row = rows[snap["site"]]
        assert row["score"] == f"{snap['score']:.2f}"
        assert row["tscore"] == f"{snap['tscore']:.2f}"
        assert int(row["completed"]) == snap["completed"]
        assert int(row["failed"]) == snap["failed"]
        assert row["running"] == "0" and row["queued"] == "0"
    assert int(rows["flaky"]["failed"]) > 0 and rows["good"]["failed"] == "0"
    assert float(rows["good"]["score"]) > float(rows["flaky"]["score"])
    # the live chart: its bokeh document patches reached the browser as custom messages
    chart = dash.sites.chart
    patches = browser.customs(chart.widget)
    assert patches and all(p.get("msg") == "patch" for p in patches)
    assert any("ColumnsStreamed" in str(p.get("payload")) for p in patches)
    assert set(chart.sites) == {"good", "flaky"}
    assert len(chart.source.data["t"]) == chart.points >= 1
    assert chart.source.data["good"][-1] == pytest.approx(
        min(100.0, handle.scheduler.state()["sites"][0]["tscore"]), rel=1e-3)


def test_slider_changes_the_running_scheduler_and_is_logged(tmp_path, browser):
    conf = SIM_CONF + "\njobSubmitThrottle: 4\n"

    async def main():
        handle = start(BAG % 400, conf, tmp_path)
        dash = Dashboard(handle)
        panel = dash.throttles
        loop = asyncio.get_running_loop()
        moved = {}
        ends = []

        def move() -> None:
            # what the browser sends when the person releases the sliders
            browser.send(panel.sliders["jobSubmitThrottle"], value=2)
            browser.send(panel.site, index=panel.site.options.index("flaky"))  # dropdowns sync index
            browser.send(panel.sliders["maxParallelTasks"], value=1)
            moved["at_job_end"] = len(ends)
            moved["throttles"] = handle.scheduler.throttles()

        def watch(e) -> None:
            if e.kind == "JOB_END":
                ends.append(e)
                if len(ends) == 50:
                    loop.call_soon(move)

        handle.bus.subscribe(watch)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash, moved

    handle, dash, moved = run_async(main())
    assert moved["at_job_end"] < 400  # moved while the run was going
    th = moved["throttles"]
    assert th["jobSubmitThrottle"] == 2
    assert th["sites"]["flaky"]["maxParallelTasks"] == 1
    assert th["sites"]["good"]["maxParallelTasks"] == 16  # only the chosen site
    logged = [(e["name"], e["host"], e["old"], e["new"]) for e in handle.event_list
              if e.kind == "THROTTLE" and e["name"] != "parallelTasks"]
    assert ("jobSubmitThrottle", None, 4, 2) in logged
    assert ("maxParallelTasks", "flaky", 16, 1) in logged
    # from the change on, the flaky site is only given a job when it holds none
    events = handle.event_list
    changed = next(i for i, e in enumerate(events) if e.kind == "THROTTLE"
                   and e["name"] == "maxParallelTasks")
    job_host, task_host, held, selections = {}, {}, Counter(), 0
    for i, e in enumerate(events):
        if e.kind == "CONTACT_SELECTED" and e["host"] == "flaky" and i > changed:
            selections += 1
            assert held["flaky"] == 0, i
        elif e.kind == "THREAD_ASSOCIATION":
            job_host[e["jobid"]] = e["host"]
            held[e["host"]] += 1
        elif e.kind == "JOB_TASK":
            task_host[e["taskid"]] = job_host[e["jobid"]]
        elif e.kind == "TASK_STATUS_CHANGE" and int(e["status"]) in (5, 6, 7):
            held[task_host[e["taskid"]]] -= 1
    assert selections > 0
    # the THROTTLE log table and the sliders, as the browser sees them
    rows = table_rows(browser.state(dash.throttles.log)["value"])
    assert {"name": "maxParallelTasks", "host": "flaky", "old": "16", "new": "1"}.items() \
        <= {k: v for r in rows if r["name"] == "maxParallelTasks" for k, v in r.items()}.items()
    assert browser.state(dash.throttles.sliders["jobSubmitThrottle"])["value"] == 2
    assert browser.state(dash.throttles.sliders["maxParallelTasks"])["value"] == 1
    assert not dash.throttles.errors


def test_a_refused_value_is_shown_not_raised(tmp_path, browser):
    async def main():
        handle = start(BAG % 20, SIM_CONF, tmp_path)
        dash = Dashboard(handle)
        browser.send(dash.throttles.site, index=2)
        # initialParallelTasks > maxParallelTasks is refused by the scheduler
        dash.throttles._moved({"owner": dash.throttles.sliders["maxParallelTasks"], "new": 0})
        await handle
        return dash

    dash = run_async(main())
    assert dash.throttles.errors
    assert "maxParallelTasks" in browser.state(dash.throttles.status)["value"]


def test_updates_are_batched_and_rate_limited(tmp_path, browser):
    async def main():
        loop = asyncio.get_running_loop()
        handle = start(BAG % 2000, SIM_CONF, tmp_path)
        dash = Dashboard(handle)
        t0 = loop.time()
        await handle
        await asyncio.sleep(0.05)
        return handle, dash, loop.time() - t0

    handle, dash, elapsed = run_async(main(), timeout=110)
    feed = dash.feed
    status_changes = sum(1 for e in handle.event_list if e.kind == "TASK_STATUS_CHANGE")
    assert feed.events_seen >= status_changes >= 4 * 2000
    # every panel renders at most once per flush interval (0.2 s: <= 5 per second)
    bound = elapsed / feed.interval + 3
    for panel in dash.panels:
        assert feed.renders_of(panel) <= bound, (type(panel).__name__, elapsed)
    # the browser gets one update per flush at most, not one per event
    completed_bar = dash.progress.bars[7]
    assert browser.updates(completed_bar) <= feed.flushes + 1
    assert browser.updates(dash.sites.table) <= feed.flushes + 1
    # and no widget gets more: a message per flush and widget that changed, however many
    # events the flush folded (a count against the events would depend on how long the
    # run took, i.e. on the machine's load)
    updates = Counter(cid for t, cid, d, _b in browser.messages
                      if t == "comm_msg" and d.get("method") == "update")
    assert updates and max(updates.values()) <= feed.flushes + 1
    assert feed.flushes < status_changes / 10


def test_the_feed_detaches_when_the_run_ends(tmp_path, browser):
    async def main():
        handle = start(BAG % 30, SIM_CONF, tmp_path)
        dash = Dashboard(handle)
        subscribed = dash.feed._buffer.append in handle.bus._subscribers
        await handle
        await asyncio.sleep(0.05)
        return handle, dash, subscribed

    handle, dash, subscribed = run_async(main())
    assert dash.feed.stopped and dash.feed._timer is None
    assert subscribed and dash.feed._buffer.append not in handle.bus._subscribers
    assert dash.failures._unsubscribe is None      # no longer told of the run's failures
    assert handle._failures._listeners == []
    before = len(browser.messages)
    handle.bus.emit("TASK_STATUS_CHANGE", {"taskid": "urn:x", "status": 2})
    dash.feed.flush()
    assert len(browser.messages) == before
    assert "ended" in browser.state(dash.title)["value"]


def test_a_dashboard_opened_after_the_run_shows_it_all(tmp_path, browser):
    async def main():
        handle = start(BAG % 40, SIM_CONF, tmp_path)
        early = Dashboard(handle)
        await handle
        late = Dashboard(handle)          # e.g. displayed again in a later cell
        await asyncio.sleep(0.05)
        return early, late

    early, late = run_async(main())
    assert late.feed.stopped
    assert late.progress.snapshot() == early.progress.snapshot()
    assert sum(late.progress.snapshot().values()) >= 40
    assert browser.state(late.sites.table)["value"] == browser.state(early.sites.table)["value"]


def test_site_sets_follow_the_sitesets_policy(tmp_path, browser):
    conf = SIM_CONF + '\nsiteSelectionPolicy: "sitesets"\n'

    async def main():
        handle = start(BAG % 150, conf, tmp_path)
        dash = Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash

    handle, dash = run_async(main())
    moves = [(e["host"], e["set"]) for e in handle.event_list if e.kind == "SITE_SET"]
    assert ("flaky", "hibernated") in moves      # a failure hibernates the flaky site
    last = dict(moves)
    rows = {r["site"]: r for r in table_rows(browser.state(dash.sites.table)["value"])}
    for site in ("good", "flaky"):
        assert rows[site]["set"] == last.get(site, "candidate")
