"""Driving JupyterLab in Chromium for the browser tests: the lab server's and the
browser's handles, and :class:`NotebookPage`, one open notebook (conftest.py has the
fixtures that make them; its docstring says how to use them)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

#: the lab extensions the panels need (their JavaScript is in the virtualenv's
#: share/jupyter/labextensions, put there by pip)
LAB_EXTENSIONS = ("@jupyter-widgets/jupyterlab-manager", "@bokeh/jupyter_bokeh")

#: what JupyterLab, ipywidgets and bokeh put in the page when a view fails
FAILED_RENDER = ("Javascript Error", "Loading widget", "Failed to create view",
                 "Error displaying widget", "BokehJS does not appear to have successfully",
                 "Could not create a view")

#: what the browser console says when the page asks for a host other than 127.0.0.1
#: (Chromium resolves no other: see CHROMIUM_FLAGS); a page that works offline asks none
LEFT_LOCALHOST = "net::ERR_NAME_NOT_RESOLVED"

#: the flags Chromium is known to work with here (machines/python.md), then ours: no host
#: but 127.0.0.1 resolves, so a page asking a CDN for anything gets nothing
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1400,1000",
                  "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1")

SERVER_START = 90.0     # seconds for JupyterLab to answer
PAGE_LOAD = 90.0        # seconds for the lab's page to show its shell
KERNEL_READY = 60.0     # seconds for a notebook's kernel to start
RUN_ALL = 240.0         # seconds for every cell of a notebook to finish (03 took 150 s under CI)
RENDER = 30.0           # seconds for widgets and charts to finish rendering


@dataclass
class LabServer:
    """A running JupyterLab: where it listens, where its files are."""

    url: str                    # http://127.0.0.1:PORT (no trailing slash)
    token: str
    root: Path                  # its root_dir: a copy of notebooks/
    home: Path                  # its private Jupyter directories live here
    log: Path                   # what the server printed
    process: subprocess.Popen[bytes]

    def api(self, path: str) -> object:
        """GET ``/api/...`` as JSON."""
        request = urllib.request.Request(f"{self.url}{path}",
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.load(reply)

    def add_python_kernel(self, name: str, env: dict[str, str]) -> str:
        """A Python kernelspec ``name`` (in the lab's private data directory) whose kernels
        get ``env`` on top of the lab's environment: how a notebook learns where a daemon
        of the test session is (06 its sshd, 07 its Slurm), the server being older."""
        d = self.home / "data" / "kernels" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": f"Python 3 ({name})", "language": "python", "env": env}))
        return name

    def page_config(self) -> dict[str, object]:
        """The ``jupyter-config-data`` JupyterLab writes into its page."""
        request = urllib.request.Request(f"{self.url}/lab",
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            html = reply.read().decode()
        found = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)'
                          r"</script>", html, re.S)
        assert found, "JupyterLab's page has no jupyter-config-data"
        return json.loads(found.group(1))


@dataclass
class Browser:
    """Chromium through chromedriver, with the lab loaded."""

    driver: WebDriver
    lab: LabServer
    artifacts: Path
    console: list[dict[str, object]] = field(default_factory=list)

    def js(self, script: str, *args: object) -> object:
        return self.driver.execute_script(script, *args)

    def load(self, page: str) -> None:
        """Go to ``page`` of the server (``/lab``, or ``/notebooks/NAME.ipynb`` for
        Notebook 7) and wait for its application shell."""
        self.driver.get(f"{self.lab.url}{page}?token={self.lab.token}")
        self.wait_for("return !!(window.jupyterapp && window.jupyterapp.shell"
                      " && document.querySelector('.jp-LabShell, #main-panel'))",
                      f"the application shell of {page}", PAGE_LOAD)

    def wait_for(self, script: str, what: str, within: float, *args: object,
                 interval: float = 0.25) -> object:
        """Poll ``script`` until it returns something true; fail naming ``what``."""
        deadline = time.monotonic() + within
        while True:
            value = self.js(script, *args)
            if value:
                return value
            if time.monotonic() > deadline:
                shot = self.screenshot(f"timeout-{re.sub(r'[^a-z0-9]+', '-', what.lower())}")
                pytest.fail(f"{what}: not within {within:.0f} s (screenshot: {shot})")
            time.sleep(interval)

    def drain_console(self) -> list[dict[str, object]]:
        """The browser console's entries since the last call (kept in ``console`` too)."""
        entries = self.driver.get_log("browser")
        self.console.extend(entries)
        return entries

    def screenshot(self, name: str) -> Path:
        """The current notebook from its top, as tall as it is (up to 12000 px), with the
        side bar folded, as a PNG in the artifacts directory."""
        height = self.js("""
            const app = window.jupyterapp;
            if (app.shell.collapseLeft) { app.shell.collapseLeft(); }  // JupyterLab only
            const panel = app.shell.currentWidget;
            const outer = panel && panel.content && panel.content.outerNode;
            if (!outer) { return 1000; }
            outer.scrollTop = 0;
            return outer.scrollHeight + 160;""")
        assert isinstance(height, int)
        metrics = {"width": 1400, "height": max(1000, min(height, 12000)),
                   "deviceScaleFactor": 1, "mobile": False}
        path = self.artifacts / f"{name}.png"
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        try:
            time.sleep(0.5)  # the lab lays itself out again for the new height
            self.driver.save_screenshot(str(path))
        finally:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        return path


@dataclass(frozen=True)
class Chart:
    """One bokeh root in the page (a dashboard chart or a ``show`` output)."""

    root_id: str
    canvases: int       # canvases with a non-zero size inside it (shadow roots included)


@dataclass(frozen=True)
class RunState:
    kernel: str                 # the kernel's status
    queued: int                 # cells showing [*]
    unrun: int                  # code cells with no execution count
    sent: int                   # code cells with source, each of which Run All sends
    replies: int                # execute_reply messages the page received since Run All
    errors: tuple[str, ...]     # cells (index: ename) with an error not tagged raises-exception

    @property
    def finished(self) -> bool:
        """The kernel answered every cell Run All sent (an error's followers are answered
        "aborted") and is idle.

        The replies are counted on the kernel connection, not read from each cell's
        prompt: a cell's prompt leaves ``[*]`` only once the idle status carrying that
        cell's request arrives, and ipykernel 7 can publish that idle under the parent
        of a widget's comm message that came in while an ``await`` ran (seen once in CI on
        notebook 03: kernel idle, every output drawn, the last cell still ``[*]``)."""
        return self.kernel == "idle" and self.replies >= self.sent


#: the notebook panel for a path (the lab's current widget when it is that notebook)
_PANEL = """
const path = arguments[0];
const app = window.jupyterapp;
const panel = app.shell.currentWidget;
if (!panel || !panel.context || panel.context.path !== path) { return null; }
"""

_RUN_STATE = _PANEL + """
const cells = panel.content.widgets.filter(c => c.model.type === 'code');
const prompt = c => (c.node.querySelector('.jp-InputPrompt') || {}).textContent || '';
const errors = [];
cells.forEach((c, i) => {
  const tags = c.model.getMetadata('tags') || [];
  for (const o of c.model.outputs.toJSON()) {
    if (o.output_type === 'error' && !tags.includes('raises-exception')) {
      errors.push(`code cell ${i}: ${o.ename}: ${o.evalue}`.slice(0, 400));
    }
  }
});
const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
return {kernel: kernel ? kernel.status : 'none',
        queued: cells.filter(c => prompt(c).includes('*')).length,
        unrun: cells.filter(c => c.model.executionCount === null).length,
        sent: cells.filter(c => c.model.sharedModel.getSource().trim() !== '').length,
        replies: (window.swiftnbReplies || {})[path] || 0,
        errors: errors};
"""

#: from now on, count the execute replies this notebook's kernel sends (in
#: ``window.swiftnbReplies[path]``), whatever cell prompt they reach
_COUNT_REPLIES = """
const kernel = panel.sessionContext.session.kernel;
window.swiftnbReplies = window.swiftnbReplies || {};
window.swiftnbReplies[path] = 0;
if (!window.swiftnbCounting) { window.swiftnbCounting = new Set(); }
if (!window.swiftnbCounting.has(kernel.id)) {
  window.swiftnbCounting.add(kernel.id);
  const cellRequests = new Set();   // a cell's request stores history; an extension's not
  kernel.anyMessage.connect((_, args) => {
    const msg = args.msg;
    if (args.direction === 'send' && msg.header.msg_type === 'execute_request'
        && msg.content.store_history && !msg.content.silent) {
      cellRequests.add(msg.header.msg_id);
    } else if (args.direction === 'recv' && msg.header.msg_type === 'execute_reply'
               && cellRequests.delete(msg.parent_header.msg_id)) {
      window.swiftnbReplies[path] = (window.swiftnbReplies[path] || 0) + 1;
    }
  });
}
"""

#: every bokeh root (an element with data-root-id) and the drawn canvases inside it,
#: looking into shadow roots (bokeh 3 draws inside them)
_CHARTS = _PANEL + """
function canvases(node) {
  let n = 0;
  const walk = el => {
    if (el.tagName === 'CANVAS' && el.width > 0 && el.height > 0) { n += 1; }
    if (el.shadowRoot) { Array.from(el.shadowRoot.children).forEach(walk); }
    Array.from(el.children).forEach(walk);
  };
  walk(node);
  return n;
}
return Array.from(panel.content.node.querySelectorAll('[data-root-id]'))
  .map(el => ({root_id: el.getAttribute('data-root-id'), canvases: canvases(el)}));
"""


class NotebookPage:
    """One notebook open in the browser's JupyterLab."""

    def __init__(self, browser: Browser, path: str, kernel: str | None = None) -> None:
        self.browser = browser
        self.path = path
        self.kernel = kernel  # a kernelspec name instead of the notebook's own
        self.console: list[dict[str, object]] = []  # the browser's, since it was opened

    def js(self, script: str, *args: object) -> object:
        """Run ``script`` with ``panel`` (this notebook's NotebookPanel) and ``app``
        bound; ``arguments[1:]`` are ``args``."""
        return self.browser.js(_PANEL + script, self.path, *args)

    def open(self) -> None:
        self.browser.drain_console()
        opened = self.browser.driver.execute_async_script("""
            const [path, kernel, done] = arguments;
            const app = window.jupyterapp;
            app.commands.execute('docmanager:open', {path: path, factory: 'Notebook'})
              .then(panel => panel.sessionContext.ready.then(() => kernel === null ? null
                : panel.sessionContext.changeKernel({name: kernel})))
              .then(() => done(true))
              .catch(e => done(String(e)));
        """, self.path, self.kernel)
        assert opened is True, f"{self.path} did not open: {opened}"
        self.wait_kernel_ready()

    def wait_kernel_ready(self) -> None:
        """Until this notebook is the current one and its kernel has started."""
        self.browser.wait_for(_PANEL + "const k = panel.sessionContext.session?.kernel;"
                              "return !!k && k.status === 'idle';",
                              f"kernel of {self.path} idle", KERNEL_READY, self.path)

    def state(self) -> RunState:
        raw = self.browser.js(_RUN_STATE, self.path)
        assert isinstance(raw, dict), f"{self.path} is not the lab's current notebook"
        return RunState(kernel=raw["kernel"], queued=raw["queued"], unrun=raw["unrun"],
                        sent=raw["sent"], replies=raw["replies"],
                        errors=tuple(raw["errors"]))

    def run_all(self, within: float = RUN_ALL) -> RunState:
        """Run every cell (as Run > Run All Cells does) and wait until the kernel is idle
        with no cell queued; an error outside a ``raises-exception`` cell fails the test."""
        self.js(_COUNT_REPLIES + "app.commands.execute('notebook:run-all-cells'); return true;")
        deadline = time.monotonic() + within
        time.sleep(0.5)
        while True:
            state = self.state()
            if state.finished:
                break
            if time.monotonic() > deadline:
                shot = self.screenshot(f"timeout-{Path(self.path).stem}")
                pytest.fail(f"{self.path}: cells still running after {within:.0f} s "
                            f"({state}); screenshot: {shot}")
            time.sleep(0.5)
        if state.errors:
            shot = self.screenshot(f"failed-{Path(self.path).stem}")
            pytest.fail(f"{self.path}: cells failed: {list(state.errors)}; screenshot: {shot}")
        return state

    def wait_idle(self, within: float = RUN_ALL) -> None:
        self.browser.wait_for(_PANEL + "return panel.sessionContext.session?.kernel?.status"
                              " === 'idle';", f"kernel of {self.path} idle", within,
                              self.path)

    def text(self) -> str:
        value = self.js("return panel.content.node.innerText;")
        assert isinstance(value, str)
        return value

    def problems(self) -> list[str]:
        """The failed-render phrases in the notebook, each with the line it is on, then the
        browser console's errors since the notebook was opened that carry one (a view
        that could not be created leaves nothing in the page, only this) or that say the
        page asked for something beyond 127.0.0.1 (a CDN)."""
        self.console.extend(self.browser.drain_console())
        in_page = [line.strip() for line in self.text().splitlines()
                   if any(p in line for p in FAILED_RENDER)]
        logged = [str(e["message"]) for e in self.console if e.get("level") == "SEVERE"
                  and any(p in str(e["message"]) for p in (*FAILED_RENDER, LEFT_LOCALHOST))]
        return in_page + logged

    def charts(self) -> list[Chart]:
        raw = self.browser.js(_CHARTS, self.path)
        assert isinstance(raw, list)
        return [Chart(root_id=c["root_id"], canvases=c["canvases"]) for c in raw]

    def widget_count(self) -> int:
        """Rendered ipywidgets views (their outermost elements in the outputs)."""
        value = self.js("return panel.content.node.querySelectorAll("
                        "'.jp-OutputArea-output .jupyter-widgets.widget-inline-hbox,"
                        " .jp-OutputArea-output > .jupyter-widgets').length;")
        assert isinstance(value, int)
        return value

    def wait_rendered(self, within: float = RENDER) -> None:
        """Until no output is still loading (widgets, BokehJS) or ``within`` is over:
        a render that failed is for the test to read from ``problems()``."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            text = self.text()
            if "Loading widget" not in text and "Loading BokehJS" not in text:
                return
            time.sleep(0.5)

    def screenshot(self, name: str) -> Path:
        return self.browser.screenshot(name)

    def close(self) -> None:
        """Shut its kernel down and close its tab without saving."""
        self.browser.driver.execute_async_script(_PANEL.replace(
            "return null;", "arguments[arguments.length - 1](false); return;") + """
            const done = arguments[arguments.length - 1];
            panel.sessionContext.shutdown()
              .catch(() => null)
              .then(() => { panel.context.model.dirty = false; panel.dispose(); done(true); });
        """, self.path)
