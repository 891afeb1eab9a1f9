"""File names that are not UTF-8, end to end: names are bytes on POSIX, and a run carries
them as they are (``os.fsencode``/``surrogateescape``) through mapping, argv, the job
spec, staging, the log and the restart log.  Before, the first such name made the log
writer raise inside the call ("Task exception was never retrieved"), the call was never
run, and the run ended 0; or the run ended in an internal error.

Also: an exception raised in a task of the run fails the run, with a message.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

#: an input directory listed by filesys_mapper, an app's dynamic output array, outputs
#: named by script arguments: each holds a name that is not UTF-8
SCRIPT = """\
type file;
app (file o[]) make (string n) {
    sh "-c" "mkdir -p made; printf dyn > made/$0.dat; printf plain > made/plain.dat" n;
}
app (file o) cp (file i) { cp @i @o; }
file ins[] <filesys_mapper; location="in", pattern="*.txt">;
foreach f in ins {
    file c <regexp_mapper; source=filename(f), match="in/(.*)", transform="copies/\\\\1">;
    c = cp(f);
}
file made[] <filesys_mapper; location="made", pattern="*.dat">;
made = make(arg("n"));
foreach m in made {
    trace(filename(m));
    file c <single_file_mapper; file=strcat(filename(m), ".copy")>;
    c = cp(m);
}
file named <single_file_mapper; file=arg("out")>;
named = cp(ins[0]);
"""

IN_NAME = b"in-\xff\xfe.txt"
DYN = "d\udcff"  # the script argument naming the dynamic output (bytes d\xff)
OUT_NAME = b"out-\xe9\x80.txt"  # a cut UTF-8 sequence


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None,
         timeout: float = 150) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*SWIFTNB, "run", *args], cwd=cwd, capture_output=True,
                          timeout=timeout, env=env)


def _layout(tmp_path: Path) -> None:
    (tmp_path / "wf.swift").write_text(SCRIPT)
    indir = tmp_path / "in"
    indir.mkdir()
    (indir / os.fsdecode(IN_NAME)).write_bytes(b"hostile\n")


def _check_outputs(tmp_path: Path, r: subprocess.CompletedProcess[bytes]) -> None:
    said = (r.stdout + r.stderr).decode("utf-8", "replace")
    assert r.returncode == 0, said
    root = os.fsencode(tmp_path)
    assert os.listdir(root + b"/copies") == [IN_NAME]
    assert open(root + b"/copies/" + IN_NAME, "rb").read() == b"hostile\n"
    assert sorted(os.listdir(root + b"/made")) == sorted(
        [b"d\xff.dat", b"d\xff.dat.copy", b"plain.dat", b"plain.dat.copy"])
    assert open(root + b"/made/d\xff.dat.copy", "rb").read() == b"dyn"
    assert open(root + b"/" + OUT_NAME, "rb").read() == b"hostile\n"
    assert b"Task exception was never retrieved" not in r.stderr
    # the log and the console copy hold the name's own bytes
    (log,) = [p for p in (tmp_path / "run001").iterdir() if p.name.endswith(".log")]
    assert b"made/d\xff.dat" in log.read_bytes()
    assert b"SwiftScript trace: made/d\xff.dat" in (tmp_path / "run001" / "swift.out").read_bytes()


def test_names_that_are_not_utf8_on_the_local_site(tmp_path):
    _layout(tmp_path)
    r = _run(tmp_path, "wf.swift", f"-n={DYN}", f"-out={os.fsdecode(OUT_NAME)}")
    _check_outputs(tmp_path, r)


def _ssh_conf(sshd, staging: str) -> str:
    return f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/swiftwork"
    staging: "{staging}"
    app.ALL {{ executable: "*" }}
}}
"""


@pytest.mark.parametrize("staging", ["swift", "local"])
def test_names_that_are_not_utf8_on_an_ssh_site(sshd, tmp_path, staging):
    _layout(tmp_path)
    (tmp_path / "swift.conf").write_text(_ssh_conf(sshd, staging))
    r = _run(tmp_path, "wf.swift", f"-n={DYN}", f"-out={os.fsdecode(OUT_NAME)}",
             env=sshd.env())
    _check_outputs(tmp_path, r)


