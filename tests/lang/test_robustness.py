"""Broken input of any shape gives a CompileError with a position, never a traceback."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swiftnb import lang

HERE = Path(__file__).parent
TEXTS = [p.read_text() for p in sorted((HERE / "corpus" / "valid").glob("*.swift"))]
PIECES = [";", "}", "{", "(", ")", "[", "]", "=", "<", ">", "@", "int", "file", "x", '"s"',
          "1", "1.5", ",", ".", "*", "app", "foreach", "in", "if", "type", "<<", ":", "#",
          "/*", '"', "\\", "true", "-", "!", "global", "import", "iterate", "until",
          "switch", "case", "default", "\n", "%%", "&&"]


def _compile(src: str) -> None:
    try:
        lang.compile_source(src, "f.swift", search_path=[str(HERE / "corpus" / "valid")])
    except lang.CompileError as err:
        assert err.diagnostics
        text = err.render()
        assert text.startswith("f.swift:") or "lib/defs.swift:" in text.splitlines()[0]
        assert "Token(" not in text and "__ANON" not in text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TEXTS), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(PIECES),
                                                  st.booleans()), min_size=1, max_size=3))
def test_mutated_scripts_fail_cleanly(text: str, edits: list) -> None:
    chars = list(text)
    for where, piece, delete in edits:
        i = int(where * len(chars))
        if delete and chars:
            del chars[min(i, len(chars) - 1)]
        else:
            chars.insert(i, f" {piece} ")
    _compile("".join(chars))


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("abint =;{}()[]<>\"'@.,:+-*/%!&|#\n\\0123")),
               max_size=60))
def test_arbitrary_text_fails_cleanly(src: str) -> None:
    _compile(src)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TEXTS), st.lists(st.tuples(st.floats(0, 1), st.sampled_from(
    PIECES + [">=", "<=", ".5", "1e3", "\t", "// c\n", "/* c */", "stdout", "profile"]),
    st.booleans()), min_size=1, max_size=3))
def test_fast_path_never_disagrees_with_lark(text: str, edits: list) -> None:
    """Whatever the fast parser accepts, lark accepts too, with the same AST."""
    from swiftnb.lang import lalr
    from swiftnb.lang import parser as P

    chars = list(text)
    for where, piece, delete in edits:
        i = int(where * len(chars))
        if delete and chars:
            del chars[min(i, len(chars) - 1)]
        else:
            chars.insert(i, piece)
    src = "".join(chars)
    lark, builder = P._get_parser()
    lang.parse("int warm;")
    with P._lock:
        builder.file = "f"
        builder.legacy = {}
        try:
            fast = lalr._fast.parse(src)
        except (lalr._FastPathMiss, P._Problem):
            return
        builder.legacy = {}
        slow = lark.parse(src)
        assert repr(fast) == repr(slow)


def test_long_operator_chains_check() -> None:
    src = "string s = " + " + ".join(['"x"'] * 3000) + ";\ntrace(s);"
    checked = lang.compile_source(src, "long.swift")
    assert "program is valid" in checked.summary()


def test_filename_of_an_expression_is_a_located_error() -> None:
    """``@( ... )`` holds a variable; an expression there (found by fuzzing trunk's own
    scripts) was an AttributeError from the parser."""
    for src, column in (("trace(@(1+2));", 9), ('int a = @("1");', 11), ("int a = @(12);", 11)):
        try:
            lang.compile_source(src, "f.swift")
        except lang.CompileError as err:
            [d] = err.diagnostics
            assert (d.line, d.column) == (1, column), src
            assert d.message.startswith("expected a variable after '@', found an expression")
        else:
            raise AssertionError(f"{src} compiled")
    lang.compile_source('type file;\nfile a[] <simple_mapper; prefix="q">;\n'
                        "trace(@(a[1]), @a[2], @(a), @filename(a[0]));", "f.swift")
