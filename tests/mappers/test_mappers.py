"""Mapper naming rules (Guide section 3, reference 1.8.3) with real files."""

import asyncio
import os
import stat

import pytest

from swiftnb.engine.data import ArrayType, Field, FileValue, Index, MappedType, StructType
from swiftnb.engine.mappers import (
    MAPPERS,
    MapperContext,
    MapperError,
    create_mapper,
    default_mapper,
    single_file,
)

FILE = MappedType("file")


def mk(name, params, tmp_path=None, var="f", type_=None, run_dir=None):
    base = str(tmp_path) if tmp_path else "."
    ctx = MapperContext(base_dir=base, run_dir=run_dir or base, var_name=var, type=type_)
    return create_mapper(name, params, ctx)


def test_names_and_aliases():
    for camel, snake in [("SingleFileMapper", "single_file_mapper"), ("SimpleMapper", "simple_mapper"),
                         ("ConcurrentMapper", "concurrent_mapper"), ("FilesysMapper", "filesys_mapper"),
                         ("FixedArrayMapper", "fixed_array_mapper"), ("ArrayMapper", "array_mapper"),
                         ("RegexpMapper", "regexp_mapper"),
                         ("StructuredRegexpMapper", "structured_regexp_mapper"),
                         ("CSVMapper", "csv_mapper"), ("Ext", "ext")]:
        assert MAPPERS[camel] is MAPPERS[snake]


def test_unknown_mapper_and_parameter():
    with pytest.raises(MapperError) as e:
        mk("nope_mapper", {})
    assert e.value.message == "unknown mapper type: 'nope_mapper'"
    with pytest.raises(MapperError) as e:
        mk("simple_mapper", {"prefix": "x", "noauto": True})
    assert e.value.message == "simple_mapper does not support a 'noauto' parameter"
    with pytest.raises(MapperError) as e:
        mk("SimpleMapper", {"noauto": True})
    assert e.value.message == "SimpleMapper does not support a 'noauto' parameter"
    # ext accepts anything
    mk("ext", {"exec": "x.sh", "whatever": 1, "noauto": 2})


def test_single_file():
    m = mk("single_file_mapper", {"file": "plot_outfile_param"})
    assert m.map(()) == "plot_outfile_param"
    with pytest.raises(MapperError):
        m.map((Index(0),))
    with pytest.raises(MapperError):
        m.map((Field("bar"),))
    assert single_file("in.txt", MapperContext()).map() == "in.txt"
    assert mk("SingleFileMapper", {"file": "file://localhost/x.out"}).map() == "x.out"


@pytest.mark.parametrize(
    "params, path, name",
    [
        ({"prefix": "foo", "suffix": ".txt"}, (), "foo.txt"),
        ({"prefix": "baz", "suffix": ".txt", "padding": 2}, (Index(0),), "baz00.txt"),
        ({"prefix": "baz", "suffix": ".txt", "padding": 2}, (Index(2),), "baz02.txt"),
        ({"prefix": "x.", "suffix": ".out"}, (Index(5),), "x.0005.out"),
        ({"prefix": "T.", "suffix": ".out"}, (Field("aleph"),), "T.aleph.out"),
        ({"prefix": "qux", "suffix": ".txt"}, (Field("left"),), "quxleft.txt"),
        ({"prefix": "p", "padding": 0}, (Index(7),), "p7"),
        ({"prefix": "p", "padding": 3}, (Index(12345),), "p12345"),
        ({"prefix": "p"}, (Index(1), Field("left")), "p0001_left"),
        ({"prefix": "p", "separator": "-"}, (Index(1), Index(2)), "p0001-0002"),
        ({"prefix": "p"}, (Index(1), Index(2), Field("f")), "p0001.0002_f"),
        ({"location": "out", "prefix": "a", "suffix": ".dat"}, (Index(3),), "out/a0003.dat"),
        ({"location": "out/", "prefix": "a"}, (), "out/a"),
        ({"location": ".", "prefix": "a"}, (), "./a"),
        ({"location": "/abs/dir", "prefix": "a"}, (Index(1),), "/abs/dir/a0001"),
        ({"prefix": "k."}, (Index("key"),), "k.key"),
        ({"prefix": "n"}, (Index(-5),), "n00-5"),
    ],
)
def test_simple_mapper_names(params, path, name):
    assert mk("simple_mapper", params).map(path) == name


