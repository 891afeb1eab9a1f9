"""Ctrl-C (SIGINT) and SIGTERM during a run: the apps are killed (none is started after),
coaster blocks shut down, the log and the ticker say the calls were canceled, the restart
log is kept, the site directory is removed, exit code 2."""

from __future__ import annotations

import signal

import pytest

from robusthelp import SLEEPERS, alive, start, wait_for

pytestmark = pytest.mark.timeout(90)

COASTER_CONF = """\
sites: c
site.c {
    execution {
        type: coaster
        jobManager: "local:local"
        options { maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "01:00:00",
                  planInterval: 0.2, defaultWalltime: "00:02:00" }
    }
    workDirectory: swiftwork
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL.executable: "*"
}
"""


def _pids(piddir) -> list[int]:
    out = []
    for f in piddir.glob("*.pid"):
        text = f.read_text().strip()
        if text:
            out.append(int(text))
    return out


@pytest.mark.parametrize("sig,site", [(signal.SIGINT, "local"), (signal.SIGTERM, "local"),
                                      (signal.SIGHUP, "local"), (signal.SIGTERM, "coaster")])
def test_interrupted_run(tmp_path, write, sig, site):
    write("nap.swift", SLEEPERS)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    args = ["run"]
    if site == "coaster":
        write("c.conf", COASTER_CONF)
        args += ["-config", "c.conf"]
    proc = start(*args, "nap.swift", f"-piddir={piddir}", cwd=tmp_path)
    try:
        wait_for(lambda: len(_pids(piddir)) >= 2, 60, "two apps running")
        running = _pids(piddir)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    assert "Execution interrupted" in err
    final = [x for x in err.splitlines() if x.startswith("Final status:")][-1]
    assert "Canceled:4" in final, final  # 2 running + 2 waiting, none "Finished" or "Failed"
    # the running apps were killed and nothing was started after the signal
    wait_for(lambda: not any(alive(p) for p in running), 10, "apps killed")
    assert sorted(_pids(piddir)) == sorted(running)
    run_dir = tmp_path / "run001"
    log = (run_dir / "nap-run001.log").read_text()
    assert "Execution interrupted" in log
    # as after a failure: the log ends as a failed run's, the console says how to resume
    assert log.rstrip("\n").endswith("Swift finished with errors"), log[-500:]
    assert log.count("Swift finished with") == 1
    assert err.rstrip("\n").splitlines()[-1] == f"Restart log: {run_dir / 'nap-run001.0.rlog'}"
    assert log.count(" status=6") >= 2
    if site == "coaster":
        assert "BLOCK_SHUTDOWN" in log
    assert list(run_dir.glob("*.rlog")), "the restart log is kept for -resume"
    assert not list(run_dir.glob("nap-run001.d/*-info")), "canceled calls are not failures"
    assert not (tmp_path / "swiftwork").exists()
    assert not list(tmp_path.glob("nap*.out"))


def test_task_as_long_as_its_capped_block_runs(tmp_path, write):
    """maxJobTime - reserve caps the block height at the task's walltime: the workers
    connect after the block's start, yet the task runs (it used to wait forever while
    blocks were requested, idled and shut down)."""
    from robusthelp import HELLO, swiftnb

    write("hello.swift", HELLO)
    write("c.conf", COASTER_CONF.replace('maxJobTime: "01:00:00"', 'maxJobTime: "00:02:00"')
          .replace('defaultWalltime: "00:02:00"', 'defaultWalltime: "00:01:00"'))
    r = swiftnb("run", "-config", "c.conf", "hello.swift", cwd=tmp_path, timeout=45)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "hello.txt").read_text() == "hi\n"


def test_interrupted_run_on_sim_and_local_sites(tmp_path, write):
    """Through the multi-site scheduler: simulated jobs (real time, next to a local site)
    are canceled too, not left "Active"."""
    write("nap.swift", SLEEPERS)
    (tmp_path / "pids").mkdir()
    write("m.conf", "sites: [local, grid]\nsite.grid { execution { type: sim, options "
                    "{ taskDuration: 3600, slots: 4 } }, app.ALL.executable: \"*\", "
                    "maxParallelTasks: 4, initialParallelTasks: 4 }\n")
    proc = start("run", "-config", "m.conf", "nap.swift", f"-piddir={tmp_path / 'pids'}",
                 cwd=tmp_path)
    log = tmp_path / "run001" / "nap-run001.log"
    try:
        wait_for(lambda: log.exists() and log.read_text().count(" status=2") >= 4, 60,
                 "four jobs active")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err
    final = [x for x in err.splitlines() if x.startswith("Final status:")][-1]
    assert "Canceled:4" in final, final
    assert log.read_text().count(" status=6") == 4
