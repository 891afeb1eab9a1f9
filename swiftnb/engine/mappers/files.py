"""Name-building mappers: single_file, simple, concurrent (the default) and filesys."""

from __future__ import annotations

import itertools
import os
import re
import stat
from typing import Any

from swiftnb.engine.data import (
    ArrayType,
    Field,
    Index,
    Step,
    StructType,
    as_data_type,
    url_path,
)
from swiftnb.engine.formatting import java_str
from swiftnb.engine.mappers.base import Mapper, MapperContext, MapperError, register_mapper


def _file_url_path(name: str) -> str:
    """``file://localhost/x.out`` and ``file:///x`` name local files."""
    return url_path(name)


def _join_location(location: str, name: str) -> str:
    """``location/name`` (as Swift: ``./name`` for location ``.``); no location adds
    nothing."""
    if not location:
        return name
    if location.strip("/") == "":
        return "/" + name
    return location.rstrip("/") + "/" + name


@register_mapper
class SingleFileMapper(Mapper):
    """``<single_file_mapper; file="x">`` and ``<"x">``: one file for the whole variable."""

    name = "SingleFileMapper"
    aliases = ("single_file_mapper",)
    params = frozenset({"file"})
    required = ("file",)

    def map(self, path: tuple = ()) -> str:
        if path:
            raise self.invalid(path)
        return _file_url_path(self.str_param("file") or "")

    def existing(self) -> list[tuple[tuple, str]]:
        f = self.map(())
        return [((), f)] if os.path.exists(self.local(f)) else []


def _elem_str(step: Any, padding: int) -> str:
    if isinstance(step, Field):
        return step.name
    k = step.key
    if isinstance(k, int) and not isinstance(k, bool):
        # Swift padded String.valueOf(index) as is, sign included (-5 -> "00-5")
        return str(k).rjust(padding, "0") if padding > 0 else str(k)
    return java_str(k)


def swift_pattern(prefix: str | None, pattern: str | None, suffix: str | None) -> str:
    """The glob Swift's file mappers list inputs with (``AbstractFileMapper``):
    ``prefix*``, then ``pattern`` instead of that ``*`` if given, then ``*suffix``
    (the ``*`` only when nothing else is a wildcard yet)."""
    out = ""
    wildcard = False
    if prefix:
        out += prefix + "*"
        wildcard = True
    if pattern:
        out += pattern
        wildcard = False
    if suffix:
        if not wildcard:
            out += "*"
        out += suffix
    return out or "*"