def test_simple_mapper_existing_array(tmp_path):
    for n in ["foo0002.txt", "foo0000.txt", "foo0001.txt", "fooX.txt", "bar0003.txt", "foo0010.dat"]:
        (tmp_path / n).write_text(n)
    m = mk("simple_mapper", {"prefix": "foo", "suffix": ".txt"}, tmp_path, type_=ArrayType(FILE))
    assert m.existing() == [((Index(0),), "foo0000.txt"), ((Index(1),), "foo0001.txt"),
                            ((Index(2),), "foo0002.txt")]
    assert not m.fixed


def test_simple_mapper_existing_struct_and_location(tmp_path):
    (tmp_path / "d").mkdir()
    for n in ["quxleft.txt", "quxright.txt", "quxother.md"]:
        (tmp_path / "d" / n).write_text("")
    st = StructType("mystruct", (("left", FILE), ("right", FILE)))
    m = mk("simple_mapper", {"location": "d", "prefix": "qux", "suffix": ".txt"}, tmp_path, type_=st)
    assert m.existing() == [((Field("left"),), "d/quxleft.txt"), ((Field("right"),), "d/quxright.txt")]
    scalar = mk("simple_mapper", {"prefix": "quxleft", "suffix": ".txt", "location": "d"}, tmp_path, type_=FILE)
    assert scalar.existing() == [((), "d/quxleft.txt")]


def test_simple_mapper_pattern(tmp_path):
    for n in ["run0001.log", "run0002.log", "run0013.log", "runX.log"]:
        (tmp_path / n).write_text("")
    # Swift's glob: prefix + "*" + pattern + "*" + suffix, ? is one character
    m = mk("simple_mapper", {"prefix": "run", "suffix": ".log", "pattern": "000?"}, tmp_path,
           type_=ArrayType(FILE))
    assert [p for p, _ in m.existing()] == [(Index(1),), (Index(2),)]


def test_swift_pattern():
    from swiftnb.engine.mappers.files import swift_pattern
    assert swift_pattern("foo", None, ".txt") == "foo*.txt"
    assert swift_pattern(None, None, ".txt") == "*.txt"
    assert swift_pattern(None, "*.csv", None) == "*.csv"
    assert swift_pattern("p", "x?", ".s") == "p*x?*.s"
    assert swift_pattern(None, None, None) == "*"


def test_concurrent_mapper_unique_under_run_dir(tmp_path):
    run = tmp_path / "run001"
    ctx = MapperContext(base_dir=str(tmp_path), run_dir=str(run), var_name="f")
    a, b = default_mapper(ctx), default_mapper(ctx)
    assert a.map() != b.map()
    assert a.map().startswith("run001/_concurrent/f-")
    assert a.map((Index(0),)) == a.map() + "--array/elt-0"
    assert a.map((Field("x"),)) == a.map() + "--field/x"
    assert a.map((Index(0), Field("x"))) == a.map() + "--array/elt-0/x"
    c = mk("concurrent_mapper", {"prefix": "foo", "suffix": ".txt"}, tmp_path, run_dir=str(run))
    assert os.path.basename(c.map()).startswith("foo-") and c.map().endswith(".txt")
    names = {default_mapper(ctx).map((Index(i),)) for i in range(200)}
    assert len(names) == 200


def test_filesys_mapper_sorted_glob(tmp_path):
    for n in ["foo1.txt", "footest.txt", "foo__1.txt", "bar.txt", "foo.dat"]:
        (tmp_path / n).write_text("")
    m = mk("filesys_mapper", {"prefix": "foo", "suffix": ".txt"}, tmp_path, type_=ArrayType(FILE))
    assert not m.fixed  # the disk decides the elements (a dynamic output when assigned)
    assert m.existing() == [((Index(0),), "foo1.txt"), ((Index(1),), "foo__1.txt"),
                            ((Index(2),), "footest.txt")]
    assert m.map((Index(1),)) == "foo__1.txt"
    with pytest.raises(MapperError):
        m.map((Index(9),))


