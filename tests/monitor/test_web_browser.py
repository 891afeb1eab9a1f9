"""The web monitor in Debian's Chromium (issue 29): a real ``swiftnb run -ui http`` and a
real ``swiftnb monitor`` on a Swift/K 0.96 log, each opened with the URL it printed.

The live run holds six app calls on a gate file, so that what the page shows and steers
is a run in progress: the header, a site row, the score chart's canvas; then the
``maxParallelTasks`` slider of the local site is moved with the keyboard, as a person
would, and the run's own log records the change and the site runs four apps at once
instead of two.  The gate file then ends the run.
"""

from __future__ import annotations

import bz2
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from webchrome import chromium, wait_for

from selenium.webdriver.chrome.webdriver import WebDriver  # noqa: E402  (after webchrome's skip)

REPO = Path(__file__).resolve().parents[2]
AIMES_LOG = REPO / "tests" / "data" / "aimes" / "stampede-exp-017" / "swift.log.bz2"
URL = re.compile(r"swiftnb monitor: (http://127\.0\.0\.1:(\d+)/\?token=[0-9a-f]{48})")

#: every element of the page, the bokeh views' shadow roots included
DEEP = """
function deep(root) {
  let out = [];
  for (const el of root.querySelectorAll('*')) {
    out.push(el);
    if (el.shadowRoot) out = out.concat(deep(el.shadowRoot));
  }
  return out;
}
"""

HOLD_SCRIPT = textwrap.dedent("""\
    type file;
    app (file o) hold(string holder, string gate) { sh holder gate stdout=@filename(o); }
    string gate = arg("gate");
    string holder = arg("holder");
    foreach i in [1:6] {
      file f <single_file_mapper; file=strcat("out/hold", i, ".txt")>;
      f = hold(holder, gate);
    }
    """)

#: an app that waits for the gate file (at most 120 s), then says so
HOLDER = 'i=0; while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.2; i=$((i+1)); done; echo open\n'


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    yield from chromium(tmp_path_factory.mktemp("chromium-monitor"))


def _deep_text(driver: WebDriver, css_class: str | None = None) -> str:
    """The page's visible text, inside the bokeh views' shadow roots too (only the
    element of ``css_class``, when given); one line per text node."""
    return str(driver.execute_script(DEEP + """
        let top = document;
        if (arguments[0]) {
          top = deep(document).find(e => e.classList && e.classList.contains(arguments[0]));
          if (!top) return '';
        }
        const roots = [top, ...deep(top).filter(e => e.shadowRoot).map(e => e.shadowRoot)];
        if (top.shadowRoot) roots.push(top.shadowRoot);
        const texts = [];
        for (const root of roots) {
          const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          while (walk.nextNode()) {
            const parent = walk.currentNode.parentElement;
            if (parent && ['STYLE', 'SCRIPT'].includes(parent.tagName)) continue;
            if (walk.currentNode.textContent.trim()) texts.push(walk.currentNode.textContent);
          }
        }
        return texts.join('\\n');""", css_class))


def _slider_text(driver: WebDriver, name: str) -> str:
    """What the slider of throttle ``name`` reads: its title, then its value."""
    return _deep_text(driver, f"swiftnb-throttle-{name}").replace("\n", "").strip()


def _canvases(driver: WebDriver) -> int:
    return int(driver.execute_script(DEEP + """
        return deep(document).filter(e => e.tagName === 'CANVAS'
            && e.width > 0 && e.height > 0).length;"""))


def _url_from(path: Path, process: subprocess.Popen[bytes]) -> str:
    def printed() -> str | None:
        if process.poll() is not None:
            pytest.fail(f"exited with {process.returncode}:\n{path.read_text()[-3000:]}")
        found = URL.search(path.read_text(errors="replace"))
        return found.group(1) if found else None

    return wait_for("the monitor's URL on the console", printed, within=90)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _sites_cell(driver: WebDriver, site: str) -> list[str]:
    """The cells of the sites table's row of ``site`` (empty while it is not shown)."""
    cells = driver.execute_script(DEEP + """
        const table = deep(document).find(e => e.classList && e.classList.contains(
            'swiftnb-sites'));
        if (!table) return [];
        const rows = deep(table.shadowRoot || table).filter(e => e.classList
            && e.classList.contains('slick-row'));
        for (const row of rows) {
          const cells = Array.from(row.children).map(c => c.textContent.trim());
          if (cells[0] === arguments[0]) return cells;
        }
        return [];""", site)
    return [str(c) for c in cells]


def _press_slider(driver: WebDriver, css_class: str, key: str, times: int) -> None:
    """Focus the slider's handle and press ``key``: each press is one change."""
    handle = wait_for(f"the handle of the {css_class} slider", lambda: driver.execute_script(
        DEEP + """
        const host = deep(document).find(e => e.classList && e.classList.contains(
            arguments[0]));
        if (!host) return null;
        return deep(host.shadowRoot || host).find(e => e.classList
            && e.classList.contains('noUi-handle')) || null;""", css_class))
    handle.click()
    for _ in range(times):
        handle.send_keys(key)


