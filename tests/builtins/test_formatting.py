"""Exact renderings from the Swift 0.96 reference (section 2.1-2.3)."""

import math

import pytest

from swiftnb.engine.data import BuiltinError, FileValue, StructValue
from swiftnb.engine.formatting import (
    app_arg_str,
    java_double,
    java_format,
    node_str,
    strcat_str,
    strjoin_str,
    swift_format,
    trace_line,
    trace_str,
)


@pytest.mark.parametrize(
    "d, text",
    [
        (3.0, "3.0"),
        (1 / 3, "0.3333333333333333"),
        (12345.5, "12345.5"),
        (-2.5, "-2.5"),
        (1e10, "1.0E10"),
        (1e-4, "1.0E-4"),
        (0.001, "0.001"),
        (9999999.0, "9999999.0"),
        (1e7, "1.0E7"),
        (123456789.0, "1.23456789E8"),
        (22.0 / 7.0, "3.142857142857143"),
        (0.1 + 0.2, "0.30000000000000004"),
        (100.0, "100.0"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (math.inf, "Infinity"),
        (-math.inf, "-Infinity"),
        (math.nan, "NaN"),
        (0.479425538604203, "0.479425538604203"),
        (1.5e-7, "1.5E-7"),
        (2.5e300, "2.5E300"),
    ],
)
def test_java_double(d, text):
    assert java_double(d) == text


def test_trace_primitives():
    assert trace_line([1]) == "SwiftScript trace: 1"
    assert trace_line([1.0, 2.5, True, False]) == "SwiftScript trace: 1.0, 2.5, true, false"
    assert trace_line(["a\tb\"c"]) == 'SwiftScript trace: a\tb"c'
    assert trace_line([]) == "SwiftScript trace: "


def test_trace_arrays_cut_after_eleven():
    a = {i: i for i in range(16)}
    assert trace_str(a) == "{0 = 0, 1 = 1, 2 = 2, 3 = 3, 4 = 4, 5 = 5, 6 = 6, 7 = 7, 8 = 8, 9 = 9, 10 = 10, ...}"
    eleven = {i: i for i in range(11)}
    assert trace_str(eleven).endswith("10 = 10, ...}")
    ten = {i: i for i in range(10)}
    assert trace_str(ten) == "{0 = 0, 1 = 1, 2 = 2, 3 = 3, 4 = 4, 5 = 5, 6 = 6, 7 = 7, 8 = 8, 9 = 9}"


def test_trace_nested_and_keyed_arrays():
    assert trace_str({0: {0: 1, 1: 2}, 1: {0: 3}}) == "{0 = {0 = 1, 1 = 2}, 1 = {0 = 3}}"
    assert trace_str({"b": 2, "a": 1}) == "{a = 1, b = 2}"
    assert trace_str({10: "x", -1: "y", 2: "z"}) == "{-1 = y, 2 = z, 10 = x}"
    assert trace_str({True: 1, False: 0}) == "{false = 0, true = 1}"
    assert trace_str({0.5: 1, -1.5: 2}) == "{-1.5 = 2, 0.5 = 1}"
    assert trace_str({}) == "{}"


def test_trace_struct_and_files():
    assert trace_str(StructValue("S", "s", {"a": 1})) == "s:S - Closed"
    assert trace_str(FileValue("g", "file", "g.txt")) == "g:file = <FILE> - Closed"
    fa = {0: FileValue("fa[0]", "file", "a"), 1: FileValue("fa[1]", "file", "b")}
    assert trace_str(fa) == "{0 = fa[0]:file = <FILE> - Closed, 1 = fa[1]:file = <FILE> - Closed}"


def test_conversions_differ():
    # reference 2.2: strcat(1.0, 2.5, 1000.0, true) -> 12.51000true
    assert "".join(strcat_str(v) for v in (1.0, 2.5, 1000.0, True)) == "12.51000true"
    assert strcat_str(3) == "3" and strcat_str(3.5) == "3.5"
    assert app_arg_str(1.0) == "1.0" and app_arg_str(True) == "true" and app_arg_str(2) == "2"
    assert strjoin_str(1.1) == "1.1" and strjoin_str(1.0) == "1.0"
    assert strcat_str(1e10) == "10000000000"
    assert strcat_str(0.5) == "0.5"


def test_swift_format_specifiers():
    assert swift_format("%s: %i\n", ["the value is", 3]) == "the value is: 3\n"
    assert swift_format("%f", [22.0 / 7.0]) == "3.142857142857143"
    assert swift_format("%d|%b|%%", [5, True]) == "5|true|%"
    assert swift_format("%q", [{0: 9, 1: 91, 2: 19}]) == "[9,91,19]"
    assert swift_format("%q", [{0: 100, 1: 101}]) == "[100,101]"
    assert swift_format("%s", [1.0]) == "1.0"
    assert swift_format("a%kb", [FileValue("x", "external")]) == "ab"
    assert swift_format("%M", [FileValue("f", "file", "in.txt")]) == "in.txt"
    two = {0: FileValue("a[0]", "file", "a"), 1: FileValue("a[1]", "file", "b")}
    assert swift_format("%M", [two]) == "[a, b]"
    assert swift_format("%p", [StructValue("S", "s")]) == "s:S - Closed"


def test_swift_format_escapes_processed_again():
    # the Swift string "\\n" is backslash + n after lexing; tracef turns it into a newline
    assert swift_format("a\\nb\\tc\\\\d", []) == "a\nb\tc\\d"
    with pytest.raises(BuiltinError) as e:
        swift_format("bad \\q", [])
    assert e.value.message == "tracef(): unknown backslash escape sequence! (\\q)\n\t in bad \\q character: 5"


@pytest.mark.parametrize(
    "spec, args, message",
    [
        ("%i %i", [1], "tracef(): too many specifiers!"),
        ("%x", [1], "tracef(): Unknown format: %x"),
        ("%i", [1.5], 'tracef(): %i requires an int! Variable "?" is a float'),
        ("%b", [1], 'tracef(): %b requires a boolean! Variable "?" is a int'),
    ],
)
def test_swift_format_errors(spec, args, message):
    with pytest.raises(BuiltinError) as e:
        swift_format(spec, args)
    assert e.value.message == message


def test_swift_format_error_names_variable():
    with pytest.raises(BuiltinError) as e:
        swift_format("%i", [2.0], ["x"])
    assert e.value.message == 'tracef(): %i requires an int! Variable "x" is a float'


@pytest.mark.parametrize(
    "fmt, args, text",
    [
        ("%.2f|%5s", [3.14159, "x"], "3.14|    x"),
        ("%d items", [3], "3 items"),
        ("%05d", [42], "00042"),
        ("%-5s|", ["ab"], "ab   |"),
        ("%,d", [1234567], "1,234,567"),
        ("%x %X %o", [255, 255, 8], "ff FF 10"),
        ("%.1f %.1f %.2f", [0.25, 0.15, 1.005], "0.3 0.2 1.01"),
        ("%e", [12345.678], "1.234568e+04"),
        ("%.3E", [0.000123], "1.230E-04"),
        ("%b %B", [True, None], "true FALSE"),
        ("%s", [1.0], "1.0"),
        ("%S", ["abc"], "ABC"),
        ("%2$s %1$s", ["a", "b"], "b a"),
        ("%+d % d", [5, 5], "+5  5"),
        ("%(d", [-5], "(5)"),
        ("%08.3f", [-3.14159], "-003.142"),
        ("100%%", [], "100%"),
        ("%c", [65], "A"),
        ("line%n", [], "line\n"),
        ("%g", [0.0001234], "0.000123400"),
        ("%.3g", [1234567.0], "1.23e+06"),
    ],
)
def test_java_format(fmt, args, text):
    assert java_format(fmt, args) == text


def test_java_format_errors():
    with pytest.raises(BuiltinError, match="IllegalFormatConversionException"):
        java_format("%d", [1.5])
    with pytest.raises(BuiltinError, match="MissingFormatArgumentException"):
        java_format("%s %s", ["a"])


def test_node_str():
    assert node_str(3, "x") == "x:int = 3 - Closed"
    assert node_str(None) == "?:string - Closed"
