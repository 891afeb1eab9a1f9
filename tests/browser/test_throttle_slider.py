"""A throttle slider moved in JupyterLab (headless Chromium, keyboard on the slider's
handle) changes the width of a local run: the `%%swift` cell's dashboard, on the default
local site (the single-site executor), whose maxParallelTasks starts at 2.

The kernel side says what happened: the last cell awaits the run and prints, from the
run's own events, the THROTTLE changes and the most tasks running at once before the
first change and after the last, which the test reads from the page.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat

from labdriver import NotebookPage

NAME = "throttle-slider.ipynb"
REPORT = "THROTTLE-CHECK"

SCRIPT = """%%swift -o run
type file;
app (file o) nap (int i) {
  sleep "0.4" stdout=@o;
}
file f[] <simple_mapper; prefix="naps/f", suffix=".txt">;
foreach i in [1:60] {
  f[i] = nap(i);
}
"""

CHECK = f"""import json
await run
events = run.event_list
moves = [i for i, e in enumerate(events)
         if e.kind == "THROTTLE" and e["name"] == "maxParallelTasks"]
job_start, task_of, running, widths = {{}}, {{}}, set(), []
for i, e in enumerate(events):
    if e.kind == "JOB_START":
        job_start[e["jobid"]] = i
    elif e.kind == "JOB_TASK":
        task_of[e["taskid"]] = job_start[e["jobid"]]
    elif e.kind == "TASK_STATUS_CHANGE":
        if int(e["status"]) == 2:
            running.add(e["taskid"])
            widths.append((task_of[e["taskid"]], i, len(running)))
        else:
            running.discard(e["taskid"])
first, last = (moves[0], moves[-1]) if moves else (len(events), len(events))
print("{REPORT}", json.dumps({{
    "ok": run.ok,
    "moves": [(events[i]["old"], events[i]["new"]) for i in moves],
    "before": max([n for _p, a, n in widths if a < first], default=0),
    "after": max([n for p, _a, n in widths if p > last], default=0),
    "limit": run.executor.throttles()["sites"]["local"]["maxParallelTasks"],
}}))
"""

#: the dashboard's Throttles tab
THROTTLES_TAB = """
const tabs = Array.from(panel.content.node.querySelectorAll('.lm-TabBar-tab'));
return tabs.find(t => t.textContent.trim().startsWith('Throttles')) || null;
"""

#: the maxParallelTasks slider's handle, or why there is none to move
ROW = """
const rows = Array.from(panel.content.node.querySelectorAll('.widget-hbox'));
const row = rows.find(r => (r.querySelector('.widget-label') || {}).textContent
                           === 'maxParallelTasks');
"""

HANDLE = ROW + """
const slider = row && row.querySelector('.widget-slider');
if (!slider) { return 'no maxParallelTasks slider'; }
const handle = slider.querySelector('.noUi-handle');
if (!handle) { return 'no slider handle'; }
if (slider.querySelector('[disabled]')) { return 'the slider is disabled'; }
handle.scrollIntoView({block: 'center'});
handle.focus();
return handle;
"""

READOUT = ROW + """
return row ? row.innerText : null;
"""


def _write_notebook(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell("%load_ext swiftnb"),
                nbformat.v4.new_code_cell(SCRIPT),
                nbformat.v4.new_code_cell(CHECK),
                nbformat.v4.new_code_cell(
                    'print("ENDED", sum(1 for e in run.event_list if e.kind == "JOB_END"))')]
    nbformat.write(nb, root / NAME)


def _run_cell(page: NotebookPage, index: int) -> None:
    page.js(f"panel.content.activeCellIndex = {index};"
            "app.commands.execute('notebook:run-cell'); return true;")


def _ended_jobs(page: NotebookPage) -> int:
    """How many of the run's jobs have ended, asked of the kernel (the run goes on in the
    background while the kernel is idle)."""
    _run_cell(page, 3)
    page.wait_idle()
    lines = [line for line in page.text().splitlines() if line.startswith("ENDED ")]
    return int(lines[-1].split()[1]) if lines else 0


def _started(page: NotebookPage, jobs: int = 4, within: float = 60.0) -> None:
    """Until ``jobs`` of the run have ended, so that the slider moves mid-run."""
    deadline = time.monotonic() + within
    while _ended_jobs(page) < jobs:
        assert time.monotonic() < deadline, f"the run did not start within {within:.0f} s"
        time.sleep(0.3)


def test_a_slider_move_changes_the_local_site_width(lab, notebook, artifacts) -> None:
    from selenium.webdriver.common.keys import Keys

    _write_notebook(lab.root)
    page: NotebookPage = notebook(NAME)
    _run_cell(page, 0)
    page.wait_idle()
    _run_cell(page, 1)
    page.wait_idle()
    page.wait_rendered()
    _started(page)
    tab = page.js(THROTTLES_TAB)
    assert tab is not None, f"no Throttles tab; screenshot: {page.screenshot('throttle-slider')}"
    tab.click()
    handle = page.js(HANDLE)
    assert not isinstance(handle, str), \
        f"{handle}; screenshot: {page.screenshot('throttle-slider')}"
    for _ in range(4):                     # 2 -> 6, one step a key (each a release)
        handle.send_keys(Keys.ARROW_RIGHT)
        time.sleep(0.2)
    readout = ""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:     # the kernel applied it: the readout follows
        readout = str(page.js(READOUT))
        if readout.strip().endswith("6"):
            break
        time.sleep(0.2)
    _run_cell(page, 2)
    # the kernel may say idle while the cell awaits the run (ipykernel 7): wait for the line
    deadline = time.monotonic() + 120
    lines: list[str] = []
    while not lines and time.monotonic() < deadline:
        time.sleep(0.5)
        lines = [line for line in page.text().splitlines() if line.startswith(REPORT)]
    shot = page.screenshot("throttle-slider")
    assert lines, f"no report from the kernel; screenshot: {shot}"
    report = json.loads(lines[-1][len(REPORT):])
    assert report["ok"], report
    assert report["moves"] and report["moves"][0][0] == 2 and report["moves"][-1][1] == 6, \
        (report, readout)
    assert report["limit"] == 6
    assert report["before"] <= 2 < report["after"] <= 6, report
    assert page.problems() == [], f"screenshot: {shot}"