def test_filesys_mapper_location_and_double_star(tmp_path):
    d = tmp_path / "data"
    (d / "a" / "b").mkdir(parents=True)
    (d / "x.csv").write_text("")
    (d / "a" / "y.csv").write_text("")
    (d / "a" / "b" / "z.csv").write_text("")
    (d / "a" / "b" / "z.txt").write_text("")
    m = mk("FilesysMapper", {"location": "data", "pattern": "**/*.csv"}, tmp_path)
    assert [n for _, n in m.existing()] == ["data/a/b/z.csv", "data/a/y.csv", "data/x.csv"]
    dot = mk("filesys_mapper", {"location": ".", "pattern": "data/*.csv"}, tmp_path)
    assert [n for _, n in dot.existing()] == ["./data/x.csv"]
    mid = mk("filesys_mapper", {"pattern": "data/a/*/z.*"}, tmp_path)
    assert [n for _, n in mid.existing()] == ["data/a/b/z.csv", "data/a/b/z.txt"]
    with pytest.raises(MapperError, match="Directory not found: nowhere"):
        mk("filesys_mapper", {"location": "nowhere"}, tmp_path).existing()
    flat = mk("filesys_mapper", {"location": "data", "pattern": "*.csv"}, tmp_path)
    assert [n for _, n in flat.existing()] == ["data/x.csv"]
    q = mk("filesys_mapper", {"location": "data", "pattern": "?.csv"}, tmp_path)
    assert [n for _, n in q.existing()] == ["data/x.csv"]


def test_stage_out_globs_for_dynamic_outputs(tmp_path):
    assert mk("FilesysMapper", {"location": "outs", "pattern": "*.out"}, tmp_path).stage_out_globs() == ["outs/*.out"]
    assert mk("filesys_mapper", {"prefix": "foo"}, tmp_path).stage_out_globs() == ["foo*"]
    sm = mk("SimpleMapper", {"location": "outs", "prefix": "foo", "suffix": ".out"}, tmp_path,
            type_=ArrayType(FILE))
    assert sm.stage_out_globs() == ["outs/foo*.out"]
    assert mk("simple_mapper", {"prefix": "one", "suffix": ".txt"}, tmp_path, type_=FILE).stage_out_globs() == ["one.txt"]
    assert mk("fixed_array_mapper", {"files": "a b"}, tmp_path).stage_out_globs() == []


def test_filesys_rescans_for_dynamic_output(tmp_path):
    m = mk("filesys_mapper", {"pattern": "out*.txt"}, tmp_path)
    assert m.existing() == []
    (tmp_path / "out1.txt").write_text("")
    assert m.existing() == [((Index(0),), "out1.txt")]


def test_fixed_array_mapper():
    m = mk("fixed_array_mapper", {"files": "file1.txt, fileB.txt, file3.txt"})
    assert m.fixed
    assert [m.map((Index(i),)) for i in range(3)] == ["file1.txt", "fileB.txt", "file3.txt"]
    assert mk("fixed_array_mapper", {"files": "a b  c"}).existing()[2] == ((Index(2),), "c")
    assert mk("fixed_array_mapper", {"files": "a;b,\tc"}).existing()[2] == ((Index(2),), "c")
    assert mk("fixed_array_mapper", {"files": {0: "x", 1: "y"}}).map((Index(1),)) == "y"
    with pytest.raises(MapperError, match="out of range"):
        m.map((Index(3),))


def test_array_mapper():
    m = mk("array_mapper", {"files": {0: "a.txt", 1: "b.txt", 2: "c.txt"}})
    assert [m.map((Index(i),)) for i in range(3)] == ["a.txt", "b.txt", "c.txt"]
    files = {1: FileValue("g[1]", "file", "q"), 0: FileValue("g[0]", "file", "p")}
    assert mk("ArrayMapper", {"files": files}).existing() == [((Index(0),), "p"), ((Index(1),), "q")]


