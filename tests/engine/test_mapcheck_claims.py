"""The mapping checker keeps one compact claim per file (issue 30: a run of a million
mapped files): the rules and messages must be those of the full table, with the names
spelled out only when a clash is told.  Real mappers and file nodes, no run."""

from __future__ import annotations

import pytest

from swiftnb.engine.mapcheck import MappingChecker
from swiftnb.engine.mappers.base import MapperContext, create_mapper
from swiftnb.engine.values import FileNode, SwiftError

pytestmark = pytest.mark.timeout(30)


def _simple(base: str, var: str, where: str, writes: bool, prefix: str):
    ctx = MapperContext(base_dir=base, var_name=var, where=where, writes=writes)
    return create_mapper("simple_mapper", {"prefix": prefix, "suffix": ".txt"}, ctx)


def test_two_writers_of_array_elements_name_both_elements(tmp_path):
    checker = MappingChecker(str(tmp_path))
    first, second = _simple(str(tmp_path), "f", "w.swift:3", True, "out/f"), \
        _simple(str(tmp_path), "g", "w.swift:4", True, "./out/f")
    f, g = FileNode("f"), FileNode("g")
    for i in range(1000):
        checker.claim(FileNode(f"f[{i}]"), f"out/f{i:04d}.txt", first)
    checker.claim(f, "out/other.txt", first)
    with pytest.raises(SwiftError) as raised:
        checker.claim(g, "./out/f0007.txt", second)
    assert str(raised.value) == (
        "Duplicate mapping: f[7] (w.swift:3) and g (w.swift:4) are both mapped to "
        "./out/f0007.txt, and both are written; each output needs a file of its own "
        "(mappingCheckerEnabled)")


def test_a_writer_after_two_readers_names_the_first_reader(tmp_path):
    checker = MappingChecker(str(tmp_path))
    reads = _simple(str(tmp_path), "i", "w.swift:2", False, "d")
    writes = _simple(str(tmp_path), "o", "w.swift:5", True, "d")
    checker.claim(FileNode("i"), "data.txt", reads)
    checker.claim(FileNode("j"), "./data.txt", reads)  # two readers: fine
    with pytest.raises(SwiftError) as raised:
        checker.claim(FileNode("o"), f"{tmp_path}/data.txt", writes)
    assert "o (w.swift:5) would write" in str(raised.value)
    assert f"{tmp_path}/data.txt, which i (w.swift:2) reads" in str(raised.value)
    # the clash was not recorded: the reader still holds the file, a second writer
    # meets the reader again
    with pytest.raises(SwiftError, match=r"which i \(w.swift:2\) reads"):
        checker.claim(FileNode("p"), "data.txt", writes)
