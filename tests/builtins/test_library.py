"""Builtins called through the registry with plain data, as the engine calls them."""

import asyncio
import os

import pytest

from swiftnb.engine.builtins import AT_SYNTAX_WARNING, REGISTRY, deprecation_warning, lookup
from swiftnb.engine.data import (
    ArrayType,
    AssertionFailed,
    BuiltinError,
    FileValue,
    SimpleContext,
    StructValue,
)


def call(name, *args, ctx=None):
    b = lookup(name)
    assert b is not None, name
    ctx = ctx or SimpleContext()
    if b.is_async:
        return asyncio.run(asyncio.wait_for(b.fn(ctx, *args), 20))
    return b.fn(ctx, *args)


def test_at_spelling_and_deprecated_aliases():
    assert lookup("@strcat") is lookup("strcat")
    assert lookup("toint").fn is lookup("toInt").fn
    assert deprecation_warning("toint") == "Function toint is deprecated"
    assert deprecation_warning("@tostring") == "Function tostring is deprecated"
    assert deprecation_warning("readdata") == "Procedure readdata is deprecated"
    assert deprecation_warning("writedata") == "Procedure writedata is deprecated"
    assert deprecation_warning("toInt") is None
    assert AT_SYNTAX_WARNING == "The @ syntax for function invocation is deprecated"
    for n in ["readdata", "readdata2", "readstructured", "writedata", "extractint", "toint",
              "tofloat", "tostring"]:
        assert lookup(n).alias_of is not None, n


def test_every_guide_name_is_registered():
    names = ("arg args extractInt extractFloat filename filenames dirname regexp strcat strcut "
             "strstr strsplit strjoin sprintf toInt toFloat toString length readData readData2 "
             "readStructured writeData trace tracef printf fprintf assert system format pad exists "
             "java floor ceil sqrt pow min max abs substring indexOf lastIndexOf toUpper toLower trim "
             "split replaceAll matches getEnv").split()
    missing = [n for n in names if n not in REGISTRY]
    assert missing == []
    assert lookup("system").is_async and not lookup("strcat").is_async
    assert lookup("filename").waits == "mapping" and lookup("length").waits == "closed"
    assert lookup("trace").kind == "procedure"


def test_trace_writes_stdout_and_event():
    ctx = SimpleContext()
    call("trace", "hello", 1, 2.0, {0: 1}, ctx=ctx)
    assert ctx.out == "SwiftScript trace: hello, 1, 2.0, {0 = 1}\n"
    assert ctx.events == [("TRACE", {}, "SwiftScript trace: hello, 1, 2.0, {0 = 1}")]


def test_tracef_printf_no_newline():
    ctx = SimpleContext()
    call("tracef", "%s: %i\\n", "the value is", 3, ctx=ctx)
    call("printf", "x=%f", 1.5, ctx=ctx)
    assert ctx.out == "the value is: 3\nx=1.5"


def test_fprintf_appends(tmp_path):
    ctx = SimpleContext(base_dir=str(tmp_path))
    call("fprintf", "out.txt", "a %i\n", 1, ctx=ctx)
    call("fprintf", "out.txt", "b %s\n", "x", ctx=ctx)
    assert (tmp_path / "out.txt").read_text() == "a 1\nb x\n"


def test_assert():
    call("assert", True)
    call("assert", 1)
    ctx = SimpleContext()
    with pytest.raises(AssertionFailed) as e:
        call("assert", False, "bad thing", ctx=ctx)
    assert e.value.message == "bad thing"
    assert ctx.out == "swift: assert failed: bad thing\n"
    with pytest.raises(AssertionFailed) as e:
        call("assert", 0)
    assert e.value.message == "Assertion failed"


def test_arg():
    ctx = SimpleContext(script_args={"myparam": "hello"})
    assert call("arg", "myparam", ctx=ctx) == "hello"
    assert call("arg", "optionalparam", "defaultvalue", ctx=ctx) == "defaultvalue"
    with pytest.raises(BuiltinError) as e:
        call("arg", "nope", ctx=ctx)
    assert e.value.message == "Missing command line argument: nope"


def test_args_spec():
    ctx = SimpleContext(script_argv=["-min:1", "-max:9", "-normalize"])
    r = call("args", "-min:<int>, -max:<int>, -bins:<int:10>, [-normalize], [-other:<string>]", ctx=ctx)
    assert r == {"-min": "1", "-max": "9", "-bins": "10", "-normalize": "true"}
    # a spec without commas is split on whitespace; "=" separators from -name=value args
    ctx = SimpleContext(script_args={"n": "5"})
    assert call("args", "-n=<int> [-v]", ctx=ctx) == {"-n": "5"}
    ctx = SimpleContext(script_argv=["-n", "7"])
    assert call("args", "-n <int>", ctx=ctx) == {"-n": "7"}


