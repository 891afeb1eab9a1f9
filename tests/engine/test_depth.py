"""Deep programs run (issue 14, items 4 and 5): the engine does not use Python stack in
proportion to Swift call depth or to the nesting of expressions, blocks and statements.

Each script goes through the real ``swiftnb`` command, so the static checks, the
compiler and the engine are all on the path; an unbounded recursion ends in a Swift
error that names the procedure and the line, never in a Python traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")
N = 5000


def _run(tmp_path: Path, source: str, *options: str) -> subprocess.CompletedProcess:
    script = tmp_path / "deep.swift"
    script.write_text(source)
    return subprocess.run([SWIFTNB, *options, str(script)], cwd=tmp_path, text=True,
                          capture_output=True, timeout=240)


def _traces(out: str) -> list[str]:
    return [ln.split("SwiftScript trace: ", 1)[1] for ln in out.splitlines()
            if "SwiftScript trace: " in ln]


def _no_traceback(p: subprocess.CompletedProcess) -> None:
    text = p.stdout + p.stderr
    assert "Traceback" not in text and "RecursionError" not in text, text[-2000:]


DEEP = {
    "sum": ("int x = " + " + ".join(["1"] * N) + ";\ntrace(x);\n", str(N)),
    "float sum": ("float x = " + " + ".join(["0.5"] * N) + ";\ntrace(x);\n", str(N / 2)),
    "string concatenation": ("string x = " + " + ".join(['"a"'] * N)
                             + ";\ntrace(length(x));\n", str(N)),
    "unary minus": ("int x = " + "-" * N + "7;\ntrace(x);\n", "7"),
    "nested calls": ("int x = " + "toInt(" * N + "3" + ")" * N + ";\ntrace(x);\n", "3"),
    "nested parentheses": ("int x = " + "(" * N + "4" + ")" * N + ";\ntrace(x);\n", "4"),
    "nested blocks": ("{" * N + "trace(5);" + "}" * N + "\n", "5"),
    "nested ifs": ("if (true) {" * N + "trace(6);" + "}" * N + "\n", "6"),
    "nested else": ("if (false) {} else {" * N + "trace(8);" + "}" * N + "\n", "8"),
    "nested switches": ("switch (1) { case 1: " * N + "trace(9);" + "}" * N + "\n", "9"),
    "nested foreach": ("".join(f"foreach i{k} in [0:0] {{" for k in range(N))
                       + "trace(10);" + "}" * N + "\n", "10"),
    "nested iterate": ("".join(f"iterate i{k} {{" for k in range(2000)) + "trace(11);"
                       + "".join(f"}} until (i{k} >= 0);" for k in reversed(range(2000)))
                       + "\n", "11"),
    "index chain": ("int a[] = [0, 0];\nint x = " + "a[" * N + "1" + "]" * N
                    + ";\ntrace(x);\n", "0"),
    "long expression in a procedure": (
        "(int r) f(int a) { r = " + " + ".join(["a"] * N) + "; }\ntrace(f(2));\n",
        str(2 * N)),
    "nested user calls": ("(int r) inc(int a) { r = a + 1; }\nint x = " + "inc(" * 2000
                          + "0" + ")" * 2000 + ";\ntrace(x);\n", "2000"),
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deeply_nested_program_runs(tmp_path: Path, name: str) -> None:
    source, expected = DEEP[name]
    p = _run(tmp_path, source)
    _no_traceback(p)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    assert _traces(p.stdout) == [expected]


def test_recursion_100000_deep_runs(tmp_path: Path) -> None:
    p = _run(tmp_path, """
(int r) down(int n) {
  if (n == 0) { r = 0; } else { r = down(n - 1) + 1; }
}
trace(down(100000));
""")
    _no_traceback(p)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _traces(p.stdout) == ["100000"]


def test_mutual_recursion_100000_deep_runs(tmp_path: Path) -> None:
    p = _run(tmp_path, """
(boolean r) even(int n) { if (n == 0) { r = true; } else { r = odd(n - 1); } }
(boolean r) odd(int n) { if (n == 0) { r = false; } else { r = even(n - 1); } }
trace(even(100000), odd(100001));
""")
    _no_traceback(p)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _traces(p.stdout) == ["true, true"]


def test_unbounded_recursion_is_a_swift_error_naming_procedure_and_line(tmp_path: Path) -> None:
    p = _run(tmp_path, """int start = 0;

