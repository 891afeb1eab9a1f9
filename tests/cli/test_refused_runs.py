"""A run refused before it starts leaves no run directory behind (issue 14, item 9).

Every refusal goes through the real ``swiftnb`` command: a second ``-resume`` of a
restart log another run holds, a site its provider refuses, a file that is no restart
log, a bad configuration, script or option.  The run directories before and after must
be the same: no empty ``runNNN``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")

#: an app that waits for the test's go-ahead: the first run holds its restart log until then
WAITING = """\
type file;
app (file o) work (string marks) {{
    sh "-c" "test -f $0/ok || exit 1; touch $0/started; while [ ! -f $0/go ]; do sleep 0.05; done; echo done" marks stdout=@o;
}}
file out <"out.txt">;
out = work("{marks}");
"""

QUICK = """\
type file;
app (file o) hello () { echo "hi" stdout=@o; }
file out <"hi.txt">;
out = hello();
"""


def environment(cwd: Path) -> dict[str, str]:
    """A home of the test's own (no ~/.swift/swift.conf of the developer's), beside
    ``cwd`` so that its caches are not files of the run's directory."""
    home = cwd.parent / f"{cwd.name}-home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(home))
    env.pop("SWIFT_SITE_CONF", None)
    return env


def swiftnb(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SWIFTNB, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=environment(cwd))


def run_dirs(cwd: Path) -> set[str]:
    return {p.name for p in cwd.iterdir() if p.is_dir() and p.name.startswith("run")}


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_a_refused_second_resume_leaves_no_run_directory(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "w.swift").write_text(WAITING.format(marks=marks))
    failed = swiftnb("w.swift", cwd=tmp_path)  # no marks/ok yet: fails, keeps its log
    assert failed.returncode == 2, failed.stderr
    rlog = "run001/w-run001.0.rlog"
    assert (tmp_path / rlog).is_file()
    (marks / "ok").touch()
    first = subprocess.Popen([SWIFTNB, "run", "-resume", rlog, "w.swift"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=environment(tmp_path))
    try:
        wait_for(marks / "started", first)  # the first resume holds the restart log
        assert run_dirs(tmp_path) == {"run001", "run002"}
        second = swiftnb("-resume", rlog, "w.swift", cwd=tmp_path)
        assert second.returncode == 1
        assert "is in use by another run" in second.stderr
        assert run_dirs(tmp_path) == {"run001", "run002"}
    finally:
        (marks / "go").touch()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert (tmp_path / "out.txt").read_text() == "done\n"


REFUSALS = [
    # (name, files to write, arguments, exit code, part of the message).  A bad script,
    # option, or -resume file name is refused before the run directory is made.
    ("site refused by its provider",
     {"bad.conf": "site.local.execution.options.failureProbability: 0.5\n"},
     ["-config", "bad.conf", "q.swift"], 1, 'unknown key for execution type "local"'),
    ("not a restart log", {"g.rlog": "garbage\n"},
     ["-resume", "g.rlog", "q.swift"], 1, "is not a Swift restart log"),
]


@pytest.mark.parametrize("name,files,args,code,message", REFUSALS,
                         ids=[case[0] for case in REFUSALS])
def test_a_refused_run_leaves_no_run_directory(tmp_path, name, files, args, code, message):
    (tmp_path / "q.swift").write_text(QUICK)
    (tmp_path / "run001").mkdir()  # an earlier run's
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    before = sorted(p.name for p in tmp_path.iterdir())
    result = swiftnb(*args, cwd=tmp_path)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_a_refused_run_removes_only_the_directory_it_made(tmp_path):
    """``-runid new`` made its directory: refused, it is gone.  ``-runid old`` names one an
    earlier run made: refused, it stays, with what it held."""
    (tmp_path / "q.swift").write_text(QUICK)
    (tmp_path / "bad.conf").write_text("site.local.execution.options.failureProbability: 0.5\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "keep.txt").write_text("mine\n")
    for runid in ("new", "old"):
        result = swiftnb("-runid", runid, "-config", "bad.conf", "q.swift", cwd=tmp_path)
        assert result.returncode == 1, result.stderr
    assert not (tmp_path / "new").exists()
    assert (tmp_path / "old" / "keep.txt").read_text() == "mine\n"
