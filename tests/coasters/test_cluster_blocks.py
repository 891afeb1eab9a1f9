"""Coaster blocks as batch jobs, end to end: real ``swiftnb run`` processes, real jobs.

* ``local:fork``: blocks are background sessions on this machine (the same block provider
  and poller as any batch system, with no daemon).
* ``ssh-cl:local``: the same behind the test sshd (tests/sshd.py), files staged through the
  login node, workers coming back through the relay and the SSH connection's forward.
* ``local:slurm`` and ``ssh-cl:slurm``: a real Slurm (tests/slurm.py), alone and behind the
  test sshd, with the AIMES site's shape.

Each test reads the run's log as a person would (BLOCK_* lines, task statuses) and checks
that nothing is left in the batch system afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

BAG = """
type file;
app (file o) cat (file i, string s) {{ cat @i stdout=@o; }}
file inp <"in.txt">;
foreach i in [1:{n}] {{
    file f <single_file_mapper; file=strcat("out/f", i, ".txt")>;
    f = cat(inp, toString(i));
}}
"""


def _site(execution: str, work: str, *, staging: str = "local", extra: str = "") -> str:
    return f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{ {execution} }}
    staging: "{staging}"
    workDirectory: "{work}"
    maxParallelTasks: 16
    initialParallelTasks: 16
    app.ALL {{ executable: "*", maxWallTime: "00:01:00" }}
    {extra}
}}
"""


def _run(tmp_path: Path, conf: str, *, n: int = 6, env: dict[str, str] | None = None,
         args: tuple[str, ...] = (), timeout: float = 200) -> subprocess.CompletedProcess[str]:
    (tmp_path / "in.txt").write_text("payload\n")
    (tmp_path / "wf.swift").write_text(BAG.format(n=n))
    (tmp_path / "swift.conf").write_text(conf)
    return subprocess.run([*SWIFTNB, "run", *args, "wf.swift"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _log(tmp_path: Path) -> str:
    logs = sorted(tmp_path.glob("run*/*.log"))
    assert logs, "the run wrote no log"
    return logs[-1].read_text()


def _outputs_ok(tmp_path: Path, n: int) -> None:
    for i in range(1, n + 1):
        assert (tmp_path / "out" / f"f{i}.txt").read_text() == "payload\n"


def _block_lines(log: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for kind, block in re.findall(r"(BLOCK_[A-Z]+) id=([0-9-]+)", log):
        found.setdefault(kind, []).append(block)
    return found


def test_fork_blocks_run_a_bag_of_tasks_with_the_block_life_in_the_log(tmp_path):
    conf = _site('type: "coaster", jobManager: "local:fork", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxJobTime: "00:05:00" }',
                 str(tmp_path / "work"), staging="swift")
    r = _run(tmp_path, conf, n=6)
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 6)
    log = _log(tmp_path)
    blocks = _block_lines(log)
    requested = set(blocks["BLOCK_REQUESTED"])
    assert requested and set(blocks["BLOCK_ACTIVE"]) == requested
    assert set(blocks["BLOCK_DONE"]) == requested and "BLOCK_FAILED" not in blocks
    assert re.search(r"block \S+ is local job \d+", log)
    # every task went through the coaster statuses, its worker named
    assert len(re.findall(r"status=2 workerid=\S+:\d{6}", log)) == 6
    assert log.count("status=7") == 6


def test_ssh_cl_workers_come_back_through_the_relay_and_files_through_the_login_node(
        tmp_path, sshd):
    conf = _site(f'type: "coaster", jobManager: "ssh-cl:local", URL: "{sshd.alias}", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxJobTime: "00:05:00" }',
                 f"{sshd.remote_work}/swiftwork-{tmp_path.name}", extra="keepSiteDir: true")
    r = _run(tmp_path, conf, n=6, env=sshd.env())
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 6)
    log = _log(tmp_path)
    # the inputs went to the login node's work directory, not found in place
    assert "FILE_STAGE_IN_START" in log and "FILE_STAGE_OUT_END" in log
    # the block's job ran the worker against the relay on the login node: its port is
    # not the service's (which listens on this machine's loopback only)
    route = re.search(r"connect to the relay at ([\d.]+):(\d+) on \S+, which forwards "
                      r"through the SSH connection to the coaster service at "
                      r"127\.0\.0\.1:(\d+)", log)
    assert route is not None, "the log does not say how the workers come back"
    relay_port, service_port = int(route.group(2)), int(route.group(3))
    assert relay_port != service_port
    site_dir = next(Path(f"{sshd.remote_work}/swiftwork-{tmp_path.name}").glob("*"))
    script = next((site_dir / "blocks").glob("*.sh")).read_text()
    assert f"--port {relay_port} " in script and f"--host {route.group(1)} " in script
    blocks = _block_lines(log)
    assert set(blocks["BLOCK_DONE"]) == set(blocks["BLOCK_REQUESTED"])


def test_aimes_site_shape_runs_on_slurm_through_the_login_node(tmp_path, sshd, slurm):
    """The AIMES experiments' Stampede site, unchanged but for host and queue: a coaster
    site at a ~/.ssh/config alias, ssh-cl:slurm, jobQueue, maxJobTime, tasksPerNode and
    provider staging, running a bag of tasks."""
    conf = f"""
sites: [stampede]
site.stampede {{
    execution {{
        type: "coaster"
        URL: "{sshd.alias}"
        jobManager: "ssh-cl:slurm"
        options {{
            maxJobs: 20
            nodeGranularity: 1
            maxNodesPerJob: 1
            tasksPerNode: 4
            jobQueue: "{slurm.partition}"
            maxJobTime: "00:25:00"
        }}
    }}
    staging: "local"
    workDirectory: "{sshd.remote_work}/swiftwork"
    maxParallelTasks: 2000
    initialParallelTasks: 2000
    app.ALL {{
        executable: "*"
        maxWallTime: "00:20:00"
    }}
}}
TCPPortRange: "50000,51000"
lazyErrors: true
executionRetries: 1
"""
    r = _run(tmp_path, conf, n=8, env=sshd.env())
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 8)
    log = _log(tmp_path)
    jobs = re.findall(r"block \S+ is slurm job (\d+)", log)
    assert jobs
    blocks = _block_lines(log)
    assert set(blocks["BLOCK_ACTIVE"]) == set(blocks["BLOCK_REQUESTED"])
    left = slurm.run(["squeue", "-h", "-o", "%i %T"]).stdout.split()
    assert not set(jobs) & set(left), f"block jobs left in Slurm: {left}"


