"""The mapping checker of one run (``mappingCheckerEnabled``, default true).

Every mapped file is recorded as its name becomes known: an input when its mapping is
bound (before any app reads it), an output at the latest when the app that writes it is
built (before it runs).  A second variable on a file that one writes, or a writer on a
file another reads, is a run-time error of the script naming both variables and their
declarations (:mod:`swiftnb.lang.mapcheck` has the rules and the message); the app that
would have written is not started.  Before anything runs, :meth:`MappingChecker.check_program`
does the same for the files named by literals in the program's root scope.

Paths are compared as files: relative names against the run's base directory, ``.``
and ``..`` resolved, ``file://`` URLs unwrapped, symbolic links of the directory followed.
Temporary files (unmapped variables, ``concurrent_mapper``) have names of their own and
are not recorded.

What the checker cannot do: an input whose name is only known after an app of the same
run has written that file (a mapping computed from that app's result) is reported when
the name is known, and the run fails then; the file was already written.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable

from swiftnb.engine.data import Index, local_path
from swiftnb.engine.mappers.base import Mapper
from swiftnb.engine.mappers.files import SimpleMapper
from swiftnb.engine.values import ArrayNode, FileNode, SwiftError
from swiftnb.lang.checked import CheckedProgram
from swiftnb.lang.mapcheck import (
    Declaration,
    MappedFile,
    MappingTable,
    clashes,
    constant_mappings,
)

__all__ = ["MappingChecker"]

#: directories whose real path is remembered (a run names files in few directories)
_DIR_CACHE_LIMIT = 65536
#: simple_mapper'd arrays whose finder is remembered (one a mapping: an array declared
#: in a loop makes one each time; a finder made again is only a duplicate in the table)
_ELEMENTS_CACHE_LIMIT = 1024


class MappingChecker:
    """The files mapped so far in one run, and who maps them."""

    def __init__(self, base_dir: str) -> None:
        self.base_dir = base_dir
        #: each claim kept as its file node (alive in its array or scope anyway); the
        #: variable's name is only spelled out for a message (see _describe)
        self._table: MappingTable[FileNode] = MappingTable(_describe)
        self._real_dirs: dict[str, str] = {}
        self._reported: set[tuple[str, str, str]] = set()
        #: the outputs of each simple_mapper'd array, found again by name (not kept)
        self._elements: dict[SimpleMapper, _ElementNames] = {}

    def key(self, path: str) -> str:
        """The file a mapped name denotes, as one string for every spelling of it: the
        real path of its directory (remembered per directory as the script spelled it,
        so that a run of many files in few directories resolves each directory once)
        and its own name."""
        head, _, tail = path.rpartition("/")
        if tail in ("", ".", "..") or ":" in path:  # a URL, or a name ending in . or ..
            head, tail = os.path.split(os.path.normpath(local_path(self.base_dir, path)))
        elif not head and path.startswith("/"):
            head = "/"
        real = self._real_dirs.get(head)
        if real is None:
            if len(self._real_dirs) >= _DIR_CACHE_LIMIT:
                self._real_dirs.clear()
            where = head if head.startswith("/") else os.path.join(self.base_dir, head)
            real = self._real_dirs[head] = os.path.realpath(where or "/")
        return f"{real}/{tail}" if real != "/" else f"/{tail}"

    def check_program(self, program: CheckedProgram, skip: Iterable[str] = ()) -> list[str]:
        """The messages of the clashes among the files the program's root scope maps by
        literal names (``skip``: variables whose values are given from outside)."""
        return [c.message for c in clashes(constant_mappings(program, skip), self.key)]

    def claim(self, node: FileNode, path: str, mapper: Mapper) -> None:
        """Record that ``node``'s variable maps ``path`` (by ``mapper``); SwiftError when
        another variable already writes it, or reads it and this one writes."""
        ctx = mapper.ctx
        if mapper.temp or not path:
            return
        key = self.key(path)
        clash = self._table.add(key, node, (ctx.where, ctx.writes),
                                self._source(node, path, key, mapper))
        if clash is None:
            return
        # the new claim's node has no path yet (it is set once the claim is taken)
        clash = dataclasses.replace(clash, second=MappedFile(node.name, ctx.where, path,
                                                             ctx.writes))
        seen = (key, clash.second.variable, clash.second.where)
        if seen in self._reported:  # said once (the mapping, then the app writing it)
            raise SwiftError(clash.message, dependency=True)
        self._reported.add(seen)
        raise SwiftError(clash.message)

    def _source(self, node: FileNode, path: str, key: str,
                mapper: Mapper) -> _ElementNames | None:
        """Where ``node``'s claim can be found again without keeping it: an output
        element ``a[i]`` (int ``i``) of an array that a simple_mapper names, whose node
        then keeps the mapper (``FileNode.derive_path``, filemap.py); else None."""
        parent = node.parent
        if (mapper.__class__ is not SimpleMapper or not mapper.ctx.writes
                or parent.__class__ is not ArrayNode or node.key.__class__ is not int
                or not (parent.parent is None or parent.parent.__class__ is str)
                or ":" in path or not key.endswith("/" + path.rpartition("/")[2])):
            return None
        assert isinstance(mapper, SimpleMapper) and isinstance(parent, ArrayNode)
        source = self._elements.get(mapper)
        if source is None or source.array is not parent:
            source = _ElementNames.of(mapper, parent)
            if source is None:
                return None
            if len(self._elements) >= _ELEMENTS_CACHE_LIMIT:  # arrays made in a loop
                self._elements.clear()
            self._elements[mapper] = source
        return source


class _ElementNames:
    """The output elements of one array that a simple_mapper names: ``claimant(tail)``
    reads the key back from a file name and answers with that element if it holds the
    name.  A simple_mapper's names are prefix + the int key zero-padded + suffix, so
    no two keys share one."""

    __slots__ = ("mapper", "array", "head", "suffix")

    def __init__(self, mapper: SimpleMapper, array: ArrayNode, head: str, suffix: str) -> None:
        self.mapper = mapper
        self.array = array
        self.head = head
        self.suffix = suffix

    @classmethod
    def of(cls, mapper: SimpleMapper, array: ArrayNode) -> _ElementNames | None:
        """None when the names' directory part is not all before the key (a suffix
        with a ``/``)."""
        if "/" in mapper.suffix:
            return None
        head = mapper.map((Index(0),)).rpartition("/")[2]
        head = head[:len(head) - len(mapper.suffix)].rstrip("0")
        return cls(mapper, array, head, mapper.suffix)

    def claimant(self, tail: str) -> FileNode | None:
        if not (tail.startswith(self.head) and tail.endswith(self.suffix)):
            return None
        end = len(tail) - len(self.suffix)
        found = _PADDED_INT.fullmatch(tail, len(self.head), end) if end >= len(self.head) else None
        if found is None:
            return None
        key = int(found.group(1))
        node = self.array.items.get(key)
        if (node.__class__ is not FileNode or node.named_by is not self.mapper
                or self.mapper.map((Index(key),)).rpartition("/")[2] != tail):
            return None
        assert isinstance(node, FileNode)
        return node


#: the key's part of a simple_mapper name: zeros of the padding, then the key
_PADDED_INT = re.compile(r"0*(-?[0-9]+)")


def _describe(node: FileNode, declaration: Declaration) -> MappedFile:
    where, writes = declaration
    return MappedFile(node.name, where, node.path or "", writes)
