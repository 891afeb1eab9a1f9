"""Apps that misbehave, through a real `swiftnb run`: the error says what happened and
nothing the app produced is lost."""

from __future__ import annotations

import pytest

from robusthelp import HELLO, swiftnb

pytestmark = pytest.mark.timeout(90)


def test_maxwalltime_is_enforced_on_the_local_site(tmp_path, write):
    write("nap.swift", 'type file;\napp (file o) nap() { sleep "97" stdout=@o; }\n'
                       'file o <"o.txt">;\no = nap();\n')
    write("wt.conf", 'site.local.app.sleep { executable: "sleep", maxWallTime: "00:00:01" }\n')
    r = swiftnb("run", "-config", "wt.conf", "nap.swift", cwd=tmp_path, timeout=60)
    assert r.returncode == 2, r.stderr
    assert "exceeded its walltime of 1 seconds and was killed" in r.stderr
    assert not (tmp_path / "o.txt").exists()


def test_app_killed_by_a_signal_says_so(tmp_path, write):
    write("k.swift", 'type file;\napp (file o) k() { sh "-c" "kill -9 $$" stdout=@o; }\n'
                     'file o <"o.txt">;\no = k();\n')
    r = swiftnb("run", "k.swift", cwd=tmp_path)
    assert r.returncode == 2
    assert "failed with an exit code of 137 (killed by signal 9, SIGKILL)" in r.stderr


def test_output_that_cannot_be_moved_is_kept(tmp_path, write):
    write("hello.swift", HELLO)
    (tmp_path / "hello.txt" / "sub").mkdir(parents=True)  # a directory where the output goes
    r = swiftnb("run", "hello.swift", cwd=tmp_path)
    assert r.returncode == 2
    assert "Could not move output hello.txt to " in r.stderr
    kept = list((tmp_path / "swiftwork").glob("hello-run001.kept/*/hello.txt"))
    assert len(kept) == 1 and kept[0].read_text() == "hi\n"
    assert f"kept in {kept[0].parent}" in r.stderr


def test_work_directory_that_cannot_be_created(tmp_path, write):
    write("hello.swift", HELLO)
    write("blocker", "a file, not a directory\n")
    write("wd.conf", 'site.local.workDirectory: "blocker/work"\n')
    r = swiftnb("run", "-config", "wd.conf", "hello.swift", cwd=tmp_path)
    assert r.returncode == 2
    assert (f"in the site work directory {tmp_path}/blocker/work: Not a directory"
            in r.stderr), r.stderr
    assert "Restart log: " in r.stderr


def test_binary_stdout_tail_is_printable(tmp_path, write):
    write("b.swift", 'type file;\napp (file o) b() { sh "-c" "printf \'\\\\000\\\\033x\\\\001\'; '
                     'exit 3" stdout=@o; }\nfile o <"o.bin">;\no = b();\n')
    r = swiftnb("run", "b.swift", cwd=tmp_path)
    assert r.returncode == 2
    line = next(x for x in r.stderr.splitlines() if "stdout.txt:" in x)
    assert "\x00" not in line and "\x01" not in line and line.endswith(".\x1bx.")


def test_tc_data_executable_paths(tmp_path, write):
    """A directory, a missing absolute path, a missing relative path: one run, three
    errors (lazyErrors), each saying what is wrong with the path."""
    write("three.swift", 'type file;\napp (file o) a() { a stdout=@o; }\n'
                         'app (file o) b() { b stdout=@o; }\napp (file o) c() { c stdout=@o; }\n'
                         'file x <"x">; file y <"y">; file z <"z">;\nx = a(); y = b(); z = c();\n')
    write("sites.xml", '<config><pool handle="localhost"><execution provider="local"/>'
                       '<workdirectory>work</workdirectory></pool></config>\n')
    write("tc.data", "localhost a /\nlocalhost b /nonexistent/echo\nlocalhost c bin/echo\n")
    r = swiftnb("run", "-sites.file", "sites.xml", "-tc.file", "tc.data", "three.swift",
                cwd=tmp_path)
    assert r.returncode == 2
    for says in ("The executable / is a directory",
                 "Cannot find executable /nonexistent/echo: no such file",
                 f"Cannot find executable bin/echo: no such file (relative to {tmp_path})"):
        assert f"Caused by: {says}" in r.stderr, r.stderr
