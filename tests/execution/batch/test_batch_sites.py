"""Batch sites end to end: ``execution.type: "slurm"`` / ``"sge"`` / ``"pbs"`` sites run
real ``swiftnb run`` subprocesses, one batch job per task.

Slurm and Grid Engine are the real ones of this test session (tests/slurm.py,
tests/gridengine.py), reached from this machine or, for one Slurm site, through the test
sshd (tests/sshd.py) whose login user submits on the "login node".  PBS cannot run here:
its site runs against the fake PBS commands of tests/fakes (named as fakes), to show the
0.96 alias ``pbslocal`` reaches the same provider.

Each test writes a swift.conf and a script, runs it, and checks the files that came back,
the exit code, what a person reads, the log's TASK_STATUS_CHANGE codes and that nothing
is left in the batch system.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
FAKES = Path(__file__).resolve().parents[2] / "fakes"

CAT = """
type file;
app (file o) cat (file i) { cat @i stdout=@o; }
file inp <"in.txt">;
file outs[] <simple_mapper; prefix="out/", suffix=".txt">;
foreach i in [0:2] { outs[i] = cat(inp); }
"""


def _conf(kind: str, work: str, *, url: str | None = None, options: str = "",
          app: str = "", extra: str = "") -> str:
    url_line = f'URL: "{url}"' if url else ""
    return f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{ type: "{kind}", {url_line}
                 options {{ pollInterval: 0.5, {options} }} }}
    workDirectory: "{work}"
    staging: "swift"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" {app} }}
}}
{extra}
"""


