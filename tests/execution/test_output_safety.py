"""Outputs appear at their mapped paths only when the app succeeds, whatever the path
(relative, above the run directory, absolute) and however the app is told it (a whole
argument, part of one, ``stdout=``): the real ``swiftnb`` command, real apps (``sh``),
on the local site and on coaster blocks of this machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.remote.wrapper import job_args

pytestmark = pytest.mark.timeout(120)

SWIFTNB = str(Path(sys.executable).parent / "swiftnb")

COASTERS = """\
sites: cluster
site.cluster {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, tasksPerNode: 2, maxNodesPerJob: 1, maxJobTime: "01:00:00" }
    }
    workDirectory: "swiftwork"
    app.ALL { executable: "*" }
}
"""

#: how the app is told where to write: (app body, with FAIL where it fails)
FORMS = {
    "argument": 'sh "-c" "echo new > $1FAIL" "sh" @o;',
    "inside-an-argument": 'sh "-c" "echo new > ${1#--out=}FAIL" "sh" strcat("--out=", @o);',
    "stdout": 'sh "-c" "echo new FAIL" stdout=@o;',
}


def _script(form: str, path: str, fail: bool) -> str:
    body = FORMS[form].replace("FAIL", "; exit 3" if fail else "")
    return f"type file;\napp (file o) make() {{ {body} }}\nfile out <\"{path}\">;\nout = make();\n"


def _run(work: Path, script: str, config: str | None = None) -> subprocess.CompletedProcess:
    (work / "wf.swift").write_text(script)
    if config is not None:
        (work / "swift.conf").write_text(config)
    return subprocess.run([SWIFTNB, "wf.swift"], cwd=work, capture_output=True, text=True,
                          timeout=100, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("site", ["local", "coasters"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_a_failed_app_leaves_an_absolute_output_as_it_was(tmp_path, form, site):
    work = tmp_path / "wd"
    work.mkdir()
    data = tmp_path / "data"
    data.mkdir()
    target = data / "out.txt"
    target.write_text("old\n")
    config = COASTERS if site == "coasters" else None
    r = _run(work, _script(form, str(target), fail=True), config)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "exit code of 3" in r.stderr
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in data.iterdir()) == ["out.txt"]  # nothing half-made
    r = _run(work, _script(form, str(target), fail=False), config)
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.read_text() == "new\n"
    assert sorted(p.name for p in data.iterdir()) == ["out.txt"]


@pytest.mark.parametrize("form", sorted(FORMS))
def test_an_output_above_the_run_directory_in_any_form(tmp_path, form):
    """``../x`` names one place, inside the job directory, whether the app gets it as an
    argument, inside one, or as its stdout; it lands above the run directory on success
    and nowhere on failure."""
    work = tmp_path / "wd"
    work.mkdir()
    target = tmp_path / "up.txt"
    target.write_text("old\n")
    r = _run(work, _script(form, "../up.txt", fail=True))
    assert r.returncode == 2, r.stdout + r.stderr
    assert "not created" not in r.stderr and "exit code of 3" in r.stderr
    assert target.read_text() == "old\n"
    r = _run(work, _script(form, "../up.txt", fail=False))
    assert r.returncode == 0, r.stdout + r.stderr
    assert target.read_text() == "new\n"
    assert not list((work / "swiftwork").rglob("up.txt"))  # nothing left in a job directory


def test_an_absolute_output_in_a_shell_command_of_the_app(tmp_path):
    """The mapped path written literally in the app's command line is the job's name for
    it too: the app writes in its job directory, the file lands whole."""
    work = tmp_path / "wd"
    work.mkdir()
    target = tmp_path / "lit.txt"
    script = ("type file;\n"
              f'app (file o) make() {{ sh "-c" "echo partial > {target}; exit 3"; }}\n'
              f'file out <"{target}">;\nout = make();\n')
    target.write_text("old\n")
    r = _run(work, script)
    assert r.returncode == 2, r.stdout + r.stderr
    assert target.read_text() == "old\n"


def test_job_args_renames_whole_paths_only():
    names = {"/d/f": "__root__/d/f", "../x": "__parent__/x"}
    assert job_args(["/d/f", "--out=/d/f", "a,/d/f:../x", "cat ../x > /d/f"], names) == [
        "__root__/d/f", "--out=__root__/d/f", "a,__root__/d/f:__parent__/x",
        "cat __parent__/x > __root__/d/f"]
    # a longer path, or the path inside another one, is left alone
    assert job_args(["/d/f.bak", "/e/d/f", "/d/f/g", "x../x", "../../x"], names) == [
        "/d/f.bak", "/e/d/f", "/d/f/g", "x../x", "../../x"]
    assert job_args(["/d/f"], {}) == ["/d/f"]