def _component_regex(token: str) -> re.Pattern:
    """One path component of a Swift glob: ``*`` any characters, ``?`` one, the rest
    literal (Swift escaped ``[]`` too, so there are no character classes)."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in token)
    return re.compile(rx + r"\Z", re.S)


def list_files(base_dir: str, location: str, glob: str) -> list[str]:
    """Files matching ``glob`` under ``location`` (relative to ``base_dir`` unless
    absolute), as Swift's mappers list them: the glob is split on ``/``; the last
    component matches files, earlier ones directories, a ``**`` component any depth of
    directories (including none).  Sorted; returned joined to ``location``.  A missing
    ``location`` is an error, as in Swift (``Directory not found: X``)."""
    root = location if os.path.isabs(location) else os.path.join(base_dir, location or ".")
    try:
        top = os.stat(root)
    except (FileNotFoundError, NotADirectoryError):
        top = None
    except OSError as e:
        raise _walk_error(location or ".", e) from None
    if top is None or not stat.S_ISDIR(top.st_mode):
        if location:
            raise MapperError(f"Directory not found: {location}")
        return []
    tokens = [t for t in glob.split("/") if t]
    if not tokens:
        return []
    if tokens[-1] == "**":
        raise MapperError("** cannot be the last path element in a path pattern")
    found: list[str] = []

    def shown(rel: str) -> str:
        return _join_location(location, rel) if rel else (location or ".")

    def listing(rel: str) -> list[os.DirEntry]:
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as it:
                return sorted(it, key=lambda e: e.name)
        except (FileNotFoundError, NotADirectoryError):
            return []  # gone since it was seen: nothing there to list
        except OSError as e:
            raise _walk_error(shown(rel), e) from None

    def walk(rel: str, pos: int, chain: frozenset) -> None:
        token = tokens[pos]
        entries = listing(rel)
        if pos == len(tokens) - 1:
            rx = _component_regex(token)
            for e in entries:
                if rx.match(e.name) and _is(e, False, shown(_sub(rel, e.name))):
                    found.append(_sub(rel, e.name))
        elif token == "**":
            walk(rel, pos + 1, chain)
            for e in entries:
                if _is(e, True, shown(_sub(rel, e.name))):
                    walk_all(_sub(rel, e.name), pos + 1, chain)
        else:
            rx = _component_regex(token)
            for e in entries:
                if rx.match(e.name) and _is(e, True, shown(_sub(rel, e.name))):
                    walk(_sub(rel, e.name), pos + 1, chain)

    def walk_all(rel: str, pos: int, chain: frozenset) -> None:
        """Every directory under ``rel`` (``**``), following links to directories but
        refusing one that leads back into the directories above it (a loop)."""
        chain = chain | {_identity(os.path.join(root, rel), shown(rel), chain)}
        walk(rel, pos, chain)
        for e in listing(rel):
            if _is(e, True, shown(_sub(rel, e.name))):
                walk_all(_sub(rel, e.name), pos, chain)

    start = frozenset({(top.st_dev, top.st_ino)})
    walk("", 0, start)
    found = sorted(set(found))
    return [_join_location(location, f) for f in found]


def _sub(rel: str, name: str) -> str:
    return f"{rel}/{name}" if rel else name


def _walk_error(shown: str, e: OSError) -> MapperError:
    """A directory that cannot be listed, named (an OSError alone names nothing)."""
    return MapperError(f"cannot list the files of {shown}: {e.strerror or e}")


def _is(entry: os.DirEntry, directory: bool, shown: str) -> bool:
    """Whether ``entry`` (links followed) is a directory / a regular file; a link that
    cannot be followed (a loop, no permission) is an error naming it, a dangling one
    is neither."""
    try:
        return entry.is_dir() if directory else entry.is_file()
    except OSError as e:
        raise MapperError(f"cannot tell what {shown} is: {e.strerror or e}") from None


def _identity(path: str, shown: str, chain: frozenset) -> tuple[int, int]:
    """(device, inode) of a directory met under ``**``; one already on the way down to
    it is a link back up, refused by name rather than walked for ever."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise _walk_error(shown, e) from None
    ident = (st.st_dev, st.st_ino)
    if ident in chain:
        raise MapperError(f"cannot list the files of {shown}: it is a link back to a "
                          "directory above it (a loop)")
    return ident