def _run(tmp_path: Path, script: str, conf: str, env: dict[str, str],
         timeout: float = 90) -> subprocess.CompletedProcess[str]:
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(conf)
    return subprocess.run([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=timeout)


def _log(tmp_path: Path) -> str:
    return next(tmp_path.glob("run*/*.log")).read_text()


def _status_codes(log: str) -> dict[str, list[int]]:
    """Each task's TASK_STATUS_CHANGE codes, in order."""
    codes: dict[str, list[int]] = {}
    for m in re.finditer(r"TASK_STATUS_CHANGE taskid=(\S+) status=(\d+)", log):
        codes.setdefault(m.group(1), []).append(int(m.group(2)))
    return codes


def _live_jobs(slurm, name_part: str) -> list[str]:
    """Slurm jobs not yet ended whose name holds ``name_part``."""
    r = slurm.run(["squeue", "-h", "-t", "PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING",
                   "-o", "%i %j"])
    return [line for line in r.stdout.splitlines() if name_part in line]


def _assert_ran_as_batch_jobs(log: str, n: int) -> None:
    codes = _status_codes(log)
    assert len(codes) == n
    for sequence in codes.values():
        assert [c for c in sequence if c in (1, 2, 7)] == [1, 2, 7], sequence


# -- Slurm ------------------------------------------------------------------------------
def test_a_slurm_site_runs_each_task_as_a_job(slurm, tmp_path):
    (tmp_path / "in.txt").write_text("through slurm\n")
    r = _run(tmp_path, CAT, _conf("slurm", str(tmp_path / "swiftwork")), slurm.env())
    assert r.returncode == 0, r.stdout + r.stderr
    for i in range(3):
        assert (tmp_path / "out" / f"{i:04d}.txt").read_text() == "through slurm\n"
    log = _log(tmp_path)
    _assert_ran_as_batch_jobs(log, 3)   # queued (1), running (2), completed (7)
    assert "provider=slurm" in log      # the staging lines name the provider
    assert _live_jobs(slurm, "cat-") == []      # the jobs are named by their job ids
    work = tmp_path / "swiftwork"
    assert not work.exists() or not any(work.iterdir())  # cleanupCommand ran


def test_a_slurm_site_behind_a_login_node(slurm, sshd, tmp_path):
    """sbatch runs on the "login node" (the sshd's login user): the jobs are that user's,
    the files cross over SFTP."""
    (tmp_path / "in.txt").write_text("via the login node\n")
    conf = _conf("slurm", f"{sshd.remote_work}/swiftwork", url=sshd.alias,
                 extra="keepSiteDir: true")
    r = _run(tmp_path, CAT, conf, sshd.env())
    assert r.returncode == 0, r.stdout + r.stderr
    for i in range(3):
        assert (tmp_path / "out" / f"{i:04d}.txt").read_text() == "via the login node\n"
    _assert_ran_as_batch_jobs(_log(tmp_path), 3)
    runs = list((Path(sshd.remote_work) / "swiftwork").iterdir())
    shared = runs[0] / "shared"
    assert (shared / "in.txt").stat().st_uid == os.stat(sshd.remote_work).st_uid
    # each job's directory kept (keepSiteDir): its spec, its script's output files
    kept = list((runs[0] / "batch").iterdir())
    assert len(kept) == 3 and all((d / "spec.json").exists() for d in kept)


def test_an_mpi_app_runs_its_processes_under_srun(slurm, tmp_path):
    script = """
type file;
app (file o) hello () { sh "-c" "echo rank $SLURM_PROCID" stdout=@o; }
file out <"ranks.txt">;
out = hello();
"""
    conf = _conf("slurm", str(tmp_path / "swiftwork"),
                 app=', options { jobType: "mpi", mpi { processes: 3, ppn: 3 } }')
    r = _run(tmp_path, script, conf, slurm.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted((tmp_path / "ranks.txt").read_text().split("\n")[:-1]) == [
        "rank 0", "rank 1", "rank 2"]


def test_a_bad_queue_is_refused_naming_the_queue_and_the_site(slurm, tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    conf = _conf("slurm", str(tmp_path / "swiftwork"), options='jobQueue: "nosuchqueue"')
    r = _run(tmp_path, CAT, conf, slurm.env())
    assert r.returncode == 2, r.stdout + r.stderr   # an app that failed, as Swift's exit
    text = r.stdout + r.stderr
    assert "nosuchqueue" in text and "site cluster" in text
    assert "invalid partition" in text.lower()      # sbatch's own words
    assert "Traceback" not in text


def test_a_cancelled_run_leaves_no_job_in_the_batch_system(slurm, tmp_path):
    marker = f"297.{os.getpid()}{time.monotonic_ns() % 100000}"
    script = f'app () nap () {{ sleep "{marker}"; }}\nnap();\n'
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(_conf("slurm", str(tmp_path / "swiftwork")))
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=slurm.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _processes_with(marker):   # the job's app runs (on this one node)
            assert time.monotonic() < deadline, "the job never ran"
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            time.sleep(0.2)
        assert _live_jobs(slurm, "sleep-")   # 0.96: a job is named by its program
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 20
    while (_live_jobs(slurm, "sleep-") or _processes_with(marker)) and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    assert _live_jobs(slurm, "sleep-") == []
    assert not _processes_with(marker)


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
        if needle in cmd and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def test_a_job_cancelled_by_someone_else_is_retried(slurm, tmp_path):
    """scancel from outside (an administrator): the attempt fails in Slurm's words, with
    a kind that is retried, and the retry's job runs to the end."""
    marker = f"3.{os.getpid()}{time.monotonic_ns() % 100000}"
    script = f"""
type file;
app (file o) slow () {{ sh "-c" "sleep {marker}; echo done" stdout=@o; }}
file out <"out.txt">;
out = slow();
"""
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(_conf("slurm", str(tmp_path / "swiftwork"),
                                               extra="executionRetries: 1"))
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=slurm.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _processes_with(f"sleep {marker}"):
            assert time.monotonic() < deadline and proc.poll() is None, "the job never ran"
            time.sleep(0.1)
        jobs = [line.split()[0] for line in _live_jobs(slurm, "sh-")]
        assert len(jobs) == 1
        slurm.run(["scancel", jobs[0]])
        out, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert (tmp_path / "out.txt").read_text() == "done\n"
    log = _log(tmp_path)
    assert f"job {jobs[0]} of sh-" in log and "was cancelled outside this run" in log
    assert "CANCELLED" in log                       # Slurm's own word


def test_a_site_job_option_slurm_ignores_is_a_warning_and_the_run_goes_on(slurm, tmp_path):
    """Swift 0.96's schema took any jobOptions key, and its Slurm provider passed over PBS's:
    the run goes on without it, and says so with the key's line."""
    (tmp_path / "in.txt").write_text("x\n")
    conf = _conf("slurm", str(tmp_path / "swiftwork"), options='jobOptions { "pbs.aprun": true }')
    r = _run(tmp_path, CAT, conf, slurm.env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"Warning: swift\.conf:\d+: site\.cluster\.execution\.options\.jobOptions"
                     r"\.pbs\.aprun has no meaning for slurm \(it understands depth, ppn, "
                     r"slurm\.\*\); ignored\n", r.stderr), r.stderr
    for i in range(3):
        assert (tmp_path / "out" / f"{i:04d}.txt").read_text() == "x\n"
    assert "pbs.aprun has no meaning for slurm" in _log(tmp_path)  # the log's WARNING line


@pytest.mark.parametrize("option, key", [
    ('options { "pbs.aprun": true }', "pbs.aprun"),   # docker.image: a warning (issue 25)
    ('options { jobType: "grid" }', "jobType"),
])
def test_an_app_option_slurm_would_not_honour_is_refused_at_start(slurm, tmp_path, option, key):
    (tmp_path / "in.txt").write_text("x\n")
    conf = _conf("slurm", str(tmp_path / "swiftwork"), app=f", {option}")
    r = _run(tmp_path, CAT, conf, slurm.env())
    assert r.returncode == 1, r.stdout + r.stderr   # a configuration error: nothing ran
    text = r.stdout + r.stderr
    assert key in text and "cluster" in text
    assert "swift.conf:" in text                    # where it was written
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# -- Grid Engine --------------------------------------------------------------------------
def test_an_sge_site_runs_each_task_as_a_job(gridengine, tmp_path):
    (tmp_path / "in.txt").write_text("through grid engine\n")
    r = _run(tmp_path, CAT, _conf("sge", str(tmp_path / "swiftwork")), gridengine.env())
    assert r.returncode == 0, r.stdout + r.stderr
    for i in range(3):
        assert (tmp_path / "out" / f"{i:04d}.txt").read_text() == "through grid engine\n"
    _assert_ran_as_batch_jobs(_log(tmp_path), 3)


def test_an_app_walltime_kill_on_sge_is_reported_as_walltime(gridengine, tmp_path):
    # h_rt is enforced in seconds; Swift's own 2 x maxwalltime kill comes later
    script = 'app () nap () { sleep "120"; }\nnap();\n'
    conf = _conf("sge", str(tmp_path / "swiftwork"), app=', maxWallTime: "00:00:10"')
    r = _run(tmp_path, script, conf, gridengine.env())
    assert r.returncode == 2, r.stdout + r.stderr
    text = r.stdout + r.stderr
    assert "killed at its walltime (00:00:10)" in text and "h_rt" in text  # qacct's words
    assert "site cluster" in text


# -- PBS (fake commands) ------------------------------------------------------------------
def test_a_pbslocal_site_runs_against_the_fake_pbs(tmp_path):
    fake = FAKES / "bin" / "pbs"   # FAKE qsub, qstat, qdel (tests/fakes/fakelrm.py)
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ.get('PATH', '')}",
           "SWIFTNB_FAKE_LRM_DIR": str(tmp_path / "fake-lrm")}
    (tmp_path / "in.txt").write_text("through the fake pbs\n")
    r = _run(tmp_path, CAT, _conf("pbslocal", str(tmp_path / "swiftwork"),
                                  options='jobQueue: "batch"'), env)
    assert r.returncode == 0, r.stdout + r.stderr
    for i in range(3):
        assert (tmp_path / "out" / f"{i:04d}.txt").read_text() == "through the fake pbs\n"
    _assert_ran_as_batch_jobs(_log(tmp_path), 3)


# -- a task's job shape (no batch system needed) --------------------------------------------
def _task(profiles: dict[str, str] | None = None, walltime: float | None = None):
    from swiftnb.engine.task import Task

    return Task(jobid="sim-1", tr="sim", args=[], base_dir=".", run_dir=".",
                profiles=profiles or {}, maxwalltime=walltime)


def _jobs(kind: str = "slurm", **kw):
    from swiftnb.execution.batch.lrm import lrm_class
    from swiftnb.execution.batch.request import SiteJobs

    return SiteJobs("cluster", lrm_class(kind), **kw)


def test_walltime_is_the_apps_else_ten_minutes_cut_to_the_sites_longest():
    assert _jobs().request(_task()).walltime == 600
    assert _jobs(max_time=300).request(_task()).walltime == 300
    assert _jobs(max_time=3600).request(_task(walltime=90.5)).walltime == 91
    with pytest.raises(ValueError, match=r"walltime 02:00:00 is longer than the site's "
                                         r"maxJobTime 01:00:00"):
        _jobs(max_time=3600).request(_task(walltime=7200))


def test_count_gives_a_single_process_its_cores_and_mpi_its_processes():
    single = _jobs(nodes=1).request(_task({"count": "4"}))
    assert (single.nodes, single.tasks_per_node, single.launch) == (1, 4, ())
    mpi = _jobs().request(_task({"jobType": "mpi", "mpi.processes": "6", "mpi.ppn": "4"}))
    assert (mpi.nodes, mpi.tasks_per_node, mpi.launch) == (2, 4, ("srun", "--ntasks=6"))
    pbs = _jobs("pbs").request(_task({"jobType": "mpi", "count": "8", "pbs.aprun": "true"}))
    assert pbs.launch == ("aprun", "-n", "8", "-N", "8") and pbs.options["pbs.aprun"] == "true"
    assert _jobs("sge").request(_task({"jobType": "multiple", "count": "2"})).launch == (
        "mpiexec", "-n", "2")


def test_app_queue_and_lrm_options_override_the_sites():
    job = _jobs(queue="debug", job_options={"slurm.mem": "1G"}).request(
        _task({"queue": "long", "slurm.mem": "4G", "maxwalltime": "00:01:00", "memory": "9"}))
    assert job.queue == "long" and dict(job.options) == {"slurm.mem": "4G"}


@pytest.mark.parametrize("profiles, words", [
    ({"mpi.processes": "4"}, 'needs jobType "mpi"'),
    ({"count": "zero"}, "count must be a whole number"),
    ({"hostCount": "2"}, "hostCount has no meaning for slurm"),
    ({"mpi.launcher": "x"}, "mpi.launcher has no meaning on a batch site"),
])
def test_what_a_batch_site_cannot_do_is_refused_naming_the_key_and_site(profiles, words):
    with pytest.raises(ValueError, match="cluster") as refused:
        _jobs().request(_task(profiles))
    assert words in str(refused.value)
