"""Mappers whose parameters list the files: fixed_array, array, regexp,
structured_regexp and csv."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from swiftnb.engine.builtins.jregex import compile_java
from swiftnb.engine.data import (
    ArrayType,
    BuiltinError,
    Field,
    FileValue,
    Index,
    StructType,
    as_data_type,
    leaf_files,
    sorted_items,
)
from swiftnb.engine.formatting import java_str
from swiftnb.engine.mappers.base import Mapper, MapperContext, MapperError, register_mapper
from swiftnb.engine.textread import read_text_file, read_text_file_blocking


class _ListMapper(Mapper):
    """Maps ``[i]`` to the i-th name of a list fixed at construction."""

    fixed = True
    names: list[str]

    def describe(self) -> str:
        return f"an array of {len(self.names)} files"

    def map(self, path: tuple = ()) -> str:
        if not path:
            return " ".join(self.names)
        if len(path) == 1 and isinstance(path[0], Index) and isinstance(path[0].key, int) \
                and not isinstance(path[0].key, bool):
            i = path[0].key
            if 0 <= i < len(self.names):
                return self.names[i]
            raise MapperError(f"{self.spelled}: index {i} is out of range (the mapper has "
                              f"{len(self.names)} files)")
        raise self.invalid(path)

    def existing(self) -> list[tuple[tuple, str]]:
        return [((Index(i),), n) for i, n in enumerate(self.names)]


@register_mapper
class FixedArrayMapper(_ListMapper):
    """``fixed_array_mapper; files="a.txt, b.txt c.txt"`` (space and/or comma separated,
    or a string array): element i is the i-th name."""

    name = "FixedArrayMapper"
    aliases = ("fixed_array_mapper",)
    params = frozenset({"files"})
    required = ("files",)

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.names = self.list_param("files")


@register_mapper
class ArrayMapper(Mapper):
    """``array_mapper; files=s`` with ``s`` a string or file array: element ``[k]`` is the
    name held by ``s[k]``, for every key of ``s`` (Swift's ArrayFileMapper lists the
    source's own keys, so ``s[1]``, ``s[2]`` map ``f[1]``, ``f[2]``, and string keys
    stay strings).  A plain string is split as fixed_array_mapper splits it."""

    name = "ArrayMapper"
    aliases = ("array_mapper",)
    params = frozenset({"files"})
    required = ("files",)
    fixed = True

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        src = self.p["files"]
        if isinstance(src, Mapping):
            self.entries: dict[Any, str] = {k: self._name(v) for k, v in sorted_items(dict(src.items()))}
        else:
            self.entries = dict(enumerate(self.list_param("files")))

    @staticmethod
    def _name(v: Any) -> str:
        if isinstance(v, FileValue):
            return v.path or ""
        if isinstance(v, Mapping):
            return " ".join(f.path or "" for f in leaf_files(v))
        return java_str(v)

    def describe(self) -> str:
        return f"an array of {len(self.entries)} files"

    def map(self, path: tuple = ()) -> str:
        if not path:
            return " ".join(self.entries.values())
        if len(path) == 1 and isinstance(path[0], Index):
            name = self.entries.get(path[0].key)
            if name is not None:
                return name
            raise MapperError(f"{self.spelled}: the files array has no element "
                              f"[{java_str(path[0].key)}]")
        raise self.invalid(path)

    def existing(self) -> list[tuple[tuple, str]]:
        return [((Index(k),), n) for k, n in self.entries.items()]


def regexp_transform(source: str, match: str, transform: str, who: str) -> str:
    """Swift ``RegexpMapper``: find ``match`` in ``source`` and return ``transform`` with
    ``\\N`` replaced by group N of that match."""
    m = compile_java(match).search(source)
    if m is None:
        raise MapperError(f"{who}: No match found! source='{source}' match = '{match}'")

    def group(g: re.Match) -> str:
        n = int(g.group(1))
        if n > m.re.groups:
            raise MapperError(f"{who}: No group {n} in '{match}'")
        return m.group(n) or ""

    return re.sub(r"\\(\d)", group, transform)


@register_mapper
class RegexpMapper(Mapper):
    """``regexp_mapper; source=s, match="(.*)gif", transform="\\\\1jpg"``: one file whose
    name is ``transform`` with ``\\N`` replaced by the groups of ``match`` in ``source``
    (no ``transform``: the matched text itself)."""

    name = "RegexpMapper"
    aliases = ("regexp_mapper",)
    params = frozenset({"source", "match", "transform"})
    required = ("source", "match")

    def map(self, path: tuple = ()) -> str:
        if path:
            raise self.invalid(path)
        return regexp_transform(self.str_param("source") or "", self.str_param("match") or "",
                                self.str_param("transform", "\\0") or "", self.spelled)


@register_mapper
class StructuredRegexpMapper(Mapper):
    """``structured_regexp_mapper``: like regexp_mapper applied to every element of the
    ``source`` array (strings or files); element keys are kept.

    ``source`` may be any ``Mapping`` (a dict, or a live view the engine passes for an
    array that is still being written, e.g. the outputs of the same ``foreach``): each
    element is looked up when it is mapped, so the source need not be closed."""

    name = "StructuredRegexpMapper"
    aliases = ("structured_regexp_mapper",)
    params = frozenset({"source", "match", "transform"})
    required = ("source", "match")
    fixed = True

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        src = self.p["source"]
        self.sources: Mapping | None = src if isinstance(src, Mapping) else None
        self.match = self.str_param("match") or ""
        self.transform = self.str_param("transform", "\\0") or ""

    def describe(self) -> str:
        return "one file per element of its source array"

    @staticmethod
    def _name(v: Any) -> str:
        if isinstance(v, FileValue):
            return v.path or ""
        return java_str(v)

    def _one(self, v: Any) -> str:
        return regexp_transform(self._name(v), self.match, self.transform, self.spelled)

    def map(self, path: tuple = ()) -> str:
        if self.sources is None:
            if path:
                raise self.invalid(path)
            return regexp_transform(self.str_param("source") or "", self.match, self.transform,
                                    self.spelled)
        if not path:
            return " ".join(self._one(v) for _, v in sorted_items(dict(self.sources.items())))
        if len(path) == 1 and isinstance(path[0], Index):
            v = self.sources.get(path[0].key)
            if v is not None:
                return self._one(v)
            raise MapperError(f"{self.spelled}: the source array has no element "
                              f"[{java_str(path[0].key)}]")
        raise self.invalid(path)

    def existing(self) -> list[tuple[tuple, str]]:
        if self.sources is None:
            return [((), self.map(()))]
        return [((Index(k),), self._one(v)) for k, v in sorted_items(dict(self.sources.items()))]


def _tokenize(line: str, delims: str | None) -> list[str]:
    """``java.util.StringTokenizer``: any run of delimiter characters separates tokens."""
    if not delims:
        return [line]
    return [t for t in re.split("[" + re.escape(delims) + "]+", line) if t != ""]


@register_mapper
class CSVMapper(Mapper):
    """``csv_mapper; file="list.txt"``: an array of structs, one row per element; the
    header line (``header=true``) names the fields (else ``column1``, ``column2``...);
    ``skip`` lines after the header are ignored; ``delim`` (default space, tab, comma)
    separates values and ``hdelim`` header names (default: ``delim``).  For an array of
    plain files, element i is the first column of row i.  Without a header the columns
    are ``column1``, ``column2``...: what the Guide says and what a real 0.96 run did
    (conformance 337), although the CSVMapper source in the swift-k tree numbers them
    from 0."""

    name = "CSVMapper"
    aliases = ("csv_mapper",)
    params = frozenset({"file", "header", "skip", "hdelim", "delim"})
    required = ("file",)
    fixed = True
    needs_prepare = True
    reads_files = frozenset({"file"})

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.file = self.str_param("file") or ""
        self.header = self.bool_param("header", True)
        self.skip = self.int_param("skip", 0)
        self.delim = self.str_param("delim", " \t,")
        self.hdelim = self.str_param("hdelim", self.delim)
        self._rows: list[dict[str, str]] | None = None
        self._columns: list[str] = []

    def describe(self) -> str:
        return f"the rows of {self.file}"

    async def prepare(self) -> None:
        """Read the file without blocking the loop (it may be a pipe an app writes)."""
        if self._rows is None:
            try:
                text = await read_text_file(self.local(self.file), self.file)
            except BuiltinError as e:
                raise MapperError(f"{self.spelled}: {e.message}") from None
            self._rows = self._parse(text)

    def _load(self) -> list[dict[str, str]]:
        """The rows, read now if prepare() did not (a mapper used outside a run)."""
        if self._rows is None:
            try:
                text = read_text_file_blocking(self.local(self.file), self.file)
            except BuiltinError as e:
                raise MapperError(f"{self.spelled}: {e.message}") from None
            self._rows = self._parse(text)
        return self._rows

    def _parse(self, text: str) -> list[dict[str, str]]:
        """Read the file as Swift's CSVMapper did: the first line is the header (names
        with whitespace turned into ``_``), then ``skip`` lines are dropped, then every
        line is a row.  Unlike Swift, a file that does not fit is refused with its line:
        a header without a field of the element type, a row with another number of
        values than the header has names."""
        lines = text.splitlines()
        i = 0
        if self.header:
            if not lines:
                raise MapperError(f"Invalid CSV file ({self.file}): missing header.")
            self._columns = [re.sub(r"\s", "_", c) for c in _tokenize(lines[0], self.hdelim)]
            self._check_columns()
            i = 1
        i += self.skip
        body = lines[i:]
        if not self.header and body:
            self._columns = [f"column{j}" for j in range(1, len(_tokenize(body[0], self.delim)) + 1)]
            self._check_columns()
        rows = []
        for n, line in enumerate(body, i + 1):
            values = _tokenize(line, self.delim)
            # a blank line is an element without fields, as in Swift (using one fails)
            if values and len(values) != len(self._columns):
                raise self._bad(n, f"{len(values)} values where the header "
                                f"({'line 1' if self.header else f'line {i + 1}'}) has "
                                f"{len(self._columns)} columns ({' '.join(self._columns)})")
            rows.append(dict(zip(self._columns, values)))
        return rows

    def _bad(self, line: int, why: str) -> MapperError:
        return MapperError(f"{self.spelled}: {self.file}, line {line}: {why}")

    def _check_columns(self) -> None:
        """The element type's fields must all be columns (a header naming other fields,
        or a file that is not this CSV at all, would map nothing)."""
        t = as_data_type(self.ctx.type)
        if not (isinstance(t, ArrayType) and isinstance(t.elem, StructType)):
            return
        fields = [n for n, _ in t.elem.fields]
        missing = [f for f in fields if f not in self._columns]
        if missing:
            where = "the header" if self.header else "the columns (no header)"
            raise self._bad(1 if self.header else self.skip + 1, (
                f"{where} has no column {', '.join(missing)}: type {t.elem.name} expects "
                f"the columns {' '.join(fields)}, found {' '.join(self._columns) or 'none'}"))

    def _is_struct_elem(self) -> bool:
        t = as_data_type(self.ctx.type)
        return not (isinstance(t, ArrayType) and not isinstance(t.elem, StructType))

    def map(self, path: tuple = ()) -> str:
        rows = self._load()
        if not path or not isinstance(path[0], Index) or not isinstance(path[0].key, int):
            raise self.invalid(path)
        i = path[0].key
        if not 0 <= i < len(rows):
            raise MapperError(f"{self.spelled}: no row {i} in {self.file} ({len(rows)} rows)")
        if len(path) == 1 and not self._is_struct_elem():
            return next(iter(rows[i].values()), "")
        if len(path) == 2 and isinstance(path[1], Field):
            v = rows[i].get(path[1].name)
            if v is None:
                raise MapperError(f"{self.spelled}: {self.file} has no column '{path[1].name}'")
            return v
        raise self.invalid(path)

    def existing(self) -> list[tuple[tuple, str]]:
        rows = self._load()
        out: list[tuple[tuple, str]] = []
        struct = self._is_struct_elem()
        t = as_data_type(self.ctx.type)
        fields = [n for n, _ in t.elem.fields] if isinstance(t, ArrayType) and isinstance(t.elem, StructType) else None
        for i, row in enumerate(rows):
            if not struct:
                out.append(((Index(i),), next(iter(row.values()), "")))
                continue
            for col, v in row.items():
                if fields is None or col in fields:
                    out.append(((Index(i), Field(col)), v))
        return out


@register_mapper
class TestMapper(Mapper):
    """``test_mapper; file="x"`` (Swift's test-suite mapper): maps the variable to
    ``file``; ``temp``, ``remappable`` and ``static`` are accepted and recorded so the
    engine can honour them (a temporary file is removed when the variable goes away)."""

    name = "TestMapper"
    aliases = ("test_mapper",)
    params = frozenset({"file", "temp", "remappable", "static"})
    reports_cleaning = True

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self.temp = self.bool_param("temp", False)
        self.remappable = self.bool_param("remappable", False)
        self.static = self.bool_param("static", True)

    def map(self, path: tuple = ()) -> str:
        f = self.str_param("file", "") or ""
        if not path:
            return f
        return f + "".join(str(s) for s in path)
