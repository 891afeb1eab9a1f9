"""Throttles in a log replay (Dashboard.from_log): the values the log states, "off" as Swift
meant it (no limit), never the slider's end standing in for a value."""

from __future__ import annotations

import bz2
import re
from pathlib import Path

import pytest

from swiftnb.widgets import Dashboard
from swiftnb.widgets.feed import Feed
from swiftnb.widgets.throttles import UNKNOWN, OFF, ThrottlesPanel
from widget_helpers import Browser, run_async, start

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "aimes"

NAPS = """type file;
app (file o) nap (int i) {
  sleep "0.05" stdout=@o;
}
file f[] <simple_mapper; prefix="naps/f", suffix=".txt">;
foreach i in [1:12] {
  f[i] = nap(i);
}
"""


def readouts(browser: Browser, panel: ThrottlesPanel) -> dict[str, str]:
    """What the browser shows beside each slider (the text of its readout)."""
    return {name: re.sub(r"<[^>]+>", "", browser.state(w)["value"])
            for name, w in panel.readouts.items()}


def _logged_run(tmp_path: Path, browser: Browser, conf: str) -> Path:
    """A single-local-site run whose jobSubmitThrottle is slid to "off" and maxParallelTasks
    to 5 from the panel while it goes; its log."""
    async def main() -> Path:
        handle = start(NAPS, conf, tmp_path)
        panel = ThrottlesPanel(handle.executor)
        feed = Feed(handle.bus, [panel]).start()
        slider = panel.sliders["jobSubmitThrottle"]
        browser.send(slider, value=browser.state(slider)["max"])   # its last stop: off
        browser.send(panel.sliders["maxParallelTasks"], value=5)
        await handle
        feed.stop()
        assert handle.ok, handle.errors
        return Path(handle.log_path)

    return run_async(main())


def test_a_replayed_log_shows_off_and_the_logged_values(tmp_path, browser):
    log = _logged_run(tmp_path, browser, "fileOperationsThrottle: off\n")
    dash = Dashboard.from_log(log, follow=False, charts=False)
    panel = dash.throttles
    assert readouts(browser, panel) == {
        "jobSubmitThrottle": OFF,           # THROTTLE ... new=off
        "fileTransfersThrottle": "4",       # the configuration the log recorded
        "fileOperationsThrottle": OFF,      # "off" in swift.conf (Integer.MAX_VALUE)
        "maxParallelTasks": "5",            # THROTTLE name=maxParallelTasks host=local
        "hostJobSubmitThrottle": "2",
    }
    # nothing to steer: the sliders are disabled; off stands at the stop past the numbers
    for name, slider in panel.sliders.items():
        state = browser.state(slider)
        assert state["disabled"], name
    assert browser.state(panel.sliders["jobSubmitThrottle"])["value"] == 257
    assert browser.state(panel.sliders["maxParallelTasks"])["value"] == 5
    assert list(browser.state(panel.site)["_options_labels"]) == ["(all sites)", "local"]


def test_a_swift_096_log_shows_its_configured_throttles(tmp_path, browser):
    log = tmp_path / "swift.log"
    log.write_bytes(bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()))
    dash = Dashboard.from_log(log, follow=False, charts=False)
    panel = dash.throttles
    assert readouts(browser, panel) == {
        "jobSubmitThrottle": "10", "fileTransfersThrottle": "4", "fileOperationsThrottle": "8",
        "maxParallelTasks": "2000",   # beyond the slider's range: the readout says it
        "hostJobSubmitThrottle": "10",
    }
    assert browser.state(panel.sliders["maxParallelTasks"])["value"] == 1024


def test_a_log_without_its_configuration_says_so(tmp_path, browser):
    text = bz2.decompress((DATA / "stampede-exp-017" / "swift.log.bz2").read_bytes()).decode()
    start_cfg = text.index("SWIFT_CONFIGURATION")
    line_start = text.rindex("\n", 0, start_cfg) + 1
    end_cfg = text.index("\n}\n", start_cfg) + 3
    log = tmp_path / "swift.log"
    log.write_text(text[:line_start] + text[end_cfg:])
    dash = Dashboard.from_log(log, follow=False, charts=False)
    panel = dash.throttles
    assert set(readouts(browser, panel).values()) == {UNKNOWN}
    for slider in panel.sliders.values():
        assert browser.state(slider.layout)["visibility"] == "hidden"
