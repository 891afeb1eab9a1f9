"""An error collecting a dynamic output (the files an app made, found by the output
array's mapper after the call) fails the call with a message naming it (issue 24): the
array is not closed as if the app had made nothing."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(60)

MAKES_A_LOOP = """type file;
app (file o[]) make () {
  sh "-c" "echo a > outd/a.txt && ln -s b.txt outd/b.txt";
}
file outs[] <filesys_mapper; location="outd", suffix=".txt">;
outs = make();
foreach x in outs { trace(filename(x)); }
"""


def test_collect_error_fails_the_call(swift, tmp_path):
    (tmp_path / "outd").mkdir()
    r = swift(MAKES_A_LOOP)
    assert not r.outcome.ok
    text = "\n".join(r.outcome.errors)
    assert "outs" in text and "outd/b.txt" in text, text
    assert "Too many levels of symbolic links" in text, text


def test_collect_fine(swift, tmp_path):
    (tmp_path / "outd").mkdir()
    r = swift(MAKES_A_LOOP.replace(" && ln -s b.txt outd/b.txt", " && echo b > outd/b.txt"))
    assert r.outcome.ok, r.outcome.errors
    assert sorted(r.lines) == ["SwiftScript trace: outd/a.txt", "SwiftScript trace: outd/b.txt"]
