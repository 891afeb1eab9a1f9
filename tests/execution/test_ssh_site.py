"""SSH sites end to end: a real sshd on 127.0.0.1 (tests/sshd.py), real ``swiftnb run``
subprocesses, a remote work directory the local side never uses.

Each test writes a swift.conf naming the site by the Host alias of the fake HOME's
``~/.ssh/config`` (so the alias, HostName, Port, User, IdentityFile and known_hosts
path are exercised as a user's would be), runs a script, and checks the files that came
back, the return code and the message a person reads.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]


def _conf(sshd, *, staging: str = "swift", extra: str = "", options: str = "",
          site_extra: str = "", url: str | None = None) -> str:
    return f"""
sites: [remote]
lazyErrors: false
site.remote {{
    execution {{ type: "ssh", URL: "{url or sshd.alias}"
                 options {{ reconnectTimeout: 20, {options} }} }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/swiftwork"
    staging: "{staging}"
    maxParallelTasks: 4
    initialParallelTasks: 4
    {site_extra}
    app.ALL {{ executable: "*" }}
}}
{extra}
"""


def _run(sshd, tmp_path: Path, script: str, conf: str, *args: str, umask: int | None = None,
         timeout: float = 150) -> subprocess.CompletedProcess[str]:
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(conf)
    return subprocess.run([*SWIFTNB, "run", *args, "wf.swift"], cwd=tmp_path,
                          env=sshd.env(), capture_output=True, text=True, timeout=timeout,
                          preexec_fn=None if umask is None else lambda: os.umask(umask))


def _remote_processes(user: str, needle: str) -> list[int]:
    """PIDs of the login user's processes whose command line holds ``needle``."""
    uid = pwd.getpwnam(user).pw_uid
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmd and state != "Z":
            found.append(int(entry))
    return found


CAT = """
type file;
app (file o) cat (file i) { cat @i stdout=@o; }
file inp <"in.txt">;
file out <"out/result.txt">;
out = cat(inp);
"""


def test_a_script_runs_on_the_ssh_site_and_its_output_comes_back(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("hello over ssh\n")
    r = _run(sshd, tmp_path, CAT, _conf(sshd))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out" / "result.txt").read_text() == "hello over ssh\n"
    # the site run directory is gone from the host (keepSiteDir is off)
    work = Path(sshd.remote_work) / "swiftwork"
    assert not work.exists() or not any(work.iterdir())
    # the log says where it ran
    log = next(tmp_path.glob("run*/swift.log")) if list(tmp_path.glob("run*/swift.log")) else \
        next(tmp_path.glob("**/*.log"))
    assert "host=remote" in log.read_text()


def test_keep_site_dir_shows_swift_layout_on_the_host(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("kept\n")
    r = _run(sshd, tmp_path, CAT, _conf(sshd, extra="keepSiteDir: true"))
    assert r.returncode == 0, r.stdout + r.stderr
    runs = list((Path(sshd.remote_work) / "swiftwork").iterdir())
    assert len(runs) == 1
    shared = runs[0] / "shared"
    assert (shared / "in.txt").read_text() == "kept\n"           # staged in to shared/
    assert (shared / "out" / "result.txt").read_text() == "kept\n"  # moved to shared/
    assert (shared / "_swiftremote.pyz").exists()  # the far side's code, one zipapp
    # the host's copy belongs to the login user: the files really crossed SFTP
    assert (shared / "in.txt").stat().st_uid == pwd.getpwnam(sshd.user).pw_uid


def test_many_calls_share_one_connection(sshd, tmp_path):
    script = """
type file;
app (file o) echo (int i) { echo i stdout=@o; }
file outs[] <simple_mapper; prefix="o/", suffix=".txt">;
foreach i in [0:39] { outs[i] = echo(i); }
"""
    r = _run(sshd, tmp_path, script, _conf(sshd))
    assert r.returncode == 0, r.stdout + r.stderr
    assert sorted(p.read_text() for p in (tmp_path / "o").glob("*.txt")) == sorted(
        f"{i}\n" for i in range(40))


@pytest.mark.parametrize("name", ["with space.txt", "quote'and\"dq.txt", "semi;colon.txt",
                                  "new\nline.txt"])
def test_awkward_file_names_are_staged_both_ways(sshd, tmp_path, name):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_text("awkward\n")
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    script = f"""
type file;
app (file o) cat (file i) {{ cat @i stdout=@o; }}
file inp <"in/{escaped}">;
file out <"out/{escaped}">;
out = cat(inp);
"""
    r = _run(sshd, tmp_path, script, _conf(sshd))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out" / name).read_text() == "awkward\n"


def test_an_absolute_input_path_is_staged(sshd, tmp_path):
    data = tmp_path / "abs-data"
    data.mkdir()
    (data / "x.txt").write_text("absolute\n")
    script = CAT.replace('<"in.txt">', f'<"{data}/x.txt">')
    r = _run(sshd, tmp_path, script, _conf(sshd))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out" / "result.txt").read_text() == "absolute\n"


def test_a_failing_app_reports_its_exit_code_and_stderr(sshd, tmp_path):
    script = """
type file;
app (file o) fail () { sh "-c" "echo broken >&2; exit 3" stdout=@o; }
file out <"out.txt">;
out = fail();
"""
    r = _run(sshd, tmp_path, script, _conf(sshd))
    assert r.returncode == 2
    text = r.stdout + r.stderr
    assert "failed with an exit code of 3" in text
    assert "broken" in text
    assert not (tmp_path / "out.txt").exists()
    infos = list(tmp_path.glob("run*/*.d/*-info"))
    assert infos and "EXIT_CODE=3" in infos[0].read_text()


@pytest.mark.parametrize("staging", ["local", "direct", "shared-fs", "wrapper"])
def test_staging_modes(sshd, staging):
    # direct and shared-fs need the host to see this machine's paths: the login user
    # must be able to read and write the run's directory (a shared file system)
    import shutil
    import tempfile

    tmp_path = Path(tempfile.mkdtemp(prefix="swiftnb-sharedfs-", dir="/tmp"))
    os.chmod(tmp_path, 0o777)
    try:
        _staging_mode(sshd, tmp_path, staging)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _staging_mode(sshd, tmp_path: Path, staging: str) -> None:
    (tmp_path / "in.txt").write_text(f"{staging}\n")
    os.chmod(tmp_path / "in.txt", 0o666)
    # the two sides are two users here (on a real shared file system they are one):
    # what this side creates must be writable by the login user too
    # wrapper staging copies the inputs into the site's scratch directory on the host
    scratch = f'scratch: "{sshd.remote_work}/scratch"' if staging == "wrapper" else ""
    r = _run(sshd, tmp_path, CAT, _conf(sshd, staging=staging, site_extra=scratch), umask=0)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out" / "result.txt").read_text() == f"{staging}\n"
    if staging == "wrapper":  # the job ran in the scratch directory, made by the host
        made = Path(sshd.remote_work) / "scratch"
        assert made.is_dir() and made.stat().st_uid == pwd.getpwnam(sshd.user).pw_uid


def test_wrapper_staging_needs_scratch(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    r = _run(sshd, tmp_path, CAT, _conf(sshd, staging="wrapper"))
    assert r.returncode == 1
    assert "missing required site property: 'scratch'" in r.stdout + r.stderr


def test_an_unreachable_port_is_named(sshd, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (tmp_path / "in.txt").write_text("x\n")
    conf = _conf(sshd, url=f"127.0.0.1:{port}",
                 options=f'user: "{sshd.user}", identityFile: "{sshd.client_key}", '
                         "reconnectTimeout: 1")
    r = _run(sshd, tmp_path, CAT, conf)
    assert r.returncode == 2
    text = r.stdout + r.stderr
    assert f"127.0.0.1:{port}" in text and "remote" in text
    assert "Traceback" not in text


def test_a_missing_remote_python_is_named(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    r = _run(sshd, tmp_path, CAT, _conf(sshd, options='python: "/no/such/python3"'))
    assert r.returncode == 2
    text = r.stdout + r.stderr
    assert "no remote Python 3" in text and "/no/such/python3" in text


def test_an_unwritable_work_directory_is_named(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    conf = _conf(sshd).replace(f'"{sshd.remote_work}/swiftwork"', '"/root/not-yours/swiftwork"')
    r = _run(sshd, tmp_path, CAT, conf)
    assert r.returncode == 2
    text = r.stdout + r.stderr
    assert "/root/not-yours" in text and "writable" in text


def test_an_unknown_host_key_is_refused_with_what_to_do(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("x\n")
    known = tmp_path / "empty_known_hosts"
    known.write_text("")
    r = _run(sshd, tmp_path, CAT, _conf(sshd, options=f'knownHosts: "{known}"'))
    assert r.returncode == 2
    assert "acceptNewHostKeys" in r.stdout + r.stderr


def test_a_canceled_run_leaves_no_process_on_the_host(sshd, tmp_path):
    marker = f"299.{os.getpid()}{time.monotonic_ns() % 100000}"  # a sleep of its own
    script = f"""
app () nap () {{ sleep "{marker}"; }}
nap();
"""
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(_conf(sshd))
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=sshd.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _remote_processes(sshd.user, marker):
            assert time.monotonic() < deadline, "the app never started on the host"
            assert proc.poll() is None, proc.stdout.read()
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    deadline = time.monotonic() + 20
    while _remote_processes(sshd.user, marker) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _remote_processes(sshd.user, marker) == []


def test_sshd_killed_mid_run_and_started_again_loses_nothing(sshd, tmp_path):
    script = """
type file;
app (file o) slow (int i) { sh "-c" "sleep 2; echo $0" i stdout=@o; }
file outs[] <simple_mapper; prefix="o/", suffix=".txt">;
foreach i in [0:5] { outs[i] = slow(i); }
"""
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(_conf(sshd, extra="executionRetries: 3"))
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=sshd.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def bounce() -> None:
        deadline = time.monotonic() + 60
        while not _remote_processes(sshd.user, "sleep 2") and time.monotonic() < deadline:
            time.sleep(0.1)
        sshd.stop()
        time.sleep(2)
        sshd.start()

    bouncer = threading.Thread(target=bounce)
    bouncer.start()
    try:
        out, _ = proc.communicate(timeout=150)
    finally:
        bouncer.join(timeout=90)
        if not sshd.running:
            sshd.start()
    assert proc.returncode == 0, out
    assert sorted(p.read_text() for p in (tmp_path / "o").glob("*.txt")) == sorted(
        f"{i}\n" for i in range(6))


def test_sshd_never_back_ends_the_run_naming_the_host_and_resume_continues(sshd, tmp_path):
    script = """
type file;
app (file o) echo (int i) { echo i stdout=@o; }
app (file o) slow (file i) { sh "-c" "sleep 3; cat $0" @i stdout=@o; }
file first <"first.txt">;
file second <"second.txt">;
first = echo(1);
second = slow(first);
"""
    conf = _conf(sshd, options="reconnectTimeout: 2")
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(conf)
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=sshd.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _remote_processes(sshd.user, "sleep 3"):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        sshd.stop()
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        if not sshd.running:
            sshd.start()
    assert proc.returncode == 2, out
    assert sshd.address in out or sshd.alias in out
    assert (tmp_path / "first.txt").read_text() == "1\n"
    rlogs = list(tmp_path.glob("run*/*.rlog"))
    assert rlogs and "first.txt" in rlogs[0].read_text()
    # the host is back: -resume runs only what was left
    r = subprocess.run([*SWIFTNB, "run", "-resume", str(rlogs[0]), "wf.swift"], cwd=tmp_path,
                       env=sshd.env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "second.txt").read_text() == "1\n"


def test_a_too_old_remote_python_is_named(sshd, tmp_path):
    import tempfile

    fake = Path(tempfile.mkdtemp(prefix="swiftnb-oldpy-", dir="/tmp")) / "python2"
    fake.write_text("#!/bin/sh\necho 2.7\necho /tmp\n")  # answers the probe as Python 2.7 would
    os.chmod(fake.parent, 0o755)
    os.chmod(fake, 0o755)
    try:
        (tmp_path / "in.txt").write_text("x\n")
        r = _run(sshd, tmp_path, CAT, _conf(sshd, options=f'python: "{fake}"'))
    finally:
        fake.unlink()
        fake.parent.rmdir()
    assert r.returncode == 2
    text = r.stdout + r.stderr
    assert "Python 2.7" in text and "3.8 or newer" in text


def test_jobs_sharing_an_input_see_it_whole(sshd, tmp_path):
    # 12 pairs of jobs read the same input at the same moment: one copy is made of it,
    # and no job reads a file another copy is still writing
    script = """
type file;
app (file o) sorted (file i) { sort @i stdout=@o; }
app (file o) count (file i) { wc "-l" @i stdout=@o; }
file ins[] <simple_mapper; prefix="in/", suffix=".txt">;
file s[] <simple_mapper; prefix="s/", suffix=".txt">;
file c[] <simple_mapper; prefix="c/", suffix=".txt">;
foreach i in [0:11] { s[i] = sorted(ins[i]); c[i] = count(ins[i]); }
"""
    (tmp_path / "in").mkdir()
    lines = "".join(f"word{k:05d}\n" for k in range(20000, 0, -1))
    for i in range(12):
        (tmp_path / "in" / f"{i:04d}.txt").write_text(lines)
    r = _run(sshd, tmp_path, script, _conf(sshd, options="", site_extra=""))
    assert r.returncode == 0, r.stdout + r.stderr
    want = "".join(sorted(lines.splitlines(keepends=True)))
    for i in range(12):
        assert (tmp_path / "s" / f"{i:04d}.txt").read_text() == want
        assert (tmp_path / "c" / f"{i:04d}.txt").read_text().split()[0] == "20000"


def test_file_transfers_are_bounded_by_the_throttle_and_logged(sshd, tmp_path):
    """fileTransfersThrottle: 2 -> at most two copies at once, each a Swift
    FILE_STAGE_IN_START/END (and OUT) pair in the log."""
    script = """
type file;
app (file o) size (file i) { wc "-c" @i stdout=@o; }
file ins[] <simple_mapper; prefix="in/", suffix=".bin">;
file outs[] <simple_mapper; prefix="out/", suffix=".txt">;
foreach i in [0:9] { outs[i] = size(ins[i]); }
"""
    (tmp_path / "in").mkdir()
    for i in range(10):
        (tmp_path / "in" / f"{i:04d}.bin").write_bytes(os.urandom(2 << 20))
    r = _run(sshd, tmp_path, script, _conf(sshd, extra="fileTransfersThrottle: 2"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert all((tmp_path / "out" / f"{i:04d}.txt").read_text().split()[0] == str(2 << 20)
               for i in range(10))
    log = next(tmp_path.glob("run*/*.log")).read_text().splitlines()
    active = peak = 0
    starts = {"in": 0, "out": 0}
    for line in log:
        for way in ("IN", "OUT"):
            if f" FILE_STAGE_{way}_START " in line:
                active += 1
                starts[way.lower()] += 1
                assert "provider=ssh" in line and "jobid=wc-" in line  # 0.96: tr = the program
            elif f" FILE_STAGE_{way}_END " in line:
                active -= 1
        peak = max(peak, active)
    assert starts == {"in": 10, "out": 10}
    assert 1 <= peak <= 2


def test_paths_above_the_run_directory_are_staged_as_parent(sshd, tmp_path):
    work = tmp_path / "wd"
    work.mkdir()
    (tmp_path / "x.txt").write_text("from above\n")
    script = """
type file;
app (file o) copy (file i) { cp @i @o; }
app (file o) cat (file i) { cat @i stdout=@o; }
file inp <"../x.txt">;
file mid <"../y.txt">;
file out <"out.txt">;
mid = copy(inp);
out = cat(mid);
"""
    r = _run(sshd, work, script, _conf(sshd))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "y.txt").read_text() == "from above\n"
    assert (work / "out.txt").read_text() == "from above\n"


def test_a_walltime_kill_leaves_no_process_on_the_host(sshd, tmp_path):
    marker = f"298.{os.getpid()}{time.monotonic_ns() % 100000}"
    script = f"""
app () nap () {{ sleep "{marker}"; }}
nap();
"""
    conf = _conf(sshd).replace('app.ALL { executable: "*" }',
                               'app.ALL { executable: "*", maxWallTime: "00:00:02" }')
    r = _run(sshd, tmp_path, script, conf)
    assert r.returncode == 2
    assert "exceeded its walltime of 2 seconds" in r.stdout + r.stderr
    assert _remote_processes(sshd.user, marker) == []


def test_an_app_killed_on_the_host_is_reported_and_the_run_goes_on(sshd, tmp_path):
    marker = f"297.{os.getpid()}{time.monotonic_ns() % 100000}"
    script = f"""
type file;
app () nap () {{ sleep "{marker}"; }}
app (file o) echo (string s) {{ echo s stdout=@o; }}
file after <"after.txt">;
nap();
after = echo("still here");
"""
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(_conf(sshd).replace("lazyErrors: false",
                                                             "lazyErrors: true"))
    proc = subprocess.Popen([*SWIFTNB, "run", "wf.swift"], cwd=tmp_path, env=sshd.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (pids := _remote_processes(sshd.user, marker)):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
        os.kill(pids[0], signal.SIGKILL)  # as an OOM killer or an admin would
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 2, out
    assert "killed by signal 9" in out
    assert (tmp_path / "after.txt").read_text() == "still here\n"


def test_cleanup_command_runs_on_the_site_run_directory(sshd, tmp_path):
    """Without keepSiteDir the site's cleanupCommand (default /bin/rm -rf) gets the site
    run directory at the end: here one that moves it aside, as a person keeping old runs
    would configure it."""
    (tmp_path / "in.txt").write_text("kept aside\n")
    old = f"{sshd.remote_work}/old-runs"
    site_extra = f'cleanupCommand: "/bin/mv", cleanupCommandOptions: ["-t", "{old}"]'
    subprocess.run(["runuser", "-u", sshd.user, "--", "mkdir", "-p", old], check=True,
                   timeout=10)
    r = _run(sshd, tmp_path, CAT, _conf(sshd, site_extra=site_extra))
    assert r.returncode == 0, r.stdout + r.stderr
    moved = list(Path(old).iterdir())
    assert [p.name for p in moved] == ["wf-run001"]
    assert (moved[0] / "shared" / "in.txt").read_text() == "kept aside\n"
