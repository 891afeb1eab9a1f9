"""Coaster blocks as batch jobs when things go wrong: nothing is lost, every message names
the site and the batch system's words.

Real ``swiftnb run`` processes against the real test Slurm (tests/slurm.py) and the test
sshd (tests/sshd.py): a block cancelled by ``scancel`` mid-task, a block killed at its
Slurm walltime, slurmctld stopped and started again during a run, the SSH connection to
the login node dropped and restored, and a worker that never connects.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from swiftnb.coasters.blocks import BlockRequest
from swiftnb.coasters.cluster import ClusterBlockProvider, ClusterOptions
from swiftnb.execution.batch.launchers import launcher_for
from swiftnb.execution.batch.lrm import lrm_class
from swiftnb.execution.shell import LocalShell

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

SLEEPS = """
type file;
app (file o) nap (int s, int i) {{ sh "-c" strcat("sleep ", s, "; echo ", i) stdout=@o; }}
foreach i in [1:{n}] {{
    file f <single_file_mapper; file=strcat("out/f", i, ".txt")>;
    f = nap({seconds}, i);
}}
"""


def _conf(execution: str, work: str, extra: str = "") -> str:
    return f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{ {execution} }}
    workDirectory: "{work}"
    staging: "local"
    maxParallelTasks: 16
    initialParallelTasks: 16
    app.ALL {{ executable: "*", maxWallTime: "00:01:00" }}
    {extra}
}}
"""