@pytest.mark.parametrize(
    "spec, argv, message",
    [
        ("-min:<int>", [], "Missing mandatory option '-min'"),
        ("-min:<int>", ["-min:x"], "Invalid value 'x' for option '-min'. Must be an integer"),
        ("-min:<int>", ["-max:1"], "Invalid option: '-max'"),
        ("-min:<int>", ["-min=1"], "Invalid separator ('=' for '-min'. Expected ':'"),
        ("-min <int>", ["-min"], "Missing value for option '-min'"),
        ("-min", [], "Missing required option type in '-min'"),
    ],
)
def test_args_errors(spec, argv, message):
    with pytest.raises(BuiltinError) as e:
        call("args", spec, ctx=SimpleContext(script_argv=argv))
    assert e.value.message == message


@pytest.mark.parametrize(
    "name, args, result",
    [
        ("strcat", ("a", 1, 2.5, 1.0, True), "a12.51true"),
        ("strcat", (), ""),
        ("regexp", ("abc123def", "[0-9]+", "<$0>"), "abc<123>def"),
        ("regexp", ("abcdefghi", "c(def)g", "monkey"), "abmonkeyhi"),
        ("regexp", ("a1b2", "([a-z])([0-9])", "$2$1"), "1ab2"),
        ("regexp", ("nomatch", "x", "y"), "nomatch"),
        ("regexp", ("price", "p", "\\$"), "$rice"),
        ("strcut", ("my name is John and i like puppies.", "my name is ([^ ]*) "), "John"),
        ("strstr", ("hello", "ll"), 2),
        ("strstr", ("hello", "z"), -1),
        ("strsplit", ("a,b,,c", ","), {0: "a", 1: "b", 2: "", 3: "c"}),
        ("strsplit", ("a,b,c,,", ","), {0: "a", 1: "b", 2: "c"}),
        ("strsplit", ("abc", ","), {0: "abc"}),
        ("strsplit", ("", ","), {0: ""}),
        ("strsplit", ("my name is", "\\s"), {0: "my", 1: "name", 2: "is"}),
        ("strsplit", (" a b", " "), {0: "", 1: "a", 2: "b"}),
        ("strsplit", ("abc", ""), {0: "a", 1: "b", 2: "c"}),
        ("strjoin", ({0: "this", 1: "is", 2: "a", 3: "test"}, " "), "this is a test"),
        ("strjoin", ({0: 1.1, 1: 2.2}, ":"), "1.1:2.2"),
        ("strjoin", ({1: 2, 0: 1}, ":"), "1:2"),
        ("strjoin", ({0: 1.0}, ":"), "1.0"),
        ("strjoin", ({0: True, 1: False}, ":"), "true:false"),
        ("strjoin", ({}, ":"), ""),
        ("sprintf", ("\t%s\n", "hello"), "\thello\n"),
        ("format", ("%.2f|%5s", 3.14159, "x"), "3.14|    x"),
        ("pad", (5, 42), "00042"),
        ("pad", (2, 123), "123"),
        ("toInt", ("010",), 10),
        ("toInt", ("-7",), -7),
        ("toInt", (" 7\n",), 7),
        ("toInt", (3.9,), 3),
        ("toInt", (-3.9,), -3),
        ("toint", ("99",), 99),
        ("toFloat", ("1.5",), 1.5),
        ("toFloat", (" 2e3 ",), 2000.0),
        ("toFloat", (3,), 3.0),
        ("toString", (1.0,), "1.0"),
        ("toString", (7,), "7"),
        ("toString", (True,), "true"),
        ("toString", (StructValue("S", "s"),), "s:S - Closed"),
        ("length", ({0: 1, 5: 2},), 2),
        ("length", ("hello",), 5),
        ("length", ({},), 0),
        ("substring", ("hello", 1, 3), "el"),
        ("substring", ("hello", 2), "llo"),
        ("indexOf", ("hello", "l", 0), 2),
        ("indexOf", ("hello", "l", 3), 3),
        ("lastIndexOf", ("hello", "l", -1), 3),
        ("toUpper", ("aBc",), "ABC"),
        ("toLower", ("aBc",), "abc"),
        ("trim", ("  x y \n",), "x y"),
        ("split", ("a  b c", " "), {0: "a", 1: "b", 2: "c"}),
        ("split", ("  a  b c ", " "), {0: "a", 1: "b", 2: "c"}),
        ("split", ("a, b,, c", ", ", 2), {0: "a", 1: "b,, c"}),
        ("split", ("a::b::::c", "::", 2), {0: "a", 1: "b::::c"}),
        ("splitRe", ("a1b22c", "[0-9]+"), {0: "a", 1: "b", 2: "c"}),
        ("join", ({0: "a", 1: "b"}, "-"), "a-b"),
        ("replaceAll", ("a.b.c", ".", "/"), "a/b/c"),
        ("replaceAllRe", ("a1b22", "([0-9]+)", "<$1>"), "a<1>b<22>"),
        ("matches", ("abc123", "[a-z]+[0-9]+"), True),
        ("matches", ("abc123x", "[a-z]+[0-9]+"), False),
        ("matches", ("abc", "\\p{Alpha}+"), True),
        ("findAllRe", ("a1 b2", "([a-z])([0-9])"), {0: "a1", 1: "b2"}),
        ("floor", (2.7,), 2.0),
        ("ceil", (2.1,), 3.0),
        ("sqrt", (16,), 4.0),
        ("pow", (2, 10), 1024.0),
        ("min", (3, 5), 3),
        ("max", (3, 5.0), 5.0),
        ("abs", (-4,), 4),
        ("abs", (-4.5,), 4.5),
        ("round", (2.5,), 3.0),
        ("round", (-2.5,), -2.0),
        ("log", (8.0, 2.0), 3.0),
        ("sum", ({0: 1, 1: 2, 2: 3},), 6),
        ("avg", ({0: 1, 1: 2},), 1.5),
        ("isNaN", (float("nan"),), True),
        ("parseInt", ("ff", 16), 255),
        ("parseFloat", ("1.25",), 1.25),
        ("java", ("java.lang.Math", "sin", 0.5), 0.479425538604203),
        ("java", ("java.lang.Math", "max", 3, 4), 4),
        ("java", ("java.lang.Math", "round", 2.5), 3),
        ("java", ("java.lang.Integer", "parseInt", "42"), 42),
        ("java", ("Math", "sqrt", 9.0), 3.0),
        ("java", ("java.lang.String", "format", "%.2f", 3.14159), "3.14"),
        ("filename", (FileValue("f", "file", "data/in.txt"),), "data/in.txt"),
        ("filename", ({0: FileValue("a[0]", "file", "x"), 1: FileValue("a[1]", "file", "y")},), "x y"),
        ("filename", (StructValue("S", "s", {"l": FileValue("s.l", "file", "l.txt"),
                                             "r": FileValue("s.r", "file", "r.txt")}),), "l.txt r.txt"),
        ("filenames", ({1: FileValue("a[1]", "file", "y"), 0: FileValue("a[0]", "file", "x")},), {0: "x", 1: "y"}),
        ("dirname", (FileValue("f", "file", "data/sub/in.txt"),), "data/sub"),
        ("dirname", (FileValue("x", "file", "x.out"),), ""),
    ],
)
def test_pure_builtins(name, args, result):
    got = call(name, *args)
    assert got == result and type(got) is type(result)


