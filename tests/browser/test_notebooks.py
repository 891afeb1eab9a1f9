"""The shipped notebooks, opened and run in JupyterLab in headless Chromium: every panel
and every chart renders, with no network but 127.0.0.1 (BokehJS comes from the installed
bokeh, not a CDN).  A screenshot of each is kept in tests/browser/artifacts/.

06-ssh-site and 07-batch-and-coasters-on-slurm run against the test session's sshd and
Slurm (tests/sshd.py, tests/slurm.py: skipped without them, failed under CI=true); their
kernels learn where those are from a kernelspec with the environment notebooks/conftest.py
gives them under nbval.  02 (the %%swift magic's dashboard) also runs in Notebook 7.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from labdriver import NOTEBOOKS, Browser, LabServer, NotebookPage
from slurm import Slurm
from sshd import SSHD

#: notebook -> (the least number of widget panels, of bokeh charts) it shows once run
SHIPPED = {
    "01-first-workflow.ipynb": (1, 1),
    "02-swift-magic.ipynb": (1, 1),
    "03-site-selection-policies.ipynb": (0, 1),
    "04-coasters-and-blocks.ipynb": (0, 1),
    "05-analysing-a-swift-096-log.ipynb": (1, 1),
    "06-ssh-site.ipynb": (1, 1),
    "07-batch-and-coasters-on-slurm.ipynb": (2, 2),
    "08-memoization.ipynb": (1, 0),
    "09-what-if.ipynb": (1, 1),
}
SSH_NOTEBOOK = "06-ssh-site.ipynb"
SLURM_NOTEBOOK = "07-batch-and-coasters-on-slurm.ipynb"
LOCAL = sorted(set(SHIPPED) - {SSH_NOTEBOOK, SLURM_NOTEBOOK})
OpenNotebook = Callable[..., NotebookPage]


def test_every_shipped_notebook_is_covered() -> None:
    assert sorted(SHIPPED) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_stored_outputs_hold_no_widget_reprs(name: str) -> None:
    """Before anything runs, a shipped notebook shows no ``VBox(children=...)`` text: it
    stores no widget views (their state would be a stale snapshot; they appear when run)."""
    nb = json.loads((NOTEBOOKS / name).read_text())
    views = [o for c in nb["cells"] for o in c.get("outputs", ())
             if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert views == [], f"{name} stores {len(views)} widget views"
    assert "widgets" not in nb["metadata"], f"{name} stores widget state"


def _renders(page: NotebookPage, name: str, shot_name: str | None = None) -> None:
    """Run every cell; then no failed view, every panel, a canvas in every chart."""
    assert page.problems() == [], "failed views before running"
    page.run_all()
    page.wait_rendered()
    shot = page.screenshot(shot_name or Path(name).stem)
    problems = page.problems()
    assert problems == [], f"{name}: {problems}; screenshot: {shot}"
    widgets_wanted, charts_wanted = SHIPPED[name]
    assert page.widget_count() >= widgets_wanted, f"{name}: no panel; screenshot: {shot}"
    charts = page.charts()
    assert len(charts) >= charts_wanted, f"{name}: {charts}; screenshot: {shot}"
    blank = [c for c in charts if c.canvases == 0]
    assert blank == [], f"{name}: charts without a canvas {blank}; screenshot: {shot}"


@pytest.mark.parametrize("name", LOCAL)
def test_notebook_renders_in_jupyterlab(name: str, notebook: OpenNotebook) -> None:
    _renders(notebook(name), name)


def test_ssh_notebook_renders_in_jupyterlab(notebook: OpenNotebook, lab: LabServer,
                                            sshd: SSHD) -> None:
    name = SSH_NOTEBOOK
    kernel = lab.add_python_kernel("python3-sshd", {
        "HOME": str(sshd.home), "SWIFTNB_DEMO_SSH_HOST": sshd.alias,
        "SWIFTNB_DEMO_SSH_WORKDIR": sshd.remote_work})
    _renders(notebook(name, kernel), name)


def test_slurm_notebook_renders_in_jupyterlab(notebook: OpenNotebook, lab: LabServer,
                                              slurm: Slurm) -> None:
    name = SLURM_NOTEBOOK
    kernel = lab.add_python_kernel("python3-slurm", {
        "SWIFTNB_DEMO_SLURM_CONF": str(slurm.conf),
        "SWIFTNB_DEMO_SLURM_PARTITION": slurm.partition})
    _renders(notebook(name, kernel), name)


def test_dashboard_renders_in_notebook_7(browser: Browser) -> None:
    """The same server's Notebook 7 page (its own application, the same extensions)."""
    name = "02-swift-magic.ipynb"
    browser.load(f"/notebooks/{name}")
    page = NotebookPage(browser, name)
    try:
        page.wait_kernel_ready()
        _renders(page, name, f"{Path(name).stem}-notebook7")
    finally:
        page.close()
        browser.load("/lab")
