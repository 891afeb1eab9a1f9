"""Trunk's initializers ``{field: value}`` (a struct) and ``{key: value}`` (a sparse
array), through the real ``swiftnb`` command: values, typing by the context, and the
compile errors at file:line:col."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def swiftnb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.swift").write_text(text)
    return swiftnb(tmp_path, "run", "s.swift")


def traces(tmp_path: Path, text: str) -> list[str]:
    """The trace lines of a run that must succeed, sorted (independent traces race)."""
    r = run(tmp_path, text)
    assert r.returncode == 0, r.stderr
    return sorted(r.stdout.splitlines())


def test_struct_values_from_every_context(tmp_path: Path) -> None:
    lines = traces(tmp_path, """type pt { int x; float y; }
type box { string label; pt corner; int[] sizes; }
(string r) show(pt p) { r = p.x + "/" + p.y; }
int later;
pt a = {x: later, y: 3};
later = 7;
int[] three = [1, 2, 3];
box b = {label: "b", corner: {x: 1, y: 2.5}, sizes: three};
pt[] row = [{x: 10, y: 1}, {x: 20, y: 2}];
pt[auto] more;
more << {x: 30, y: 0.5};
pt c;
c = {y: 8, x: 9};
trace(a.x, a.y);
trace(b.label, b.corner.x, b.corner.y, b.sizes[2]);
trace(row[1].x, row[0].y, show({x: 4, y: 5.5}));
foreach p in more { trace(p.x, p.y); }
trace(c.x, c.y);
""")
    assert lines == sorted([
        "SwiftScript trace: 7, 3.0",
        "SwiftScript trace: b, 1, 2.5, 3",
        "SwiftScript trace: 20, 1.0, 4/5.5",
        "SwiftScript trace: 30, 0.5",
        "SwiftScript trace: 9, 8.0",
    ])


def test_sparse_array_values(tmp_path: Path) -> None:
    lines = traces(tmp_path, """string[string] opts = {"separator": ",", "quote": "'"};
float[int] f = {10: 1, 2: 2.5};
int[int] none = {};
foreach v, k in {"b": 2, "a": 1} { trace(k, v); }
trace(opts["separator"], opts["quote"], length(opts));
trace(f);
trace(length(none));
""")
    assert lines == sorted([
        "SwiftScript trace: a, 1",
        "SwiftScript trace: b, 2",
        "SwiftScript trace: ,, ', 2",
        "SwiftScript trace: {2 = 2.5, 10 = 1.0}",
        "SwiftScript trace: 0",
    ])


def test_a_key_given_twice_fails_the_run(tmp_path: Path) -> None:
    r = run(tmp_path, 'int[string] m = {"a": 1, "a": 2};\ntrace(m["a"]);\n')
    assert r.returncode == 2
    assert "the array initializer gives the key a twice" in r.stderr


@pytest.mark.parametrize("line, expected", [
    ('P p = {a: "x", c: 1};',
     ["s.swift:2:16: invalid field 'c' for type 'P' (its fields: a, b)",
      "s.swift:2:7: missing fields in structure initializer: [b] (type 'P')"]),
    ('P p = {a: "x", b: "no"};',
     ["s.swift:2:19: Wrong type for field 'b' of type 'P': expected int, got string"]),
    ('P p = {a: "x", b: 1, a: "y"};', ["s.swift:2:22: duplicate field: 'a'"]),
    ("int i = {a: 1};",
     ["s.swift:2:9: cannot assign a structure to a non-structure (a value of type int is "
      "expected here)"]),
    ("trace({a: 1});", ["s.swift:2:7: cannot infer the type of this structure initializer"]),
    ('string[string] m = {"k": 1};',
     ["s.swift:2:26: Wrong type in array initializer: expected string, got int"]),
    ("int[string] m = {1: 2};",
     ["s.swift:2:18: Wrong key type in array initializer: expected string, got int"]),
    ('P p = {a: "x", 3: 4};',
     ["s.swift:2:16: invalid field name in structure initializer"]),
    ("(int r) f(int a = 1 + 2, int[string] o = {}) { r = a; }",
     ["s.swift:2:42: default values must be constants"]),
])
def test_errors_name_the_place(tmp_path: Path, line: str, expected: list[str]) -> None:
    (tmp_path / "s.swift").write_text("type P { string a; int b; }\n" + line + "\n")
    r = swiftnb(tmp_path, "typecheck", "s.swift")
    assert r.returncode == 3, r.stdout
    for text in expected:
        assert text in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