@pytest.mark.parametrize(
    "name, args, message",
    [
        ("strcut", ("abc", "x(y)"), "@strcut could not match pattern x(y) against string abc"),
        ("strcut", ("abc", "b"), "No group 1"),
        ("toInt", ("1.5",), 'java.lang.NumberFormatException: For input string: "1.5"'),
        ("toInt", (" 1 x",), 'java.lang.NumberFormatException: For input string: " 1 x"'),
        ("toInt", ("99999999999",), 'java.lang.NumberFormatException: For input string: "99999999999"'),
        ("toFloat", ("abc",), 'java.lang.NumberFormatException: For input string: "abc"'),
        ("java", ("java.lang.Nope", "x"), "java(): class not found: java.lang.Nope"),
        ("substring", ("abc", 2, 9), "substring: index out of range: start 2, end 9, length 3"),
    ],
)
def test_builtin_errors(name, args, message):
    with pytest.raises(BuiltinError) as e:
        call(name, *args)
    assert e.value.message == message


def test_exists_and_extract(tmp_path):
    (tmp_path / "n.txt").write_text("42\nignored\n")
    (tmp_path / "f.txt").write_text("2.5\n")
    ctx = SimpleContext(base_dir=str(tmp_path))
    assert call("exists", "n.txt", ctx=ctx) is True
    assert call("exists", "none.txt", ctx=ctx) is False
    assert call("exists", FileValue("f", "file", "n.txt"), ctx=ctx) is True
    assert call("exists", "file://localhost/n.txt", ctx=ctx) is True
    assert call("exists", "file://" + str(tmp_path / "n.txt"), ctx=ctx) is True
    assert call("extractInt", FileValue("f", "file", "n.txt"), ctx=ctx) == 42
    assert call("extractint", "n.txt", ctx=ctx) == 42
    assert call("extractFloat", "f.txt", ctx=ctx) == 2.5
    with pytest.raises(BuiltinError, match="cannot read none.txt"):
        call("extractInt", "none.txt", ctx=ctx)


