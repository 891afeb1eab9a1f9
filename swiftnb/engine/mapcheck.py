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
from collections.abc import Iterable

from swiftnb.engine.data import local_path
from swiftnb.engine.mappers.base import Mapper
from swiftnb.engine.values import FileNode, SwiftError
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


class MappingChecker:
    """The files mapped so far in one run, and who maps them."""

    def __init__(self, base_dir: str) -> None:
        self.base_dir = base_dir
        #: each claim kept as its file node (alive in its array or scope anyway); the
        #: variable's name is only spelled out for a message (see _describe)
        self._table: MappingTable[FileNode] = MappingTable(_describe)
        self._real_dirs: dict[str, str] = {}
        self._reported: set[tuple[str, str, str]] = set()

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
        clash = self._table.add(key, node, (ctx.where, ctx.writes))
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


def _describe(node: FileNode, declaration: Declaration) -> MappedFile:
    where, writes = declaration
    return MappedFile(node.name, where, node.path or "", writes)
