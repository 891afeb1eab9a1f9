"""Throttle sliders move live on every kind of site that runs here: a slider released in the
(recorded) browser changes the executor's limit, a THROTTLE event says so, and the tasks
that start afterwards run at the new width.

Concurrency is counted from the run's own events: a task's app runs from its ACTIVE status
to the next one (stage-out or its end); at every ACTIVE the number of tasks running on the
site is noted.  Raising a limit lets more in at once; lowering one never preempts, but no
task gets the site while it holds as many as the new limit, so no task placed (JOB_START)
after the lowering finds more than the new limit running.

The panels are built on the run's executor as the dashboard builds them (the
ThrottleControl contract: the Scheduler, or the single local site's executor) and fed by
the same Feed.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from swiftnb.events import Event
from swiftnb.runner import RunHandle
from swiftnb.scheduling.single import SingleSiteExecutor
from swiftnb.widgets.feed import Feed
from swiftnb.widgets.sites import SitesPanel
from swiftnb.widgets.throttles import ThrottlesPanel
from test_dashboard_sim import table_rows
from widget_helpers import Browser, run_async, start

pytestmark = pytest.mark.timeout(180)

NAPS = """type file;
app (file o) nap (int i) {
  sleep "%s" stdout=@o;
}
file f[] <simple_mapper; prefix="naps/f", suffix=".txt">;
foreach i in [1:%d] {
  f[i] = nap(i);
}
"""

#: (JOB_END count at which the slider is released, value): 2 -> 6, then 6 -> 1
PLAN = ((6, 6), (24, 1))


@dataclass
class Moved:
    """What the test saw: the run, its panels, and where in the stream each move was."""

    handle: RunHandle
    throttles: ThrottlesPanel
    sites: SitesPanel
    at: list[int] = field(default_factory=list)  # event index of each move


def _run(browser: Browser, source: str, conf: str, base, *, site: str | None,
         plan=PLAN, timeout: float = 150) -> Moved:
    """Start a real run with the throttles and sites panels, release the maxParallelTasks
    slider as the plan says (choosing ``site`` in the drop-down first), wait for the end."""

    async def main() -> Moved:
        handle = start(source, conf, base)
        panel = ThrottlesPanel(handle.executor)
        moved = Moved(handle, panel, SitesPanel(handle.executor, chart=False))
        feed = Feed(handle.bus, [moved.throttles, moved.sites]).start()
        if site is not None:
            browser.send(panel.site, index=panel.site.options.index(site))
        loop = asyncio.get_running_loop()
        ends = 0
        steps = list(plan)

        def release(value: int) -> None:
            moved.at.append(len(handle.event_list))
            browser.send(panel.sliders["maxParallelTasks"], value=value)

        def watch(e: Event) -> None:
            nonlocal ends
            if e.kind == "JOB_END":
                ends += 1
                if steps and ends == steps[0][0]:
                    loop.call_soon(release, steps.pop(0)[1])

        handle.bus.subscribe(watch)
        await handle
        feed.stop()
        return moved

    return run_async(main(), timeout=timeout)


def running_at_starts(events: list[Event], site: str | None = None) -> list[tuple[int, int, int]]:
    """(event index of the job's JOB_START, of its ACTIVE, tasks then running on ``site``)
    for every task there that became active."""
    job_start: dict[str, tuple[str, int]] = {}
    task_of: dict[str, tuple[str, int]] = {}
    running: set[str] = set()
    out = []
    for i, e in enumerate(events):
        if e.kind == "JOB_START":
            job_start[e["jobid"]] = (e["host"], i)
        elif e.kind == "JOB_TASK":
            task_of[e["taskid"]] = job_start[e["jobid"]]
        elif e.kind == "TASK_STATUS_CHANGE":
            tid = e["taskid"]
            host, placed = task_of[tid]
            if site is not None and host != site:
                continue
            if int(e["status"]) == 2:
                running.add(tid)
                out.append((placed, i, len(running)))
            else:   # the app ended (stage-out or a final status): its slot is free
                running.discard(tid)
    return out


def widths(moved: Moved, site: str | None = None) -> list[list[int]]:
    """The running counts when tasks became active under each limit: before the first
    move; then for the tasks placed (JOB_START) after each move that became active before
    the next, once every task placed before the move has ended (those held their slots
    under the old limit: a remote site reports an end after the scheduler has freed the
    slot, so a task placed after a lowering may see them still running)."""
    events = moved.handle.event_list
    starts = running_at_starts(events, site)
    ended = ends(events)
    cuts = [*moved.at, len(events)]
    phases = [[n for _p, a, n in starts if a < cuts[0]]]
    for lo, hi in zip(cuts, cuts[1:]):
        drained = max((ended.get(j, len(events)) for j, p in placed(events).items() if p < lo),
                      default=lo)
        phases.append([n for p, a, n in starts if lo <= p and max(lo, drained) <= a < hi])
    return phases


def placed(events: list[Event]) -> dict[str, int]:
    """jobid -> event index of its JOB_START (the scheduler placed it on a site)."""
    return {e["jobid"]: i for i, e in enumerate(events) if e.kind == "JOB_START"}


def ends(events: list[Event]) -> dict[str, int]:
    """jobid -> event index of its JOB_END."""
    return {e["jobid"]: i for i, e in enumerate(events) if e.kind == "JOB_END"}


def throttle_events(moved: Moved) -> list[tuple]:
    return [(e["name"], e["host"], e["old"], e["new"]) for e in moved.handle.event_list
            if e.kind == "THROTTLE"]


def check_plan(moved: Moved, site: str, browser: Browser, widths_: tuple[int, ...] = (2, 6, 1)
               ) -> None:
    """The widths moved with the slider (``widths_``: the limit at the start, then after
    each move), and the panel shows the last value."""
    assert moved.handle.ok, moved.handle.errors
    assert len(moved.at) == len(widths_) - 1
    seen = widths(moved, site)
    assert all(seen), seen
    for i, (limit, counts) in enumerate(zip(widths_, seen)):
        assert max(counts) <= limit, (i, seen)
        if i and limit > widths_[i - 1]:   # the raise let more in at once (two more:
            # an app's end and the next one's start may be seen in either order)
            assert max(counts) >= min(limit, widths_[i - 1] + 2), (i, seen)
    logged = throttle_events(moved)
    for old, new in zip(widths_, widths_[1:]):
        assert ("maxParallelTasks", site, old, new) in logged
    panel = moved.throttles
    assert browser.state(panel.sliders["maxParallelTasks"])["value"] == widths_[-1]
    readout = browser.state(panel.readouts["maxParallelTasks"])["value"]
    assert readout == f"<code>{widths_[-1]}</code>"
    assert not panel.errors


def test_the_single_local_site_moves_live(tmp_path, browser):
    """The default local site (the single-site executor): 40 naps of 0.2 s."""
    moved = _run(browser, NAPS % ("0.2", 40), "", tmp_path, site=None)
    assert isinstance(moved.handle.executor, SingleSiteExecutor)
    check_plan(moved, "local", browser)
    # its limit changes are THROTTLE parallelTasks events too (the sites table's limit)
    logged = throttle_events(moved)
    assert ("parallelTasks", "local", 2, 6) in logged
    assert ("parallelTasks", "local", 6, 1) in logged
    # the sites table: the site, always chosen, at its limit from the start: a saturated
    # score, tscore T = 100, the limit the slider set
    rows = table_rows(browser.state(moved.sites.table)["value"])
    assert [(r["site"], r["score"], r["tscore"], r["limit"], r["completed"]) for r in rows] \
        == [("local", "∞", "100.00", "1", "40")]


def test_the_local_site_among_others_in_the_scheduler(tmp_path, browser):
    """Two local sites under the multi-site scheduler: only the chosen one moves."""
    conf = """
sites: [here, there]
site.here { execution { type: "local" }, workDirectory: "work", app.ALL { executable: "*" } }
site.there { execution { type: "local" }, workDirectory: "work", app.ALL { executable: "*" } }
siteSelectionOptions { seed: 3 }
"""
    moved = _run(browser, NAPS % ("0.2", 60), conf, tmp_path, site="here",
                 plan=((6, 6), (30, 1)))
    check_plan(moved, "here", browser)
    th = moved.handle.executor.throttles()
    assert th["sites"]["there"]["maxParallelTasks"] == 2
    assert max(n for _p, _a, n in running_at_starts(moved.handle.event_list, "there")) <= 2


def test_a_sim_site_moves_live(tmp_path, browser):
    conf = """
sites: [grid]
site.grid {
  execution { type: "sim", options { slots: 64, taskDuration: 10, seed: 1 } }
}
"""
    moved = _run(browser, NAPS % ("0.2", 40), conf, tmp_path, site="grid")
    check_plan(moved, "grid", browser)


def test_a_local_coaster_site_moves_live(tmp_path, browser):
    """Blocks of workers on this machine: room for 6 tasks, a limit of 2, then 6, then 1."""
    conf = """
sites: [coast]
site.coast {
  execution {
    type: "coaster"
    jobManager: "local:local"
    options { maxJobs: 1, tasksPerNode: 6, maxNodesPerJob: 1, maxJobTime: "00:10:00",
              lowOverallocation: 100, highOverallocation: 100 }
  }
  workDirectory: "work"
  app.ALL { executable: "*", maxWallTime: "00:01:00" }
}
"""
    moved = _run(browser, NAPS % ("0.3", 40), conf, tmp_path, site="coast")
    check_plan(moved, "coast", browser)
