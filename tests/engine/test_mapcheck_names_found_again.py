"""The mapping checker keeps nothing per file for the outputs of an array a
simple_mapper names (issue 30: a million calls' outputs): it finds such a file again
by reading the key back from the name.  Clashes must still be told with both names,
whichever side was claimed first.  Real mappers, arrays and file nodes; then a real run."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from swiftnb.engine.data import Index
from swiftnb.engine.mapcheck import MappingChecker
from swiftnb.engine.mappers.base import Mapper, MapperContext, create_mapper
from swiftnb.engine.values import ArrayNode, FileNode, SwiftError, TypeInfo

pytestmark = pytest.mark.timeout(120)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")
FILES = TypeInfo("file[]", "array", elem=TypeInfo("file", "file"))


def _mapper(base: Path, var: str, where: str, params: dict[str, str],
            writes: bool = True) -> Mapper:
    ctx = MapperContext(base_dir=str(base), var_name=var, where=where, writes=writes)
    return create_mapper("simple_mapper", {"suffix": ".txt", **params}, ctx)


def _array(name: str) -> ArrayNode:
    node = FILES.make(name)
    assert isinstance(node, ArrayNode)
    return node


def _claim_element(checker: MappingChecker, array: ArrayNode, key: int,
                   mapper: Mapper) -> FileNode:
    """What filemap.path_of does for an output element: claim, then keep the mapper."""
    node = array.element(key)
    assert isinstance(node, FileNode)
    checker.claim(node, mapper.map((Index(key),)), mapper)
    node.derive_path(mapper)
    return node


def test_a_second_array_on_the_same_names_names_both_elements(tmp_path: Path) -> None:
    checker = MappingChecker(str(tmp_path))
    f, g = _array("f"), _array("g")
    first = _mapper(tmp_path, "f", "w.swift:3", {"prefix": "out/f"})
    second = _mapper(tmp_path, "g", "w.swift:4", {"prefix": "./out/f"})
    for i in range(1, 1001):
        _claim_element(checker, f, i, first)
    _claim_element(checker, g, 5000, second)  # no clash: f has no element 5000
    with pytest.raises(SwiftError) as raised:
        _claim_element(checker, g, 7, second)
    assert str(raised.value) == (
        "Duplicate mapping: f[7] (w.swift:3) and g[7] (w.swift:4) are both mapped to "
        "./out/f0007.txt, and both are written; each output needs a file of its own "
        "(mappingCheckerEnabled)")
    # f's element 5000 meets g's, claimed first
    with pytest.raises(SwiftError, match=r"g\[5000\] \(w.swift:4\) and f\[5000\]"):
        _claim_element(checker, f, 5000, first)


def test_a_plain_file_meets_an_element_either_way(tmp_path: Path) -> None:
    checker = MappingChecker(str(tmp_path))
    f = _array("f")
    elements = _mapper(tmp_path, "f", "w.swift:3", {"prefix": "out/f"})
    for i in range(1, 11):
        _claim_element(checker, f, i, elements)
    reads = _mapper(tmp_path, "i", "w.swift:1", {"prefix": "x"}, writes=False)
    with pytest.raises(SwiftError, match=r"f\[3\] \(w.swift:3\) would write .*out/f0003.txt, "
                                         r"which i \(w.swift:1\) reads"):
        checker.claim(FileNode("i"), f"{tmp_path}/out/f0003.txt", reads)
    checker.claim(FileNode("j"), "out/f3.txt", reads)  # not a name of f's (padding 4)
    checker.claim(FileNode("k"), "out/f0011.txt", reads)  # f has no element 11 yet
    with pytest.raises(SwiftError, match=r"f\[11\] \(w.swift:3\) would write out/f0011.txt, "
                                         r"which k \(w.swift:1\) reads"):
        _claim_element(checker, f, 11, elements)


@pytest.mark.parametrize(("params", "key", "name"), [
    ({"prefix": "out/f0"}, 12, "out/f00012.txt"),       # a prefix ending in a zero
    ({"prefix": "out/f10"}, 0, "out/f100000.txt"),
    ({"prefix": "out/f"}, -1, "out/f00-1.txt"),          # a negative key, padded
    ({"prefix": "out/f", "padding": "0"}, 0, "out/f0.txt"),
    ({"prefix": "out/f", "padding": "0"}, 123456, "out/f123456.txt"),
])
def test_names_are_read_back_whatever_the_padding(tmp_path: Path, params: dict[str, str],
                                                  key: int, name: str) -> None:
    checker = MappingChecker(str(tmp_path))
    f = _array("f")
    mapper = _mapper(tmp_path, "f", "w.swift:3", params)
    _claim_element(checker, f, key, mapper)
    element = f.items.get(key)
    assert isinstance(element, FileNode) and element.path == name
    writes = _mapper(tmp_path, "o", "w.swift:9", {"prefix": "o"})
    with pytest.raises(SwiftError, match=rf"f\[{key}\] \(w.swift:3\) and o \(w.swift:9\)"):
        checker.claim(FileNode("o"), name, writes)


def test_elements_claim_no_memory_of_their_own(tmp_path: Path) -> None:
    """20,000 claimed elements: what the checker allocates for them, nodes apart (the
    array keeps those), stays under 8 bytes a file (it kept ~97 before)."""
    checker = MappingChecker(str(tmp_path))
    f = _array("f")
    mapper = _mapper(tmp_path, "f", "w.swift:3", {"prefix": "out/f"})
    nodes = [f.element(i) for i in range(20_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.take_snapshot()
        for i, node in enumerate(nodes):
            assert isinstance(node, FileNode)
            checker.claim(node, mapper.map((Index(i),)), mapper)
            node.derive_path(mapper)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename")
                if s.traceback[0].filename.endswith("mapcheck.py"))
    assert grown < 8 * len(nodes), f"{grown / len(nodes):.0f} B a file"


def test_a_run_with_two_arrays_on_one_name_fails_naming_both(tmp_path: Path) -> None:
    (tmp_path / "clash.swift").write_text(
        'type file;\napp (file o) echo (int i) { echo i stdout=@o; }\n'
        'file f[] <simple_mapper; prefix="out/f", suffix=".txt">;\n'
        'file g[] <simple_mapper; prefix="out/f", suffix=".txt">;\n'
        'foreach i in [1:50] { f[i] = echo(i); }\n'
        'g[7] = echo(70);\n')
    p = subprocess.run([SWIFTNB, "clash.swift"], cwd=tmp_path, text=True,
                       capture_output=True, timeout=100)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "Duplicate mapping:" in out, out
    assert "f[7] (clash.swift:3)" in out and "g[7] (clash.swift:4)" in out, out


def test_arrays_made_in_a_loop_still_meet_past_the_sources_kept(tmp_path: Path) -> None:
    """An array declared in a loop body is a mapping each time: beyond the 16 finders a
    directory keeps, claims are kept per file; a clash is found on both sides."""
    checker = MappingChecker(str(tmp_path))
    for j in range(40):
        mapper = _mapper(tmp_path, "f", "w.swift:3", {"prefix": f"out/p{j}_"})
        array = _array("f")
        for i in range(1, 4):
            _claim_element(checker, array, i, mapper)
    for j in (5, 30):  # a finder kept, and a claim kept per file
        again = _mapper(tmp_path, "f", "w.swift:3", {"prefix": f"out/p{j}_"})
        with pytest.raises(SwiftError, match=rf"f\[2\] \(w.swift:3\) and f\[2\] \(w.swift:3\) "
                                             rf"are both mapped to out/p{j}_0002.txt"):
            _claim_element(checker, _array("f"), 2, again)