def test_local_slurm_blocks_and_a_refused_queue(tmp_path, slurm):
    conf = _site('type: "coaster", jobManager: "local:slurm", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxNodesPerJob: 1, '
                 f'maxJobTime: "00:10:00", jobQueue: "{slurm.partition}" }}',
                 str(tmp_path / "work"), staging="swift")
    r = _run(tmp_path, conf, n=4, env=slurm.env())
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 4)
    assert re.search(r"block \S+ is slurm job \d+", _log(tmp_path))

    bad = tmp_path / "bad"
    bad.mkdir()
    conf = conf.replace(f'jobQueue: "{slurm.partition}"', 'jobQueue: "nosuch"')
    r = _run(bad, conf, n=2, env=slurm.env())
    assert r.returncode != 0
    # sbatch's own words, the queue and the site, where a person reads them
    assert "nosuch" in r.stderr and "invalid partition" in r.stderr, r.stderr
    assert "site cluster" in r.stderr


def test_local_sge_blocks_run_a_bag_of_tasks(tmp_path, gridengine):
    """Grid Engine blocks: one node each, the worker in the job's own shell (the ssh
    launcher logs in nowhere for one node); jobOptions.pe for the block's slots."""
    conf = _site('type: "coaster", jobManager: "local:sge", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxNodesPerJob: 1, '
                 f'maxJobTime: "00:10:00", jobQueue: "{gridengine.queue}", '
                 'jobOptions { pe: "smp" } }', str(tmp_path / "work"), staging="swift")
    env = {**os.environ, **gridengine.env()}
    r = _run(tmp_path, conf, n=4, env=env)
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 4)
    log = _log(tmp_path)
    assert re.search(r"block \S+ is sge job \d+", log)
    blocks = _block_lines(log)
    assert set(blocks["BLOCK_DONE"]) == set(blocks["BLOCK_REQUESTED"])


def test_ssh_cl_sge_blocks_through_the_login_node(tmp_path, sshd, gridengine):
    conf = _site(f'type: "coaster", jobManager: "ssh-cl:sge", URL: "{sshd.alias}", '
                 'options { maxJobs: 1, tasksPerNode: 3, maxNodesPerJob: 1, '
                 f'maxJobTime: "00:10:00", jobQueue: "{gridengine.queue}", '
                 'jobOptions { pe: "smp" } }',
                 f"{sshd.remote_work}/swiftwork-{tmp_path.name}")
    r = _run(tmp_path, conf, n=5, env=sshd.env())
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 5)
    log = _log(tmp_path)
    assert re.search(r"block \S+ is sge job \d+", log)
    assert "connect to the relay at" in log


FAKES = Path(__file__).resolve().parent.parent / "fakes"


@pytest.mark.parametrize("lrm", ["pbs", "lsf"])
def test_blocks_as_jobs_of_a_FAKE_batch_system(tmp_path, lrm):
    """PBS and LSF cannot run here: their FAKE commands (tests/fakes) run the block's
    script for real, so the block's life and its workers are the real thing."""
    from fakes import fakelrm

    state = tmp_path / "fake-lrm"
    env = {**os.environ,
           "PATH": f"{FAKES / 'bin' / lrm}{os.pathsep}{os.environ.get('PATH', '')}",
           fakelrm.ENV_DIR: str(state), fakelrm.ENV_PYTHON: sys.executable}
    conf = _site(f'type: "coaster", jobManager: "local:{lrm}", '
                 'options { maxJobs: 2, tasksPerNode: 2, maxNodesPerJob: 1, '
                 'maxJobTime: "00:10:00", jobQueue: "batch" }',
                 str(tmp_path / "work"), staging="swift")
    try:
        r = _run(tmp_path, conf, n=4, env=env)
    finally:
        fakelrm.stop_all(state)  # whatever the run left, by the fake's recorded ids
    assert r.returncode == 0, r.stderr
    _outputs_ok(tmp_path, 4)
    log = _log(tmp_path)
    assert re.search(rf"block \S+ is {lrm} job \S+", log)
    blocks = _block_lines(log)
    # the first block may run all 4 tasks before the second one's job starts: that one
    # is then cancelled while queued, and never active
    assert blocks.get("BLOCK_ACTIVE") and set(blocks["BLOCK_ACTIVE"]) <= set(blocks["BLOCK_REQUESTED"])
    assert "BLOCK_FAILED" not in blocks
