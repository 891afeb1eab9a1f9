"""The mapping checker's rules (``mappingCheckerEnabled``), and the files a program maps
by constant names.

Two variables mapped to one file lose data: two outputs, and only the last written
survives; an output and an input, and the app overwrites what the run reads.  Swift 0.96's
``DuplicateMappingChecker`` saw every mapped file as its variable was initialised and
printed ``WARNING: duplicate mapping found``; the run went on and the data was lost.
swiftnb makes it an error, named with both variables and their declarations, before the
second variable's file is written or read.  Reading one file through two input variables
is fine, and so is anything one variable does with its own file (passed twice, a struct
and its member, an output read by a later app).

:class:`MappingTable` holds the rules; the engine feeds it the files of a run as their
names become known (``swiftnb.engine.mapcheck``), and before the run starts, the files
of :func:`constant_mappings`: those whose names are literals in declarations that run
exactly once (the program's root scope), so that such a clash stops the run before any
app runs.  Nothing here knows of execution: paths are compared by the key the caller
gives (the engine resolves them against the run's directory).
"""

from __future__ import annotations

import enum
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from swiftnb.lang import ast
from swiftnb.lang import types as T
from swiftnb.lang.checked import CheckedProgram

C = TypeVar("C")
C_co = TypeVar("C_co", covariant=True)

__all__ = ["MappedFile", "Declaration", "Clash", "ClashKind", "MappingTable", "NameSource",
           "constant_mappings", "clashes"]


@dataclass(frozen=True, slots=True)
class MappedFile:
    """One file of one variable: ``variable`` as people name it (``o``, ``o[2]``,
    ``s.f``), ``where`` its declaration (``script.swift:3``), ``path`` as mapped,
    ``writes`` when the variable is an output (assigned), else it is read."""

    variable: str
    where: str
    path: str
    writes: bool

    def __str__(self) -> str:
        return f"{self.variable} ({self.where})"


class ClashKind(enum.Enum):
    """How two variables meet on one file."""

    #: both are outputs: one app's file replaces the other's
    TWO_WRITERS = "two writers"
    #: one is an output, the other an input: the app overwrites what the run reads
    WRITER_AND_READER = "writer and reader"


@dataclass(frozen=True, slots=True)
class Clash:
    """Two variables mapped to one file, which the run must not do."""

    kind: ClashKind
    first: MappedFile
    second: MappedFile

    @property
    def message(self) -> str:
        path = self.second.path
        if self.kind is ClashKind.TWO_WRITERS:
            return (f"Duplicate mapping: {self.first} and {self.second} are both mapped to "
                    f"{path}, and both are written; each output needs a file of its own "
                    "(mappingCheckerEnabled)")
        writer, reader = ((self.first, self.second) if self.first.writes
                          else (self.second, self.first))
        return (f"Duplicate mapping: {writer} would write {path}, which {reader} reads; "
                "an output may not overwrite an input of the same run "
                "(mappingCheckerEnabled)")


#: the declaration a claim comes from: (``where``, ``writes``), as in :class:`MappedFile`
Declaration = tuple[str, bool]

#: name sources kept per directory: beyond these, claims are kept per file (a lookup
#: asks every source of the directory, so they must stay few)
SOURCES_PER_DIRECTORY = 16


class NameSource(Protocol[C_co]):
    """Files of one mapping whose names can be found again rather than kept: one
    mapper's elements, each name made from its key alone and no two keys sharing a
    name.  ``claimant(tail)`` is the claimant already holding the file ``tail`` of the
    source's directory, if any."""

    def claimant(self, tail: str) -> C_co | None: ...


