"""The conformance cases that call apps, run again on an SSH site in its staging modes.

An SSH site must be a drop-in for the local one: the same script gives the same exit
code, stdout, ``.out`` file and check.sh verdict (judged by ``cases.check_run``, as in
test_conformance.py).  The site is the real sshd of tests/sshd.py, named by its
``~/.ssh/config`` alias.  Its configuration reaches ``swiftnb run`` through
``$SWIFT_SITE_CONF``, so the case folder holds only the case's own files, and every
app the run starts must be logged as started on it (a run that quietly fell back to
the local site would prove nothing).

Which runs: every case that declares an app (``cases.declares_app``).  The
``execution/`` and ``mappers/`` cases, which are about running apps and moving their
files, run in every staging mode.  The app cases of the other groups run once each,
in one staging mode taken in turn, so the whole file fits in a few minutes on two
cores; ``SWIFTNB_SSH_CONFORMANCE=all`` runs them in every mode too.

Every run has a folder of its own under one world-writable directory in /tmp, and a
``workDirectory`` of its own on the host (two runs of one script name would otherwise
share a site run directory).  The login user is another Unix user than this process:
for ``direct`` and ``shared-fs`` staging, where the host works on this machine's paths
as over a shared file system, the case folder is opened to it and ``swiftnb run`` runs
with umask 0 (as tests/execution/test_ssh_site.py does).
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

from cases import (CASES, case_argv, case_id, check_run, copy_case, declares_app,
                   run_check_sh, start_all)

#: ``local`` is provider staging (a stage/JOBID directory of each job's own)
MODES = ("swift", "local", "direct", "shared-fs")
#: the modes in which the host reads and writes this machine's paths
SHARED_FS_MODES = ("direct", "shared-fs")
#: groups whose app cases run in every mode; the others' take the modes in turn
ALL_MODE_GROUPS = ("execution", "mappers")
ALL_MODES_EVERYWHERE = os.environ.get("SWIFTNB_SSH_CONFORMANCE") == "all"
#: seconds one ``swiftnb run`` may take before it counts as hung
RUN_TIMEOUT = 90
#: runs at once: each spends most of its time waiting on sshd and the remote worker
#: (round trips, the session rate limit), so 8 overlap well on 2 cores
WORKERS = 8

#: Cases whose expectations cannot hold on an SSH site, and why.
EXCLUDED: dict[str, str] = {
    "execution/009-retries-exhausted": (
        "check.sh counts attempts in ../../../../../009.attempts of the job directory, "
        "which is the case folder only because a local site's workDirectory is "
        "./swiftwork; on an SSH site that file is beside the host's workDirectory"),
    "execution/018-env-from-app-config": (
        "its own -config file chooses the site (sites: [local], app.sh's env.* on "
        "site.local), replacing the SSH site: it tests the local site's app config"),
}

#: (case, mode) runs that fail because of a bug in swiftnb, with the diagnosis.
KNOWN_BUGS: dict[tuple[str, str], str] = {
}


def _modes_of(script: Path, turn: int) -> tuple[str, ...]:
    """The staging modes a case runs in (``turn``: its place among the cases that take
    the modes in turn)."""
    if ALL_MODES_EVERYWHERE or script.parent.name in ALL_MODE_GROUPS:
        return MODES
    return (MODES[turn % len(MODES)],)


def _params() -> list:
    """One test per (app case, staging mode), marked when excluded or known to fail."""
    params = []
    turn = 0
    for script in (s for s in CASES if declares_app(s)):
        cid = case_id(script)
        modes = _modes_of(script, turn)
        if len(modes) == 1:
            turn += 1
        for mode in modes:
            marks = []
            if cid in EXCLUDED:
                marks.append(pytest.mark.skip(reason=EXCLUDED[cid]))
            elif (cid, mode) in KNOWN_BUGS:
                marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[(cid, mode)]))
            params.append(pytest.param(script, mode, marks=marks, id=f"{cid}-{mode}"))
    return params


def _site_conf(sshd, mode: str, remote_dir: str) -> str:
    """The SSH site, by its alias, with a workDirectory on the host for this run only."""
    return f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}", options {{ reconnectTimeout: 20 }} }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{remote_dir}/swiftwork"
    staging: "{mode}"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
"""


