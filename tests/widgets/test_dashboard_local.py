"""The dashboard on real processes: failures and retry on the local site, coaster blocks
on a local coaster site, and panels fed by a log file."""

from __future__ import annotations

import asyncio
import bz2
from pathlib import Path

import pytest

from swiftnb.widgets import Dashboard
from widget_helpers import BAG, SIM_CONF, run_async, start

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"

FAILING = """type file;
app (file o) show (string p) {
  cat p stdout=@o;
}
file a <"a.txt">;
a = show("%s");
"""


def test_failure_shows_command_exit_code_stderr_source_and_retry_works(tmp_path, browser):
    missing = tmp_path / "missing.txt"

    async def main():
        handle = start(FAILING % missing, "", tmp_path)
        dash = Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        panel = dash.failures
        first = browser.state(panel.rows[0][2])["value"]
        missing.write_text("now it exists\n")   # the cause is fixed
        browser.click(panel.buttons[0])
        assert panel.failures[0].retry_state == "running"
        await asyncio.gather(*panel.retries)
        panel.render()
        return handle, dash, first

    handle, dash, first = run_async(main())
    assert not handle.ok
    assert browser.state(dash.failures.header)["value"] == "1 failed attempt"
    assert f"<b>cat {missing}</b>" in first
    assert "exit code 1 on local" in first
    assert "No such file or directory" in first                       # stderr tail
    assert "&lt;string&gt;:3:3 <code>cat p stdout=@o;</code>" in first  # Swift source line
    # retry: the same call again (after the run, through a fresh executor): it now works
    f = dash.failures.failures[0]
    assert f.retry_state == "ok on local" and f.retry_result.ok
    assert (tmp_path / "a.txt").read_text() == "now it exists\n"
    assert "retry: ok on local" in browser.state(dash.failures.rows[0][2])["value"]
    assert browser.state(dash.failures.buttons[0])["disabled"] is False


def test_retry_during_the_run_goes_through_the_run_executor(tmp_path, browser):
    """With lazyErrors the run goes on after a failure; a retry then uses its scheduler."""
    async def main():
        handle = start(BAG % 200, SIM_CONF, tmp_path)
        dash = Dashboard(handle)
        loop = asyncio.get_running_loop()
        tried = []

        def on_event(e):
            if e.kind == "APPLICATION_EXCEPTION" and not tried:
                tried.append(True)
                loop.call_soon(lambda: tried.append(dash.failures.retry(0)))

        handle.bus.subscribe(on_event)
        await handle
        await asyncio.gather(*dash.failures.retries)
        return handle, dash, tried

    handle, dash, tried = run_async(main())
    assert len(tried) == 2 and tried[1] is not None
    retried = dash.failures.retried
    assert len(retried) == 1 and retried[0].retry_result is not None
    assert retried[0].retry_state.startswith(("ok on ", "failed: exit code"))
    # the retry was one more attempt of that job in the run's own event stream
    jobid = retried[0].jobid
    starts = [e for e in handle.event_list if e.kind == "JOB_START" and e["jobid"] == jobid]
    assert len(starts) >= 2


def test_two_dashboards_and_a_late_one_show_the_same_failures(tmp_path, browser):
    """Panels only observe the run's own failure records: any number, at any time."""
    missing = tmp_path / "missing.txt"

    async def main():
        handle = start(FAILING % missing, "", tmp_path)
        first, second = Dashboard(handle), Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        late = Dashboard(handle)                 # opened after the run ended
        late.flush()
        missing.write_text("fixed\n")
        browser.click(late.failures.buttons[0])
        await asyncio.gather(*late.failures.retries)
        late.failures.render()
        return handle, (first, second, late)

    handle, dashes = run_async(main())
    assert len(handle.failures) == 1
    for dash in dashes:
        assert browser.state(dash.failures.header)["value"] == "1 failed attempt"
        row = browser.state(dash.failures.rows[0][2])["value"]
        assert f"<b>cat {missing}</b>" in row and "exit code 1 on local" in row
    # the two stopped with the run (retry offered then); the late one retried to success,
    # so it no longer offers a retry
    for dash in dashes[:2]:
        assert browser.state(dash.failures.buttons[0].layout)["visibility"] == "visible"
    assert browser.state(dashes[2].failures.buttons[0].layout)["visibility"] == "hidden"
    assert dashes[2].failures.failures[0].attempt is handle.failures[0]
    assert "retry: ok on local" in browser.state(dashes[2].failures.rows[0][2])["value"]
    assert handle.failures[0].retries[0].ok
    assert (tmp_path / "a.txt").read_text() == "fixed\n"


COASTER_CONF = """
sites: coast
site.coast {
  execution {
    type: "coaster"
    jobManager: "local:local"
    options { maxJobs: 2, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "00:10:00" }
  }
  workDirectory: "work"
  app.ALL { executable: "*", maxWallTime: "00:01:00" }
}
"""

ECHO = """type file;
app (file o) greet (int i) {
  echo "hello" i stdout=@o;
}
file f[] <simple_mapper; prefix="out/g", suffix=".txt">;
foreach i in [1:12] {
  f[i] = greet(i);
}
"""


