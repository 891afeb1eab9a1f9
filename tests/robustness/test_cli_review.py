"""Findings of the CLI robustness review, through the real `swiftnb` command:
-configpath, a directory given as the script, an unusable -logfile, a -resume log named
after another script."""

from __future__ import annotations

import os

import pytest

from robusthelp import HELLO, swiftnb

pytestmark = pytest.mark.timeout(90)

WORKDIR_CONF = """\
sites: [local]
site.local {
    execution.type: local
    workDirectory: "elsewhere"
    app.ALL.executable: "*"
}
keepSiteDir: true
"""


def test_configpath_replaces_the_configuration_search(tmp_path, write):
    write("hello.swift", HELLO)
    write("a.conf", WORKDIR_CONF)
    write("swift.conf", "sites: [nosuchsite]\n")  # would be read without -configpath
    r = swiftnb("run", "-configpath", "a.conf", "hello.swift", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "hello.txt").read_text() == "hi\n"
    assert (tmp_path / "elsewhere" / "hello-run001").is_dir()  # a.conf's workDirectory
    listed = swiftnb("-configpath", "a.conf", "-listconfig", "hello.swift", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "a.conf" in listed.stdout and "swift.conf" not in listed.stdout


def test_configpath_with_a_missing_file_names_it(tmp_path, write):
    write("hello.swift", HELLO)
    r = swiftnb("run", "-configpath", f"nope.conf{os.pathsep}other.conf", "hello.swift",
                cwd=tmp_path)
    assert r.returncode == 1
    assert "nope.conf" in r.stderr and "not found" in r.stderr
    assert not (tmp_path / "run001").exists()


@pytest.mark.parametrize("args", [("run",), ("run", "-typecheck"), ("typecheck",), ()])
def test_a_directory_as_the_script_says_so(tmp_path, args):
    (tmp_path / "wf.swift").mkdir()
    r = swiftnb(*args, "wf.swift", cwd=tmp_path)
    assert r.returncode == 4, r.stderr
    assert "is a directory" in r.stderr and "wf.swift" in r.stderr
    assert "does not exist" not in r.stderr
    assert not (tmp_path / "run001").exists()


@pytest.mark.parametrize("logfile,why", [
    ("logs", "Is a directory"),                         # a directory in the way
    ("afile/x.log", "is a file, not a directory"),      # a file where a directory must be
    ("afile/deeper/x.log", "is a file, not a directory"),
])
def test_an_unusable_logfile_names_the_log_and_leaves_no_run_directory(tmp_path, write,
                                                                      logfile, why):
    write("hello.swift", HELLO)
    (tmp_path / "logs").mkdir()
    write("afile", "not a directory\n")
    r = swiftnb("run", "-logfile", logfile, "hello.swift", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert f"-logfile {logfile}" in r.stderr and "cannot write the log file" in r.stderr
    assert why in r.stderr
    assert "run directory" not in r.stderr
    assert not list(tmp_path.glob("run0*")), "no empty run directory is left behind"
    assert not (tmp_path / "hello.txt").exists()


def test_a_good_logfile_still_works(tmp_path, write):
    write("hello.swift", HELLO)
    r = swiftnb("run", "-logfile", "logs/deep/my.log", "hello.swift", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Swift finished with no errors" in (tmp_path / "logs/deep/my.log").read_text()


FAILING = """\
type file;
app (file o) fail() { sh "-c" "exit 3" stdout=@o; }
file f <"f.txt">;
f = fail();
"""


def test_resume_with_another_scripts_log_warns(tmp_path, write):
    write("fail.swift", FAILING)
    write("hello.swift", HELLO)
    r = swiftnb("run", "fail.swift", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    rlog = "run001/fail-run001.0.rlog"
    assert (tmp_path / rlog).is_file()
    # the same script's log: no warning
    same = swiftnb("run", "-resume", rlog, "fail.swift", cwd=tmp_path)
    assert same.returncode == 2
    assert "does not look like" not in same.stderr
    # another script's: a warning on the console and in the log, the run goes on
    other = swiftnb("run", "-resume", rlog, "hello.swift", cwd=tmp_path)
    assert other.returncode == 0, other.stderr
    warning = [x for x in other.stderr.splitlines() if "does not look like" in x]
    assert warning and warning[0].startswith("Warning:"), other.stderr
    assert "hello.swift" in warning[0] and '"hello-"' in warning[0]
    log = next(tmp_path.glob("run003/hello-run003.log")).read_text()
    assert "does not look like one of hello.swift" in log


def test_sighup_after_the_terminal_went_away(tmp_path, write):
    """The terminal closes (ssh dropped): SIGHUP stops the run as SIGTERM does, and the
    console writes that now fail (EIO) neither crash it nor lose swift.out's copy."""
    import signal
    import subprocess
    import sys

    from robusthelp import SLEEPERS, _env, wait_for

    write("nap.swift", SLEEPERS)
    piddir = tmp_path / "pids"
    piddir.mkdir()
    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "nap.swift",
                             f"-piddir={piddir}"], cwd=tmp_path, env=_env(tmp_path),
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    try:
        wait_for(lambda: len(list(piddir.glob("*.pid"))) >= 2, 60, "two apps running")
        os.close(master)
        master = None
        proc.send_signal(signal.SIGHUP)
        code = proc.wait(timeout=30)
    finally:
        if master is not None:
            os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 2
    out = (tmp_path / "run001" / "swift.out").read_text()
    assert "Traceback" not in out
    assert "Execution interrupted" in out
    assert f"Restart log: {tmp_path / 'run001' / 'nap-run001.0.rlog'}" in out
    log = (tmp_path / "run001" / "nap-run001.log").read_text()
    assert log.rstrip("\n").endswith("Swift finished with errors")