COASTER_CONF = """\
sites: c
site.c {
    execution {
        type: coaster
        jobManager: "local:local"
        options { maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "01:00:00",
                  planInterval: 0.2, defaultWalltime: "00:02:00" }
    }
    staging: "swift"
    workDirectory: swiftwork
    app.ALL.executable: "*"
}
"""


def test_names_that_are_not_utf8_on_a_coaster_site(tmp_path):
    _layout(tmp_path)
    (tmp_path / "c.conf").write_text(COASTER_CONF)
    r = _run(tmp_path, "-config", "c.conf", "wf.swift", f"-n={DYN}",
             f"-out={os.fsdecode(OUT_NAME)}")
    _check_outputs(tmp_path, r)


RESUME = """\
type file;
app (file o) make (string s) { echo s stdout=@o; }
app (file o) check (file i, int fail) { sh "-c" "test $1 = 0 && cat $0" @i fail stdout=@o; }
file a <single_file_mapper; file=arg("a")>;
file b <single_file_mapper; file=arg("b")>;
a = make("one");
b = check(a, toInt(arg("fail")));
"""


def test_resume_finds_a_call_whose_output_name_is_not_utf8(tmp_path):
    (tmp_path / "wf.swift").write_text(RESUME)
    names = ["-a=" + os.fsdecode(b"a-\xff.txt"), "-b=" + os.fsdecode(b"b-\xfe.txt")]
    r = _run(tmp_path, "wf.swift", *names, "-fail=1")
    assert r.returncode == 2, r.stderr.decode(errors="replace")
    rlog = tmp_path / "run001" / "wf-run001.0.rlog"
    assert rlog.read_bytes().split(b"\n")[2:] == [b"a-\xff.txt", b""]
    r = _run(tmp_path, "-resume", str(rlog), "wf.swift", *names, "-fail=0")
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert b"Finished in previous run:1" in r.stderr
    assert open(os.fsencode(tmp_path) + b"/b-\xfe.txt", "rb").read() == b"one\n"


# -- an exception in a task of the run fails the run ----------------------------------

CALL = """\
type file;
app (file o) greet (string m) { echo m stdout=@o; }
file a <"a.out">;
a = greet("hi");
"""


class _FaultyExecutor:
    """An executor whose submit raises what no code path expects (a bug below the engine)."""

    def __init__(self) -> None:
        self.calls = 0

    async def submit(self, task):
        self.calls += 1
        raise RuntimeError("injected fault in submit")

    def app_executable(self, tr: str) -> str | None:
        return tr

    async def close(self) -> None:
        pass


def _never_retrieved(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]


@pytest.mark.parametrize("lazy", [False, True])
def test_an_exception_below_an_app_call_fails_the_run(swift, caplog, lazy):
    ex = _FaultyExecutor()
    r = swift(CALL, executor=ex, lazy_errors=lazy)
    assert ex.calls == 1
    assert not r.outcome.ok and r.outcome.exit_code == 2
    (error,) = [e for e in r.outcome.errors if "injected fault in submit" in e]
    assert "swiftnb internal error in the call of greet (test.swift:2" in error
    assert not _never_retrieved(caplog)


def test_an_exception_in_a_spawned_task_fails_the_run(swift, caplog, monkeypatch, tmp_path):
    """A mapper's prepare runs in a task of its own (ext mappers run their script)."""
    from swiftnb.engine.mappers.ext import ExtMapper

    async def broken(self) -> None:
        raise OSError(5, "injected I/O error")

    monkeypatch.setattr(ExtMapper, "prepare", broken)
    script = tmp_path / "m.sh"
    script.write_text("#!/bin/sh\necho '[0] x.txt'\n")
    script.chmod(0o755)
    src = ('type file;\nfile fs[] <ext; exec="./m.sh">;\n'
           'foreach f in fs { trace(filename(f)); }\n')
    r = swift(src, timeout=30)
    assert not r.outcome.ok and r.outcome.exit_code == 2
    assert any("injected I/O error" in e for e in r.outcome.errors), r.outcome.errors
    assert not _never_retrieved(caplog)