def test_live_run_panels_and_throttle(driver: WebDriver, tmp_path: Path) -> None:
    from selenium.webdriver.common.keys import Keys

    (tmp_path / "hold.swift").write_text(HOLD_SCRIPT)
    (tmp_path / "hold.sh").write_text(HOLDER)
    gate = tmp_path / "gate"
    console = tmp_path / "console.txt"
    with console.open("wb") as err:
        process = subprocess.Popen(
            [sys.executable, "-m", "swiftnb.cli", "run", "-ui", "http", "hold.swift",
             f"-gate={gate}", f"-holder={tmp_path / 'hold.sh'}"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        url = _url_from(console, process)
        # without the token the run is not shown
        driver.get(url.split("?")[0])
        assert "403" in driver.page_source and "swiftnb run" not in driver.page_source
        driver.get(url)
        text = wait_for("the header and the progress counts", lambda: (
            t if re.search(r"0 of 6 done", t := _deep_text(driver))
            else None), shown=lambda: _deep_text(driver))
        title = _deep_text(driver, "swiftnb-title").replace("\n", "")
        assert title.startswith("swiftnb run run001 · running · started "), title
        assert "Progress" in text and "Throttles" in text and "Coaster blocks" in text
        # the local site runs two of the six at once (maxParallelTasks 2)
        row = wait_for("the local site's row with 2 running",
                       lambda: (r if (r := _sites_cell(driver, "local"))
                                and r[4] == "2" else None), shown=lambda: _deep_text(driver))
        assert row[1:4] == ["∞", "100", "2"], row  # score, tscore, limit
        wait_for("a drawn bokeh canvas (the score chart)", lambda: _canvases(driver))
        assert _slider_text(driver, "maxParallelTasks") == "maxParallelTasks local: 2"
        _press_slider(driver, "swiftnb-throttle-maxParallelTasks", Keys.ARROW_RIGHT, 2)
        log = tmp_path / "run001" / "hold-run001.log"
        wait_for("THROTTLE maxParallelTasks -> 4 in the run's log", lambda: re.search(
            r"THROTTLE name=maxParallelTasks host=local old=\d+ new=4", log.read_text()))
        # taken effect: four of the six run at once, as the page shows
        wait_for("the local site's row with 4 running",
                 lambda: _sites_cell(driver, "local")[3:5] == ["4", "4"],
                 shown=lambda: _deep_text(driver))
        assert _slider_text(driver, "maxParallelTasks") == "maxParallelTasks local: 4"
        gate.touch()
        assert process.wait(120) == 0, console.read_text()[-3000:]
    finally:
        gate.touch()
        _stop(process)


def test_monitor_command_follows_a_swiftk_log(driver: WebDriver, tmp_path: Path) -> None:
    """A Swift/K 0.96 log written in two pieces: the page shows the first piece's run in
    progress, then the whole run, ended."""
    lines = bz2.decompress(AIMES_LOG.read_bytes()).splitlines(keepends=True)
    log = tmp_path / "swift.log"
    log.write_bytes(b"".join(lines[:1200]))  # the blocks are up, no call has ended yet
    console = tmp_path / "console.txt"
    with console.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "swiftnb.cli", "monitor", str(log), "-poll", "0.2"],
            cwd=tmp_path, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
    try:
        url = _url_from(console, process)
        driver.get(url.split("?")[0])
        assert "403" in driver.page_source
        driver.get(url)
        text = wait_for("the first piece's counts", lambda: (
            t if "0 of 32 done" in (t := _deep_text(driver)) else None),
            shown=lambda: _deep_text(driver))
        title = _deep_text(driver, "swiftnb-title").replace("\n", "")
        assert title.startswith("swiftnb monitor swift.log · running · started 2016-01-25"), \
            title
        assert "stampede" in text  # the site's row
        assert len(set(re.findall(r"0124-0807460-00000\d", text))) == 2  # its blocks
        wait_for("a drawn bokeh canvas (the score chart)", lambda: _canvases(driver))
        with log.open("ab") as more:
            more.write(b"".join(lines[1200:]))
        text = wait_for("the whole run, ended", lambda: (
            t if "32 of 32 done" in (t := _deep_text(driver)) and "ended: ok" in t
            else None), within=60, shown=lambda: _deep_text(driver))
        # a log is not steered: its sliders are disabled, their readouts the log's
        assert _slider_text(driver, "jobSubmitThrottle") == "jobSubmitThrottle: 10"
        disabled = driver.execute_script(DEEP + """
            return deep(document).filter(e => e.classList && e.classList.contains(
                'noUi-target') && e.hasAttribute('disabled')).length;""")
        assert disabled >= 1
    finally:
        _stop(process)
    assert process.returncode == 0, console.read_text()[-2000:]
