"""The terminal monitor redraws at a bounded rate however fast events come: on a real
pty, a bus emitting an event every millisecond for 1.5 s gets at most REFRESH_HZ redraws
a second (plus the first), and the screen it leaves shows the last counts."""

from __future__ import annotations

import asyncio
import os
import pty

import pytest

import swiftnb.monitor.tui as tui
import ptys
from swiftnb.events import EventBus

pytestmark = pytest.mark.timeout(60)


def test_redraws_are_bounded_while_events_pour_in(monkeypatch):
    drawn: list[int] = []
    real_draw = tui.draw

    def counting_draw(state, **kwargs):
        drawn.append(state.known)
        return real_draw(state, **kwargs)

    monkeypatch.setattr(tui, "draw", counting_draw)
    master, slave = pty.openpty()
    received, reader = ptys.drain(master)
    terminal = os.fdopen(slave, "w", encoding="utf-8")

    async def main() -> float:
        loop = asyncio.get_running_loop()
        bus = EventBus()
        monitor = tui.TerminalMonitor(bus, None, terminal=terminal, keyboard=None).open(loop)
        t0 = loop.time()
        i = 0
        while loop.time() - t0 < 1.5:
            bus.emit("JOB_INIT", {"jobid": f"j{i}", "tr": "echo"})
            i += 1
            await asyncio.sleep(0.001)
        monitor._redraw(force=True)   # the last counts, as the timer would draw them next
        monitor.close()
        return loop.time() - t0

    seconds = asyncio.run(asyncio.wait_for(main(), 30))
    terminal.close()
    reader.join(timeout=5)
    os.close(master)
    assert len(drawn) >= 4, drawn                            # it did redraw as events came
    assert len(drawn) <= 2 + seconds * tui.REFRESH_HZ + 1    # first, timer ticks, last
    assert drawn[-1] > 100
    assert f"0 of {drawn[-1]} done".encode() in received
    assert b"\x1b[?1049h" in received and b"\x1b[?1049l" in received   # screen taken, given back
