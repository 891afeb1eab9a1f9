"""Debian's Chromium for the web monitor's tests, as tests/browser drives it.

The browser's flags, paths and the way it is started are tests/browser's (labdriver.py):
headless, a new empty profile, no host but 127.0.0.1 resolvable (nothing can come from a
CDN), chromedriver from Debian so that selenium downloads nothing.  Without Chromium,
chromedriver or selenium the tests skip with the reason (fail under ``CI=true``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

import procs  # noqa: E402
from labdriver import CHROMEDRIVER, CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

T = TypeVar("T")


def unavailable() -> str | None:
    """Why Chromium cannot run here, or None."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (Debian: apt-get install {package})"
    try:
        __import__("selenium")
    except ImportError:
        return "Python package selenium is missing (make install-test)"
    return None


def chromium(profile: Path) -> Iterator[WebDriver]:
    """A headless Chromium with a fresh profile; quit, and its processes gone, at the
    end (the fixture's body)."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the browser tests cannot run: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)),
                              options=options)
    chromedriver = driver.service.process.pid
    started = procs.descendants(chromedriver)
    try:
        driver.set_page_load_timeout(60)
        driver.set_script_timeout(30)
        yield driver
    finally:
        started += procs.descendants(chromedriver)
        driver.quit()
        for pid in procs.wait_gone(started + [chromedriver], within=10.0):
            procs.kill(pid, signal.SIGKILL)


def wait_for(what: str, probe: Callable[[], T | None], within: float = 30.0,
             every: float = 0.2, shown: Callable[[], str] | None = None) -> T:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` (and what
    ``shown()`` says was there instead) after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            seen = f"\n--- instead:\n{shown()[-3000:]}" if shown is not None else ""
            pytest.fail(f"not within {within:.0f} s: {what}{seen}")
        time.sleep(every)
