"""The dashboard's panels on a real local run (real apps, one failing), read as a browser
reads them: the header's counts, progress with rate and ETA per app, the task stream,
the run history, failure rows and their details, the retry rules, cancel, the graph."""

from __future__ import annotations

import asyncio
import re
import shlex

import pytest

from swiftnb.widgets import Dashboard
from widget_helpers import run_async, start

pytestmark = pytest.mark.timeout(120)

CONF = "lazyErrors: true\n"

# 4 echo calls, a cat joining them, an ls of a file that is not there (exit code 2)
SCRIPT = """type file;
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
foreach i in [1:4] {
  g[i] = greet(i);
}
file all <"all.txt">;
all = join(g);
file bad <"bad.txt">;
bad = look("no such file's name");
"""
BAD_NAME = "no such file's name"

DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
SPAN = re.compile(r"ETA (\d+(?:\.\d)?) s|ETA (\d+) min (\d\d) s|ETA (\d+) h (\d\d) min")


def _eta_seconds(text: str) -> float:
    m = SPAN.search(text)
    assert m, text
    if m.group(1):
        return float(m.group(1))
    if m.group(2):
        return int(m.group(2)) * 60 + int(m.group(3))
    return int(m.group(4)) * 3600 + int(m.group(5)) * 60


def _run(tmp_path, browser, conf: str = CONF, script: str = SCRIPT):
    """The script under a dashboard; the headline as it was after the first call ended."""
    async def main():
        handle = start(script, conf, tmp_path)
        dash = Dashboard(handle)
        seen: list[str] = []
        loop = asyncio.get_running_loop()

        def first_done(e):
            if e.kind == "END_SUCCESS" and not seen:
                seen.append("")
                loop.call_soon(lambda: (dash.flush(), seen.append(
                    browser.state(dash.progress.headline)["value"])))

        handle.bus.subscribe(first_done)
        await handle
        await asyncio.sleep(0.05)
        return handle, dash, seen[-1] if seen else ""

    return run_async(main())


def test_counts_progress_eta_and_per_app(tmp_path, browser):
    handle, dash, midway = _run(tmp_path, browser)
    assert handle.status() == "failed"
    counts = browser.state(dash.counts)["value"]
    assert "6 of 6 done" in counts and "1 failed" in counts
    assert "color:#c00" in counts                                  # red, in the header
    assert browser.state(dash.tabs)["titles"][0] == "Failures (1)"
    title = browser.state(dash.title)["value"]
    assert "ended: failed" in title and DATE.search(title)         # a date, not a float
    # while it ran: N of M, elapsed, a rate and an ETA of a sane size
    assert re.search(r"<b>\d of \d done</b>", midway), midway
    assert "elapsed" in midway and "/s" in midway
    assert 0 <= _eta_seconds(midway) < 600
    # at the end: finished, no ETA
    final = browser.state(dash.progress.headline)["value"]
    assert "<b>6 of 6 done</b> (1 failed)" in final and "finished" in final
    assert "ETA" not in final
    apps = browser.state(dash.progress.apps_html)["value"]
    rows = re.findall(r"<tr><td[^>]*>(\w+)</td><td[^>]*>(\d+)</td><td[^>]*>(\d+)</td>"
                      r"<td[^>]*>(\d+)</td>", apps)
    # per app name as Swift logs it (the tr: the command's first word)
    assert sorted(rows) == [("cat", "1", "1", "0"), ("echo", "4", "4", "0"),
                            ("ls", "1", "1", "1")]


def test_task_stream_has_one_bar_per_task(tmp_path, browser):
    handle, dash, _ = _run(tmp_path, browser)
    tasks = {e.fields["taskid"] for e in handle.event_list if e.kind == "TASK_STATUS_CHANGE"}
    stream = dash.stream
    assert len(tasks) == 6
    assert stream.data_rows() == len(tasks)
    data = stream.done_source.data
    assert sorted(stream.drawn) == sorted(tasks)
    assert len(data["left"]) == len(data["right"]) == len(data["row"]) == len(tasks)
    assert all(r > left for left, r in zip(data["left"], data["right"]))
    assert data["state"].count("failed") == 1 and data["state"].count("completed") == 5
    assert all(row.startswith("local ") for row in data["row"])
    # wall clock: the axis is in dates (epoch milliseconds)
    assert stream.figure.xaxis[0].__class__.__name__ == "DatetimeAxis"
    assert min(data["left"]) > 1e12
    assert list(stream.figure.y_range.factors) == stream.stream.rows()


