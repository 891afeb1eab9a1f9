"""The plain-data layer: paths, Swift key order, type conversion from the checker."""

import pytest

from swiftnb.engine.data import (
    INT,
    STRING,
    ArrayType,
    Field,
    FileValue,
    Index,
    MappedType,
    StructType,
    StructValue,
    as_data_type,
    leaf_files,
    local_path,
    parse_path,
    path_str,
    sorted_keys,
    type_str,
    url_path,
)


@pytest.mark.parametrize(
    "text, steps",
    [
        ("$", ()),
        ("[0]", (Index(0),)),
        ("[2].l", (Index(2), Field("l"))),
        ("eerste", (Field("eerste"),)),
        ("derde.links", (Field("derde"), Field("links"))),
        ("[0][0].c[0]", (Index(0), Index(0), Field("c"), Index(0))),
        ('["key"]', (Index("key"),)),
        ("[1.5]", (Index(1.5),)),
        ("rows[0].columns[1]", (Field("rows"), Index(0), Field("columns"), Index(1))),
    ],
)
def test_parse_path(text, steps):
    assert parse_path(text) == steps


@pytest.mark.parametrize("bad", ["[0", "a..b", "[0]x"])
def test_parse_path_errors(bad):
    with pytest.raises(ValueError):
        parse_path(bad)


def test_path_str():
    assert path_str("a", (Index(0), Field("f"))) == "a[0].f"
    assert path_str("m", (Index("k"),)) == 'm["k"]'
    assert path_str("b", (Index(True),)) == "b[true]"


def test_swift_key_order():
    assert sorted_keys({10: 0, -3: 0, 2: 0}) == [-3, 2, 10]
    assert sorted_keys({"b": 0, "a": 0, "B": 0}) == ["B", "a", "b"]
    assert sorted_keys({True: 0, False: 0}) == [False, True]
    assert sorted_keys({2.5: 0, -1.0: 0}) == [-1.0, 2.5]


def test_leaf_files_in_key_and_field_order():
    v = {1: StructValue("S", "a[1]", {"x": FileValue("a[1].x", "file", "p1"), "n": 3}),
         0: StructValue("S", "a[0]", {"x": FileValue("a[0].x", "file", "p0")})}
    assert [f.path for f in leaf_files(v)] == ["p0", "p1"]


def test_types_from_the_checker():
    lt = pytest.importorskip("swiftnb.lang.types")
    st = lt.StructType("P", {"x": lt.INT, "f": lt.MappedType("file")})
    t = as_data_type(lt.ArrayType(st, lt.STRING))
    assert t == ArrayType(StructType("P", (("x", INT), ("f", MappedType("file")))), "string")
    assert as_data_type(lt.ArrayType(lt.INT, lt.AUTO)) == ArrayType(INT, "auto")
    assert type_str(ArrayType(STRING)) == "string[]"
    assert type_str(ArrayType(INT, "string")) == "int[string]"


def test_url_and_local_paths(tmp_path):
    assert url_path("file://localhost/x.out") == "x.out"
    assert url_path("file:///tmp/x") == "/tmp/x"
    assert url_path("plain/y") == "plain/y"
    assert local_path(str(tmp_path), "a/b") == str(tmp_path / "a" / "b")
    assert local_path(str(tmp_path), "/abs") == "/abs"
