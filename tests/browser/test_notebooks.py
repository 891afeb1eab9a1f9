"""The shipped notebooks, opened and run in JupyterLab in headless Chromium: every panel
and every chart renders, with no network but 127.0.0.1 (BokehJS comes from the installed
bokeh, not a CDN).  A screenshot of each is kept in tests/browser/artifacts/.

06-ssh-site and 07-batch-and-coasters-on-slurm are not run here: they need the private
sshd and Slurm that notebooks/conftest.py starts for nbval, which JupyterLab's kernels
(started by the one session-wide server) would not see; nbval runs them, and their
panels are the ones 01 and 02 show.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from labdriver import NOTEBOOKS, NotebookPage

#: notebook -> (the least number of widget panels, of bokeh charts) it shows once run
SHIPPED = {
    "01-first-workflow.ipynb": (1, 1),
    "02-swift-magic.ipynb": (1, 1),
    "03-site-selection-policies.ipynb": (0, 1),
    "04-coasters-and-blocks.ipynb": (0, 1),
    "05-analysing-a-swift-096-log.ipynb": (0, 1),
}
NOT_HERE = ("06-ssh-site.ipynb", "07-batch-and-coasters-on-slurm.ipynb")


def test_every_shipped_notebook_is_covered() -> None:
    assert sorted(SHIPPED) + sorted(NOT_HERE) == sorted(
        p.name for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_stored_outputs_hold_no_widget_reprs(name: str) -> None:
    """Before anything runs, a shipped notebook shows no ``VBox(children=...)`` text: it
    stores no widget views (their state would be a stale snapshot; they appear when run)."""
    nb = json.loads((NOTEBOOKS / name).read_text())
    views = [o for c in nb["cells"] for o in c.get("outputs", ())
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert views == [], f"{name} stores {len(views)} widget views"
    assert "widgets" not in nb["metadata"], f"{name} stores widget state"


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_notebook_renders_in_jupyterlab(name: str, notebook, artifacts: Path) -> None:
    page: NotebookPage = notebook(name)
    assert page.problems() == [], "failed views before running"
    page.run_all()
    page.wait_rendered()
    shot = page.screenshot(Path(name).stem)
    problems = page.problems()
    assert problems == [], f"{name}: {problems}; screenshot: {shot}"
    widgets_wanted, charts_wanted = SHIPPED[name]
    assert page.widget_count() >= widgets_wanted, f"{name}: no panel; screenshot: {shot}"
    charts = page.charts()
    assert len(charts) >= charts_wanted, f"{name}: {charts}; screenshot: {shot}"
    blank = [c for c in charts if c.canvases == 0]
    assert blank == [], f"{name}: charts without a canvas {blank}; screenshot: {shot}"
