"""LocalProvider and SingleSiteExecutor on real subprocesses: events, concurrency, cancel.

Every test runs three times: with apps started and reaped on the loop (pidfds); on runner
threads, as on a system without pidfds (or a busy machine, see local.py); and with a
kernel that refuses pidfds (the first app, started on the loop, is waited for on a
thread, the others start there)."""

from __future__ import annotations

import asyncio
import errno
import os
import time

import pytest

from swiftnb.engine.task import Task
from swiftnb.events import EventBus
from swiftnb.execution import local
from swiftnb.execution.joblog import read_record
from swiftnb.execution.local import LocalProvider
from swiftnb.scheduling.single import SingleSiteExecutor

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True, params=["pidfd", "threads", "enosys"])
def start_path(request, monkeypatch):
    if request.param == "threads":
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    elif request.param == "enosys":
        def refused(pid, flags=0):
            raise OSError(errno.ENOSYS, "Function not implemented")
        monkeypatch.setattr(os, "pidfd_open", refused)
    return request.param


def task(tmp_path, jobid, tr, args, **kw):
    return Task(jobid=jobid, tr=tr, args=args, base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"), **kw)


def run(coro):
    return asyncio.run(coro)


async def _written(path, timeout=4.0):
    """Wait until the app has written ``path`` (its pid)."""
    for _ in range(int(timeout / 0.02)):
        await asyncio.sleep(0.02)
        if path.exists() and path.read_text().strip():
            return


def test_events_in_swift_order_and_output_moved(tmp_path):
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    ex = SingleSiteExecutor(LocalProvider(site_run="s-run001"), bus, max_parallel=2)

    async def main():
        try:
            return await ex.submit(task(tmp_path, "echo-abc", "echo", ["hello world"],
                                        stdout="o.txt", outputs=["o.txt"]))
        finally:
            await ex.close()

    result = run(main())
    assert result.ok and result.site == "local"
    assert (tmp_path / "o.txt").read_text() == "hello world\n"
    kinds = [e.kind for e in events]
    assert kinds == ["JOB_SITE_SELECT", "THREAD_ASSOCIATION", "JOB_START", "JOB_TASK"] + \
        ["TASK_STATUS_CHANGE"] * 4
    assert [e["status"] for e in events[4:]] == [8, 1, 2, 7]
    start = events[2]
    assert start.fields == {"jobid": "echo-abc", "tr": "echo", "arguments": ["hello world"],
                            "tmpdir": "s-run001/jobs/e/echo-abc", "host": "local"}
    assert events[3]["taskid"].startswith("urn:") and events[4]["taskid"] == events[3]["taskid"]
    # the site run directory is removed at close (keepSiteDir false)
    assert not (tmp_path / "swiftwork").exists()


def test_failure_reports_status_5_with_message(tmp_path):
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    ex = SingleSiteExecutor(LocalProvider(), bus)

    async def main():
        try:
            return await ex.submit(task(tmp_path, "false-x", "false", []))
        finally:
            await ex.close()

    result = run(main())
    assert not result.ok and result.exit_code == 1
    assert "Caused by: Application" in result.message and "exit code of 1" in result.message
    last = events[-1]
    assert last["status"] == 5 and "exit code of 1" in last["message"]


def test_max_parallel_bounds_concurrency(tmp_path):
    bus = EventBus()
    ex = SingleSiteExecutor(LocalProvider(), bus, max_parallel=2)
    active = 0
    peak = 0

    def watch(e):
        nonlocal active, peak
        if e.kind == "TASK_STATUS_CHANGE":
            if e["status"] == 2:
                active += 1
                peak = max(peak, active)
            elif e["status"] in (5, 7):
                active -= 1

    bus.subscribe(watch)

    async def main():
        try:
            tasks = [task(tmp_path, f"sleep-{i}", "sleep", ["0.05"]) for i in range(6)]
            return await asyncio.gather(*(ex.submit(t) for t in tasks))
        finally:
            await ex.close()

    results = run(main())
    assert all(r.ok for r in results)
    assert peak == 2


def test_cancel_kills_the_process_group(tmp_path):
    bus = EventBus()
    provider = LocalProvider(keep=True)
    ex = SingleSiteExecutor(provider, bus)
    pidfile = tmp_path / "child.pid"

    async def main():
        t = task(tmp_path, "sh-1", "sh", ["-c", f"sleep 30 & echo $! > {pidfile}; wait"])
        fut = asyncio.ensure_future(ex.submit(t))
        await _written(pidfile)
        fut.cancel()
        with pytest.raises(asyncio.CancelledError):
            await fut
        await ex.close()

    run(main())
    grandchild = int(pidfile.read_text())
    for _ in range(100):
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        # a zombie is dead too: check its state
        try:
            with open(f"/proc/{grandchild}/stat") as fh:
                if fh.read().split()[2] == "Z":
                    break
        except OSError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("grandchild still running after cancel")


def test_failed_job_leaves_an_info_file_in_the_run_directory(tmp_path):
    bus = EventBus()
    ex = SingleSiteExecutor(LocalProvider(site_run="wf-run001"), bus)

    async def main():
        try:
            return await ex.submit(task(tmp_path, "sh-fail", "sh", ["-c", "echo why >&2; exit 4"]))
        finally:
            await ex.close()

    assert not run(main()).ok
    info = read_record(str(tmp_path / "run001" / "wf-run001.d" / "sh-fail-info"))
    assert "EXIT_CODE=4" in info and "why" in info and "ARGS=[-c, echo why >&2; exit 4]" in info


def test_dynamic_outputs_come_back_through_the_local_provider(tmp_path):
    """Task.output_globs: the files the app created that match come back to the base
    directory; the site directory is gone at the end."""
    ex = SingleSiteExecutor(LocalProvider(site_run="s-run001"), EventBus(), max_parallel=2)
    t = task(tmp_path, "bash-dyn", "bash",
             ["-c", "mkdir -p outs/sub; for i in 1 2 3 4; do echo $i > outs/f$i.out; done; "
                    "echo no > outs/f5.txt; echo deep > outs/sub/g.out"])
    t.output_globs = ["outs/*.out"]

    async def main():
        try:
            return await ex.submit(t)
        finally:
            await ex.close()

    result = run(main())
    assert result.ok, result.message
    assert sorted(p.name for p in (tmp_path / "outs").iterdir()) == [
        "f1.out", "f2.out", "f3.out", "f4.out"]
    assert (tmp_path / "outs/f4.out").read_text() == "4\n"
    assert not (tmp_path / "swiftwork").exists()


def test_job_directories_are_reused_and_gone_at_close(tmp_path):
    """Sequential jobs reuse one (empty) job directory; a kept site directory has only
    the jobs' own directories, no spares."""
    for keep in (False, True):
        base = tmp_path / f"keep-{keep}"
        base.mkdir()
        provider = LocalProvider(site_run="s-run001", keep=keep)
        ex = SingleSiteExecutor(provider, EventBus(), max_parallel=1)

        async def main():
            try:
                for i in range(5):
                    result = await ex.submit(task(base, f"echo-{i}", "echo", [str(i)],
                                                  stdout=f"out/{i}.txt", outputs=[f"out/{i}.txt"]))
                    assert result.ok, result.message
                    if not keep:
                        assert len(provider._spares) == 1  # the one directory, waiting
            finally:
                await ex.close()

        run(main())
        assert [(base / f"out/{i}.txt").read_text() for i in range(5)] == [f"{i}\n" for i in range(5)]
        if keep:
            jobs = base / "swiftwork/s-run001/jobs/e"
            assert sorted(p.name for p in jobs.iterdir() if p.is_dir()) == [
                f"echo-{i}" for i in range(5)]
        else:
            assert not (base / "swiftwork").exists()


def test_info_records_of_successful_jobs_only_with_always_transfer(tmp_path):
    """alwaysTransferWrapperLog: a JOBID-info record for every job (appended to
    RUNDIR/SITE_RUN.d/jobs-info); without it, for failed jobs only."""
    for always in (False, True):
        base = tmp_path / f"always-{always}"
        base.mkdir()
        ex = SingleSiteExecutor(LocalProvider(site_run="s-run001", always_info=always),
                                EventBus(), max_parallel=2)

        async def main():
            try:
                return await asyncio.gather(
                    ex.submit(task(base, "echo-ok", "echo", ["fine"], stdout="o.txt",
                                   outputs=["o.txt"])),
                    ex.submit(task(base, "sh-bad", "sh", ["-c", "exit 3"])))
            finally:
                await ex.close()

        ok, bad = run(main())
        assert ok.ok and not bad.ok
        info = base / "run001" / "s-run001.d"
        assert read_record(str(info / "sh-bad-info")).count("EXIT_CODE=3") == 1
        if always:
            text = read_record(str(info / "echo-ok-info"))
            assert "EXIT_CODE=0" in text and "ARGS=[fine]" in text and "OUTF=o.txt" in text
        else:
            assert read_record(str(info / "echo-ok-info")) is None
        assert [p.name for p in info.iterdir()] == ["jobs-info"]  # one file, not one a job


def _echo_tasks(tmp_path, n):
    return [task(tmp_path, f"echo-{i}", "echo", [str(i)], stdout=f"out/{i}.txt",
                 outputs=[f"out/{i}.txt"]) for i in range(n)]


def test_apps_run_without_threads_where_pidfds_exist(tmp_path, start_path):
    provider = LocalProvider()
    ex = SingleSiteExecutor(provider, EventBus(), max_parallel=2)

    async def main():
        try:
            results = await asyncio.gather(*(ex.submit(t) for t in _echo_tasks(tmp_path, 6)))
            return results, provider._runners._threads
        finally:
            await ex.close()

    results, threads = run(main())
    assert all(r.ok for r in results), [r.message for r in results]
    assert [(tmp_path / f"out/{i}.txt").read_text() for i in range(6)] == [
        f"{i}\n" for i in range(6)]
    if start_path == "pidfd":
        assert threads == 0
    else:
        assert 1 <= threads <= 2


@pytest.mark.parametrize("start_path", ["pidfd"], indirect=True)
def test_slow_starts_go_to_runner_threads_then_back_to_the_loop(tmp_path, start_path,
                                                                monkeypatch):
    """Every start counts as slow here: one start on the loop, the next two on threads,
    then the loop again."""
    monkeypatch.setattr(local, "_SLOW_START", -1.0)
    monkeypatch.setattr(local, "_THREADED_STRETCH", 2)
    provider = LocalProvider()
    on_loop = []
    start_here = provider._start_here

    def spy(process, loop):
        on_loop.append(process.job.spec["jobid"])
        return start_here(process, loop)

    provider._start_here = spy
    ex = SingleSiteExecutor(provider, EventBus(), max_parallel=1)

    async def main():
        try:
            return [await ex.submit(t) for t in _echo_tasks(tmp_path, 7)]
        finally:
            await ex.close()

    results = run(main())
    assert all(r.ok for r in results), [r.message for r in results]
    assert on_loop == ["echo-0", "echo-3", "echo-6"]
    assert [(tmp_path / f"out/{i}.txt").read_text() for i in range(7)] == [
        f"{i}\n" for i in range(7)]


def test_walltime_kills_an_app_on_either_path(tmp_path):
    ex = SingleSiteExecutor(LocalProvider(), EventBus())

    async def main():
        try:
            return await ex.submit(task(tmp_path, "sleep-w", "sleep", ["20"], maxwalltime=0.3))
        finally:
            await ex.close()

    began = time.monotonic()
    result = run(main())
    assert not result.ok and "exceeded its walltime of 0.3 seconds" in result.message
    assert time.monotonic() - began < 10


@pytest.mark.parametrize("start_path", ["pidfd"], indirect=True)
def test_a_second_cancel_still_leaves_no_zombie(tmp_path, start_path):
    """A call canceled twice (the engine stops, then the run is torn down) stops waiting
    for its app, but close() still reaps it: nothing is left behind when the loop ends."""
    pidfile = tmp_path / "app.pid"
    ex = SingleSiteExecutor(LocalProvider(), EventBus())

    async def main():
        t = task(tmp_path, "sh-z", "sh", ["-c", f"echo $$ > {pidfile}; exec sleep 30"])
        fut = asyncio.ensure_future(ex.submit(t))
        await _written(pidfile)
        fut.cancel()
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        fut.cancel()  # while the first cancel waits for the killed app to end
        with pytest.raises(asyncio.CancelledError):
            await fut
        await ex.close()
        pid = int(pidfile.read_text())
        # reaped by close() itself, not by whatever the loop happens to run afterwards
        assert not os.path.exists(f"/proc/{pid}"), "the app is still there (a zombie?)"

    run(main())


def test_the_loop_answers_while_a_large_input_is_copied(tmp_path, monkeypatch):
    """The run's shared copy of a large input (as root, whom read-only modes do not stop:
    the job's own copy) is made on a runner thread: a timer on the loop keeps ticking
    while the copy (made slow here) goes on."""
    from swiftnb.remote.wrap import files, staging

    (tmp_path / "big.dat").write_bytes(b"x" * ((1 << 20) + 1))
    site_copy, own_copy = files._site_copy_of, staging._copy_input

    def slow_site_copy(source, target):
        time.sleep(1.0)
        site_copy(source, target)

    def slow_own_copy(source, place, st):
        time.sleep(1.0)
        own_copy(source, place, st)

    monkeypatch.setattr(files, "_site_copy_of", slow_site_copy)
    monkeypatch.setattr(staging, "_copy_input", slow_own_copy)
    ex = SingleSiteExecutor(LocalProvider(site_run="s-run001"), EventBus(), max_parallel=2)

    async def main():
        gaps, last = [], time.monotonic()

        async def tick():
            nonlocal last
            while True:
                await asyncio.sleep(0.02)
                now = time.monotonic()
                gaps.append(now - last)
                last = now

        ticker = asyncio.ensure_future(tick())
        result = await ex.submit(task(tmp_path, "wc-1", "wc", ["-c", "big.dat"],
                                      inputs=["big.dat"], stdout="n.txt", outputs=["n.txt"]))
        ticker.cancel()
        await ex.close()
        return result, gaps

    result, gaps = run(main())
    assert result.ok, result.message
    assert (tmp_path / "n.txt").read_text().startswith(str((1 << 20) + 1))
    assert max(gaps) < 0.5, f"the loop stood still for {max(gaps):.2f} s"
