"""``swiftnb run -tui`` in a real terminal: tmux (on a socket of its own) runs the command
in an 80x24 pane; the test reads the screen back, sends keys, and checks the run's log.

* the screen has the header with N of M, a per-app row and a site row;
* a throttle key changes the run's throttle (on screen, and a THROTTLE event in the log);
* q leaves the monitor: the ticker goes on and the run ends with exit code 0;
* Ctrl-C cancels as without the monitor (exit 2, "Execution interrupted") and gives the
  terminal back;
* with stdout not a terminal the run shows the ticker, after a one-line notice.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.timeout(150),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

SWIFTNB = str(Path(sys.executable).with_name("swiftnb"))
#: each pane's tmux server socket is named once per process (a server being killed by
#: the previous test must never be the one the next test talks to)
_SOCKETS = itertools.count()
NAPS = """type file;
app (file o) nap (int i) {
  sleep "0.4" stdout=@o;
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:40] {
  f[i] = nap(i);
}
trace("said while the monitor showed");
"""
#: the failing call comes first, so that it fails while the naps still run
FAILING = """type file;
app (file o) bad () {
  sh "-c" "echo broken pipe dream >&2; exit 3" stdout=@o;
}
file b <"b.txt">;
b = bad();
""" + NAPS.removeprefix("type file;\n")
CONF = """site.local {
  execution { type: local }
  filesystem { type: local }
  workDirectory: "swiftwork"
  maxParallelTasks: 2
  app.ALL { executable: "*" }
}
sites: [local]
"""


class Pane:
    """One tmux session (its own server socket) running a command in an 80x24 pane."""

    def __init__(self, socket: str, cwd: Path, command: str) -> None:
        self.socket = socket
        self.exit_file = cwd / "exit.code"
        shell = f"{command}; echo $? > {self.exit_file}; sleep 60"
        self._tmux("new-session", "-d", "-s", "t", "-x", "80", "-y", "24", "-c", str(cwd),
                   shell)

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(["tmux", "-L", self.socket, *args], text=True,
                              capture_output=True, timeout=20)
        assert done.returncode == 0, f"tmux {args[0]}: {done.stderr}"
        return done.stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "t")

    def scrollback(self) -> str:
        """The screen and every line scrolled off it (the main screen's, not the
        monitor's alternate screen)."""
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "t")

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "t", *keys)

    def wait_for(self, what: Callable[[str], bool], timeout: float = 60) -> str:
        """The screen once ``what`` holds of it (polled; an AssertionError with the last
        screen when it never does)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if what(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"screen never matched; last screen:\n{screen}")

    def exit_code(self, timeout: float = 90) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.exit_file.exists() and self.exit_file.read_text().strip():
                return int(self.exit_file.read_text())
            time.sleep(0.1)
        raise AssertionError(f"the run did not end; last screen:\n{self.screen()}")

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=20)


@pytest.fixture
def pane_factory(tmp_path: Path) -> Iterator[Callable[[str], Pane]]:
    panes: list[Pane] = []
    (tmp_path / "naps.swift").write_text(NAPS)
    (tmp_path / "swift.conf").write_text(CONF)

    def make(options: str, script_name: str = "naps.swift") -> Pane:
        pane = Pane(f"swiftnb-tui-{os.getpid()}-{next(_SOCKETS)}", tmp_path,
                    f"{SWIFTNB} run -config swift.conf -logfile run.log {options} "
                    f"{script_name}")
        panes.append(pane)
        return pane

    yield make
    for pane in panes:
        pane.kill()


def _throttle(screen: str, name: str) -> str | None:
    m = re.search(rf"{name}@local (\S+)", screen)
    return m.group(1) if m else None


def test_the_monitor_shows_the_run_steers_a_throttle_and_q_leaves_to_the_ticker(
        pane_factory, tmp_path):
    pane = pane_factory("-tui")
    screen = pane.wait_for(lambda s: re.search(r"\b\d+ of 40 done", s) is not None
                           and re.search(r"^sleep\s+\d+\s+40\b", s, re.M) is not None
                           and re.search(r"^local\s+∞", s, re.M) is not None)
    assert "swiftnb run " in screen.splitlines()[0]
    assert len(screen.splitlines()) <= 24 and max(map(len, screen.splitlines())) <= 80
    assert _throttle(screen, "maxParallelTasks") == "2"
    # the fourth throttle is the site's maxParallelTasks: select it, raise it by one
    pane.send("j", "j", "j", "+")
    screen = pane.wait_for(lambda s: _throttle(s, "maxParallelTasks") == "3")
    assert "set maxParallelTasks@local 2 -> 3" in screen
    pane.send("q")
    # the ticker's lines go on after the notice (held ones came before it)
    screen = pane.wait_for(lambda s: "left the monitor" in s and s.rfind("Progress: ") >
                           s.find("left the monitor"))
    assert "of 40 done" not in screen   # the monitor's screen is gone
    assert pane.exit_code() == 0
    pane.wait_for(lambda s: "Final status:" in s)
    everything = pane.scrollback()
    assert "Finished successfully:40" in everything
    # what the run said while the monitor owned the terminal was held, then written
    assert "SwiftScript trace: said while the monitor showed" in everything
    [out] = tmp_path.glob("run*/swift.out")
    assert "said while the monitor showed" in out.read_text()
    log = (tmp_path / "run.log").read_text()
    assert re.search(r"THROTTLE .*name=maxParallelTasks.*old=2.*new=3", log), log[-2000:]


def test_a_failure_shows_its_stderr_and_ctrl_c_cancels_as_without_the_monitor(
        pane_factory, tmp_path):
    (tmp_path / "failing.swift").write_text(FAILING)
    (tmp_path / "swift.conf").write_text(CONF + "lazyErrors: true\n")
    pane = pane_factory("-ui text", "failing.swift")
    screen = pane.wait_for(lambda s: "failures (1)" in s)
    assert re.search(r"^sh@local exit 3 broken pipe dream", screen, re.M), screen
    assert re.search(r"\b\d+ of 41 done \(1 failed\)", screen), screen
    pane.send("C-c")
    assert pane.exit_code() == 2
    screen = pane.wait_for(lambda s: "Execution interrupted" in s)
    assert "of 40 done" not in screen


def test_stdout_not_a_terminal_gets_the_ticker_and_a_notice(tmp_path):
    (tmp_path / "naps.swift").write_text(NAPS.replace("[1:40]", "[1:4]"))
    (tmp_path / "swift.conf").write_text(CONF)
    done = subprocess.run([SWIFTNB, "run", "-config", "swift.conf", "-tui", "naps.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "-tui: stdout is not a terminal; the run shows the summary ticker" in done.stderr
    assert "Final status:" in done.stderr and "Finished successfully:4" in done.stderr
    assert "\x1b[?1049h" not in done.stdout + done.stderr   # no alternate screen