def _open_to_all(top: Path) -> None:
    """Let the login user (another Unix user) read and write everything under ``top``,
    as on a shared file system where both sides are one user."""
    for path in [top, *top.rglob("*")]:
        if not path.is_symlink():
            path.chmod(stat.S_IMODE(path.stat().st_mode) | (0o777 if path.is_dir() else 0o666))


def _run_case(sshd, base: Path, locks: dict[str, threading.Lock], script: Path, mode: str
              ) -> tuple[Path, subprocess.CompletedProcess, subprocess.CompletedProcess | None]:
    """One case on the SSH site in one staging mode, in a fresh copy of its group, and
    its check.sh at once: under the case's lock, so that the runs of one case in other
    modes cannot touch an absolute path it uses (reference/222 writes and removes
    /tmp/swiftnb-hunter-222-output.txt) between its run and its check."""
    rel = Path(mode) / case_id(script).replace("/", "-")
    run_dir = base / rel
    run_dir.mkdir(parents=True)
    work = copy_case(script, run_dir)
    conf = run_dir / "ssh-site.conf"
    conf.write_text(_site_conf(sshd, mode, f"{sshd.remote_work}/conformance/{rel}"))
    shared_fs = mode in SHARED_FS_MODES
    if shared_fs:
        _open_to_all(run_dir)
    env = sshd.env()
    env["SWIFT_SITE_CONF"] = str(conf)
    with locks[case_id(script)]:
        proc = subprocess.run(case_argv(script, work), cwd=work, capture_output=True,
                              text=True, timeout=RUN_TIMEOUT, env=env,
                              preexec_fn=(lambda: os.umask(0)) if shared_fs else None)
        return work, proc, run_check_sh(script, work)


def _assert_ran_on_ssh_site(work: Path) -> None:
    """Every app the run started went to the SSH site (the log's JOB_START lines)."""
    for log in work.glob("run*/*.log"):
        for line in log.read_text(errors="replace").splitlines():
            if " JOB_START " in line:
                assert line.endswith(" host=remote"), f"an app ran elsewhere: {line}"


def _selected_runs(request) -> list[tuple[Path, str]]:
    """The (case, mode) runs this session asks for, in blocks of 2 * WORKERS cases taken
    mode by mode: the workers take different cases at once (the runs of one case are
    serialised by its lock), and no test waits for most of the others to run first."""
    runs = [(item.callspec.params["script"], item.callspec.params["mode"])
            for item in request.session.items
            if getattr(item, "callspec", None) is not None
            and {"script", "mode"} <= item.callspec.params.keys()
            and case_id(item.callspec.params["script"]) not in EXCLUDED]
    place = {script: n for n, script in enumerate(dict.fromkeys(s for s, _ in runs))}
    return sorted(runs, key=lambda run: (place[run[0]] // (2 * WORKERS), MODES.index(run[1]),
                                         place[run[0]]))


@pytest.fixture(scope="session")
def ssh_case_runs(request, sshd):
    """Start every selected run on a bounded pool, as test_conformance.py's
    ``case_runs`` does; each test then checks its own result."""
    base = Path(tempfile.mkdtemp(prefix="swiftnb-conformance-ssh-", dir="/tmp"))
    base.chmod(0o777)  # the login user reaches the shared-fs runs' folders through it
    runs = _selected_runs(request)
    locks = {case_id(script): threading.Lock() for script, _ in runs}
    run = functools.partial(_run_case, sshd, base, locks)
    pool, futures = start_all(run, runs, WORKERS)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)
    shutil.rmtree(base, ignore_errors=True)


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("script", "mode"), _params())
def test_case_on_ssh_site(script: Path, mode: str, ssh_case_runs) -> None:
    work, proc, checked = ssh_case_runs[(script, mode)].result()
    _assert_ran_on_ssh_site(work)
    check_run(script, work, proc, checked=checked)
