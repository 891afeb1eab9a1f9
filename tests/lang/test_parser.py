"""Parser: AST shapes and positions for each construct, the fast path agrees with lark,
and syntax errors read as words."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from swiftnb import lang
from swiftnb.lang import ast
from swiftnb.lang import lalr
from swiftnb.lang import parser as P

HERE = Path(__file__).parent


def parse(text: str) -> ast.Program:
    return lang.parse(text, "t.swift")


def only_decl(text: str) -> ast.Declarator:
    st = parse(text).statements[-1]
    assert isinstance(st, ast.VarDecl)
    return st.declarators[-1]


def test_nodes_are_frozen_identity_hashed_and_positioned() -> None:
    prog = parse("int a = 1;\n  trace(a);")
    decl, call = prog.statements
    assert decl.pos == ast.Pos("t.swift", 1, 1)
    assert call.pos == ast.Pos("t.swift", 2, 3)
    assert call.call.args[0].value.pos.column == 9
    with pytest.raises(AttributeError):
        decl.type = None  # type: ignore[misc]
    twin = ast.Name(decl.pos, "a")
    assert twin != ast.Name(decl.pos, "a")  # identity equality
    assert len({twin: 1, ast.Name(decl.pos, "a"): 2}) == 2


def test_types_in_declarations() -> None:
    assert only_decl("float[string] a;").dims == ()
    st = parse("float[string] a;").statements[0]
    assert st.type.name == "float" and st.type.dims[0].name == "string"
    st = parse("int a[int][string], b;").statements[0]
    assert [d.name for d in st.declarators] == ["a", "b"]
    assert [k.name for k in st.declarators[0].dims] == ["int", "string"]
    st = parse("file[][] f;").statements[0]
    assert st.type.dims == (None, None)
    st = parse("int[auto] a;").statements[0]
    assert st.type.dims[0].name == "auto"


def test_type_declarations() -> None:
    prog = parse("type file; type m {} type a int; type s { int x, y[]; file f; };")
    kinds = [(t.name, t.kind) for t in prog.types]
    assert kinds == [("file", "mapped"), ("m", "struct"), ("a", "alias"), ("s", "struct")]
    s = prog.types[3]
    assert [(f.name, f.type.name, f.dims) for f in s.fields] == [
        ("x", "int", ()), ("y", "int", (None,)), ("f", "file", ())]


def test_mappings() -> None:
    d = only_decl('type file; file f <"in.txt">;')
    assert d.mapping.mapper is None and d.mapping.source.value == "in.txt"
    d = only_decl('type file; file f[] <simple_mapper; prefix=strcat("a", 1), suffix=".x">;')
    m = d.mapping
    assert m.mapper == "simple_mapper"
    assert [p.name for p in m.params] == ["prefix", "suffix"]
    assert isinstance(m.params[0].value, ast.Call)
    d = only_decl("type file; file f[] <filesys_mapper;>;")
    assert d.mapping.params == ()
    d = only_decl('type file; file o <"o.txt"> = p(1);')
    assert isinstance(d.init, ast.Call)


def test_expressions_precedence() -> None:
    e = only_decl("boolean b = 1 + 2 * 3 < 7 && !false || 1 %/ 2 == 0;").init
    assert e.op == "||"
    assert e.left.op == "&&" and e.left.left.op == "<"
    assert e.left.left.left.op == "+" and e.left.left.left.right.op == "*"
    assert e.right.op == "==" and e.right.left.op == "%/"
    e = only_decl("int x = 1 - 2 - 3;").init
    assert e.op == "-" and e.left.op == "-"  # left-associative
    e = only_decl("int x = -a[1].f;").init
    assert isinstance(e, ast.UnaryOp) and isinstance(e.operand, ast.Member)


def test_literals() -> None:
    vals = [d.init for d in parse(
        'int a = 42; float b = .5e1; string c = "t\\tq\\"\\\\"; boolean d = false;'
    ).statements[0:4] for d in [d.declarators[0]]]
    assert vals[0].value == 42
    assert vals[1].value == 5.0 and vals[1].text == ".5e1"
    assert vals[2].value == 't\tq"\\'
    assert vals[3].value is False


def test_lvalues_slices_and_filename_forms() -> None:
    call = parse("trace(a[*].f, a.f, @v, @v.f, @(v), @filename(v), filename(v));"
                 ).statements[0].call
    args = [a.value for a in call.args]
    assert isinstance(args[0], ast.Member) and isinstance(args[0].base, ast.StarIndex)
    assert isinstance(args[2], ast.FilenameOf) and isinstance(args[3].target, ast.Member)
    assert isinstance(args[4], ast.FilenameOf)
    assert isinstance(args[5], ast.Call) and args[5].at_syntax
    assert isinstance(args[6], ast.Call) and not args[6].at_syntax


def test_array_literals_and_ranges() -> None:
    e = only_decl("int a[] = [1, 2, 3,];").init
    assert isinstance(e, ast.ArrayLiteral) and len(e.items) == 3
    assert only_decl("int a[] = [];").init.items == ()
    r = only_decl("int a[] = [1:10:3];").init
    assert isinstance(r, ast.Range) and r.step.value == 3
    assert only_decl("int a[] = [a:b];").init.step is None


def test_app_procedure() -> None:
    prog = parse('type file; app (file o, file e) p(file i, int n=3) {\n'
                 '  profile "maxwalltime" = "00:01:00";\n'
                 '  "/bin/cat" "-n" n x+1 @i stdin=@i stdout=@o stderr=@filename(e);\n}')
    app = prog.procedures[0]
    assert isinstance(app, ast.AppProcedure) and not app.legacy
    assert [f.name for f in app.outputs] == ["o", "e"]
    assert app.inputs[1].default.value == 3
    assert app.profiles[0].key.value == "maxwalltime"
    cmd = app.commands[0]
    assert cmd.executable == "/bin/cat"
    assert len(cmd.args) == 4 and isinstance(cmd.args[2], ast.BinaryOp)
    assert cmd.stdin is not None and cmd.stdout is not None and cmd.stderr is not None


def test_legacy_app_and_compound() -> None:
    prog = parse("type m; (m t) greeting(string s) { app { echo s stdout=@t; } }\n"
                 "(m a, m b) two() { a = greeting(\"x\"); b = greeting(\"y\"); }\n"
                 "check(m xs[]) { foreach x in xs { trace(x); } }")
    g, two, check = prog.procedures
    assert isinstance(g, ast.AppProcedure) and g.legacy
    assert isinstance(two, ast.CompoundProcedure) and len(two.outputs) == 2
    assert isinstance(check, ast.CompoundProcedure) and check.outputs == ()
    assert check.inputs[0].dims == (None,)


def test_statements() -> None:
    prog = parse("a[1] = 2; b << 3; f(1, k=2); (x, y = out2) = p(); (int z) = q();\n"
                 "if (c) { } else if (d) { } else { }\n"
                 "switch (n) { case 1: case 2: trace(2); default: trace(0); }\n"
                 "foreach v, i in a { } iterate j { } until (j > 3);\n{ int inner; }")
    kinds = [type(s).__name__ for s in prog.statements]
    assert kinds == ["Assign", "Append", "CallStatement", "MultiAssign", "MultiAssign", "If",
                     "Switch", "Foreach", "Iterate", "Block"]
    call = prog.statements[2].call
    assert [a.name for a in call.args] == [None, "k"]
    ma = prog.statements[3]
    assert [t.formal for t in ma.targets] == [None, "out2"]
    assert prog.statements[4].targets[0].declared_type.name == "int"
    iff = prog.statements[5]
    assert isinstance(iff.orelse.statements[0], ast.If)
    sw = prog.statements[6]
    assert [c.value.value if c.value else None for c in sw.cases] == [1, 2, None]
    fe = prog.statements[7]
    assert (fe.var, fe.index) == ("v", "i")


def test_imports_and_namespaces() -> None:
    prog = parse('namespace "x"; import "lib/defs"; import "other.swift"; trace(1);')
    assert [i.path for i in prog.imports] == ["lib/defs", "other"]


@pytest.mark.parametrize("path", sorted((HERE / "corpus").glob("*/*.swift"))
                         + sorted((HERE / "guide").glob("*.swift")), ids=lambda p: p.name)
def test_fast_path_builds_the_same_ast_as_lark(path: Path) -> None:
    text = path.read_text()
    lark, builder = P._get_parser()
    lang.parse("int warm;")  # builds the fast path
    with P._lock:
        builder.file = "f"
        builder.legacy = {}
        try:
            fast = lalr._fast.parse(text)
        except (lalr._FastPathMiss, P._Problem):
            # the fast path gives up only where lark fails too (syntax errors)
            with pytest.raises(Exception):  # noqa: B017  lark raises several kinds
                lark.parse(text)
            return
        builder.legacy = {}
        slow = lark.parse(text)
    assert repr(fast) == repr(slow)


@pytest.mark.parametrize("text, message", [
    ("int a = 1\nint b;", "t.swift:1:10: expected ';' after statement"),
    ("trace(1 +);", "t.swift:1:10: unexpected ')'; expected an expression"),
    ("int x = (1;", "expected ')'"),
    ("foreach in a { }", "'in' is a reserved word"),
    ("int a[] = [1, 2;", "unexpected ';'; expected ']' or ','"),
    ("if (true) { trace(1); ", "unexpected end of file; expected a statement or '}'"),
    ('string s = "a\\q";', "invalid escape sequence '\\q'"),
])
def test_syntax_errors_in_words(text: str, message: str) -> None:
    with pytest.raises(lang.CompileError) as info:
        parse(text)
    rendered = info.value.render()
    assert message in rendered
    assert "^" in rendered.splitlines()[2]
    assert "Token" not in rendered and "RPAR" not in rendered


@pytest.mark.parametrize("text, message", [
    ("int x = 1;\nif (x = 1) { trace(x); }", "(use '==' to compare)"),
    ('type file;\nfile f <"a.txt";', "expected an operator or '>'"),
    ("string s = 'single';", "strings are written in double quotes"),
])
def test_syntax_error_hints(text: str, message: str) -> None:
    with pytest.raises(lang.CompileError) as info:
        parse(text)
    assert message in info.value.render()


# ---------------------------------------------------------------------------- several errors

def _diags(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(lang.CompileError) as info:
        parse(text)
    return [(d.line, d.column, d.message) for d in info.value.diagnostics]


def test_later_syntax_errors_one_per_top_level_item() -> None:
    text = ("int a = (1 + 2;\n"
            "trace(a);\n"
            'string s = "x" +;\n'
            "foreach i in [1:3] {\n  trace(i)\n}\n"
            "int b = 3;\n")
    got = _diags(text)
    assert [(l, c) for l, c, _ in got] == [(1, 15), (3, 17), (5, 11)]
    assert "expected ')'" in got[0][2] and "expected an expression" in got[1][2]
    assert got[2][2].startswith("expected ';' after statement")
    with pytest.raises(lang.CompileError) as info:
        parse(text)
    rendered = info.value.render().splitlines()
    assert rendered[4] == '    string s = "x" +;'  # each error shows its own source line


@pytest.mark.parametrize("broken", [
    "foreach i in [1:2]\n  trace(i);\n}",             # missing '{': the '}' is not blamed
    "if (true) { trace(1 +); } else { trace(2); }",   # 'else' still belongs to the if
    "iterate j { trace(j +); } until (j == 2);",      # so does 'until (...);'
    "type S { int a; float b };",                     # and the ';' after a struct
    'type file;\nfile f <simple_mapper; prefix="x" suffix=".y">;',  # '<mapper;' is no end
    'string s = "abc;',                               # unterminated string
    "int in = 3;",                                    # reserved word
    'string s = "a"\n  "b";',                         # a continuation is not an item
    "int a = b\n c + d;",
    "}",
])
def test_no_follow_on_errors(broken: str) -> None:
    text = broken + "\ntrace(1);\nint ok = 2;\n"
    assert len(_diags(text)) == 1
    later = text + "trace(3 +);\n"
    got = _diags(later)
    assert len(got) == 2 and got[1][:2] == (len(later.splitlines()), 10)


def test_errors_inside_one_item_count_once_and_eof_ends_the_search() -> None:
    assert len(_diags("(int r) f() {\n  r = 1 +;\n  trace(2 +);\n}\ntrace(3 +);")) == 2
    assert len(_diags("(int r) f() {\n  r = 1;\ntrace(3 +);")) == 1  # unclosed block
    many = "".join(f"trace({i} +);\n" for i in range(30))
    assert len(_diags(many)) == P.MAX_SYNTAX_ERRORS


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted((HERE / "corpus" / "valid").glob("*.swift"))),
       st.lists(st.tuples(st.floats(0, 1), st.sampled_from(
           [";", "}", "{", "(", ")", "=", "<", '"', "int", "in", "+", "else", "\n"])),
           min_size=1, max_size=4))
def test_several_errors_are_ordered_and_the_first_is_unchanged(path: Path, edits: list) -> None:
    chars = list(path.read_text())
    for where, piece in edits:
        chars.insert(int(where * len(chars)), f" {piece} ")
    src = "".join(chars)
    try:
        P._parse_one(src, "t.swift")
        return
    except lang.CompileError as exc:
        first = exc.diagnostics[0]
    got = _diags(src)
    assert got[0] == (first.line, first.column, first.message)
    assert len(got) <= P.MAX_SYNTAX_ERRORS
    assert [g[:2] for g in got] == sorted({g[:2] for g in got})  # strictly increasing


def test_each_forgotten_semicolon_is_reported() -> None:
    got = _diags("int a = 1\nint b = 2\nint c = 3;\ntrace(1 +);")
    assert [(l, c) for l, c, _ in got] == [(1, 10), (2, 10), (4, 10)]
    got = _diags("int a = 1\nforeach i in [1:2] { trace(i) }\n")
    assert got == [(1, 10, "expected ';' after statement, found 'foreach'"),
                   (2, 30, "expected ';' after statement, found '}'")]


def test_reserved_word_message_stays_for_names() -> None:
    assert _diags("int foreach = 3;")[0][2].startswith("'foreach' is a reserved word")
    assert _diags("int a = 1 +\nforeach i in [1:2] { trace(i); }")[0][2].startswith(
        "'foreach' is a reserved word")
