"""Scripts that Swift/K ran and swiftnb refused, through the real ``swiftnb`` command:
a file holding only comments is an empty program (Swift's grammar is ``import*
statement* EOF``; a stray ``;`` stays an error, should-not-work/117), and an app's
``stdout=``/``stdin=``/``stderr=`` may name a bare file variable (its file name)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


def _run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.swift").write_text(text)
    return subprocess.run([SWIFTNB, "s.swift"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize("text", ["// nothing to do\n", "/* a\n block */", "# hash\n", "",
                                  "\n\n  \n"],
                         ids=["line", "block", "hash", "empty", "blank"])
def test_comment_only_file_is_an_empty_program(tmp_path: Path, text: str) -> None:
    p = _run(tmp_path, text)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Final status:" in p.stdout + p.stderr


def test_redirections_to_bare_file_variables(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("from stdin\n")
    p = _run(tmp_path, """type file;
app (file o) greet (string s) { echo s stdout=o; }
app (file o, file e) copy (file i) { sh "-c" "cat; echo oops >&2" stdin=i stdout=o stderr=e; }
(file f) legacy (string s) { app { echo s stdout=f; } }
file a <"a.out"> = greet("direct");
file b <"b.out">;
file err <"b.err">;
(b, err) = copy(a);
file c <"c.out"> = legacy("old form");
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "a.out").read_text() == "direct\n"
    assert (tmp_path / "b.out").read_text() == "direct\n"
    assert (tmp_path / "b.err").read_text() == "oops\n"
    assert (tmp_path / "c.out").read_text() == "old form\n"


def test_redirection_to_a_file_array_is_refused(tmp_path: Path) -> None:
    p = _run(tmp_path, """type file;
app (file o) f (file xs[]) { echo "x" stdout=xs; }
file xs[];
file o <"o.out"> = f(xs);
""")
    assert p.returncode != 0
    assert "s.swift:2:" in p.stdout + p.stderr
    assert "stdout must be a string or a file" in p.stdout + p.stderr
