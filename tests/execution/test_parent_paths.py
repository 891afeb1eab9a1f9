"""A file mapped above the run's directory (``../x.txt``) on the local site: the job
sees it as Swift's ``__parent__/x.txt`` inside its job directory, and an output mapped
there lands in its real place."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(60)


def test_inputs_and_outputs_above_the_run_directory(tmp_path):
    work = tmp_path / "wd"
    work.mkdir()
    (tmp_path / "x.txt").write_text("from above\n")
    (work / "wf.swift").write_text("""
type file;
app (file o) copy (file i) { cp @i @o; }
app (file o) where (file i) { sh "-c" "cat $0; pwd" @i stdout=@o; }
file inp <"../x.txt">;
file mid <"../y.txt">;
file out <"out.txt">;
mid = copy(inp);
out = where(mid);
""")
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"], cwd=work,
                       capture_output=True, text=True, timeout=50)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "y.txt").read_text() == "from above\n"
    text, cwd = (work / "out.txt").read_text().splitlines()
    assert text == "from above"
    assert "/jobs/" in cwd  # the app ran in its job directory, yet found ../y.txt
