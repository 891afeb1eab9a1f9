"""Browser tests: one JupyterLab and one headless Chromium for the whole test session.

What a person sees is what these tests read: the shipped notebooks are opened in
JupyterLab in Debian's Chromium (``/usr/bin/chromium`` driven through
``/usr/bin/chromedriver`` by selenium, so no browser is downloaded), run there, and the
page's DOM is asked whether every panel and chart rendered.

Fixtures
--------
``lab`` (session) -> :class:`LabServer`
    JupyterLab on 127.0.0.1 on a free port, with a token; its root directory is a copy of
    ``notebooks/`` (the notebooks and their ``data/``) under the pytest basetemp; its
    Jupyter config, data, runtime, settings and workspace directories are private (the
    Swift kernel is installed into its data directory; the lab extensions come from the
    virtualenv).  Stopped by PID at the end of the session, with its kernels.
``browser`` (session) -> :class:`Browser`
    Chromium, headless, with a new empty profile, that cannot resolve any host but
    127.0.0.1 (so nothing can come from a CDN), with JupyterLab loaded once.  Stopped by
    PID at the end of the session.  ``browser.load("/notebooks/NAME.ipynb")`` goes to the
    same server's Notebook 7 page (then ``NotebookPage(browser, NAME).wait_kernel_ready()``;
    ``browser.load("/lab")`` after, for the tests that follow).
``notebook`` (function) -> a callable ``notebook(path, kernel=None) -> NotebookPage``
    Opens ``path`` (relative to the lab's root, e.g. ``"02-swift-magic.ipynb"``, or a
    notebook a test wrote there with ``lab.root / name``) in the browser, with the kernel
    its metadata names or the kernelspec ``kernel`` (``lab.add_python_kernel(name, env)``
    makes one whose kernels get more environment); at the end of the test its kernel is
    shut down and its tab closed without saving.
``artifacts`` (session) -> Path
    ``tests/browser/artifacts/`` (git-ignored): screenshots and browser console logs.

:class:`NotebookPage` (tests/browser/labdriver.py) helpers: ``run_all()`` (runs every
cell, waits until the kernel is idle and no cell is queued, bounded; a cell's error fails
the test), ``wait_idle()``, ``wait_rendered()`` (no widget or chart left loading),
``text()`` (the notebook's visible text), ``problems()`` (failed-render phrases in the
page, and console errors that carry one or show a request beyond 127.0.0.1),
``charts()`` (every bokeh root: whether it holds a drawn canvas), ``widget_count()``,
``js(script)`` (``panel`` and ``app`` bound), ``screenshot(name)``.

Without Chromium, chromedriver, selenium or JupyterLab the tests are skipped with the
reason; under ``CI=true`` they fail instead (``.ci/run`` installs chromium and
chromium-driver, ``make install-test`` the Python packages), as ``tests/sshd.py`` does.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest


import procs
from clusters import free_ports
from labdriver import (ARTIFACTS, CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS, KERNEL_READY,
                       LAB_EXTENSIONS, NOTEBOOKS, SERVER_START, Browser, LabServer,
                       NotebookPage)

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver


def _unavailable() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (Debian: apt-get install {package})"
    for module in ("selenium", "jupyterlab", "jupyter_bokeh"):
        try:
            __import__(module)
        except ImportError:
            return f"Python package {module} is missing (make install-test)"
    return None


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but the browser tests cannot run: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


# --- JupyterLab ---------------------------------------------------------------------




def _private_dirs(home: Path) -> dict[str, str]:
    """Jupyter's per-user directories under ``home``, as environment variables."""
    dirs = {"JUPYTER_CONFIG_DIR": home / "config", "JUPYTER_DATA_DIR": home / "data",
            "JUPYTER_RUNTIME_DIR": home / "runtime", "IPYTHONDIR": home / "ipython",
            "JUPYTERLAB_SETTINGS_DIR": home / "lab-settings",
            "JUPYTERLAB_WORKSPACES_DIR": home / "lab-workspaces"}
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    return {k: str(v) for k, v in dirs.items()}


