"""Checker: what CheckedProgram tells the engine, warnings, several errors, imports."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from swiftnb import lang
from swiftnb.lang import ast
from swiftnb.lang import types as T


def check(text: str) -> lang.CheckedProgram:
    return lang.compile_source(text, "t.swift", search_path=[])


def errors(text: str) -> list[str]:
    with pytest.raises(lang.CompileError) as info:
        check(text)
    return [d.message for d in info.value.diagnostics]


def walk(node):
    yield node
    for name in getattr(node, "__slots__", ()):
        value = getattr(node, name, None)
        items = value if isinstance(value, tuple) else (value,)
        for v in items:
            if isinstance(v, ast.Node):
                yield from walk(v)


def test_types_of_declarations_and_expressions() -> None:
    c = check('type file; type S { int a; file f[]; }\n'
              'S s; float[string] m; int[auto] q; file fs[] <filesys_mapper; pattern="*">;\n'
              'string x = "a" + 1; float y = 7 / 2; int z = 7 %/ 2;\n'
              'S ss[]; int[] ns = ss[*].a; int ms[] = ss.a;')
    decls = {d.name: d for st in c.program.statements if isinstance(st, ast.VarDecl)
             for d in st.declarators}
    S = c.types["S"]
    assert isinstance(S, T.StructType) and list(S.fields) == ["a", "f"]
    assert S.fields["f"] == T.ArrayType(T.MappedType("file"))
    assert c.type_of(decls["s"]) is S
    assert c.type_of(decls["m"]) == T.ArrayType(T.FLOAT, T.STRING)
    assert c.type_of(decls["q"]) == T.ArrayType(T.INT, T.AUTO)
    assert str(c.type_of(decls["fs"])) == "file[]"
    assert c.type_of(decls["x"].init) == T.STRING
    assert c.type_of(decls["y"].init) == T.FLOAT
    assert c.type_of(decls["z"].init) == T.INT
    assert c.type_of(decls["ns"].init) == T.ArrayType(T.INT)
    assert c.type_of(decls["ms"].init) == T.ArrayType(T.INT)


def test_symbols_and_scopes() -> None:
    c = check("global int g = 1;\n(int r) f(int a) { int t = a + g; r = t; }\n"
              "int top = f(2);\nforeach v, k in [1:3] { trace(v, k); }")
    assert set(c.globals) == {"g"}
    names = [n for n in walk(c.program) if isinstance(n, ast.Name)]
    syms = {(n.name, c.symbol_of(n).kind) for n in names if n.name in ("a", "g", "t", "v", "k")}
    assert syms == {("a", "input"), ("g", "global"), ("t", "var"), ("v", "foreach_value"),
                    ("k", "foreach_key")}
    fe = c.program.statements[-1]
    v, k = c.loop_symbols(fe)
    assert v.type == T.INT and k.type == T.INT


def test_bindings_resolve_keywords_and_defaults() -> None:
    c = check('type file; app (file o) p(string left="hi", string right) { echo left right '
              'stdout=@o; }\nfile x <"x"> = p(right="there");\ntrace(strcat("a", 1, 2.0));')
    decl = c.program.statements[0].declarators[0]
    b = c.binding(decl.init)
    assert b.signature.kind == "app" and b.signature.is_app
    assert [(p.name, e) for p, e in b.inputs][0] == ("left", None)
    assert b.inputs[1][1].value == "there"
    call = c.program.statements[1].call
    tb = c.binding(call)
    assert tb.signature.kind == "builtin" and tb.canonical_name == "trace"
    inner = tb.args[0]
    sb = c.binding(inner)
    assert sb.signature.variadic and len(sb.args) == 3
    assert set(c.builtins_used) == {"trace", "strcat"}
    assert c.procedures["p"].outputs[0].type == T.MappedType("file")


def test_writers_and_writes_in() -> None:
    c = check("type file; app (file o) gen(int i) { gen i @o; }\n"
              "(file a, file b) two() { a = gen(1); b = gen(2); }\n"
              "file outs[]; int[auto] q; file x, y; int n;\n"
              "foreach i in [0:3] { if (i > 1) { outs[i] = gen(i); } q << i; }\n"
              "(x, y) = two(); n = 3;")
    syms = {s.name: s for s in c.symbols if s.kind == "var"}
    assert [w.kind for w in c.writers(syms["outs"])] == ["element"]
    assert [w.kind for w in syms["q"].writers] == ["append"]
    assert [w.kind for w in syms["x"].writers] == ["output"]
    assert [w.kind for w in syms["n"].writers] == ["whole"]
    fe = next(s for s in c.program.statements if isinstance(s, ast.Foreach))
    assert c.writes_in(fe) == {syms["outs"], syms["q"]}
    inner_if = fe.body.statements[0]
    assert c.writes_in(inner_if) == {syms["outs"]}
    ma = next(s for s in c.program.statements if isinstance(s, ast.MultiAssign))
    pairs = c.output_targets(ma)
    assert [p.name for p, _ in pairs] == ["a", "b"]


def test_exclusive_branches_may_each_assign() -> None:
    check("int x = 1; int y; if (x > 0) { y = 1; } else { y = 2; }\n"
          "int z; switch (x) { case 1: z = 1; default: z = 2; }")


def test_writes_in_a_loop_are_errors_or_warnings_as_in_096() -> None:
    assert errors("int x; foreach i in [0:3] { x = i; }")[0].startswith(
        "variable x is not writeable in this scope")
    c = check("int x; foreach i in [0:3] { if (i == 2) { x = i; } }")
    assert c.warnings == ["Variable x, defined on line 1, might have multiple conflicting "
                          "writers"]
    assert check("int a[]; type T { int f; } T t; foreach i in [0:3] { a[i] = i; }\n"
                 "iterate j { int y = j; } until (j > 2);").warnings == []


def test_deprecation_warnings_once() -> None:
    c = check('int a = toint("1"); int b = toint("2"); string s = @strcat("a"); '
              'string t = @strcat("b");')
    assert c.warnings == ["Function toint is deprecated",
                          "The @ syntax for function invocation is deprecated"]


def test_several_errors_in_one_run_sorted_by_position() -> None:
    msgs = errors("int a = u;\nint b = \"s\";\nnope();\nif (1) { }")
    assert msgs == ["Variable u was not declared in this scope.",
                    "You cannot assign value of type string to a variable of type int",
                    "No function or procedure 'nope' found.",
                    "Condition in if statement has to be of boolean type."]


def test_one_mistake_one_message() -> None:
    # the undeclared name is reported once, not again by every expression using it
    assert errors("int a = u + 1; int b = a * 2;") == [
        "Variable u was not declared in this scope."]


def test_user_procedure_overrides_builtin() -> None:
    c = check('(string r) strcat(string a) { r = "USER"; }\ntrace(strcat("x"));')
    call = c.program.statements[0].call.args[0].value
    assert c.binding(call).signature.kind == "compound"


def test_render_has_caret_under_column() -> None:
    with pytest.raises(lang.CompileError) as info:
        check("int a;\na = b + 1;")
    lines = info.value.render().splitlines()
    assert lines[0] == "t.swift:2:5: Variable b was not declared in this scope."
    assert lines[1].strip() == "a = b + 1;"
    assert lines[2].index("^") == lines[1].index("b")


def test_imports_searched_once_in_lib_and_folder(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "defs.swift").write_text('import "more";\ntype file;\nglobal int G = 2;\n')
    (tmp_path / "more.swift").write_text('import "defs";\n(int r) twice(int x) { r = x * 2; }\n')
    main = tmp_path / "main.swift"
    main.write_text('import "defs";\nimport "more";\nfile f <"f">;\ntrace(twice(G));\n')
    monkeypatch.setenv("SWIFT_LIB", str(lib))
    monkeypatch.chdir("/")
    c = lang.load(main)
    assert [t.name for t in c.program.types] == ["file"]  # defs loaded once despite the cycle
    assert list(c.procedures) == ["twice"]
    assert len(c.files) == 3 and "Imported:" in c.summary()


def test_missing_import_names_the_module(tmp_path: Path) -> None:
    main = tmp_path / "m.swift"
    main.write_text('import "nothere";\ntrace(1);\n')
    with pytest.raises(lang.CompileError) as info:
        lang.load(main, search_path=[])
    assert info.value.diagnostics[0].message == (
        "When processing import nothere: nothere.swift (No such file or directory)")
    assert info.value.diagnostics[0].line == 1


def test_errors_in_imported_module_point_into_it(tmp_path: Path) -> None:
    (tmp_path / "bad.swift").write_text("int x = y;\n")
    main = tmp_path / "m.swift"
    main.write_text('import "bad";\ntrace(1);\n')
    with pytest.raises(lang.CompileError) as info:
        lang.load(main, search_path=[])
    d = info.value.diagnostics[0]
    assert d.file.endswith("bad.swift") and d.line == 1 and d.source_line == "int x = y;"


def test_stdlib_imports_are_accepted() -> None:
    check('import "stdlib.v2";\ntrace(sqrt(2.0));')


def test_summary_mentions_counts() -> None:
    text = check("type file; app (file o) a() { touch @o; } file f = a();").summary()
    assert "1 procedure (1 app, 0 compound)" in text and "1 variable" in text


def test_no_import_of_other_swiftnb_packages() -> None:
    import swiftnb.lang as pkg
    src = Path(pkg.__file__).parent
    for f in src.glob("*.py"):
        for line in f.read_text().splitlines():
            if line.startswith(("import ", "from ")) and "swiftnb" in line:
                # (the root of swiftnb's exceptions, which imports nothing: docs/design.md)
                assert "swiftnb.lang" in line or "swiftnb.errors" in line, f"{f.name}: {line}"


def test_environment_does_not_leak_into_search(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "x.swift").write_text("type file;\n")
    monkeypatch.setenv("SWIFT_LIB", str(tmp_path))
    c = lang.compile_source('import "x"; file f;', "cell", base_dir=os.getcwd())
    assert "file" in c.types
    with pytest.raises(lang.CompileError):
        lang.compile_source('import "x"; file f;', "cell", base_dir="/", search_path=[])


def test_same_type_declared_in_script_and_import(tmp_path: Path) -> None:
    (tmp_path / "defs.swift").write_text("type file;\ntype P { int a; file f; }\n")
    main = tmp_path / "m.swift"
    main.write_text('\ufeffimport "defs";\ntype file;\ntype P { int a; file f; }\nfile f;\n')
    c = lang.load(main, search_path=[])
    assert isinstance(c.types["P"], T.StructType)
    main.write_text('import "defs";\ntype P { int b; }\n')
    with pytest.raises(lang.CompileError) as info:
        lang.load(main, search_path=[])
    assert "Type P is already defined on line 2" in info.value.render()


def test_writes_in_a_compound_body_are_its_outputs() -> None:
    c = check("(int a, int b[]) p(int n) { a = n; foreach i in [0:n] { b[i] = i; } }\n"
              "int x, y[]; (x, y) = p(3);")
    proc = c.program.procedures[0]
    assert {s.name for s in c.writes_in(proc.body)} == {"a", "b"}
    assert {s.kind for s in c.writes_in(proc.body)} == {"output"}


def test_writing_statements_of_a_block_count_array_writers() -> None:
    c = check("type file; app (file o) gen(int i) { gen i @o; }\n"
              "file outs[]; int n = 3;\n"
              "outs[0] = gen(0);\n"
              "foreach i in [1:n] { outs[i] = gen(i); }\n"
              "if (n > 2) { outs[9] = gen(9); } else { trace(n); }\n"
              "trace(length(outs));")
    outs = next(s for s in c.symbols if s.name == "outs")
    stmts = c.program.statements
    writers = c.writing_statements(outs, stmts)
    assert [type(s).__name__ for s in writers] == ["Assign", "Foreach", "If"]
    assert all(w.partial for w in outs.writers)
    n = next(s for s in c.symbols if s.name == "n")
    assert [type(s).__name__ for s in c.writing_statements(n, stmts)] == ["VarDecl"]
    assert not n.writers[0].partial


def test_writes_in_leaves_out_the_statements_own_locals() -> None:
    c = check("int out[]; foreach i in [0:3] { int sq = i * i; out[i] = sq; }")
    fe = c.program.statements[-1]
    assert {s.name for s in c.writes_in(fe)} == {"out"}


def test_top_level_variables_by_name() -> None:
    c = check("global int g = 1; int a = 2; (int r) f() { int inner = 3; r = inner; }\n"
              "foreach i in [1:2] { int local = i; }")
    assert set(c.top_level) == {"g", "a"}
    assert c.top_level["a"].type == T.INT and c.top_level["g"].kind == "global"


def test_a_structure_that_contains_itself_is_an_error() -> None:
    """Its value would never end (Swift/K overflowed its stack making one); an array of
    it starts empty, so a tree of structures stays valid."""
    with pytest.raises(lang.CompileError) as info:
        check("type T { int v; T next; }\nT a;\na.v = 1;")
    [d] = info.value.diagnostics
    assert (d.line, d.column, d.message) == (1, 19, (
        "Type T contains itself (T.next is a T): a structure cannot hold a value of its "
        "own type; an array of it (T[]) can"))
    assert errors("type U { int v; V w; }\ntype V { string s; U u; }\nU a;") == [
        "Type U contains itself (U.w -> V.u is a U): a structure cannot hold a value of "
        "its own type; an array of it (U[]) can"]
    check("type T { int v; T[] kids; }\nT a;\na.kids[0].v = 2;")
    check("type A { int v; }\ntype B { A x; A y; }\ntype C { B b; A a; }\nC c;")
