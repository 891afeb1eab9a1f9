"""Issue 24 on an SSH site (a real sshd on 127.0.0.1, tests/sshd.py): outputs an app left
as links come back as regular files with their content (the wrapper makes them regular
on the far side, before anything is fetched), and an app that writes to its input
changes neither the user's file nor what the next job on the site reads."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]


def _conf(sshd) -> str:
    return f"""
sites: [remote]
lazyErrors: false
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}"
                 options {{ reconnectTimeout: 20 }} }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/swiftwork"
    staging: "swift"
    maxParallelTasks: 1
    initialParallelTasks: 1
    app.ALL {{ executable: "*" }}
}}
"""


def _run(sshd, work: Path, script: str) -> subprocess.CompletedProcess[str]:
    (work / "wf.swift").write_text(script)
    (work / "swift.conf").write_text(_conf(sshd))
    return subprocess.run([*SWIFTNB, "run", "wf.swift"], cwd=work, env=sshd.env(),
                          capture_output=True, text=True, timeout=150)


def _regular(path: Path) -> bool:
    st = os.lstat(path)
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1


def test_outputs_left_as_links_come_back_as_files(sshd, tmp_path):
    script = """
type file;
app (file a, file b) links () {
    sh "-c" "echo real > real; ln -s $PWD/real $1; ln -s /etc/hostname $2" "sh" @a @b;
}
file a <"a.txt">;
file b <"b.txt">;
(a, b) = links();
"""
    r = _run(sshd, tmp_path, script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _regular(tmp_path / "a.txt") and (tmp_path / "a.txt").read_text() == "real\n"
    assert _regular(tmp_path / "b.txt")
    assert (tmp_path / "b.txt").read_bytes() == Path("/etc/hostname").read_bytes()


def test_a_dangling_output_link_fails_the_call_naming_it(sshd, tmp_path):
    script = """
type file;
app (file a) dangle () { sh "-c" "ln -s /nonexistent/x $1" "sh" @a; }
file a <"a.txt">;
a = dangle();
"""
    r = _run(sshd, tmp_path, script)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "a.txt is a symbolic link to /nonexistent/x, which does not exist" in r.stderr
    assert not os.path.lexists(tmp_path / "a.txt")


def test_an_app_writing_to_its_input_spoils_nothing_for_the_next_job(sshd, tmp_path):
    (tmp_path / "in.txt").write_text("original\n")
    script = """
type file;
app (file o) spoil (file i) { sh "-c" "cat $1 > $2; echo more >> $1" "sh" @i @o; }
file i <"in.txt">;
file o1 <"o1.txt">;
file o2 <"o2.txt">;
o1 = spoil(i);
o2 = spoil(i);
"""
    r = _run(sshd, tmp_path, script)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "in.txt").read_text() == "original\n"
    assert (tmp_path / "o1.txt").read_text() == "original\n"
    assert (tmp_path / "o2.txt").read_text() == "original\n"