def _write_lab_settings(env: dict[str, str]) -> None:
    """Every cell in the DOM (no windowing, so the DOM holds the whole notebook), no news
    toast, no update check."""
    tracker = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True, exist_ok=True)
    (tracker / "tracker.jupyterlab-settings").write_text(
        json.dumps({"windowingMode": "none"}))
    # Notebook 7 takes its options from here (the lab's are on its command line)
    (Path(env["JUPYTER_CONFIG_DIR"]) / "jupyter_server_config.json").write_text(json.dumps(
        {"JupyterNotebookApp": {"expose_app_in_browser": True}}))
    labconfig = Path(env["JUPYTER_CONFIG_DIR"]) / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps(
        {"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))


def _wait_answering(lab: LabServer) -> None:
    deadline = time.monotonic() + SERVER_START
    while True:
        if lab.process.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {lab.process.returncode}:\n"
                               f"{lab.log.read_text()[-3000:]}")
        try:
            lab.api("/api/status")
            return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not answer within {SERVER_START:.0f} s:"
                                   f"\n{lab.log.read_text()[-3000:]}") from None
            time.sleep(0.3)


def _stop(process: subprocess.Popen[bytes], within: float = 20.0) -> None:
    """SIGTERM to the process, then SIGKILL to it and what it started, all by PID."""
    started = procs.descendants(process.pid)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(within)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    for pid in procs.wait_gone(started, within=5.0):
        procs.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
    """JupyterLab for the whole session (see the module docstring)."""
    reason = _unavailable()
    if reason is not None:
        _skip_or_fail(reason)
    base = tmp_path_factory.mktemp("jupyterlab")
    root = base / "notebooks"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns(
        "conftest.py", "sanitize.cfg", "__pycache__", ".ipynb_checkpoints"))
    # a notebook may read the examples beside it as ../examples/... (09-what-if)
    shutil.copytree(NOTEBOOKS.parent / "examples", base / "examples")
    env = {**os.environ, **_private_dirs(base / "home"), "PYTHONUNBUFFERED": "1"}
    for key in ("JUPYTER_PATH", "JUPYTER_TOKEN", "SSH_AUTH_SOCK"):
        env.pop(key, None)
    _write_lab_settings(env)
    subprocess.run([sys.executable, "-m", "swiftnb.kernel", "install", "--user"], env=env,
                   check=True, capture_output=True, timeout=60)
    token = secrets.token_hex(16)
    (port,) = free_ports(1)
    log = base / "jupyterlab.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
             "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=",
             "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
             "--LabApp.extension_manager=readonly", "--ServerApp.terminals_enabled=False",
             *(["--allow-root"] if os.geteuid() == 0 else [])],
            cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=procs.dies_with_pytest())
    server = LabServer(url=f"http://127.0.0.1:{port}", token=token, root=root,
                       home=base / "home", log=log, process=process)
    try:
        _wait_answering(server)
        config = server.page_config()
        installed = {e["name"] for e in config.get("federated_extensions", [])}
        missing = [name for name in LAB_EXTENSIONS if name not in installed]
        assert not missing, (f"JupyterLab lacks the lab extensions {missing} the panels "
                             f"need: pip install -e '.[lab]'")
        yield server
    finally:
        _stop(process)


# --- Chromium -----------------------------------------------------------------------




def _chrome(profile: Path) -> WebDriver:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # a driver path given: selenium does not run Selenium Manager (no download)
    return webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                            options=options)


@pytest.fixture(scope="session")
def browser(lab: LabServer, artifacts: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Headless Chromium with JupyterLab loaded (see the module docstring)."""
    profile = tmp_path_factory.mktemp("chromium-profile")
    driver = _chrome(profile)
    chromedriver = driver.service.process.pid
    started = procs.descendants(chromedriver)
    b = Browser(driver=driver, lab=lab, artifacts=artifacts)
    try:
        driver.set_script_timeout(KERNEL_READY + 10)
        b.load("/lab")
        yield b
    finally:
        started += procs.descendants(chromedriver)
        (artifacts / "browser-console.json").write_text(json.dumps(b.console, indent=1))
        driver.quit()
        for pid in procs.wait_gone(started + [chromedriver], within=10.0):
            procs.kill(pid, signal.SIGKILL)


# --- notebooks ----------------------------------------------------------------------




@pytest.fixture
def notebook(browser: Browser) -> Iterator[Callable[..., NotebookPage]]:
    """``notebook(path, kernel=None)``: open a notebook of the lab's root, with its own
    kernel or the named kernelspec (see the module docstring)."""
    opened: list[NotebookPage] = []

    def open_notebook(path: str, kernel: str | None = None) -> NotebookPage:
        page = NotebookPage(browser, path, kernel)
        page.open()
        opened.append(page)
        return page

    yield open_notebook
    for page in opened:
        page.close()
    browser.drain_console()