def _start(tmp_path: Path, conf: str, *, n: int, seconds: int,
           env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    (tmp_path / "wf.swift").write_text(SLEEPS.format(n=n, seconds=seconds))
    (tmp_path / "swift.conf").write_text(conf)
    return subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _log(tmp_path: Path) -> str:
    logs = sorted(tmp_path.glob("run*/*.log"))
    return logs[-1].read_text() if logs else ""


def _wait_for(predicate, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def _finish(proc: subprocess.Popen[str], timeout: float = 180) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        raise AssertionError(f"the run did not end:\n{out}\n{err}") from None
    return proc.returncode, out, err


def _outputs(tmp_path: Path, n: int) -> list[str]:
    return [(tmp_path / "out" / f"f{i}.txt").read_text().strip() for i in range(1, n + 1)]


def _slurm_jobs(slurm, states: str = "all") -> list[tuple[str, str]]:
    out = slurm.run(["squeue", "-h", "-t", states, "-o", "%i %T %j"]).stdout
    return [(p[0], p[1]) for p in (line.split() for line in out.splitlines())
            if len(p) == 3 and p[2].startswith("swiftnb-")]


SLURM_BLOCKS = ('type: "coaster", jobManager: "local:slurm", options {{ maxJobs: 2, '
                'tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "00:10:00", '
                'jobQueue: "{queue}" }}')


@pytest.mark.timeout(200)
def test_a_block_cancelled_mid_task_loses_no_task(tmp_path, slurm):
    conf = _conf(SLURM_BLOCKS.format(queue=slurm.partition), str(tmp_path / "work"))
    proc = _start(tmp_path, conf, n=4, seconds=6, env=slurm.env())
    try:
        _wait_for(lambda: "status=2 workerid" in _log(tmp_path), 90, "a task to start")
        running = [j for j, state in _slurm_jobs(slurm, "running") if state == "RUNNING"]
        assert running
        victim = running[0]
        slurm.run(["scancel", victim])
        code, _out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, err
    assert _outputs(tmp_path, 4) == ["1", "2", "3", "4"]
    log = _log(tmp_path)
    failed = re.findall(r"BLOCK_FAILED id=(\S+)", log)
    assert failed, "the cancelled block was not reported failed"
    assert re.search(rf"slurm job {victim} (canceled|cancelled)", log, re.I), log[-3000:]
    assert not _slurm_jobs(slurm, "pending,running")


@pytest.mark.timeout(150)
def test_slurm_ending_a_block_at_its_walltime_is_reported_as_walltime(tmp_path, slurm):
    """The one Slurm walltime test (Slurm takes whole minutes and checks every 30 s: 60 to
    90 s).  The block's "worker" sleeps, so only Slurm ends the job."""
    fake_python = tmp_path / "python3"
    fake_python.write_text('#!/bin/sh\ncase "$*" in *_swiftremote.pyz\\ worker*) exec sleep 600;; esac\n'
                           f'exec {sys.executable} "$@"\n')
    fake_python.chmod(fake_python.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.chmod(tmp_path, 0o755)

    async def main() -> tuple[list[str], list[tuple[str, str]]]:
        shell = LocalShell()
        lrm = lrm_class("slurm")(shell, site="cluster")
        options = ClusterOptions(jobQueue=slurm.partition, python=str(fake_python))
        blocks = ClusterBlockProvider(lrm, launcher_for("slurm"), boot="local",
                                      work_dir=str(tmp_path / "work"), site_run="run-1",
                                      options=options, site="cluster")
        active: list[str] = []
        ended: list[tuple[str, str]] = []
        done = asyncio.Event()
        request = BlockRequest("0000-1", workers=1, cores=1, walltime=30, lrm_walltime=60,
                               host="127.0.0.1", port=9, secret="s")

        def on_exit(reason: str, detail: str) -> None:
            ended.append((reason, detail))
            done.set()

        await blocks.submit(request, lambda: active.append("active"), on_exit)
        try:
            await asyncio.wait_for(done.wait(), 120)
        finally:
            await blocks.close()
        return active, ended

    old = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = slurm.env()["SLURM_CONF"]
    try:
        active, ended = asyncio.run(main())
    finally:
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
    assert active == ["active"]
    assert len(ended) == 1
    reason, detail = ended[0]
    assert reason == "walltime"
    assert re.match(r"slurm job \d+ timeout", detail) and "TIMEOUT" in detail, detail


@pytest.mark.timeout(240)
def test_slurmctld_restarted_during_a_run(tmp_path, slurm):
    conf = _conf(SLURM_BLOCKS.format(queue=slurm.partition), str(tmp_path / "work"))
    proc = _start(tmp_path, conf, n=4, seconds=8, env=slurm.env())
    try:
        _wait_for(lambda: "status=2 workerid" in _log(tmp_path), 90, "a task to start")
        slurm.stop_controller()
        time.sleep(4)
        slurm.start_controller()
        code, _out, err = _finish(proc, timeout=200)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, err
    assert _outputs(tmp_path, 4) == ["1", "2", "3", "4"]
    assert "BLOCK_FAILED" not in _log(tmp_path)


@pytest.mark.timeout(200)
def test_the_ssh_connection_to_the_login_node_dropped_and_restored(tmp_path, sshd):
    conf = _conf(f'type: "coaster", jobManager: "ssh-cl:local", URL: "{sshd.alias}", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxJobTime: "00:05:00", '
                 'reconnectTimeout: 60 }',
                 f"{sshd.remote_work}/swiftwork-{tmp_path.name}")
    proc = _start(tmp_path, conf, n=6, seconds=3, env=sshd.env())
    try:
        _wait_for(lambda: "status=2 workerid" in _log(tmp_path), 60, "a task to start")
        for pid in sshd.connection_pids():  # the connection dies; sshd itself stays
            os.kill(pid, signal.SIGKILL)
        code, _out, err = _finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0, err
    assert _outputs(tmp_path, 6) == [str(i) for i in range(1, 7)]
    log = _log(tmp_path)
    assert "the relay on the login node ended" in log
    # a second way back was opened for the blocks that came after
    assert len(re.findall(r"connect to the relay at", log)) >= 2


def _processes_with(needle: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmd and state != "Z":
            found.append(int(entry))
    return found


@pytest.mark.timeout(120)
def test_a_block_whose_worker_never_connects_is_given_up_and_its_job_cancelled(tmp_path):
    """The block's job runs but its "worker" hangs before saying hello (as behind a
    firewall that drops the connection): after workerStartTimeout the block is given up
    and its job cancelled; after three such blocks the waiting tasks fail, saying why."""
    marker = "617.25"  # the hanging worker's sleep: found in /proc afterwards, or not
    fake_python = tmp_path / "python3"
    fake_python.write_text(f'#!/bin/sh\ncase "$*" in *_swiftremote.pyz\\ worker*) exec sleep {marker};; '
                           f'esac\nexec {sys.executable} "$@"\n')
    fake_python.chmod(0o755)
    conf = _conf('type: "coaster", jobManager: "local:fork", options { maxJobs: 1, '
                 f'workerStartTimeout: 2, python: "{fake_python}" }}', str(tmp_path / "work"))
    proc = _start(tmp_path, conf, n=2, seconds=1)
    code, _out, err = _finish(proc, timeout=100)
    assert code != 0
    assert "failed to start 3 times in a row" in err, err
    assert re.search(r"no worker of block \S+ connected within 2 s of its job starting "
                     r"\(workerStartTimeout\); its job is cancelled", err), err
    log = _log(tmp_path)
    assert len(re.findall(r"BLOCK_FAILED id=", log)) >= 3
    assert "BLOCK_DONE" not in log
    # before it was given up, each block said why it waited (WAITING no-worker), on the
    # console too, and the wait was withdrawn when the block ended
    said = re.findall(r"WAITING subject=worker id=(\S+) site=cluster reason=(\S*)", log)
    blocks = sorted({block for block, _ in said})
    assert len(blocks) >= 3, said
    assert all(said.count((b, "no-worker")) == 1 and said.count((b, "")) == 1 for b in blocks)
    assert re.search(r"Waiting: worker \S+ waits: no-worker - block \S+'s job runs since "
                     r"\d+ s but none of its workers has connected to the service at "
                     r"\S+:\d+", err), err
    _wait_for(lambda: not _processes_with(f"sleep {marker}"), 10, "the hung workers to go")
