"""Completion, inspection, is_complete, the lexer and the cell session, without a kernel."""

from __future__ import annotations

import pytest
from pygments.lexers import get_lexer_by_name
from pygments.token import Comment, Keyword, Name, String

from swiftnb import lang
from swiftnb.kernel.assist import complete, inspect, is_complete
from swiftnb.kernel.kernel import split_magics
from swiftnb.kernel.session import SwiftSession, python_type
from swiftnb.lang import ast as A


@pytest.fixture
def session(tmp_path):
    s = SwiftSession(str(tmp_path))
    cell = s.compile_cell('type file;\n/* Copies a file.\n   Slowly. */\n'
                          'app (file o) copy(file i) { cp @i @o; }\n'
                          '// the count\nint count = 3;\n')
    s.commit(cell)
    return s


def test_complete_keywords_builtins_declared_and_cell_names(session):
    assert complete("fore", 4)["matches"] == ["foreach"]
    assert complete("x = strc", 8)["matches"] == ["strcat", "strcut"]
    assert "copy" in complete("co", 2, session)["matches"]
    assert complete("float total = 1.0; tot", 22)["matches"] == ["total"]
    r = complete("file f <Simple", 14)
    assert r["matches"] == ["SimpleMapper"] and r["cursor_start"] == 8
    assert "SimpleMapper" not in complete("trace(Simple", 12)["matches"]
    assert complete("@filen", 6)["matches"] == ["@filename", "@filenames"]


def test_complete_struct_fields(tmp_path):
    s = SwiftSession(str(tmp_path))
    cell = s.compile_cell("type point { int x; int y; float weight; }\npoint p;\np.x = 1;")
    s.commit(cell)
    from swiftnb.kernel.session import VarEntry, top_declared

    s.vars["p"] = VarEntry("p", dict(top_declared(cell.cell_ast))["p"], None)
    assert complete("trace(p.", 8, s)["matches"] == ["x", "y", "weight"]
    assert complete("trace(p.w", 9, s)["matches"] == ["weight"]


def test_inspect_shows_signature_and_doc(session):
    r = inspect("f = copy(g);", 5, session)
    assert r["found"]
    text = r["data"]["text/plain"]
    assert text.startswith("app (file o) copy (file i)")
    assert "Copies a file.\nSlowly." in text
    assert "string strcat(any...)" in inspect("strcat", 3)["data"]["text/plain"]
    assert "regexp" in inspect("RegexpMapper", 2)["data"]["text/plain"]
    assert not inspect("nothing_here", 3)["found"]


@pytest.mark.parametrize("code,status", [
    ("int x = 1;", "complete"),
    ("foreach v in [1:2] {\n trace(v);\n}", "complete"),
    ("foreach v in [1:2] {", "incomplete"),
    ('trace("unclosed', "incomplete"),
    ("int x = 1", "incomplete"),
    ("/* open", "incomplete"),
    ("}", "invalid"),
    ("int x = = 3;", "invalid"),
    ("%python import os", "complete"),
])
def test_is_complete(code, status):
    assert is_complete(code)["status"] == status


def test_is_complete_indents_by_depth():
    assert is_complete("foreach v in a {\n if (v > 1) {")["indent"] == "        "


def test_lexer_is_registered_and_tokenizes():
    lexer = get_lexer_by_name("swift-script")
    tokens = list(lexer.get_tokens('app (file o) f() { echo "hi" stdout=@o; } // c\n'))
    kinds = {t for t, _ in tokens}
    assert Keyword in kinds and String.Double in kinds and Comment.Single in kinds
    assert (Name.Builtin, "@o") in tokens


def test_split_magics_keeps_line_numbers():
    magics, text = split_magics("%python x = 1\nint y = 2;\n  %who\ntrace(y);")
    assert magics == [("python", "x = 1"), ("who", "")]
    assert text.split("\n") == ["", "int y = 2;", "", "trace(y);"]


def test_session_replaces_and_forgets(session):
    cell = session.compile_cell("int count = 4;\ntrace(count);")
    assert cell.declared_vars == ["count"] and "count" not in cell.seed
    session.reset()
    with pytest.raises(lang.CompileError, match="count"):
        session.compile_cell("trace(count);")


def test_python_types():
    pos = A.Pos("cell", 0, 0)
    spell = lambda v: (lambda t: t and (t.name, len(t.dims)))(python_type(v, pos))  # noqa: E731
    assert spell(True) == ("boolean", 0)
    assert spell(3) == ("int", 0)
    assert spell(2.5) == ("float", 0)
    assert spell("s") == ("string", 0)
    assert spell([1, 2]) == ("int", 1)
    assert spell([1, 2.5]) == ("float", 1)
    assert spell({"a": 1}) == ("int", 1)
    assert spell(object()) is None and spell([]) is None and spell(2**40) is None


def test_install_writes_a_kernelspec(tmp_path):
    import json
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "swiftnb.kernel", "install", "--prefix",
                        str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    spec = json.loads((tmp_path / "share/jupyter/kernels/swiftnb/kernel.json").read_text())
    assert spec["argv"][:3] == [sys.executable, "-m", "swiftnb.kernel"]
    assert spec["language"] == "swift" and spec["interrupt_mode"] == "signal"


def test_imported_procedures_persist(tmp_path):
    (tmp_path / "mylib.swift").write_text('app (file o) hello() { echo "lib" stdout=@o; }\n')
    s = SwiftSession(str(tmp_path))
    for _ in range(2):  # importing again replaces, it does not clash
        cell = s.compile_cell('import "mylib";\ntype file;\n')
        s.commit(cell)
    assert "hello" in s.procs
    cell = s.compile_cell('type file;\nfile g <"g.txt"> = hello();')
    assert "hello" in cell.checked.procedures


def test_session_keeps_overloads_by_input_types_aliases_followed(tmp_path):
    """A later cell's overload is kept beside the earlier ones; the same mandatory input
    types (through a type alias, with an optional input more) replace that one only."""
    s = SwiftSession(str(tmp_path))
    for text in ('type count int;\n(string r) k(count c) { r = "count"; }',
                 '(string r) k(float x) { r = "float"; }',
                 '(string r) k(int i, string extra = "") { r = "int"; }'):
        s.commit(s.compile_cell(text))
    assert [line for line in s.describe().splitlines() if " k " in line] == [
        "(string r) k (int i, string extra)", "(string r) k (float x)"]
    cell = s.compile_cell("trace(k(1), k(1.5));")
    assert [(p.name, p.inputs[0].name) for p in cell.checked.program.procedures] == [
        ("k", "i"), ("k", "x")]