class MappingTable(Generic[C]):
    """The files mapped so far, by key; :meth:`add` says whether a new one clashes.

    One claimant is kept per file: its writer, else its first reader (a writer meeting
    either is a clash, and a clash is not recorded, so the two never share a file).
    Claimants are whatever the caller finds cheapest to keep (a run of millions of files
    keeps them compact); ``describe`` makes a :class:`MappedFile` of one and its
    declaration, when a clash has to be told or a second claim compared.  Keys are
    split at their last ``/`` and grouped by directory, then by declaration (both are
    few: a claim looks in each declaration's files of its directory), so that each file
    keeps only its own name and its claimant.

    Files whose names a :class:`NameSource` can find again (a simple_mapper's elements:
    a million calls' outputs) keep nothing of their own: :meth:`add` with ``source``
    keeps the source once per directory, and a later claim in that directory asks it.
    """

    def __init__(self, describe: Callable[[C, Declaration], MappedFile]) -> None:
        self._dirs: dict[str, list[tuple[Declaration, dict[str, C]]]] = {}
        self._sources: dict[str, list[tuple[Declaration, NameSource[C]]]] = {}
        self._describe = describe

    def add(self, key: str, claimant: C, declaration: Declaration,
            source: NameSource[C] | None = None) -> Clash | None:
        """Record ``claimant`` of ``declaration`` under ``key``; the clash it makes, if
        any (then it is not recorded, so that the first variable keeps the file).
        With ``source`` (whose claimant ``claimant`` becomes once recorded), the claim is
        kept as the source alone, while its directory has few sources."""
        head, _, tail = key.rpartition("/")
        groups = self._dirs.get(head)
        if groups is None:
            groups = self._dirs[head] = []
        mine: dict[str, C] | None = None
        for seen_in, files in groups:
            first = files.get(tail)
            if first is not None:
                return self._met(first, seen_in, claimant, declaration)
            if seen_in == declaration:
                mine = files
        sources = self._sources.get(head)
        if sources is not None:  # after the files kept: a first reader is found first
            for seen_in, other in sources:
                if other is source:
                    continue  # no two of its keys share a name: the claimant's own file
                first = other.claimant(tail)
                if first is not None:
                    return self._met(first, seen_in, claimant, declaration)
        if source is not None:
            if sources is None:
                sources = self._sources[head] = []
            if any(other is source for _, other in sources):
                return None
            if len(sources) < SOURCES_PER_DIRECTORY:
                sources.append((declaration, source))
                return None
        if mine is None:
            mine = {}
            groups.append((declaration, mine))
        mine[tail] = claimant
        return None

    def _met(self, first: C, seen_in: Declaration, claimant: C,
             declaration: Declaration) -> Clash | None:
        """The clash of ``claimant`` with the file's ``first`` claimant, if any."""
        known = self._describe(first, seen_in)
        writes = declaration[1]
        if not writes and not known.writes:
            return None  # two readers: the first one is enough to name
        kind = (ClashKind.TWO_WRITERS if writes and known.writes
                else ClashKind.WRITER_AND_READER)
        return Clash(kind, known, self._describe(claimant, declaration))


def constant_mappings(program: CheckedProgram, skip: Iterable[str] = ()) -> list[MappedFile]:
    """The files mapped by literal names in the declarations of the root scope (which run
    once per run): ``<"x">``, ``single_file_mapper; file="x"``, and the literal lists of
    ``array_mapper`` / ``fixed_array_mapper``.  ``skip``: names of
    variables whose values come from outside (a notebook's earlier cells)."""
    skipped = set(skip)
    out: list[MappedFile] = []
    for stmt in program.program.statements:
        if not isinstance(stmt, ast.VarDecl):
            continue
        for decl in stmt.declarators:
            if decl.mapping is None or decl.name in skipped:
                continue
            symbol = program.symbol_of(decl)
            where = f"{os.path.basename(decl.pos.file)}:{decl.pos.line}"
            writes = bool(symbol.writers) or decl.init is not None
            for variable, path in _leaves(decl.name, symbol.type, decl.mapping):
                out.append(MappedFile(variable, where, path, writes))
    return out


def clashes(files: Iterable[MappedFile], key: Callable[[str], str]) -> list[Clash]:
    """Every clash among ``files`` (each compared by ``key(path)``), in order."""
    table: MappingTable[MappedFile] = MappingTable(lambda f, _: f)
    found = []
    for f in files:
        clash = table.add(key(f.path), f, (f.where, f.writes))
        if clash is not None:
            found.append(clash)
    return found


_MAPPER_KINDS = {"single_file_mapper": "single", "singlefilemapper": "single",
                 "array_mapper": "list", "arraymapper": "list",
                 "fixed_array_mapper": "list", "fixedarraymapper": "list"}


def _leaves(name: str, type_: T.SwiftType, mapping: ast.Mapping) -> list[tuple[str, str]]:
    """(variable, path) of each file a constant mapping names; none when it is not
    constant or not one of the mappers above."""
    if mapping.mapper is None:  # <"x">: the single file mapper
        text = _text(mapping.source)
        return [] if text is None or not _is_file(type_) else [(name, text)]
    kind = _MAPPER_KINDS.get(mapping.mapper.lower())
    if kind is None:
        return []
    params = {p.name: p.value for p in mapping.params}
    if kind == "single":
        text = _text(params.get("file"))
        return [] if text is None or not _is_file(type_) else [(name, text)]
    if not isinstance(type_, T.ArrayType) or not _is_file(type_.element):
        return []
    names = _names(params.get("files"))
    return [] if names is None else [(f"{name}[{i}]", n) for i, n in enumerate(names)]


def _is_file(type_: T.SwiftType) -> bool:
    return isinstance(type_, T.MappedType)


def _text(expr: ast.Expr | None) -> str | None:
    """The value of a constant string expression (literals joined by ``+``), else None."""
    if isinstance(expr, ast.StringLiteral):
        return expr.value
    if isinstance(expr, ast.BinaryOp) and expr.op == "+":
        left, right = _text(expr.left), _text(expr.right)
        if left is not None and right is not None:
            return left + right
    return None


def _names(expr: ast.Expr | None) -> list[str] | None:
    """The names of a constant file list: a literal array of constant strings, or one
    string of names separated by spaces, commas or semicolons (as the list mappers split
    it); None when not constant."""
    if isinstance(expr, ast.ArrayLiteral):
        names = [_text(item) for item in expr.items]
        return None if any(n is None for n in names) else [n for n in names if n is not None]
    text = _text(expr)
    if text is None:
        return None
    return [t for t in re.split(r"[\s,;]+", text) if t]
