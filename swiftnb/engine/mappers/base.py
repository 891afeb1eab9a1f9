"""The mapper interface: how a Swift variable's parts map to file names.

A mapper is built once per mapped variable from its *evaluated* parameters (plain data:
strings, ints, arrays as dicts, :class:`~swiftnb.engine.data.FileValue`) and a
:class:`MapperContext`.  The engine then asks it

* ``map(path)`` — the file name of one leaf, where ``path`` is a tuple of
  :class:`~swiftnb.engine.data.Index` / :class:`~swiftnb.engine.data.Field` steps (``()``
  is the variable itself);
* ``existing()`` — for inputs and dynamic outputs, the ``(path, filename)`` leaves the
  mapper knows about now (files found on disk, or the fixed list it was given);
* ``fixed`` — True when the mapper's own parameters fix the element set (fixed_array,
  array, csv, ext, structured_regexp): the array is complete with the elements
  ``existing()`` lists, for outputs as well as inputs;
* ``stage_out_globs()`` — for dynamic outputs (filesys, simple), the globs of the files
  an app may produce, for the wrapper to stage back;
* ``await prepare()`` — once, before the first ``map``/``existing``, when
  ``needs_prepare`` is true (the ext mapper runs its script there).

Names returned are as the mapper produced them: relative to ``ctx.base_dir`` unless
absolute (Swift resolved them against its working directory).  See docs/mappers.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from swiftnb.engine.data import (
    BuiltinError,
    Field,
    FileValue,
    Index,
    leaf_files,
    local_path,
    path_str,
    sorted_items,
)
from swiftnb.engine.formatting import java_str

if TYPE_CHECKING:
    from swiftnb.engine.data import TypeLike

__all__ = ["Mapper", "MapperContext", "MapperError", "MAPPERS", "register_mapper", "create_mapper",
           "mapper_names", "reads_file"]


class MapperError(BuiltinError):
    """A mapper that cannot be built (unknown name or parameter, bad value) or cannot map
    a path.  Build errors happen before the run starts (Swift: ``Could not start
    execution:``, exit 1); map errors fail the run (exit 2)."""


@dataclass
class MapperContext:
    """What a mapper knows of its surroundings.

    ``base_dir``: where relative names are resolved (Swift's working directory).
    ``run_dir``: the run directory (concurrent mapper temporaries go under it).
    ``var_name``: the variable's name (``f``, or ``s.f`` for a nested declaration).
    ``type``: the variable's type (a ``swiftnb.engine.data`` or ``swiftnb.lang.types``
    type), when known; SimpleMapper and CSVMapper use it to read names back into paths.
    ``env``: extra environment for the ext mapper's script.
    ``where``: the variable's declaration (``script.swift:3``) and ``writes``: whether it
    is an output, for the mapping checker's messages and rules (swiftnb.engine.mapcheck).
    """

    base_dir: str = "."
    run_dir: str = "."
    var_name: str = "?"
    type: TypeLike | None = None
    env: dict[str, str] | None = None
    where: str = "?"
    writes: bool = False


class Mapper:
    """Base class: subclasses set ``name``, ``aliases``, ``params`` and override ``map``."""

    #: the CamelCase name; ``aliases`` the deprecated snake_case spelling(s)
    name: ClassVar[str] = "Mapper"
    aliases: ClassVar[tuple[str, ...]] = ()
    #: accepted parameter names; ``None`` accepts anything (ext)
    params: ClassVar[frozenset[str] | None] = frozenset()
    #: parameters that must be given
    required: ClassVar[tuple[str, ...]] = ()
    fixed: ClassVar[bool] = False
    needs_prepare: ClassVar[bool] = False
    #: parameters whose *file* the mapper reads (csv_mapper's ``file``): a file variable
    #: given there is waited for until an app has made it; ``None``: every parameter
    #: (ext passes them to a script).  Others take only the name (regexp's ``source``)
    reads_files: ClassVar[frozenset[str] | None] = frozenset()
    #: the files are temporaries: deleted when the scope of the variable ends and
    #: nothing else refers to them (Swift's ``isPersistent() == false``)
    temp: bool = False
    #: assigning another variable's file points the variable at that file instead of
    #: copying it (Swift's ``canBeRemapped``)
    remappable: bool = False
    #: the engine reports what it cleans and remaps on stdout ("Cleaning file x",
    #: "Remapping $ -> y"): Swift's test-suite mapper does, for its check scripts
    reports_cleaning: ClassVar[bool] = False
    #: ``map`` depends on nothing but the steps it is given and the mapper's parameters:
    #: an element's name is made again whenever it is read instead of being kept (a
    #: million mapped elements would keep a million strings)
    names_again: ClassVar[bool] = False

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        self.spelled = spelled or self.name
        if self.params is not None:
            for p in params:
                if p not in self.params:
                    raise MapperError(f"{self.spelled} does not support a '{p}' parameter")
        for p in self.required:
            if p not in params:
                raise MapperError(f"{self.spelled}: missing parameter '{p}'")
        self.p = dict(params)
        self.ctx = ctx

    # -------------------------------------------------------------- interface

    def map(self, path: tuple = ()) -> str:
        raise MapperError(f"{self.spelled} cannot map {path_str(self.ctx.var_name, path)}")

    def existing(self) -> list[tuple[tuple, str]]:
        """Leaves (path, filename) known now; default: none."""
        return []

    def stage_out_globs(self) -> list[str]:
        """For an output whose elements are only known after the app ran ("dynamic
        output": filesys_mapper, simple_mapper): globs (relative to the base directory,
        ``*``/``?`` per path component, ``**`` for directories) of the files the app
        may create, so that the job wrapper can bring them back from the job directory
        before ``existing()`` lists them.  Swift's mappers gave the wrapper the same
        patterns (``getPattern``).  Default: none."""
        return []

    async def prepare(self) -> None:
        """Expensive set-up (subprocesses); called once when ``needs_prepare``."""
        return None

    # -------------------------------------------------------------- helpers

    def invalid(self, path: tuple) -> MapperError:
        return MapperError(
            f"{self.spelled}: invalid path {path_str(self.ctx.var_name, path)} "
            f"(this mapper maps {self.describe()})")

    def describe(self) -> str:
        return "a single file"

    def str_param(self, name: str, default: str | None = None) -> str | None:
        v = self.p.get(name, default)
        if v is None:
            return None
        if isinstance(v, FileValue):
            return v.path or ""
        if isinstance(v, Mapping):
            raise MapperError(f"{self.spelled}: parameter '{name}' must be a string")
        return java_str(v)

    def int_param(self, name: str, default: int) -> int:
        v = self.p.get(name, default)
        if isinstance(v, bool):
            raise MapperError(f"{self.spelled}: parameter '{name}' must be an int")
        if isinstance(v, (int, float)):
            return int(v)
        try:
            return int(str(v).strip())
        except ValueError:
            raise MapperError(f"{self.spelled}: parameter '{name}' must be an int, got {v!r}") from None

    def bool_param(self, name: str, default: bool) -> bool:
        v = self.p.get(name, default)
        if isinstance(v, bool):
            return v
        return str(v).strip().lower() in ("true", "yes", "1")

    def list_param(self, name: str) -> list[str]:
        """A list of names from a string (separated by whitespace, commas or semicolons,
        as Swift's FixedArrayMapper split it) or an array of strings or files (key
        order)."""
        v = self.p.get(name)
        if v is None:
            return []
        if isinstance(v, Mapping):
            out = []
            for _, x in sorted_items(dict(v.items())):
                if isinstance(x, FileValue):
                    out.append(x.path or "")
                elif isinstance(x, Mapping):
                    out.extend(f.path or "" for f in leaf_files(x))
                else:
                    out.append(java_str(x))
            return out
        if isinstance(v, FileValue):
            return [v.path or ""]
        return [t for t in re.split(r"[\s,;]+", str(v)) if t]

    def local(self, name: str) -> str:
        """The on-disk path of a mapped name (relative names against base_dir)."""
        return local_path(self.ctx.base_dir, name)


MAPPERS: dict[str, type[Mapper]] = {}


def register_mapper(cls: type[Mapper]) -> type[Mapper]:
    MAPPERS[cls.name] = cls
    for a in cls.aliases:
        MAPPERS[a] = cls
    return cls


def mapper_names() -> list[str]:
    return sorted(MAPPERS)


def reads_file(mapper: str, param: str) -> bool:
    """Whether mapper ``mapper`` (any spelling) reads the file given as ``param``."""
    cls = MAPPERS.get(mapper)
    if cls is None:
        return False
    return cls.reads_files is None or param in cls.reads_files


def create_mapper(name: str, params: dict[str, Any], ctx: MapperContext) -> Mapper:
    """Build mapper ``name`` (CamelCase or snake_case alias) from evaluated ``params``.
    Unknown names: ``unknown mapper type: 'X'``; unknown parameters:
    ``simple_mapper does not support a 'noauto' parameter``."""
    cls = MAPPERS.get(name)
    if cls is None:
        raise MapperError(f"unknown mapper type: '{name}'")
    return cls(params, ctx, spelled=name)


def index_key(step: Any) -> Any:
    if not isinstance(step, Index):
        raise TypeError(step)
    return step.key


def is_field(step: Any) -> bool:
    return isinstance(step, Field)
