"""Overloading by argument types (Swift/K trunk), through the real ``swiftnb`` command:
which declaration a call runs, and the compile errors for ambiguous, unmatched and
repeated declarations (file:line:col, candidates listed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


def swiftnb(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


KINDS = '''(string r) kind(int x) { r = "int"; }
(string r) kind(float x) { r = "float"; }
(string r) kind(string x) { r = "string"; }
(string r) kind(int x, int y) { r = "two ints"; }
(string r) kind(float x, string y, string z = "!") { r = strcat("float and ", y, z); }
'''


def test_each_call_runs_its_declaration(tmp_path: Path) -> None:
    (tmp_path / "s.swift").write_text(
        KINDS + 'trace(kind(1), kind(1.5), kind("s"), kind(1, 2), kind(2.5, y = "kw"));\n'
        "string w = kind(3);\ntrace(w);\n")
    r = swiftnb(tmp_path, "run", "s.swift")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("SwiftScript trace: int, float, string, two ints, float and kw!\n"
                        "SwiftScript trace: int\n")


def test_widening_picks_the_only_float_declaration(tmp_path: Path) -> None:
    (tmp_path / "s.swift").write_text(
        '(float r) half(float x) { r = x / 2; }\n(string r) half(string s) { r = s; }\n'
        "trace(half(3));\n")
    r = swiftnb(tmp_path, "run", "s.swift")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "SwiftScript trace: 1.5\n"


def test_user_procedure_hides_builtin_only_where_it_matches(tmp_path: Path) -> None:
    (tmp_path / "s.swift").write_text(
        '(string r) strcat(string a) { r = "USER"; }\ntrace(strcat("x"), strcat("x", 1));\n')
    r = swiftnb(tmp_path, "run", "s.swift")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "SwiftScript trace: USER, x1\n"


@pytest.mark.parametrize("text, expected", [
    ("(float r) g(float a, int b) { r = a; }\n(float r) g(int a, float b) { r = b; }\n"
     "float z = g(1, 2);\n",
     ["s.swift:3:11: Ambiguous call g(int, int): it matches, with int widened to float, "
      "each of:", "(float r) g(float a, int b) at s.swift:1",
      "(float r) g(int a, float b) at s.swift:2"]),
    (KINDS + "trace(kind(true));\n",
     ["s.swift:6:7: No function or procedure kind matches the argument types "
      "kind(boolean). Candidates:", "(string r) kind(int x) at s.swift:1",
      '(string r) kind(float x, string y, string z = ...) at s.swift:5']),
    ("(int r) f(int a) { r = 1; }\n(int r) f(int b, string c = \"x\") { r = 2; }\n",
     ["s.swift:2:1: Illegal redefinition of procedure attempted for f (the same input "
      "types as (int r) f(int a) at s.swift:1)"]),
])
def test_errors(tmp_path: Path, text: str, expected: list[str]) -> None:
    (tmp_path / "s.swift").write_text(text)
    r = swiftnb(tmp_path, "typecheck", "s.swift")
    assert r.returncode == 3
    for line in expected:
        assert line in r.stderr
    assert "Traceback" not in r.stderr
