"""Memoized re-runs in the dashboard, on real local runs with ``memoize: true``: the calls
reused (JOB_CACHED) are counted apart in the header and progress, drawn apart in the task
stream and the graph, noted by the failures tab; a failure row explains its call from the
run store (and says so when there is none); the history reads the store beside the logs,
also a Swift/K 0.96 log's run.  And the tail mode stops cleanly on a log that turns out
not to be one."""

from __future__ import annotations

import asyncio
import bz2
import re
from pathlib import Path

import pytest

from swiftnb.widgets import Dashboard
from widget_helpers import run_async, start

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"
MEMO = "lazyErrors: true\nmemoize: true\n"

# 3 echo calls, a cat joining them, an ls that fails (exit code 2): 5 calls
WORKFLOW = """type file;
app (file o) greet (int i) {
  echo "hello" i stdout=@o;
}
app (file o) join (file a[]) {
  cat @filenames(a) stdout=@o;
}
app (file o) look (string p) {
  ls p stdout=@o;
}
file g[] <simple_mapper; prefix="g", suffix=".txt">;
foreach i in [1:3] {
  g[i] = greet(i);
}
file all <"all.txt">;
all = join(g);
file bad <"bad.txt">;
bad = look("no such file");
"""


def _twice(tmp_path, conf: str = MEMO):
    """The workflow once, then again under a dashboard."""
    async def main():
        await start(WORKFLOW, conf, tmp_path)
        handle = start(WORKFLOW, conf, tmp_path)
        dash = Dashboard(handle)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash

    return run_async(main())


def test_a_rerun_shows_its_reused_calls_apart(tmp_path, browser):
    handle, dash = _twice(tmp_path)
    cached = [e for e in handle.event_list if e.kind == "JOB_CACHED"]
    assert len(cached) == 4                       # all but the failing call
    # header and progress: done includes them, "cached" says how many
    counts = browser.state(dash.counts)["value"]
    assert "5 of 5 done" in counts and "4 cached" in counts and "1 failed" in counts
    headline = browser.state(dash.progress.headline)["value"]
    assert "<b>5 of 5 done</b> (4 cached, 1 failed)" in headline
    bar = browser.state(dash.progress.cached_bar)
    assert (bar["value"], bar["max"]) == (4, 5)
    assert browser.state(dash.progress.cached_label)["value"] == "4"
    assert browser.state(dash.progress.cached_row.layout)["display"] == ""
    apps = browser.state(dash.progress.apps_html)["value"]
    rows = re.findall(r"<tr>" + r"<td[^>]*>(\w+)</td>" * 5, apps)
    assert sorted(rows) == [("cat", "1", "1", "0", "1"), ("echo", "3", "3", "0", "3"),
                            ("ls", "1", "1", "1", "0")]
    # task stream: one bar (the ls that ran), 4 diamonds on the "cached" row
    stream = dash.stream
    assert stream.stream.cached == 4 and stream.cached_points() == 4
    assert list(stream.figure.y_range.factors)[-1] == "cached"
    data = stream.cached_source.data
    assert sorted(data["jobid"]) == sorted(str(e.fields["jobid"]) for e in cached)
    assert set(data["state"]) == {"cached"} and stream.data_rows() == 1
    # graph: the reused calls marked
    graph = browser.state(dash.graph.image)["value"]
    assert graph.count("swiftnb-cached") == 4 and "4 reused (cached)" in graph
    # failures: the failed call, and the reused ones counted apart
    header = browser.state(dash.failures.header)["value"]
    assert header.startswith("1 failed attempt") and "4 calls reused, not run" in header
    # the same from the run's log (JOB_CACHED lines read back)
    replay = Dashboard.from_log(handle.log_path, follow=False, charts=False)
    assert (replay.state.cached, replay.state.done) == (4, 5)
    assert replay.stream.stream.cached == 4 and replay.failures.cached == 4


def test_a_failure_row_explains_its_call_from_the_store(tmp_path, browser):
    handle, dash = _twice(tmp_path)
    panel = dash.failures
    row = panel.rows[0]
    assert browser.state(row.explain.layout)["visibility"] == "visible"
    browser.click(row.explain)
    details = browser.state(row.details)["value"]
    assert browser.state(row.details.layout)["display"] == ""      # opened
    assert "explanation" in details and "why it ran:" in details
    not_cached = {e.fields["jobid"]: e.fields["reason"] for e in handle.event_list
                  if e.kind == "JOB_NOT_CACHED"}
    assert list(not_cached.values())[0] in details
    assert "bad.txt" in details                                      # its output, explained


def test_explain_without_a_store_says_so(tmp_path, browser):
    handle, dash = _twice(tmp_path, conf="lazyErrors: true\n")
    assert not [e for e in handle.event_list if e.kind == "JOB_CACHED"]
    text = dash.failures.explain(0)
    assert "memoization was off" in text and "no run store" in text
    assert "reused" not in browser.state(dash.failures.header)["value"]


def test_history_reads_the_store_and_logs_that_predate_it(tmp_path, browser):
    old = tmp_path / "run000"                      # a Swift/K 0.96 run: a log, no store
    old.mkdir()
    (old / "stampede-run000.log").write_bytes(
        bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()))
    handle, dash = _twice(tmp_path)
    history = dash.history
    browser.send(dash.tabs, selected_index=dash.tabbed.index(history))
    runs = {r.runid: r for r in history.runs}
    assert {"run001", "run002", "run000"} <= set(runs)
    assert runs["run002"].stored.startswith("run002-") and runs["run002"].cached == 4
    assert runs["run001"].stored.startswith("run001-") and runs["run001"].cached == 0
    assert runs["run000"].stored == "" and runs["run000"].tasks > 0
    table = browser.state(history.table)["value"]
    assert "<th style='padding:0 6px;text-align:left'>cached</th>" in table
    assert "run store not read" not in table
    # a run the store keeps whose directory is gone: listed from the store alone
    import shutil

    shutil.rmtree(tmp_path / "run001")
    history.refresh()
    gone = next(r for r in history.runs if r.stored.startswith("run001-"))
    assert gone.log == "" and gone.tasks == 5 and gone.failed == 1
    assert history.open_report(gone.runid) is None
    assert "its run directory is gone" in browser.state(history.link)["value"]


def test_following_a_log_that_turns_binary_stops_with_the_message(tmp_path, browser):
    text = bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes())
    growing = tmp_path / "growing.log"

    async def follow():
        growing.write_bytes(text[: len(text) // 2])
        dash = Dashboard.from_log(growing, poll=0.05, charts=False)
        await asyncio.sleep(0.3)
        with open(growing, "ab") as fh:
            fh.write(b"\x00" * 64)
        await asyncio.wait_for(dash._tail_task, 10)   # ends, and raises nothing
        return dash

    dash = run_async(follow())
    assert dash.feed.stopped and dash.status() == "ended"
    assert dash.tail_error is not None and "NUL byte" in dash.tail_error
    link = browser.state(dash.link)["value"]
    assert "stopped following the log" in link and "NUL byte" in link
    assert dash.state.known > 0                   # what came before was shown
