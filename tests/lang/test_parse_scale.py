"""Parsing stays linear in time and memory whatever the script (issue 14, item 6).

Memory is checked with tracemalloc (which also sees the regex engine's backtracking
stack) against a fixed multiple of the source size; time only through the test timeout:
the inputs are sized so that a quadratic scan would not finish in it.  Speed figures
are printed by benchmarks/parse.py, not asserted here.
"""

from __future__ import annotations

import gc
import subprocess
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from swiftnb import lang
from swiftnb.lang import ast
from swiftnb.lang.errors import CompileError

MB = 1_000_000
#: bytes of peak memory allowed per byte of source for text that makes few AST nodes
LINEAR = 20


def _peak(fn: Callable[[], object]) -> tuple[object, int]:
    """fn's result (or the CompileError it raised) and its peak traced memory."""
    lang.parse("int warm_up;")  # the grammar is loaded once per process, not measured
    gc.collect()
    tracemalloc.start()
    try:
        try:
            result: object = fn()
        except CompileError as exc:
            result = exc
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def _literal(program: object) -> str:
    assert isinstance(program, ast.Program), program
    decl = program.statements[0]
    assert isinstance(decl, ast.VarDecl)
    init = decl.declarators[0].init
    assert isinstance(init, ast.StringLiteral)
    return init.value


@pytest.mark.parametrize("size", [1 * MB, 5 * MB])
def test_a_long_string_literal_costs_memory_in_proportion(size: int) -> None:
    text = 'string s = "' + "a" * size + '";\n'
    program, peak = _peak(lambda: lang.parse(text, "big.swift"))
    assert _literal(program) == "a" * size
    assert peak < LINEAR * len(text), f"{peak / len(text):.0f} bytes per source byte"


def test_a_literal_made_of_escapes_costs_memory_in_proportion() -> None:
    text = 'string s = "' + '\\n\\"\\\\x' * (MB // 7) + '";\n'
    program, peak = _peak(lambda: lang.parse(text, "esc.swift"))
    assert _literal(program) == '\n"\\x' * (MB // 7)
    assert peak < LINEAR * len(text), f"{peak / len(text):.0f} bytes per source byte"


def test_an_unterminated_string_at_the_start_of_a_long_line() -> None:
    text = 'int x = 1;\n"' + "a" * MB + "\n"
    err, peak = _peak(lambda: lang.parse(text, "u.swift"))
    assert isinstance(err, CompileError)
    assert str(err.diagnostics[0]).startswith("u.swift:2:1: unterminated string")
    assert peak < LINEAR * len(text), f"{peak / len(text):.0f} bytes per source byte"


def test_an_unterminated_comment_of_a_megabyte() -> None:
    text = "int x = 1;\n/*" + "a b\n" * (MB // 4)
    err, peak = _peak(lambda: lang.parse(text, "c.swift"))
    assert isinstance(err, CompileError)
    assert [str(d) for d in err.diagnostics] == [
        "c.swift:2:1: unterminated comment: '/*' without '*/'"]
    assert peak < LINEAR * len(text), f"{peak / len(text):.0f} bytes per source byte"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("line", [
    'string s = "' + '\\"' * 100_000,  # every quote escaped: the string never ends
    "int y = 2 " + "/* " * 100_000,  # comments opened again and again, never closed
])
def test_a_line_of_unclosed_openers_is_scanned_once(line: str) -> None:
    """The error recovery's scanner used to try each quote or '/*' again up to the end
    of the line or text: quadratic (hours for these 200-300 KB lines)."""
    with pytest.raises(CompileError) as info:
        lang.parse("int x = 1;\n" + line + "\nint z = ;\n", "q.swift")
    first = str(info.value.diagnostics[0])
    assert first.startswith(("q.swift:2:12: unterminated string",
                             "q.swift:2:11: unterminated comment"))


def test_many_syntax_errors_in_a_long_file_cost_memory_in_proportion() -> None:
    text = "".join(f"int v{i} = {i}\n" for i in range(60_000))  # every ';' missing
    err, peak = _peak(lambda: lang.parse(text, "e.swift"))
    assert isinstance(err, CompileError)
    assert len(err.diagnostics) == 10
    assert str(err.diagnostics[0]) == \
        "e.swift:1:11: expected ';' after statement (or ','), found 'int'"
    assert peak < LINEAR * len(text), f"{peak / len(text):.0f} bytes per source byte"


def test_a_line_of_a_million_names_fails_at_its_second() -> None:
    text = "int x = 1;\n" + "a " * (MB // 2) + "\n"
    err, peak = _peak(lambda: lang.parse(text, "n.swift"))
    assert isinstance(err, CompileError)
    assert str(err.diagnostics[0]).startswith(
        "n.swift:2:4: expected ';' after statement (or ',' or '='), found 'a'")
    assert peak < 40 * len(text), f"{peak / len(text):.0f} bytes per source byte"


def test_a_deep_lvalue_used_as_a_type_is_a_syntax_error() -> None:
    with pytest.raises(CompileError) as info:
        lang.parse("a" + ".b" * 200_000 + " x;\n", "t.swift")
    assert str(info.value) == "t.swift:1:1: expected a type, found 'a.b.b.b.b....b.b.b.b'"


def test_an_integer_literal_of_thousands_of_digits() -> None:
    with pytest.raises(CompileError) as info:
        lang.parse("int x = " + "9" * 50_000 + ";\n", "i.swift")
    assert str(info.value) == ("i.swift:1:9: integer literal 999999999999... (50000 digits) "
                               "is too large (int is 32-bit)")
    leading_zeros = lang.parse("int x = " + "0" * 50_000 + "7;\n", "z.swift")
    decl = leading_zeros.statements[0]
    assert isinstance(decl, ast.VarDecl)
    init = decl.declarators[0].init
    assert isinstance(init, ast.IntLiteral) and init.value == 7


def test_deep_nesting_parses_and_an_unclosed_one_is_shown_in_an_excerpt() -> None:
    deep = 100_000
    program = lang.parse("int x = " + "(" * deep + "1" + ")" * deep + ";\n"
                         + "{" * deep + "int y;" + "}" * deep + "\n", "d.swift")
    assert len(program.statements) == 2
    with pytest.raises(CompileError) as info:
        lang.parse("int x = " + "(" * deep + "1;\n", "d.swift")
    assert str(info.value) == f"d.swift:1:{deep + 10}: unexpected ';'; expected ')'"
    shown = info.value.render()
    assert len(shown) < 400, shown[:400]
    assert shown.splitlines()[1].endswith("(((1;")
    assert shown.splitlines()[2].endswith("^")
    assert len(shown.splitlines()[2]) == len(shown.splitlines()[1])


def test_swiftnb_typecheck_of_a_huge_unterminated_string(tmp_path: Path) -> None:
    (tmp_path / "huge.swift").write_text('trace(1);\nstring s = "' + "x" * (5 * MB) + "\n")
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "typecheck", "huge.swift"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 3, r.stderr[:2000]
    assert r.stderr.startswith("huge.swift:2:12: unterminated string (a string must end on "
                               "the line where it starts)\n    string s = \"xxx")
    assert "Traceback" not in r.stderr
    assert len(r.stderr) < 1000
