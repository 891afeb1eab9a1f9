"""What an array element keeps (issue 30): a mapped file element is a node of two
pointers beyond Node's, whose name its simple_mapper makes again when read; arrays keyed
from 1 are kept by position; the loop body ``a[i] = x op C`` reads the frame's slots
directly.  Every case checks that scripts print what they printed before."""

from __future__ import annotations

import os
import sys
from array import array

from swiftnb.engine.denseitems import DenseItems, OffsetItems
from swiftnb.engine.mappers.base import Mapper
from swiftnb.engine.values import ArrayNode, FileNode, TypeInfo

INTS = TypeInfo("int[]", "array", elem=TypeInfo("int", "prim"))
IMAGE = TypeInfo("image", "file")
IMAGES = TypeInfo("image[]", "array", elem=IMAGE)

BAG = """type file;
app (file o) echo (int i) { echo i stdout=@o; }
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:12] { f[i] = echo(i); }
trace(filename(f[3]), @f[12]);
"""


def _top(result, name: str):  # noqa: ANN001, ANN202 - a test's Result and the node
    sym = result.run.compiler.top.syms[name]
    return result.run.top_frame[sym.slot]


def test_a_mapped_element_keeps_neither_its_name_nor_rarities(swift, tmp_path) -> None:
    r = swift(BAG)
    assert r.outcome.ok, r.outcome.errors
    assert r.lines == ["SwiftScript trace: out/f0003.txt, out/f0012.txt"]
    f = _top(r, "f")
    assert isinstance(f.items, OffsetItems) and list(f.items.keys()) == list(range(1, 13))
    for i in range(1, 13):
        node = f.items[i]
        assert isinstance(node, FileNode)
        assert isinstance(node._path, Mapper)  # the name is made again, not kept
        assert node._rare is None  # no mapping, tag or collection counts of its own
        assert node.path == f"out/f{i:04d}.txt" and node.tname == "file"
        with open(tmp_path / node.path) as out:  # the app really wrote it there
            assert out.read() == f"{i}\n"
        # two headers (the object's, the collector's) and Node's five pointers and two:
        # adding a slot to every element must be a choice
        assert sys.getsizeof(node) <= 32 + 7 * 8


def test_rare_attributes_read_their_defaults_until_set() -> None:
    node = FileNode("x")
    assert (node.temporary, node.mapped_by, node.gc_temp, node.gc_refs, node.gc_of) == (
        False, None, False, 0, None)
    node.gc_temp = False
    node.gc_refs = 0
    assert node._rare is None  # setting a default makes nothing
    other = FileNode("y")
    node.gc_refs = 2
    node.gc_of = other
    node.temporary = "x-3"
    assert node._rare is not None
    assert (node.gc_refs, node.gc_of, node.temporary, node.gc_temp) == (2, other, "x-3", False)
    node.path = "a.txt"
    assert node.path == "a.txt" and node.value == "a.txt"


def test_the_type_name_comes_from_the_array_or_is_kept() -> None:
    images = ArrayNode(IMAGES, "imgs")
    images.add_writer()
    made = images.element(0)
    assert isinstance(made, FileNode) and made.tname == "image" and made._rare is None
    anonymous = FileNode(None, None, "p.txt")  # a plain file value put into the array
    images.put(1, anonymous)
    assert anonymous.parent is images and anonymous.tname == "file"
    assert FileNode("v", None, None, "image").tname == "image"


def test_keys_from_one_are_kept_by_position_and_read_like_a_dict() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    for k in range(1, 6):
        arr.set_value(k, k * 10)
    items = arr.items
    assert isinstance(items, OffsetItems) and isinstance(items.vals, array)
    as_dict = {1: 10, 2: 20, 3: 30, 4: 40, 5: 50}
    assert list(items.items()) == list(as_dict.items()) and len(items) == 5
    for key in (0, 1, 5, 6, 3.0, True, "2", -1):
        assert items.get(key) == as_dict.get(key), key
        assert (key in items) == (key in as_dict), key
    assert arr.lookup(4) == 40 and arr.sorted_keys() == [1, 2, 3, 4, 5]
    arr.set_value(0, 0)  # before the first key: a dict, in arrival order
    assert isinstance(arr.items, dict) and list(arr.items) == [1, 2, 3, 4, 5, 0]
    assert arr.sorted_keys() == [0, 1, 2, 3, 4, 5]
    plain = ArrayNode(INTS, "b")
    plain.add_writer()
    plain.set_value(0, 7)
    assert plain.items.__class__ is DenseItems  # from 0: the engine's fast path


def test_scripts_print_the_same_with_keys_from_one_and_slot_reads(swift) -> None:
    r = swift("""
int a[];
foreach i in [1:5] { a[i] = i * 2; }
a[0] = 100;
int w[];
foreach v, k in a { w[k] = v + 1; }
int big[] = [2147483647, 1073741824, -2147483647 - 1];
int wrapped[];
foreach v, k in big { wrapped[k] = v * 2; }
int plus[];
foreach v, k in big { plus[k] = v + 1; }
float fl[] = [1.5, 2.0];
float halves[];
foreach v, k in fl { halves[k] = v * 2; }
string s[] = ["x", "y"];
string t[];
foreach v, k in s { t[k] = v + 1; }
int named[string];
named["p"] = 1;
named["q"] = 2;
int byname[string];
foreach v, k in named { byname[k] = v * 3; }
int late[];
int z;
foreach v, k in late { late2[k] = v + 5; }
int late2[];
late[0] = z;
late[1] = 4;
z = 9;
trace(a, w, wrapped, plus, halves, t, byname, late2);
""")
    assert r.outcome.ok, r.outcome.errors
    assert r.lines == [
        "SwiftScript trace: {0 = 100, 1 = 2, 2 = 4, 3 = 6, 4 = 8, 5 = 10}, "
        "{0 = 101, 1 = 3, 2 = 5, 3 = 7, 4 = 9, 5 = 11}, "
        "{0 = -2, 1 = -2147483648, 2 = 0}, {0 = -2147483648, 1 = 1073741825, 2 = -2147483647}, "
        "{0 = 3.0, 1 = 4.0}, {0 = x1, 1 = y1}, {p = 3, q = 6}, {0 = 14, 1 = 9}",
    ]


def test_a_simple_mapper_name_is_the_same_read_again(swift, tmp_path) -> None:
    r = swift("""
type file;
app (file o) echo (string s) { echo s stdout=@o; }
file g[][] <simple_mapper; location="deep", prefix="g", suffix=".dat", padding=2>;
foreach i in [0:2] { foreach j in [5:6] { g[i][j] = echo(strcat(i, "-", j)); } }
trace(@g[2][6], filenames(g));
""")
    assert r.outcome.ok, r.outcome.errors
    names = [f"deep/g{i:02d}_{j:02d}.dat" for i in range(3) for j in (5, 6)]
    listed = ", ".join(f"{k} = {n}" for k, n in enumerate(names))
    assert r.lines == [f"SwiftScript trace: deep/g02_06.dat, {{{listed}}}"]
    assert sorted(os.listdir(tmp_path / "deep")) == sorted(n.split("/")[1] for n in names)
