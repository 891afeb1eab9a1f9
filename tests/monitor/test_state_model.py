"""The monitors' run model (swiftnb.monitor.state) fed with real event sequences: a local
run through the Python API (live, with its executor and its failures), the same run's log
read back, and a WAITING sequence as a batch site reports it."""

from __future__ import annotations

import asyncio
import math

import pytest

from swiftnb.config import load_config_text
from swiftnb.events import Event
from swiftnb.logs.reader import read_events
from swiftnb.monitor.state import RunState
from swiftnb.runner import start_run

pytestmark = pytest.mark.timeout(120)

SOURCE = """type file;
app (file o) nap (int i) {
  sleep "0.05" stdout=@o;
}
app (file o) bad () {
  sh "-c" "echo broken pipe dream >&2; exit 3" stdout=@o;
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:6] {
  f[i] = nap(i);
}
file b <"b.txt">;
b = bad();
"""


def _run(tmp_path) -> tuple[RunState, str]:
    async def main() -> tuple[RunState, str]:
        handle = start_run(SOURCE, config=load_config_text("lazyErrors: true", cwd=str(tmp_path)),
                           base_dir=str(tmp_path))
        state = RunState(clock=handle.bus.clock, control=handle.executor)
        state.follow(handle.bus, handle.event_list)
        state.watch_failures(handle.on_failure, handle.failures)
        try:
            await handle
        except Exception:  # noqa: BLE001 - the run fails (bad() exits 3): that is the point
            pass
        state.close()
        return state, str(handle.log_path)

    return asyncio.run(asyncio.wait_for(main(), 100))


def test_a_live_run_folds_into_progress_apps_sites_throttles_and_failures(tmp_path):
    state, _ = _run(tmp_path)
    assert (state.known, state.ok, state.failed) == (7, 6, 1)
    assert "7 of 7 done (1 failed)" in state.headline()
    assert "finished" in state.headline()
    rows = {name: app for name, app, _rate, _eta in state.app_rows()}
    assert (rows["sleep"].known, rows["sleep"].ok) == (6, 6)
    assert (rows["sh"].known, rows["sh"].failed) == (1, 1)
    [site] = state.site_rows()
    assert site.name == "local"
    assert site.done == 6 and site.running == 0 and site.queued == 0
    assert site.limit is not None
    [failure] = state.failures
    assert failure.app == "sh" and failure.exit_code == 3
    assert "broken pipe dream" in failure.stderr
    assert any("failed: sh" in line for line in state.feed)
    names = {(t.name, t.site) for t in state.throttles()}
    assert ("jobSubmitThrottle", None) in names and ("maxParallelTasks", "local") in names


def test_a_throttle_changed_through_the_model_reaches_the_executor(tmp_path):
    async def main() -> tuple[list[str], object, str | None]:
        handle = start_run(SOURCE, config=load_config_text("lazyErrors: true", cwd=str(tmp_path)),
                           base_dir=str(tmp_path))
        state = RunState(clock=handle.bus.clock, control=handle.executor)
        seen: list[str] = []
        handle.bus.subscribe(lambda e: seen.append(f"{e.get('name')}={e.get('new')}")
                             if e.kind == "THROTTLE" else None)
        state.follow(handle.bus, handle.event_list)
        refused = state.set_throttle("maxParallelTasks", 3, "local")
        value = next(t.value for t in state.throttles()
                     if (t.name, t.site) == ("maxParallelTasks", "local"))
        bad = state.set_throttle("maxParallelTasks", 0, "local")
        try:
            await handle
        except Exception:  # noqa: BLE001
            pass
        assert refused is None
        return seen, value, bad

    seen, value, bad = asyncio.run(asyncio.wait_for(main(), 100))
    assert "maxParallelTasks=3" in seen
    assert value == 3
    assert bad  # a refusal is said, not raised


def test_the_same_run_read_back_from_its_log_gives_the_same_counts(tmp_path):
    live, log_path = _run(tmp_path)
    logged = RunState()
    for event in read_events(log_path):
        logged.apply(event)
    assert (logged.known, logged.ok, logged.failed) == (live.known, live.ok, live.failed)
    assert [s.name for s in logged.site_rows()] == ["local"]
    assert logged.sites["local"].done == 6
    assert len(logged.failures) == 1 and logged.failures[0].exit_code == 3
    assert any(t.value is not None for t in logged.throttles())


def test_waiting_holds_until_its_subject_starts_or_ends():
    state = RunState()
    seq = [
        Event(1.0, "BLOCK_REQUESTED", {"id": "b1", "cores": "8", "coresPerWorker": "2",
                                       "walltime": "600"}),
        Event(2.0, "WAITING", {"subject": "block", "id": "b1", "site": "slurm",
                               "reason": "Priority", "detail": "queued behind others"}),
        Event(3.0, "WAITING", {"subject": "block", "id": "b1", "site": "slurm",
                               "reason": "Resources", "detail": "no free nodes"}),
        Event(3.5, "WAITING", {"subject": "site", "id": "slurm", "site": "slurm",
                               "reason": "throttle", "detail": "at its limit"}),
    ]
    for e in seq:
        state.apply(e)
    assert [(w.subject, w.reason) for w in state.waiting_rows()] == [
        ("block", "Resources"), ("site", "throttle")]
    assert state.blocks["b1"].lrm == "Resources" and state.blocks["b1"].shape == "4x2"
    state.apply(Event(4.0, "BLOCK_ACTIVE", {"id": "b1"}))
    state.apply(Event(4.1, "WORKER_ACTIVE", {"blockid": "b1", "id": "w1"}))
    assert [w.subject for w in state.waiting_rows()] == ["site"]
    assert state.blocks["b1"].state == "active" and state.blocks["b1"].lrm == ""
    assert state.blocks["b1"].workers == {"w1"}


def test_rate_and_eta_leave_reused_calls_out():
    state = RunState()
    t = 100.0
    for i in range(10):
        state.apply(Event(t, "JOB_INIT", {"jobid": f"j{i}", "tr": "a"}))
    for i in range(5):
        state.apply(Event(t, "JOB_CACHED", {"jobid": f"j{i}", "tr": "a"}))
        state.apply(Event(t, "END_SUCCESS", {"jobid": f"j{i}", "tr": "a"}))
    state.apply(Event(t + 10, "END_SUCCESS", {"jobid": "j5", "tr": "a"}))
    rate, eta = state.rate_eta()
    assert rate == pytest.approx(0.1) and eta == pytest.approx(40.0)
    assert "6 of 10 done (5 cached)" in state.headline()
    [(_, app, _, app_eta)] = state.app_rows()
    assert app.cached == 5 and app_eta == pytest.approx(40.0)
    assert not math.isinf(eta)