def test_history_lists_the_runs_of_the_directory(tmp_path, browser):
    async def earlier():
        await start('trace("one");', "", tmp_path)
        await start(SCRIPT.replace("foreach i in [1:4]", "foreach i in [1:2]"), "",
                    tmp_path)

    run_async(earlier())
    handle, dash, _ = _run(tmp_path, browser)
    history = dash.history
    assert history.runs == []                     # read when the tab is first opened
    browser.send(dash.tabs, selected_index=dash.tabbed.index(history))
    assert [r.runid for r in history.runs] == ["run003", "run002", "run001"]
    assert [r.status for r in history.runs] == ["failed", "failed", "ok"]
    assert history.runs[0].tasks == 6 and history.runs[2].tasks == 0
    html = browser.state(history.table)["value"]
    assert html.count("<tr>") == 1 + 3                          # header + one per run
    assert len(DATE.findall(html)) == 3
    assert [v for _label, v in history.choice.options] == ["run003", "run002", "run001"]
    path = history.open_report("run002")
    assert path == str(tmp_path / "run002" / "report.html")
    assert (tmp_path / "run002" / "report.html").stat().st_size > 0
    assert "report.html" in browser.state(history.link)["value"]


def test_failure_row_opens_command_line_stdout_stderr_and_info(tmp_path, browser):
    handle, dash, _ = _run(tmp_path, browser)
    panel = dash.failures
    row = panel.rows[0]
    assert browser.state(row.details.layout)["display"] == "none"
    browser.click(row.toggle)
    assert browser.state(row.details.layout)["display"] == ""
    details = browser.state(row.details)["value"]
    quoted = shlex.join(["ls", BAD_NAME])
    assert quoted == "ls 'no such file'\"'\"'s name'"
    import html as H
    assert H.escape(quoted) in details
    assert "No such file or directory" in details                 # stderr
    info = handle.run_dir.path + f"/{handle.run_dir.site_run}.d/"
    assert H.escape(info) in details and "EXIT_CODE=2" in details  # the -info file
    assert "JOBID=" in details
    text = browser.state(row.text)["value"]
    assert DATE.search(text) and "exit code 2 on local" in text
    browser.click(row.toggle)
    assert browser.state(row.details.layout)["display"] == "none"


def test_retry_only_for_attempts_not_retried_to_success(tmp_path, browser):
    marker = tmp_path / "marker"
    script = SCRIPT + f"""
app (file o) flaky () {{
  sh "-c" "test -e {marker} && echo second || {{ touch {marker}; echo first >&2; exit 3; }}"
     stdout=@o;
}}
file f <"flaky.txt">;
f = flaky();
"""
    handle, dash, _ = _run(tmp_path, browser, conf=CONF + "executionRetries: 1\n",
                           script=script)
    assert (tmp_path / "flaky.txt").read_text() == "second\n"
    by_app = {f.command.split()[0]: (i, f) for i, f in enumerate(dash.failures.failures)}
    assert set(by_app) == {"ls", "sh"}
    # ls failed twice (the run's own retry failed too): retry offered on both rows
    assert sum(1 for f in dash.failures.failures if f.command.startswith("ls")) == 2
    for i, f in enumerate(dash.failures.failures):
        visibility = browser.state(dash.failures.buttons[i].layout)["visibility"]
        text = browser.state(dash.failures.rows[i].text)["value"]
        if f.command.startswith("sh"):
            # its second attempt succeeded: nothing to retry
            assert visibility == "hidden" and "succeeded on a later attempt" in text
        else:
            assert visibility == "visible"


def test_cancel_button_ends_the_run_as_canceled(tmp_path, browser):
    script = """type file;
app (file o) nap (int i) {
  sleep "30" stdout=@o;
}
file n[] <simple_mapper; prefix="n", suffix=".txt">;
foreach i in [1:3] {
  n[i] = nap(i);
}
"""

    async def main():
        handle = start(script, CONF, tmp_path)
        dash = Dashboard(handle)
        loop = asyncio.get_running_loop()
        clicked = []

        def on_event(e):
            if e.kind == "TASK_STATUS_CHANGE" and e.fields.get("status") == 2 and not clicked:
                clicked.append(True)
                loop.call_soon(browser.click, dash.cancel_button)

        handle.bus.subscribe(on_event)
        await asyncio.wait_for(handle._wait(), 60)
        await asyncio.sleep(0.05)
        return handle, dash

    handle, dash = run_async(main(), timeout=90)
    assert handle.status() == "canceled"
    assert "ended: canceled" in browser.state(dash.title)["value"]
    assert browser.state(dash.cancel_button)["disabled"] is True
    assert not (tmp_path / "n1.txt").exists()


def test_graph_has_one_node_per_call_and_file(tmp_path, browser):
    handle, dash, _ = _run(tmp_path, browser)
    calls = dash.graph.calls
    assert len(calls) == 6
    assert sorted(proc for _j, proc, _i, _o in calls) == ["greet"] * 4 + ["join", "look"]
    svg = browser.state(dash.graph.image)["value"]
    assert svg.count("class='swiftnb-call'") == 6
    files = {f for _j, _p, ins, outs in calls for f in ins + outs}
    assert files == {f"g000{i}.txt" for i in range(1, 5)} | {"all.txt", "bad.txt"}
    assert svg.count("class='swiftnb-file'") == len(files)
    # edges: 4 greet -> g, 4 g -> join, join -> all, look -> bad
    assert svg.count("<line ") == 10
