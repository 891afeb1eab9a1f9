"""`swiftnb typecheck` and `swiftnb run -typecheck`: real subprocesses, real files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GOOD = 'type file;\napp (file o) greet(string s) { echo s stdout=@o; }\nfile f <"f.txt"> = greet("hi");\n'
SEMANTIC = "int a;\na = b;\n"
SYNTAX = "int a = 1\nint b = 2;\n"


def swiftnb(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("form", [["typecheck"], ["run", "-typecheck"]])
def test_exit_codes(tmp_path: Path, form: list[str]) -> None:
    (tmp_path / "good.swift").write_text(GOOD)
    (tmp_path / "semantic.swift").write_text(SEMANTIC)
    (tmp_path / "syntax.swift").write_text(SYNTAX)

    ok = swiftnb(*form, "good.swift", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "program is valid" in ok.stdout

    bad = swiftnb(*form, "semantic.swift", cwd=tmp_path)
    assert bad.returncode == 3
    assert bad.stderr.startswith("semantic.swift:2:5: Variable b was not declared in this scope.")
    assert "Traceback" not in bad.stderr

    syn = swiftnb(*form, "syntax.swift", cwd=tmp_path)
    assert syn.returncode == 3
    assert "syntax.swift:1:10: expected ';' after statement" in syn.stderr
    assert "Traceback" not in syn.stderr

    missing = swiftnb(*form, "nothere.swift", cwd=tmp_path)
    assert missing.returncode == 4
    assert "SwiftScript program does not exist: nothere.swift" in missing.stderr


def test_warnings_go_to_stderr(tmp_path: Path) -> None:
    (tmp_path / "w.swift").write_text('string s = @strcat("a", "b");\ntrace(s);\n')
    res = swiftnb("typecheck", "w.swift", cwd=tmp_path)
    assert res.returncode == 0
    assert res.stderr.strip() == "Warning: The @ syntax for function invocation is deprecated"


def test_summary_counts_each_overload(tmp_path: Path) -> None:
    (tmp_path / "o.swift").write_text(
        "type file;\n(int r) f(int x) { r = x; }\n(float r) f(float x) { r = x; }\n"
        "app (file o) g(int x) { echo x stdout=@o; }\n"
        "app (file o) g(string x) { echo x stdout=@o; }\n"
        "int a, b, c;\na = 1; b = 2; c = f(a);\n")
    r = swiftnb("typecheck", "o.swift", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "4 procedures (2 app, 2 compound)" in r.stdout
    assert "3 variables" in r.stdout