(int r) forever(int n) {
  r = forever(n + 1);
}
trace(forever(start));
""")
    _no_traceback(p)
    assert p.returncode == 2, p.stdout[-1000:] + p.stderr[-2000:]
    text = p.stdout + p.stderr
    assert "Recursion too deep" in text
    assert "forever (declared on line 3)" in text
    assert "deep.swift, line: 4" in text


def test_unbounded_mutual_recursion_is_a_swift_error(tmp_path: Path) -> None:
    p = _run(tmp_path, """
(int r) ping(int n) { r = pong(n + 1); }
(int r) pong(int n) { r = ping(n + 1); }
trace(ping(0));
""")
    _no_traceback(p)
    assert p.returncode == 2
    text = p.stdout + p.stderr
    assert "Recursion too deep" in text and ("ping (declared on line 2)" in text
                                            or "pong (declared on line 3)" in text)


def test_a_program_deeper_than_the_compiler_allows_is_a_located_error(tmp_path: Path) -> None:
    """Nesting beyond what even the deep stack holds is refused cleanly (exit 1, the
    checker's message), not a crash."""
    depth = 400_000
    p = _run(tmp_path, "{" * depth + "trace(1);" + "}" * depth + "\n")
    _no_traceback(p)
    assert p.returncode != 0 and p.returncode < 128, p.returncode
    assert "nests too deeply" in p.stdout + p.stderr


def test_typecheck_of_a_5000_term_expression(tmp_path: Path) -> None:
    p = _run(tmp_path, "int x = " + " * ".join(["1"] * N) + ";\ntrace(x);\n", "-typecheck")
    _no_traceback(p)
    assert p.returncode == 0, p.stderr[-2000:]


DEEP_LIST = """
type T { int v; T[] next; }
(T r) build(int n) {
  r.v = n;
  if (n > 0) { r.next[0] = build(n - 1); }
}
(int s) total(T t) {
  if (t.v == 0) { s = 0; } else { s = t.v + total(t.next[0]); }
}
T a = build(DEPTH);
"""


def test_a_structure_a_recursion_builds_thousands_deep(tmp_path: Path) -> None:
    """Data nests as deep as a recursion makes it: the value closes, is read to the
    bottom, copied whole (into a variable and into an array), traced and converted."""
    depth = 3000
    p = _run(tmp_path, DEEP_LIST.replace("DEPTH", str(depth)) + """
T b = a;
T c[];
c[0] = a;
trace(total(a), total(b), total(c[0]));
trace(a);
""")
    _no_traceback(p)
    assert p.returncode == 0, p.stdout[-1000:] + p.stderr[-2000:]
    total = str(depth * (depth + 1) // 2)
    assert sorted(_traces(p.stdout)) == sorted([f"{total}, {total}, {total}", "a:T - Closed"])


def test_a_deep_structure_as_python_values(swift) -> None:
    """``Run.values`` (what ``%%swift`` hands to Python) of a value 3000 levels deep."""
    depth = 3000
    r = swift(DEEP_LIST.replace("DEPTH", str(depth)), timeout=120)
    assert r.outcome.ok, r.outcome.errors
    level, seen = r.run.values["a"], 0
    while level["next"]:
        assert level["v"] == depth - seen
        level, seen = level["next"][0], seen + 1
    assert (seen, level["v"]) == (depth, 0)


@pytest.mark.parametrize("source", [
    "trace(" + "[" * 1000 + "1" + "]" * 1000 + ");\n",
    ("type T { int v; T[] kids; }\nT a;\na.v = 0;\na" + ".kids[0]" * 1000 + ".v = 5;\n"
     "trace(a" + ".kids[0]" * 1000 + ".v);\n"),
], ids=["array literal", "path"])
def test_values_nested_too_deeply_are_a_swift_error(tmp_path: Path, source: str) -> None:
    """An array literal or a path written a thousand levels deep in the source (unlike
    data a recursion builds) is still evaluated recursively: it ends the run with a plain
    error and exit 2, not as an internal error."""
    p = _run(tmp_path, source)
    _no_traceback(p)
    text = p.stdout + p.stderr
    assert p.returncode == 2, text[-2000:]
    assert "a value of the script nests too deeply to be evaluated" in text
    assert "internal error" not in text