def test_getenv(monkeypatch):
    monkeypatch.setenv("SWIFTNB_TEST_X", "val")
    assert call("getEnv", "SWIFTNB_TEST_X") == "val"
    monkeypatch.delenv("SWIFTNB_TEST_X")
    assert call("getEnv", "SWIFTNB_TEST_X") == ""


def test_system_runs_bash(tmp_path):
    ctx = SimpleContext(base_dir=str(tmp_path))
    (tmp_path / "b.txt").write_text("")
    (tmp_path / "a.txt").write_text("")
    assert call("system", "ls *.txt; echo 'two words'", ctx=ctx) == {0: "a.txt", 1: "b.txt", 2: "two words"}
    with pytest.raises(BuiltinError) as e:
        call("system", "echo oops >&2; exit 3", ctx=ctx)
    assert e.value.message == "echo oops >&2; exit 3 returned exit code 3\noops"


def test_system_does_not_block_the_loop(tmp_path):
    async def main():
        ctx = SimpleContext(base_dir=str(tmp_path))
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        t = asyncio.ensure_future(ticker())
        out = await lookup("system").fn(ctx, "sleep 0.3; echo done")
        t.cancel()
        return out, ticks

    out, ticks = asyncio.run(asyncio.wait_for(main(), 20))
    assert out == {0: "done"}
    assert ticks > 3


def test_system_is_killed_when_cancelled(tmp_path):
    async def main():
        ctx = SimpleContext(base_dir=str(tmp_path))
        t = asyncio.ensure_future(lookup("system").fn(ctx, "echo $$ > pid; exec sleep 30"))
        for _ in range(200):
            await asyncio.sleep(0.02)
            if (tmp_path / "pid").exists() and (tmp_path / "pid").read_text().strip():
                break
        t.cancel()
        try:
            await t
        except asyncio.CancelledError:
            pass
        return int((tmp_path / "pid").read_text())

    pid = asyncio.run(asyncio.wait_for(main(), 20))
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_read_write_data_roundtrip(tmp_path):
    from swiftnb.engine.data import INT, STRING, StructType

    ctx = SimpleContext(base_dir=str(tmp_path), return_type=ArrayType(INT))
    (tmp_path / "ints.txt").write_text("1\n2\n3\n")
    assert call("readData", "ints.txt", ctx=ctx) == {0: 1, 1: 2, 2: 3}
    ctx.return_type = INT
    (tmp_path / "one.txt").write_text(" 7\n")
    assert call("readdata", FileValue("f", "file", "one.txt"), ctx=ctx) == 7
    emp = StructType("Employee", (("name", STRING), ("id", INT), ("loc", STRING)))
    (tmp_path / "emps.txt").write_text("name id loc\nThomas 2222 Chicago\nGina 3333 Boston\n\nAnne 4444 Houston\n")
    ctx.return_type = ArrayType(emp)
    emps = call("readData", "emps.txt", ctx=ctx)
    assert [e.fields for _, e in sorted(emps.items())] == [
        {"name": "Thomas", "id": 2222, "loc": "Chicago"},
        {"name": "Gina", "id": 3333, "loc": "Boston"},
        {"name": "Anne", "id": 4444, "loc": "Houston"},
    ]
    out = FileValue("o", "file", "sub/out.txt")
    ctx = SimpleContext(base_dir=str(tmp_path), return_file=out)
    assert call("writeData", {0: 3, 1: 1}, ctx=ctx) is out
    assert (tmp_path / "sub" / "out.txt").read_text() == "3\n1\n"


def test_every_lang_builtin_has_an_implementation():
    lb = pytest.importorskip("swiftnb.lang.builtins", reason="LANG's builtin table is not there yet")
    table = getattr(lb, "BUILTINS", None)
    if not table:
        pytest.skip("swiftnb.lang.builtins has no BUILTINS table yet")
    missing = sorted(n for n in table if lookup(n) is None)
    assert missing == []
    # kinds agree (procedures are statements without a value)
    for n, (kind, _ret, _params) in table.items():
        if kind == "procedure":
            assert lookup(n).kind == "procedure", n
    for alias, canonical in getattr(lb, "DEPRECATED_ALIASES", {}).items():
        b = lookup(alias)
        assert b is not None and b.fn is lookup(canonical).fn, alias
        assert b.deprecated == lb.deprecation_warning(alias)
    for n in getattr(lb, "MAPPING_ONLY", ()):
        assert lookup(n).waits == "mapping", n