@register_mapper
class SimpleMapper(Mapper):
    """``simple_mapper``: [location/] prefix + path elements + suffix.

    Int keys are zero-padded to ``padding`` digits (default 4, 0 = none); field names
    verbatim; the ``separator`` (default ``_``) goes between the last two elements and
    ``.`` between earlier ones; nothing between prefix and the first element.  For
    inputs, ``existing()`` lists matching files and reads their names back into paths.
    """

    name = "SimpleMapper"
    aliases = ("simple_mapper",)
    params = frozenset({"location", "prefix", "suffix", "pattern", "padding", "separator"})
    names_again = True

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.location = self.str_param("location", "") or ""
        self.prefix = self.str_param("prefix", "") or ""
        self.suffix = self.str_param("suffix", "") or ""
        self.pattern = self.str_param("pattern")
        self.padding = self.int_param("padding", 4)
        separator = self.str_param("separator", "_")
        self.separator: str = "_" if separator is None else separator
        #: what every name starts with: made once, as ``map`` runs for every call's output
        self._head = self._dir() + self.prefix

    def describe(self) -> str:
        return "prefix/index/field/suffix names"

    def _dir(self) -> str:
        if not self.location:
            return ""
        return self.location if self.location.endswith("/") else self.location + "/"

    def map(self, path: tuple = ()) -> str:
        if len(path) == 1:  # the usual case, an element of a mapped array: f[i]
            step = path[0]
            if step.__class__ is Index and step.key.__class__ is int:
                padding = self.padding
                key = str(step.key)
                return (f"{self._head}{key.rjust(padding, '0') if padding > 0 else key}"
                        f"{self.suffix}")
        elems = [_elem_str(s, self.padding) for s in path]
        if len(elems) >= 2:
            middle = ".".join(elems[:-1]) + self.separator + elems[-1]
        else:
            middle = "".join(elems)
        return self._dir() + self.prefix + middle + self.suffix

    def _leaf_shape(self) -> list[str]:
        """Step kinds expected for a leaf, from the variable type ("i" index, "f" field)."""
        t = as_data_type(self.ctx.type)
        shape: list[str] = []
        while isinstance(t, ArrayType):
            shape.append("i:" + t.key)
            t = t.elem
        if isinstance(t, StructType):
            shape.append("f")
        return shape

    def _parse_middle(self, middle: str, shape: list[str]) -> tuple | None:
        if not shape:
            return () if middle == "" else None
        if len(shape) == 1:
            parts = [middle]
        else:
            head, sep, last = middle.rpartition(self.separator) if self.separator else ("", "", middle)
            if not sep:
                return None
            parts = head.split(".") + [last]
            if len(parts) != len(shape):
                return None
        steps: list[Step] = []
        for kind, part in zip(shape, parts):
            if kind == "f":
                if not part:
                    return None
                steps.append(Field(part))
            else:
                key = kind[2:]
                if key in ("int", "auto"):
                    if not re.fullmatch(r"-?\d+", part):
                        return None
                    steps.append(Index(int(part)))
                elif key == "float":
                    try:
                        steps.append(Index(float(part)))
                    except ValueError:
                        return None
                elif key == "boolean":
                    if part not in ("true", "false"):
                        return None
                    steps.append(Index(part == "true"))
                else:
                    steps.append(Index(part))
        return tuple(steps)

    def stage_out_globs(self) -> list[str]:
        if not self._leaf_shape():
            return [self.map(())]
        return [self._dir() + swift_pattern(self.prefix, self.pattern, self.suffix)]

    def existing(self) -> list[tuple[tuple, str]]:
        shape = self._leaf_shape()
        if not shape:
            f = self.map(())
            return [((), f)] if os.path.exists(self.local(f)) else []
        glob = swift_pattern(self.prefix, self.pattern, self.suffix)
        names = list_files(self.ctx.base_dir, self.location, glob)
        out = []
        d = self._dir()
        for n in names:
            base = n[len(d):] if d and n.startswith(d) else n
            middle = base[len(self.prefix): len(base) - len(self.suffix) if self.suffix else None]
            if not base.startswith(self.prefix) or not base.endswith(self.suffix):
                continue
            steps = self._parse_middle(middle, shape)
            if steps is None:
                continue
            out.append((steps, n))
        out.sort(key=lambda ps: tuple(_sort_step(s) for s in ps[0]))
        return out


def _sort_step(s: Any) -> tuple:
    if isinstance(s, Field):
        return (3, 0, s.name)
    k = s.key
    if isinstance(k, bool):
        return (0, int(k), "")
    if isinstance(k, (int, float)):
        return (1, k, "")
    return (2, 0, k)


_CONCURRENT_IDS = itertools.count(1)


