"""readData / readStructured / writeData formats (0.96, reference section 2.4)."""

import pytest

from swiftnb.engine.data import (
    BOOLEAN,
    FLOAT,
    INT,
    STRING,
    ArrayType,
    BuiltinError,
    StructType,
    StructValue,
)
from swiftnb.engine.datafiles import java_hash_order, read_data, read_structured, write_data

EMP = StructType("Employee", (("name", STRING), ("id", INT), ("loc", STRING)))
VECTOR = StructType("vector", (("columns", ArrayType(INT)),))
MATRIX = StructType("matrix", (("rows", ArrayType(VECTOR)),))


def test_primitives():
    assert read_data("42\n", INT) == 42
    assert read_data("4\n2\n", INT) == 42  # lines joined without separator
    assert read_data(" 2.5 \n", FLOAT) == 2.5
    assert read_data("true\n", BOOLEAN) is True
    assert read_data("TRUE", BOOLEAN) is True
    assert read_data("yes", BOOLEAN) is False
    assert read_data("hello\nworld\n", STRING) == "helloworld"
    assert read_data("  spaced  \n", STRING) == "  spaced  "  # strings are raw


def test_primitive_arrays():
    assert read_data("1\n2\n\n3\n", ArrayType(INT)) == {0: 1, 1: 2, 2: 3}
    assert read_data("a b\nc\n", ArrayType(STRING)) == {0: "a b", 1: "c"}
    assert read_data("", ArrayType(INT)) == {}


def test_struct_and_struct_array():
    s = read_data("name id loc\nThomas 2222 Chicago\n", EMP)
    assert isinstance(s, StructValue) and s.fields == {"name": "Thomas", "id": 2222, "loc": "Chicago"}
    # header order may differ from declaration order
    s = read_data("loc name id\nBoston Gina 3333\n", EMP)
    assert s.fields == {"loc": "Boston", "name": "Gina", "id": 3333}
    arr = read_data("name id loc\nA 1 X\n\nB 2 Y\n", ArrayType(EMP))
    assert [v.fields["name"] for _, v in sorted(arr.items())] == ["A", "B"]


def test_header_mismatch():
    with pytest.raises(BuiltinError, match="File header does not match type"):
        read_data("name id\nA 1\n", EMP)
    with pytest.raises(BuiltinError, match="File header does not match type. Expected the following"):
        read_data("name id where\nA 1 X\n", EMP)
    with pytest.raises(BuiltinError, match='Column count for line "A 1" does not match the header column count of 3'):
        read_data("name id loc\nA 1\n", EMP)
    with pytest.raises(BuiltinError, match="Could not convert value to number: x"):
        read_data("name id loc\nA x L\n", EMP)
    with pytest.raises(BuiltinError, match="Missing header"):
        read_data("", EMP)


def test_lang_types_are_accepted():
    lt = pytest.importorskip("swiftnb.lang.types")
    st = lt.StructType("P", {"x": lt.INT, "y": lt.FLOAT})
    v = read_data("x y\n1 2.5\n", lt.ArrayType(st))
    assert v[0].fields == {"x": 1, "y": 2.5}
    assert read_data("1\n2\n", lt.ArrayType(lt.INT)) == {0: 1, 1: 2}


def test_read_structured_matrix():
    text = ("rows[0].columns[0] = 0\nrows[0].columns[1] = 2\nrows[0].columns[2] = 4\n"
            "# a comment\n\nrows[1].columns[0] = 1\nrows[1].columns[1] = 3\nrows[1].columns[2] = 5\n")
    m = read_structured(text, MATRIX)
    rows = m.fields["rows"]
    assert rows[0].fields["columns"] == {0: 0, 1: 2, 2: 4}
    assert rows[1].fields["columns"] == {0: 1, 1: 3, 2: 5}


def test_read_structured_root_and_quotes():
    assert read_structured("$ = 10\n", INT) == 10
    assert read_structured('[0] = "hello"\n[1] = x\n', ArrayType(STRING)) == {0: '"hello"', 1: "x"}
    arr = read_structured("[0].name = A\n[0].id = 1\n[0].loc = L\n", ArrayType(EMP))
    assert arr[0].fields == {"name": "A", "id": 1, "loc": "L"}
    with pytest.raises(BuiltinError, match="no field 'zzz'"):
        read_structured("zzz = 1\n", EMP)


def test_java_hash_order():
    # observed 0.96 writeData header for fields l, c, r: "r c l "
    assert java_hash_order(["l", "c", "r"]) == ["r", "c", "l"]
    assert sorted(java_hash_order(["name", "id", "loc"])) == ["id", "loc", "name"]


def test_write_data_096():
    assert write_data(5) == "5"
    assert write_data(1.0) == "1.0"
    assert write_data({1: "b", 0: "a"}) == "a\nb\n"
    lcr = StructType("T", (("l", STRING), ("c", STRING), ("r", STRING)))
    s = StructValue("T", "s", {"l": "baz", "c": "BAZ", "r": "Baz"})
    assert write_data(s, lcr) == "r c l \nBaz BAZ baz \n"
    arr = {0: s, 1: StructValue("T", "a[1]", {"l": "1", "c": "2", "r": "3"})}
    assert write_data(arr, ArrayType(lcr)) == "r c l \nBaz BAZ baz \n3 2 1 \n"


def test_write_then_read_roundtrip():
    s = {0: StructValue("Employee", "e[0]", {"name": "A", "id": 1, "loc": "X"})}
    assert read_data(write_data(s, ArrayType(EMP)), ArrayType(EMP))[0].fields == s[0].fields
