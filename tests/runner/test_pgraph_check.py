"""``prepare_run(pgraph=PATH)`` refuses what the command line's ``-pgraph`` refuses (one
check, swiftnb.runfiles): the script, the restart log, a mapped output, a directory, a
missing directory; before any run directory is made."""

from __future__ import annotations

import pytest

from swiftnb.runner import RunSetupError, prepare_run

pytestmark = pytest.mark.timeout(60)

PROGRAM = """type file;
app (file o) hello () {
  echo "hi" stdout=@o;
}
file out <"out.txt">;
out = hello();
"""


@pytest.mark.parametrize("pgraph, says", [
    ("prog.swift", "is the script"),
    ("out.txt", "is a file the script maps"),
    ("sub", "is a directory"),
    ("nowhere/g.dot", "does not exist"),
])
def test_pgraph_refused(tmp_path, pgraph, says):
    (tmp_path / "prog.swift").write_text(PROGRAM)
    (tmp_path / "sub").mkdir()
    with pytest.raises(RunSetupError, match=says):
        prepare_run("prog.swift", base_dir=str(tmp_path), pgraph=pgraph)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("prog-run")]
    assert (tmp_path / "prog.swift").read_text() == PROGRAM


def test_pgraph_resume_log_refused(tmp_path):
    (tmp_path / "prog.swift").write_text(PROGRAM)
    (tmp_path / "old.rlog").write_text("")
    with pytest.raises(RunSetupError, match="is -resume"):
        prepare_run("prog.swift", base_dir=str(tmp_path), pgraph="old.rlog",
                    resume=str(tmp_path / "old.rlog"))


def test_pgraph_fine(tmp_path):
    (tmp_path / "prog.swift").write_text(PROGRAM)
    handle = prepare_run("prog.swift", base_dir=str(tmp_path), pgraph="g.dot")
    handle.cancel()
