"""The env profiles that steer the wrapper (Guide 11.4): PATHPREFIX, SWIFT_JOBDIR_PATH,
SWIFT_EXTRA_INFO, SWIFT_GEN_SCRIPTS, through real ``swiftnb run`` subprocesses."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)


def _run(tmp_path, env_profile: str, script: str, *extra: str):
    (tmp_path / "wf.swift").write_text(script)
    (tmp_path / "swift.conf").write_text(f"""
sites: [local]
{''.join(extra)}
site.local {{
    execution {{ type: local }}
    workDirectory: "swiftwork"
    app.ALL {{ executable: "*", env {{ {env_profile} }} }}
}}
""")
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=50)


ECHO = """
type file;
app (file o) mytool (string s) { mytool s stdout=@o; }
file out <"out.txt">;
out = mytool("hi");
"""


def test_pathprefix_goes_before_the_sites_path(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mytool").write_text('#!/bin/sh\necho "mytool $1"; command -v ls\n')
    os.chmod(tools / "mytool", 0o755)
    r = _run(tmp_path, f'PATHPREFIX: "{tools}"', ECHO)
    assert r.returncode == 0, r.stdout + r.stderr
    first, ls = (tmp_path / "out.txt").read_text().splitlines()
    assert first == "mytool hi"
    assert ls.endswith("/ls")  # the site's own PATH is still there


def test_swift_jobdir_path_copies_inputs_to_a_node_local_directory(tmp_path):
    local = tmp_path / "node-local"
    local.mkdir()
    (tmp_path / "in.txt").write_text("data\n")
    script = """
type file;
app (file o) where (file i) { sh "-c" "pwd; test -L $0 && echo link || echo copy; cat $0" @i stdout=@o; }
file inp <"in.txt">;
file out <"out.txt">;
out = where(inp);
"""
    r = _run(tmp_path, f'SWIFT_JOBDIR_PATH: "{local}"', script)
    assert r.returncode == 0, r.stdout + r.stderr
    cwd, how, text = (tmp_path / "out.txt").read_text().splitlines()
    assert cwd.startswith(str(local)) and how == "copy" and text == "data"


def test_swift_extra_info_is_recorded_in_the_info_file(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mytool").write_text('#!/bin/sh\necho "$1"\n')
    os.chmod(tools / "mytool", 0o755)
    r = _run(tmp_path, f'PATHPREFIX: "{tools}", SWIFT_EXTRA_INFO: "echo site-version-42"',
             ECHO, "alwaysTransferWrapperLog: true\n")
    assert r.returncode == 0, r.stdout + r.stderr
    infos = list(tmp_path.glob("run*/*.d/*-info"))
    assert infos and "EXTRAINFO=site-version-42" in infos[0].read_text()


def test_swift_gen_scripts_keeps_the_command_line(tmp_path):
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "mytool").write_text('#!/bin/sh\necho "$1"\n')
    os.chmod(tools / "mytool", 0o755)
    r = _run(tmp_path, f'PATHPREFIX: "{tools}", SWIFT_GEN_SCRIPTS: "1"', ECHO,
             "keepSiteDir: true\n")
    assert r.returncode == 0, r.stdout + r.stderr
    scripts = list(tmp_path.glob("swiftwork/*/jobs/*/*/run.sh"))
    assert len(scripts) == 1
    text = scripts[0].read_text()
    assert f"{tools}/mytool hi > " in text  # the program, its argument, its stdout