@register_mapper
class ConcurrentMapper(Mapper):
    """``concurrent_mapper``, the default for unmapped file variables: unique names under
    the run directory, ``_concurrent/<prefix|var>-<unique>`` for the variable itself,
    ``.../--array/elt-<key>`` for elements and ``.../--field/<name>`` for members,
    then the suffix."""

    name = "ConcurrentMapper"
    aliases = ("concurrent_mapper",)
    params = frozenset({"location", "prefix", "suffix", "pattern"})
    temp = True        # Swift: deleted when out of scope (fileGCEnabled)
    remappable = True  # Swift: an assigned file replaces the mapping

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.prefix = self.str_param("prefix", "") or ""
        self.suffix = self.str_param("suffix", "") or ""
        loc = self.str_param("location")
        if loc:
            self.root = loc.rstrip("/")
        else:
            run = ctx.run_dir or "."
            try:
                rel = os.path.relpath(run, ctx.base_dir)
            except ValueError:
                rel = run
            if rel.startswith(".."):
                rel = os.path.abspath(run)
            self.root = ("" if rel == "." else rel.rstrip("/") + "/") + "_concurrent"
        var = re.sub(r"[^A-Za-z0-9_.-]", "_", ctx.var_name or "tmp") or "tmp"
        uid = f"{next(_CONCURRENT_IDS):06d}-{os.urandom(6).hex()}"
        self.base = f"{self.root}/{self.prefix or var}-{uid}"

    def describe(self) -> str:
        return "temporary files"

    def map(self, path: tuple = ()) -> str:
        name = self.base
        for i, s in enumerate(path):
            if isinstance(s, Field):
                kind, seg = "field", s.name
            else:
                kind, seg = "array", "elt-" + re.sub(r"[^A-Za-z0-9_.-]", "_", java_str(s.key))
            name += f"--{kind}/{seg}" if i == 0 else f"/{seg}"
        return name + self.suffix


@register_mapper
class FilesysMapper(Mapper):
    """``filesys_mapper``: the files in ``location`` matching the Swift glob built from
    prefix, pattern and suffix (:func:`swift_pattern`; ``? * **``), sorted, as elements
    0, 1, ...  For an output it is a dynamic output: ``stage_out_globs()`` says what to
    bring back from the job and ``existing()`` (re-scanned on every call) lists it."""

    name = "FilesysMapper"
    aliases = ("filesys_mapper",)
    params = frozenset({"location", "prefix", "suffix", "pattern"})
    # the element set comes from the disk, not from the parameters: an output array
    # mapped this way is a dynamic output, listed after the app ran
    fixed = False

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.location = self.str_param("location", "") or ""
        self.glob = swift_pattern(self.str_param("prefix"), self.str_param("pattern"),
                                  self.str_param("suffix"))
        self._names: list[str] | None = None

    def describe(self) -> str:
        return "the existing files matching its pattern, as an array"

    def stage_out_globs(self) -> list[str]:
        return [_join_location(self.location, self.glob)]

    def _scan(self) -> list[str]:
        self._names = list_files(self.ctx.base_dir, self.location, self.glob)
        return self._names

    def existing(self) -> list[tuple[tuple, str]]:
        t = as_data_type(self.ctx.type)
        names = self._scan()
        if t is not None and not isinstance(t, ArrayType):
            return [((), names[0])] if names else []
        return [((Index(i),), n) for i, n in enumerate(names)]

    def map(self, path: tuple = ()) -> str:
        names = self._names if self._names is not None else self._scan()
        if not path:
            if names:
                return names[0] if len(names) == 1 else " ".join(names)
            raise MapperError(f"{self.spelled}: no file matches {self.glob!r}")
        if len(path) == 1 and isinstance(path[0], Index) and isinstance(path[0].key, int):
            i = path[0].key
            if 0 <= i < len(names):
                return names[i]
            names = self._scan()
            if 0 <= i < len(names):
                return names[i]
            raise MapperError(f"{self.spelled}: no file for index {i} ({len(names)} files match {self.glob!r})")
        raise self.invalid(path)

