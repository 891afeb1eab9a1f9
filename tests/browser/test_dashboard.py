"""The dashboard in JupyterLab (headless Chromium): it renders with its charts, the
header shows the failure count, and a failure row's **details** opens its stderr."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from labdriver import NotebookPage, RENDER

pytestmark = pytest.mark.timeout(600)

SCRIPT = """type file;
app (file o) greet (int i) {
  echo "hello" i stdout=@o;
}
app (file o) look (string p) {
  ls p stdout=@o;
}
file g[] <simple_mapper; prefix="g", suffix=".txt">;
foreach i in [1:4] {
  g[i] = greet(i);
}
file bad <"bad.txt">;
bad = look("no such file's name");
"""

CELLS = [
    "from swiftnb.config import load_config_text\n"
    "from swiftnb.runner import start_run\n"
    "from swiftnb.widgets import Dashboard\n"
    f"run = start_run({SCRIPT!r}, config=load_config_text('lazyErrors: true'), "
    "base_dir='.')\n"
    "dash = Dashboard(run)\n"
    "dash",
    "await run\n"
    "import asyncio\n"
    "await asyncio.sleep(1.5)\n"
    "run.status()",
]


def _notebook(path: Path) -> None:
    cells = [{"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
              "outputs": [], "source": src} for i, src in enumerate(CELLS)]
    path.write_text(json.dumps({
        "cells": cells, "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}}}))


#: the text of the first element matching a CSS selector in the notebook, or null
_TEXT = "const el = panel.content.node.querySelector(arguments[1]);" \
        "return el ? el.innerText : null;"

#: click the first button whose label is arguments[1]
_CLICK = """
const b = Array.from(panel.content.node.querySelectorAll('button'))
  .find(b => b.innerText.trim() === arguments[1]);
if (!b) { return false; }
b.click();
return true;
"""


def _wait_text(page: NotebookPage, selector: str, want: str, within: float) -> str:
    deadline = time.monotonic() + within
    text = None
    while time.monotonic() < deadline:
        text = page.js(_TEXT, selector)
        if isinstance(text, str) and want in text:
            return text
        time.sleep(0.3)
    shot = page.screenshot("dashboard-timeout")
    pytest.fail(f"{selector} never showed {want!r} (last: {text!r}); screenshot: {shot}")


def test_dashboard_renders_and_a_failure_row_opens_its_stderr(lab, notebook, artifacts):
    _notebook(lab.root / "dashboard-test.ipynb")
    page: NotebookPage = notebook("dashboard-test.ipynb")
    page.run_all()
    page.wait_rendered()
    counts = _wait_text(page, ".swiftnb-failcount", "1 failed", RENDER)
    assert counts.strip() == "1 failed"
    assert "5 of 5 done" in page.js(_TEXT, ".swiftnb-done")
    assert "Failures (1)" in page.text()
    charts = page.charts()
    assert charts and all(c.canvases > 0 for c in charts), charts   # the task stream too
    assert page.js(_TEXT, ".swiftnb-failure-stderr") is None       # closed
    assert page.js(_CLICK, "details")
    stderr = _wait_text(page, ".swiftnb-failure-stderr", "No such file or directory",
                        RENDER)
    assert "no such file's name" in stderr
    command = page.js(_TEXT, ".swiftnb-failure-command")
    assert "ls 'no such file'\"'\"'s name'" in command
    shot = page.screenshot("dashboard")
    assert page.problems() == [], f"screenshot: {shot}"
