"""A site whose parallel-task limit holds queued calls says so (WAITING subject=site,
reason throttle-full), once when it begins and withdrawn when no call waits; the console
prints it only once it has lasted (a short run's console stays Swift's), every monitor's
model lists it while it holds."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time

import pytest

from swiftnb.events import Event, EventBus
from swiftnb.logs.ticker import ProgressTicker
from swiftnb.monitor.state import RunState
from swiftnb.scheduling.waiting import THROTTLE_FULL, SiteWaits

pytestmark = pytest.mark.timeout(120)

SCRIPT = """\
app () nap () { sleep "0.3"; }
foreach i in [1:6] { nap(); }
"""

WAIT_LINE = re.compile(r" WAITING subject=site id=(\S+) site=\S* reason=(\S*)")


def _run(tmp_path, conf: str) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]]]:
    (tmp_path / "naps.swift").write_text(SCRIPT)
    (tmp_path / "swift.conf").write_text(conf)
    proc = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-config", "swift.conf",
                           "naps.swift"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=100)
    log = next(tmp_path.glob("run*/*.log")).read_text()
    return proc, WAIT_LINE.findall(log)


def test_a_full_local_site_says_so_in_the_log_and_withdraws_it(tmp_path):
    proc, waits = _run(tmp_path, """
sites: [local]
site.local { execution { type: "local" }, maxParallelTasks: 2, initialParallelTasks: 2 }
""")
    assert proc.returncode == 0, proc.stderr
    # said once while four calls queued behind two, withdrawn once none waited
    assert waits == [("local", THROTTLE_FULL), ("local", "")]
    assert "Waiting:" not in proc.stderr  # a two-second run: nothing on the console


def test_a_site_under_its_limit_says_nothing(tmp_path):
    proc, waits = _run(tmp_path, """
sites: [local]
site.local { execution { type: "local" }, maxParallelTasks: 8, initialParallelTasks: 8 }
""")
    assert proc.returncode == 0, proc.stderr
    assert waits == []


def test_the_multi_site_scheduler_names_each_full_site(tmp_path):
    proc, waits = _run(tmp_path, """
sites: [a, b]
site.a { execution { type: "sim", options { slots: 1, taskDuration: 30, seed: 1 } }
         maxParallelTasks: 1, initialParallelTasks: 1 }
site.b { execution { type: "sim", options { slots: 1, taskDuration: 30, seed: 2 } }
         maxParallelTasks: 1, initialParallelTasks: 1 }
""")
    assert proc.returncode == 0, proc.stderr
    said = [site for site, reason in waits if reason == THROTTLE_FULL]
    assert sorted(said) == ["a", "b"]
    assert sorted(site for site, reason in waits if reason == "") == ["a", "b"]
    assert waits.index(("a", "")) > waits.index(("a", THROTTLE_FULL))


def test_the_console_prints_a_lasting_throttle_wait_once():
    bus = EventBus()
    out = io.StringIO()
    ticker = ProgressTicker(bus, stream=out, log=False, force_every=0.2)
    waits = SiteWaits(bus)
    waits.full("local", 2)
    waits.full("local", 2)  # said once
    ticker.tick()
    assert "Waiting:" not in out.getvalue()  # not yet: it has not lasted
    time.sleep(0.25)
    ticker.tick()
    time.sleep(0.25)
    ticker.tick()
    printed = [line for line in out.getvalue().splitlines() if line.startswith("Waiting:")]
    assert printed == [
        "Waiting: site local waits: throttle-full - site local runs its limit of 2 calls "
        "at once (maxParallelTasks, which a site's score also moves between "
        "initialParallelTasks and it); the other calls queue: raise maxParallelTasks or "
        "add sites"]
    ticker.stop(final=False)


def test_a_wait_withdrawn_before_it_lasted_is_never_printed():
    bus = EventBus()
    out = io.StringIO()
    ticker = ProgressTicker(bus, stream=out, log=False, force_every=0.2)
    waits = SiteWaits(bus)
    waits.full("local", 2)
    waits.clear("local")
    time.sleep(0.25)
    ticker.tick()
    assert "Waiting:" not in out.getvalue()
    ticker.stop(final=False)


def test_the_monitor_model_lists_the_wait_while_it_holds():
    bus = EventBus()
    state = RunState()
    events: list[Event] = []
    bus.subscribe(events.append)
    waits = SiteWaits(bus)
    waits.full("local", 2)
    for event in events:
        state.apply(event)
    assert [(w.subject, w.id, w.reason) for w in state.waiting.values()] == [
        ("site", "local", THROTTLE_FULL)]
    events.clear()
    waits.clear("local")
    for event in events:
        state.apply(event)
    assert state.waiting == {}