def test_regexp_mappers():
    m = mk("regexp_mapper", {"source": "picture.gif", "match": "(.*)gif", "transform": "\\1jpg"})
    assert m.map(()) == "picture.jpg"
    m = mk("regexp_mapper", {"source": FileValue("s", "file", "dir/a_b.in"), "match": "(\\w+)_(\\w+)\\.in",
                             "transform": "\\2-\\1.out"})
    assert m.map(()) == "b-a.out"  # transform is the whole new name
    with pytest.raises(MapperError, match="No match found"):
        mk("regexp_mapper", {"source": "x", "match": "y", "transform": "z"}).map(())
    s = {0: "picture.gif", 1: "hello.gif", 2: "world.gif"}
    sm = mk("structured_regexp_mapper", {"source": s, "match": "(.*)gif", "transform": "\\1jpg"})
    assert sm.fixed
    assert [n for _, n in sm.existing()] == ["picture.jpg", "hello.jpg", "world.jpg"]
    assert sm.map((Index(1),)) == "hello.jpg"
    with pytest.raises(MapperError, match="no element"):
        sm.map((Index(7),))


def test_structured_regexp_mapper_reads_a_growing_source():
    """The source may be an array still being written (076-structured-regexp-mapper):
    elements are looked up when mapped, not when the mapper is built."""

    class LiveView(dict):
        pass

    live = LiveView()
    sm = mk("structured_regexp_mapper", {"source": live, "match": "(.*)per.a(.*)",
                                         "transform": "\\1per.b\\2"})
    live[0] = FileValue("outfile[0]", "messagefile", "076-mapper.a0.out")
    assert sm.map((Index(0),)) == "076-mapper.b0.out"
    live[1] = FileValue("outfile[1]", "messagefile", "076-mapper.a1.out")
    assert [n for _, n in sm.existing()] == ["076-mapper.b0.out", "076-mapper.b1.out"]


def test_csv_mapper(tmp_path):
    (tmp_path / "stu_list.txt").write_text(
        "name,age,gpa\n101-name.txt, 101-age.txt, 101-gpa.txt\nname55.txt, age55.txt, gpa55.txt\nq, r, s\n")
    st = StructType("student", (("name", FILE), ("age", FILE), ("gpa", FILE)))
    m = mk("csv_mapper", {"file": "stu_list.txt"}, tmp_path, type_=ArrayType(st))
    assert m.map((Index(0), Field("name"))) == "101-name.txt"
    assert m.map((Index(1), Field("gpa"))) == "gpa55.txt"
    assert m.map((Index(2), Field("age"))) == "r"
    assert len(m.existing()) == 9 and m.fixed
    (tmp_path / "nohdr.txt").write_text("skipme\na b\nc d\n")
    m = mk("CSVMapper", {"file": "nohdr.txt", "header": False, "skip": 1}, tmp_path)
    # no header: columns are column1, column2... (what 0.96 did, conformance 337)
    assert m.map((Index(0), Field("column2"))) == "b"
    assert m.map((Index(1), Field("column1"))) == "c"
    with pytest.raises(MapperError, match="no column 'column0'"):
        m.map((Index(0), Field("column0")))
    (tmp_path / "sp.txt").write_text("first name,age\nann,3\n\nbob,4\n")
    m = mk("csv_mapper", {"file": "sp.txt", "delim": ","}, tmp_path)
    assert m.map((Index(0), Field("first_name"))) == "ann"
    assert m.map((Index(2), Field("age"))) == "4"  # a blank line is an (empty) element
    (tmp_path / "semi.txt").write_text("x;y\n1;2\n")
    m = mk("csv_mapper", {"file": "semi.txt", "delim": ";"}, tmp_path)
    assert m.map((Index(0), Field("y"))) == "2"


def _script(tmp_path, name, body):
    p = tmp_path / name
    p.write_text("#!/bin/bash\n" + body)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    return name


