"""%%swift cells in JupyterLab (headless Chromium): highlighted as Swift while they start
with %%swift, as Python otherwise; the run handle under a cell changes to its outcome and,
for a failed app, shows its error text there."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.timeout(300)

CELLS = [
    "%load_ext swiftnb",
    '%%swift --no-dashboard -o r\ntype file;\napp (file o) bad() { sh "-c" '
    '"echo oops-in-the-browser >&2; exit 3" stdout=@o; }\nfile f <"f.txt"> = bad();',
    "x = [i * i for i in range(3)]\nx",
]

#: the CodeMirror language of each code cell's editor (CodeMirror 6 writes it as
#: data-language on .cm-content) and the classes its first word is drawn with
_LANGUAGES = """
return panel.content.widgets.map(cell => {
  const content = cell.node.querySelector('.cm-content');
  return content ? content.getAttribute('data-language') : null;
});"""

_OUTPUT = "return panel.content.widgets[arguments[1]].node.querySelector('.jp-OutputArea')" \
          "?.innerText || '';"


def _write(path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "execution_count": None, "id": f"c{i}",
                   "metadata": {}, "outputs": [], "source": src}
                  for i, src in enumerate(cells)],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}))


def test_swift_cells_are_highlighted_as_swift(lab, notebook, artifacts):
    installed = {e["name"] for e in lab.page_config().get("federated_extensions", [])}
    assert "swiftnb-highlight" in installed, "swiftnb's lab extension is not installed"
    _write(lab.root / "magic-highlight.ipynb", CELLS)
    page = notebook("magic-highlight.ipynb")
    page.browser.wait_for(_PANEL_LANG, "the %%swift cell is Swift", 30, page.path, 1, "swift")
    assert page.js(_LANGUAGES) == ["python", "swift", "python"]
    # typing %%swift into a Python cell turns it to Swift, and back
    page.js("panel.content.widgets[2].model.sharedModel.setSource('%%swift\\ntrace(1);');"
            " return true;")
    page.browser.wait_for(_PANEL_LANG, "the edited cell becomes Swift", 15, page.path, 2,
                          "swift")
    page.js("panel.content.widgets[2].model.sharedModel.setSource('y = 2');"
            " return true;")
    page.browser.wait_for(_PANEL_LANG, "the edited cell becomes Python again", 15,
                          page.path, 2, "python")
    page.run_all()
    # the run's id depends on the runs made before in the lab's folder (other tests)
    page.browser.wait_for(_PANEL_OUT, "the handle shows the failure", 60, page.path, 1,
                          ": failed>")
    text = page.js(_OUTPUT, 1)
    assert re.search(r"<RunHandle run\d{3}: failed>", text), text
    assert "Execution failed:" in text and "oops-in-the-browser" in text
    assert page.js(_LANGUAGES) == ["python", "swift", "python"]  # a kernel did not undo it
    page.screenshot("magic-highlight")


#: whether code cell arguments[1] of notebook arguments[0] has language arguments[2]
_PANEL_LANG = """
const app = window.jupyterapp;
const panel = Array.from(app.shell.widgets('main')).find(
  w => w.context && w.context.path === arguments[0]);
const cell = panel && panel.content.widgets[arguments[1]];
const content = cell && cell.node.querySelector('.cm-content');
return !!content && content.getAttribute('data-language') === arguments[2];"""

#: whether the output of cell arguments[1] of notebook arguments[0] holds arguments[2]
_PANEL_OUT = """
const app = window.jupyterapp;
const panel = Array.from(app.shell.widgets('main')).find(
  w => w.context && w.context.path === arguments[0]);
const cell = panel && panel.content.widgets[arguments[1]];
const out = cell && cell.node.querySelector('.jp-OutputArea');
return !!out && out.innerText.includes(arguments[2]);"""
