"""Nothing left running: every process an app starts ends with its call, on success,
failure, walltime, cancel, a killed wrapper, and an ``ext`` mapper's program with the run.

Real processes throughout.  Each app's leftovers are found by a marker unique to the
test in their argv (``sleep 600.<digits>``: GNU sleep takes a fraction), through /proc;
every wait is bounded, and the teardown kills whatever a failing test left."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from swiftnb.engine.task import Command, Task
from swiftnb.events import EventBus
from swiftnb.remote import wrapper
from swiftnb.remote.payload import payload_file
from swiftnb.remote.wrap.sequence import SEQUENCE_FLAG
from swiftnb.execution.local import LocalProvider
from swiftnb.scheduling.single import SingleSiteExecutor

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")]

#: bound on every wait: how long a broken containment may hang a test, not a timing
LIMIT = 20.0
ROOT = Path(__file__).resolve().parents[2]


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _live(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False


def running(marker: str) -> list[int]:
    """Live processes whose argv holds ``marker``."""
    needle = marker.encode()
    return [int(p) for p in os.listdir("/proc")
            if p.isdigit() and needle in _cmdline(p) and _live(p)]


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def gone(marker: str) -> bool:
    """Waits (bounded) until nothing with ``marker`` runs; False if something still does:
    a SIGKILLed process takes a moment to leave /proc, a survivor never does."""
    deadline = time.monotonic() + 5.0
    while running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@pytest.fixture
def marker():
    """A ``sleep`` duration unique to this test; whatever still runs with it is killed."""
    made = f"600.{random.randrange(10**8, 10**9)}"
    yield made
    for pid in running(made):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _task(tmp_path: Path, jobid: str, script: str, **kw) -> Task:
    return Task(jobid=jobid, tr="sh", args=["-c", script], base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"), **kw)


def _spec(tmp_path: Path, script: str, **kw) -> dict:
    spec = wrapper.spec_from_task(_task(tmp_path, "c1", script))
    spec.update(kw)
    return spec


def _background(marker: str) -> str:
    """A body that exits 0 leaving children outside its process group and session."""
    return (f"(nohup sleep {marker}1 >/dev/null 2>&1 &); setsid sleep {marker}2 & "
            f"sleep {marker}3 & timeout 300 sleep {marker}4 & "
            f"until [ -n \"$(pgrep -f {marker}4)\" ]; do sleep 0.01; done; exit 0")


def _local(coro_factory):
    async def main():
        ex = SingleSiteExecutor(LocalProvider(), EventBus(), max_parallel=2)
        try:
            return await coro_factory(ex)
        finally:
            await ex.close()
    return asyncio.run(main())


# -- the local site ------------------------------------------------------------------


def test_local_success_ends_the_background_children(tmp_path, marker):
    result = _local(lambda ex: ex.submit(_task(tmp_path, "bg", _background(marker))))
    assert result.ok, result.message
    assert gone(marker), f"left running: {running(marker)}"


def test_local_walltime_ends_a_timeout_in_its_own_group(tmp_path, marker):
    result = _local(lambda ex: ex.submit(
        _task(tmp_path, "wt", f"timeout 300 sleep {marker}", maxwalltime=0.5)))
    assert not result.ok and "exceeded its walltime" in result.message
    assert gone(marker), f"left running: {running(marker)}"


def test_local_failure_ends_the_background_children(tmp_path, marker):
    result = _local(lambda ex: ex.submit(_task(
        tmp_path, "fl", f"setsid sleep {marker} & sleep 0.2; exit 3")))
    assert not result.ok and "exit code of 3" in result.message
    assert gone(marker), f"left running: {running(marker)}"


def test_local_cancel_ends_every_process_of_the_app(tmp_path, marker):
    async def submit_and_cancel(ex):
        job = asyncio.ensure_future(ex.submit(_task(
            tmp_path, "cn", f"timeout 300 sleep {marker}1 & setsid sleep {marker}2 & wait")))
        for _ in range(int(LIMIT / 0.02)):
            if len(running(marker)) >= 2:
                break
            await asyncio.sleep(0.02)
        assert len(running(marker)) >= 2, "the app never started"
        job.cancel()
        try:
            await job
        except asyncio.CancelledError:
            pass

    _local(submit_and_cancel)
    assert gone(marker), f"left running: {running(marker)}"


def test_local_run_end_ends_a_running_app(tmp_path, marker):
    """The run stops (Ctrl-C, SIGTERM: the provider shuts down) while the app runs."""
    async def submit_and_close(ex):
        job = asyncio.ensure_future(ex.submit(_task(
            tmp_path, "sd", f"timeout 300 sleep {marker} & wait")))
        for _ in range(int(LIMIT / 0.02)):
            if running(marker):
                break
            await asyncio.sleep(0.02)
        await ex.close()
        return await job

    result = _local(submit_and_close)
    assert not result.ok
    assert gone(marker), f"left running: {running(marker)}"


def _unmarked(marker: str, setsid: str = "") -> str:
    """A body whose children drop the job's mark (``env -i``): one in the app's session,
    one left by a shell that exited first (an orphan), then it exits 0."""
    return (f"env -i {setsid} sleep {marker}1 & "
            f"env -i sh -c '{setsid} sleep {marker}2 & exit 0'; "
            f"until [ -n \"$(pgrep -f {marker}2)\" ] && [ -n \"$(pgrep -f {marker}1)\" ]; "
            f"do sleep 0.01; done; exit 0")


def test_local_children_started_with_env_i_end_with_the_call(tmp_path, marker):
    """They lost the SWIFTNB_JOB mark; the wrapper is their subreaper, so they are still
    its children (in the app's session) when the call ends."""
    result = _local(lambda ex: ex.submit(_task(tmp_path, "ei", _unmarked(marker))))
    assert result.ok, result.message
    assert gone(marker), f"left running: {running(marker)}"


# -- the wrapper run on its own (a batch job's) ---------------------------------------


def test_a_standalone_wrapper_ends_unmarked_children_in_sessions_of_their_own(tmp_path, marker):
    """A batch job's wrapper runs that one job: every orphan it adopts is the job's."""
    proc = _standalone(tmp_path, _unmarked(marker, setsid="setsid"))
    out = proc.stdout.read()
    proc.wait(timeout=LIMIT)
    assert json.loads(out)["ok"], proc.stderr.read()
    assert gone(marker), f"left running: {running(marker)}"



def test_run_job_success_and_walltime_end_everything(tmp_path, marker):
    result = wrapper.run_job(_spec(tmp_path, _background(marker)))
    assert result["ok"], result["message"]
    assert gone(marker), f"left running: {running(marker)}"
    result = wrapper.run_job(_spec(tmp_path, f"timeout 300 sleep {marker}", walltime=0.5))
    assert result["kind"] == wrapper.KIND_WALLTIME
    assert gone(marker), f"left running: {running(marker)}"


def _standalone(tmp_path: Path, script: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-I", payload_file(), "wrap"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(json.dumps(_spec(tmp_path, script)).encode())
    proc.stdin.close()
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["term", "kill"])
def test_a_killed_standalone_wrapper_takes_its_app_along(tmp_path, marker, sig):
    """scancel/qdel signal the wrapper: its app must not outlive it.  SIGTERM: the whole
    tree; SIGKILL (nothing can run then): the app's process, by the kernel."""
    script = (f"exec sleep {marker}" if sig == signal.SIGKILL
              else f"timeout 300 sleep {marker}1 & setsid sleep {marker}2 & wait")
    proc = _standalone(tmp_path, script)
    try:
        wait_for(lambda: running(marker), "the app to start")
        proc.send_signal(sig)
        proc.wait(timeout=LIMIT)
        assert gone(marker), f"left running: {running(marker)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


# -- a job of several commands: its wrapper process killed ----------------------------


def test_a_killed_sequence_process_is_the_wrappers_failure_and_ends_the_app(tmp_path, marker):
    task = Task(jobid="seq", tr="sleep", args=[marker], base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"),
                more_commands=(Command(tr="echo", args=["after"]),))
    spec = wrapper.spec_from_task(task)
    box: dict = {}
    runner = threading.Thread(target=lambda: box.update(result=wrapper.run_job(spec)))
    runner.start()
    try:
        wait_for(lambda: running(marker), "the first command to start")
        app = running(marker)[0]
        with open(f"/proc/{app}/stat") as fh:
            sequence = int(fh.read().rsplit(")", 1)[1].split()[1])
        assert SEQUENCE_FLAG.encode() in _cmdline(str(sequence))
        os.kill(sequence, signal.SIGKILL)
        runner.join(LIMIT)
        assert not runner.is_alive()
    finally:
        for pid in running(marker):
            os.kill(pid, signal.SIGKILL)
        runner.join(LIMIT)
    result = box["result"]
    assert result["kind"] == wrapper.KIND_WORKER, result["message"]
    assert "wrapper process of the job was killed" in result["cause"]
    assert gone(marker), f"left running: {running(marker)}"


def test_a_command_killed_by_a_signal_is_still_the_apps_failure(tmp_path, marker):
    task = Task(jobid="seq2", tr="sh", args=["-c", "kill -9 $$"], base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"),
                more_commands=(Command(tr="echo", args=["after"]),))
    result = wrapper.run_job(wrapper.spec_from_task(task))
    assert result["kind"] == wrapper.KIND_APP_EXIT, result["message"]
    assert "killed by signal 9" in result["cause"]


# -- an ext mapper's program when swiftnb is stopped ----------------------------------


def test_sigterm_to_swiftnb_ends_an_ext_mappers_program(tmp_path, marker):
    mapper = tmp_path / "m.sh"
    mapper.write_text(f"#!/bin/sh\nsleep {marker}2 &\nsleep {marker}1\n")
    mapper.chmod(0o755)
    (tmp_path / "s.swift").write_text(
        'type file;\nfile fs[] <ext; exec="./m.sh">;\ntrace(filenames(fs));\n')
    proc = subprocess.Popen([str(ROOT / ".venv/bin/swiftnb"), "s.swift"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: len(running(marker)) == 2, "the mapper program to start")
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=LIMIT)
        assert gone(marker), f"mapper program left running: {running(marker)}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_ext_mappers_background_children_end_with_it(tmp_path, marker):
    mapper = tmp_path / "m.sh"
    mapper.write_text(f"#!/bin/sh\nsleep {marker} &\necho '[0] a.txt'\n")
    mapper.chmod(0o755)
    (tmp_path / "s.swift").write_text(
        'type file;\nfile fs[] <ext; exec="./m.sh">;\ntrace(filenames(fs));\n')
    done = subprocess.run([str(ROOT / ".venv/bin/swiftnb"), "s.swift"], cwd=tmp_path,
                          capture_output=True, timeout=LIMIT * 3)
    assert done.returncode == 0, done.stderr.decode()
    assert gone(marker), f"left running: {running(marker)}"