def test_coaster_blocks_panel_on_a_local_coaster_site(tmp_path, browser):
    async def main():
        handle = start(ECHO, COASTER_CONF, tmp_path)
        dash = Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash

    handle, dash = run_async(main())
    assert handle.ok, handle.errors
    from test_dashboard_sim import table_rows

    rows = table_rows(browser.state(dash.blocks.table)["value"])
    requested = {e["id"] for e in handle.event_list if e.kind == "BLOCK_REQUESTED"}
    assert requested and {r["block"] for r in rows} == requested
    assert sum(int(r["done"]) for r in rows) == 12
    assert all(r["running"] == "0" for r in rows)
    assert all(r["state"] in ("shutdown", "done") for r in rows)   # seen to the end
    assert all(r["shape"].endswith("cores") for r in rows)
    assert all(r["time left"] == "" for r in rows)          # ended blocks have none
    assert dash.blocks.providers                             # the live coaster provider
    assert all(0 <= v <= 540 for v in dash.blocks.time_left.values())
    # the timeline got one bar per block
    timeline = dash.blocks.timeline
    assert sorted(timeline.source.data["id"]) == sorted(requested)
    assert browser.customs(timeline.widget)
    # worker ids of the tasks named these blocks
    wids = {e["workerid"].split(":")[0] for e in handle.event_list
            if e.kind == "TASK_STATUS_CHANGE" and e.get("workerid")}
    assert wids <= requested


def test_from_log_follows_a_growing_log(tmp_path, browser):
    async def live():
        handle = start(BAG % 150, SIM_CONF, tmp_path)
        dash = Dashboard(handle, charts=False)
        await handle
        return handle, dash

    handle, live_dash = run_async(live())
    text = Path(handle.log_path).read_bytes()
    growing = tmp_path / "growing.log"

    async def follow():
        growing.write_bytes(b"")
        dash = Dashboard.from_log(growing, poll=0.05, charts=False)
        cut = [0, len(text) // 3, 2 * len(text) // 3, len(text)]
        for a, b in zip(cut, cut[1:]):
            with open(growing, "ab") as fh:
                fh.write(text[a:b])
            await asyncio.sleep(0.3)
        await asyncio.wait_for(dash._tail_task, 10)
        return dash

    dash = run_async(follow())
    assert dash.feed.stopped
    assert dash.progress.snapshot() == live_dash.progress.snapshot()
    completed = browser.state(dash.progress.bars[7])["value"]
    assert completed == live_dash.progress.snapshot()["Completed"] > 0
    # the sites table from the log: same counts; scores are the logged tscores
    assert {k: (v["completed"], v["failed"]) for k, v in dash.sites.snapshot().items()} == \
        {k: (v["completed"], v["failed"]) for k, v in live_dash.sites.snapshot().items()}
    # a log has no scheduler to steer: the sliders are read-only
    assert all(browser.state(s)["disabled"] for s in dash.throttles.sliders.values())


def test_from_log_reads_a_real_swift_096_coaster_log(tmp_path, browser):
    log = tmp_path / "swift.log"
    log.write_bytes(bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()))
    dash = Dashboard.from_log(log, follow=False)
    assert dash.feed.stopped
    snap = dash.progress.snapshot()
    assert snap["Completed"] == 32 and snap["Failed"] == 0
    assert dash.state.known == 32
    blocks = dash.blocks.snapshot()
    assert len(blocks) == 2
    assert all(b["state"] == "done" for b in blocks.values())
    assert sum(b["done"] for b in blocks.values()) == 32
    assert browser.state(dash.progress.bars[7])["value"] == 32


def test_from_log_watches_a_run_of_another_process(tmp_path, browser):
    """`swiftnb run` in a separate process writes its log; the panels follow it."""
    import sys

    (tmp_path / "swift.conf").write_text(SIM_CONF + "\nexecutionRetries: 10\n")
    (tmp_path / "bag.swift").write_text(BAG % 120)

    async def main():
        dash = Dashboard.from_log(tmp_path / "watch.log", poll=0.05, charts=False)
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "swiftnb.cli", "run", "-config", "swift.conf",
            "-logfile", "watch.log", "bag.swift", cwd=tmp_path,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
        code = await proc.wait()
        await asyncio.wait_for(dash._tail_task, 20)
        return code, dash

    code, dash = run_async(main())
    assert code == 0
    assert dash.feed.stopped and "ended" in browser.state(dash.title)["value"]
    log_events = dash.feed.events_seen
    assert log_events > 120 * 4
    assert dash.state.known == 120 and dash.state.ok == 120
    assert browser.state(dash.progress.bars[7])["value"] == dash.progress.snapshot()["Completed"]
    done = {k: v["completed"] for k, v in dash.sites.snapshot().items()}
    assert set(done) == {"good", "flaky"} and sum(done.values()) == 120
    failed = dash.sites.snapshot()["flaky"]["failed"]
    assert failed > 0 and dash.failures.total == failed   # from APPLICATION_EXCEPTION lines
    assert "exit code 1" in browser.state(dash.failures.rows[0][2])["value"]
    assert not dash.failures.live                          # no run: nothing to retry
    assert browser.state(dash.failures.buttons[0].layout)["visibility"] == "hidden"