def test_ext_mapper(tmp_path):
    exe = _script(tmp_path, "mapper.sh", 'echo "[2] qux"\necho "[0] foo"\necho "[1] bar"\n')
    m = mk("ext", {"exec": exe}, tmp_path)
    assert m.needs_prepare and m.fixed
    asyncio.run(asyncio.wait_for(m.prepare(), 20))
    assert [m.map((Index(i),)) for i in range(3)] == ["foo", "bar", "qux"]
    assert [p for p, _ in m.existing()] == [(Index(2),), (Index(0),), (Index(1),)]


def test_ext_mapper_params_and_paths(tmp_path):
    exe = _script(tmp_path, "m.sh", 'echo "\\$ $*"\necho "[0].l left file"\necho "eerste e"\n'
                                    'echo "derde.links d"\necho "[0][0].c[0] deep"\n')
    m = mk("Ext", {"exec": "./" + exe, "prefix": "p_", "n": 3}, tmp_path)
    asyncio.run(asyncio.wait_for(m.prepare(), 20))
    assert m.map(()) == "-prefix p_ -n 3"  # java.util.HashMap order: "prefix" before "n"
    assert m.map((Index(0), Field("l"))) == "left file"
    assert m.map((Field("eerste"),)) == "e"
    assert m.map((Field("derde"), Field("links"))) == "d"
    assert m.map((Index(0), Index(0), Field("c"), Index(0))) == "deep"
    with pytest.raises(MapperError, match="gave no file"):
        m.map((Index(5),))


def test_ext_mapper_runs_a_script_without_execute_bit(tmp_path):
    (tmp_path / "m.sh.in").write_text('#!/bin/bash\necho "eerste a.out"\necho "derde.links cl.out"\n')
    (tmp_path / "plain").write_text('echo "[0] p0"\n')
    m = mk("ext", {"exec": "./m.sh.in"}, tmp_path)
    asyncio.run(asyncio.wait_for(m.prepare(), 20))
    assert m.map((Field("derde"), Field("links"))) == "cl.out"
    m = mk("ext", {"exec": "plain"}, tmp_path)
    asyncio.run(asyncio.wait_for(m.prepare(), 20))
    assert m.map((Index(0),)) == "p0"


def test_ext_mapper_runs_an_executable_script_without_a_shebang(tmp_path):
    # execve refuses it (ENOEXEC); Java's Runtime.exec then ran it with /bin/sh
    p = tmp_path / "noshebang.sh.in"
    p.write_text('echo "[0].l left.out"\necho "[1].r right.out"\n')
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    m = mk("ext", {"exec": "./noshebang.sh.in"}, tmp_path)
    asyncio.run(asyncio.wait_for(m.prepare(), 20))
    assert m.map((Index(1), Field("r"))) == "right.out"


def test_ext_mapper_failure(tmp_path):
    exe = _script(tmp_path, "bad.sh", "echo broken >&2; exit 4\n")
    m = mk("ext", {"exec": exe}, tmp_path)
    with pytest.raises(MapperError, match="External executable failed. Exit code: 4\n\tbroken"):
        asyncio.run(asyncio.wait_for(m.prepare(), 20))


def test_mapper_values_from_lang_types(tmp_path):
    lt = pytest.importorskip("swiftnb.lang.types")
    (tmp_path / "a0000.txt").write_text("")
    m = mk("simple_mapper", {"prefix": "a", "suffix": ".txt"}, tmp_path,
           type_=lt.ArrayType(lt.MappedType("file")))
    assert m.existing() == [((Index(0),), "a0000.txt")]




def test_lang_mapper_table_matches_implementations():
    lm = pytest.importorskip("swiftnb.lang.mappers", reason="LANG's mapper table is not there yet")
    for canonical, (alias, params, required) in lm.MAPPERS.items():
        assert canonical in MAPPERS and alias in MAPPERS, canonical
        cls = MAPPERS[canonical]
        assert MAPPERS[alias] is cls
        assert cls.params == params, canonical
        assert tuple(cls.required) == tuple(required), canonical


def test_test_mapper():
    m = mk("test_mapper", {"file": "t.out", "temp": True})
    assert m.map() == "t.out" and m.temp
