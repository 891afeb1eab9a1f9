"""How the terminal monitor puts its frames on a terminal (swiftnb.monitor.frame,
swiftnb.monitor.painter): lines rendered with rich and cut to the width whatever a cell
holds (an app's stderr with escapes and tabs, wide characters), only the rows that
changed rewritten, and a
terminal that stops reading never holds the caller (the run's event loop): the painter
thread blocks instead, drops the frames it could not write, and writes the newest one
and gives the screen back once the terminal reads again."""

from __future__ import annotations

import os
import pty

import pytest

import ptys
from swiftnb.events import Event
from swiftnb.monitor.frame import Style, line, plain
from swiftnb.monitor.painter import ENTER, LEAVE, LineRenderer, Painter, frame_update
from swiftnb.monitor.screen import draw
from swiftnb.monitor.state import RunState

pytestmark = pytest.mark.timeout(60)


def test_a_line_is_cut_to_the_width_with_an_ellipsis():
    renderer = LineRenderer(color=False)
    row = ((("abcdef", Style.BOLD), ("ghij", Style.RED)))
    assert renderer.render(row, 8) == "abcdefg…"
    assert renderer.render(line("abc"), 8) == "abc"
    # wide characters take two columns
    cut = renderer.render(line("計算計算計算"), 7)
    assert cut.startswith("計算計") and cut.endswith("…") and len(cut) <= 5
    # in colour, each styled span between its SGR code and a reset
    assert LineRenderer().render(row, 80) == "\x1b[1mabcdef\x1b[0m\x1b[31mghij\x1b[0m"


def test_escapes_and_tabs_from_stderr_never_reach_the_terminal():
    state = RunState()
    state.apply(Event(1.0, "JOB_INIT", {"jobid": "j1", "tr": "paint"}))
    state.apply(Event(1.0, "APPLICATION_EXCEPTION", {
        "jobid": "j1", "message": "exit code 3 stderr: \x1b[31mred\x1b[0m\tover\x07"}))
    lines = draw(state, width=80, height=24)
    text = "\n".join(plain(row) for row in lines)
    assert "paint" in text and "red" in text and "over" in text
    assert not any(ch in text for ch in "\x1b\t\x07")
    # the only escapes are the monitor's own styles
    failure = next(row for row in lines if "red" in plain(row))
    assert LineRenderer().render(failure, 80).count("\x1b[") == 2   # red's start, reset


def test_only_the_rows_that_changed_are_rewritten():
    update = frame_update(["a", "b", "c"], ["a", "B", "c"])
    assert update == "\x1b[2;1HB\x1b[K"
    # a shorter frame erases the rows it no longer has
    assert frame_update(["a", "b", "c"], ["a"]) == "\x1b[2;1H\x1b[K\x1b[3;1H\x1b[K"
    assert frame_update(["a"], ["a"]) == ""


def _frame(n: int) -> list[tuple[tuple[str, Style], ...]]:
    return [((f"frame {n} row {r} " + "x" * 60, Style.PLAIN),) for r in range(24)]


def test_a_terminal_that_does_not_read_never_holds_the_caller():
    master, slave = pty.openpty()
    painter = Painter(slave)
    painter.start()
    frames = 300   # some 500 KB: far more than a pty holds unread
    for n in range(frames):
        painter.paint(_frame(n), (80, 24))   # returns although nothing reads
    assert painter.painted < frames          # the blocked thread dropped frames
    received, reader = ptys.drain(master)
    painter.stop(timeout=30)
    assert not painter.failed
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    text = received.decode("utf-8", "replace")
    assert text.startswith(ENTER)
    assert text.endswith(LEAVE)
    assert f"frame {frames - 1} row 23 " in text   # the newest frame was written whole
