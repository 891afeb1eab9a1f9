"""The file formats of ``readData``, ``readStructured`` (``readData2``) and ``writeData``.

swiftnb follows Swift/K **0.96** (reference section 2.4), because that is what existing
scripts and their data files were written against:

* ``readData`` — a primitive: the whole file, lines joined without separator, trimmed and
  parsed (``int`` as Java ``Integer.valueOf``, ``float`` ``Double.valueOf``,
  ``boolean`` ``Boolean.valueOf``, ``string`` raw).  A primitive array: one element per
  line, keys 0..n-1 (blank lines skipped except for string arrays).  A struct: a header
  line of whitespace-separated field names, then one line of values split on whitespace
  (no quoting).  A struct array: the header, then one row per element; blank lines
  skipped.
* ``readStructured`` — ``PATH = VALUE`` lines (``rows[0].columns[1] = 2``, ``[0].a = x``,
  ``$ = 10``); ``#`` comments and blank lines skipped; string values keep their quotes
  (0.96).
* ``writeData`` — primitives with ``toString``; primitive arrays one value per line in key
  order; structs and struct arrays: a header line of field names in *Java HashMap order*
  each followed by a space, then one row per element with each value followed by a
  space (``r c l `` / ``Baz BAZ baz ``), as 0.96 wrote them.  A member that is a struct
  or an array (0.96: a null pointer failure) is refused with its name.

All functions work on text and plain data (:mod:`swiftnb.engine.data`); the builtins
do the file I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from swiftnb.engine.data import (
    ArrayType,
    BuiltinError,
    FileValue,
    Index,
    MappedType,
    PrimType,
    StructType,
    StructValue,
    SwiftType,
    as_data_type,
    parse_path,
    sorted_items,
)
from swiftnb.engine.formatting import trace_str

if TYPE_CHECKING:
    from swiftnb.engine.data import TypeLike

__all__ = ["parse_primitive", "read_data", "read_structured", "write_data", "java_hash_order"]

_WS = re.compile(r"\s+")


def parse_primitive(text: str, t: SwiftType) -> Any:
    """Parse one value of primitive type ``t`` the way Java's ``valueOf`` does; a bad
    number is ``Could not convert value to number: X`` (Swift's readData message)."""
    from swiftnb.engine.builtins.numbers import parse_java_double, parse_java_int

    name = t.name if isinstance(t, (PrimType, MappedType)) else "string"
    try:
        if name == "int":
            return parse_java_int(text.strip())
        if name == "float":
            return parse_java_double(text)
    except BuiltinError:
        raise BuiltinError(f"Could not convert value to number: {text}") from None
    if name == "boolean":
        return text.strip().lower() == "true"
    if isinstance(t, MappedType):
        return FileValue("?", t.name, text.strip())
    return text  # strings are read raw (0.96)


def _lines(text: str) -> list[str]:
    # Java BufferedReader.readLine: \n, \r or \r\n; a final terminator adds no empty line
    return text.splitlines()


def _numbered(text: str) -> list[tuple[int, str]]:
    """The lines with their numbers (from 1)."""
    return list(enumerate(_lines(text), 1))


class _Source:
    """Where the text came from, for messages: ``emps.txt, line 3: ...``."""

    def __init__(self, name: str | None) -> None:
        self.name = name

    def error(self, line: int | None, message: str) -> BuiltinError:
        if self.name is None:
            return BuiltinError(message)
        where = self.name if line is None else f"{self.name}, line {line}"
        return BuiltinError(f"{where}: {message}")


def _parse_at(src: _Source, line: int | None, text: str, t: SwiftType) -> Any:
    try:
        return parse_primitive(text, t)
    except BuiltinError as e:
        raise src.error(line, e.message) from None


def _leaf_fields(st: StructType, src: _Source) -> dict[str, SwiftType]:
    """The struct's fields, each of which readData fills from one word."""
    fields = st.field_dict()
    for n, ft in fields.items():
        if not isinstance(ft, (PrimType, MappedType)):
            raise src.error(None, f"readData cannot read type {st.name}: its field {n} is "
                            f"{ft}, not a single value (int, float, string, boolean, file)")
    return fields


def _struct_from_row(st: StructType, fields: dict[str, SwiftType], header: list[str],
                     row: tuple[int, str], name: str, src: _Source,
                     header_line: int) -> StructValue:
    lineno, text = row
    values = _WS.split(text.strip())
    if len(values) != len(header):
        raise src.error(lineno, (
            f'Column count for line "{" ".join(values)}" does not match the header column '
            f"count of {len(header)} (line {header_line}: {' '.join(header)})"))
    out: dict[str, Any] = {}
    for h, v in zip(header, values):
        out[h] = _parse_at(src, lineno, v, fields[h])
    return StructValue(st.name, name, out)


def _check_header(st: StructType, header: list[str], src: _Source, line: int) -> None:
    names = [n for n, _ in st.fields]
    if len(header) != len(names):
        raise src.error(line, (
            f"File header does not match type. Expected {len(names)} whitespace separated "
            f"items ({' '.join(names)}). Got {len(header)} instead."))
    if set(header) != set(names):
        raise src.error(line, (
            "File header does not match type. Expected the following whitespace separated "
            f"header items: [{', '.join(names)}]. Instead, the header was: [{', '.join(header)}]"))


def read_data(text: str, type_: TypeLike | None, name: str = "?", source: str | None = None) -> Any:
    """Parse ``text`` as ``readData`` into a value of ``type_`` (0.96 format); errors
    name ``source`` (the file) and the line when given."""
    t = as_data_type(type_)
    src = _Source(source)
    if t is None:
        raise BuiltinError("readData: the type of the result is not known")
    if isinstance(t, (PrimType, MappedType)):
        return _parse_at(src, None, "".join(_lines(text)), t)
    if isinstance(t, StructType):
        return _read_struct(t, _nonblank(text), name, src)
    if isinstance(t, ArrayType):
        el = t.elem
        if isinstance(el, StructType):
            return _read_struct_array(el, _nonblank(text), name, src)
        if isinstance(el, (PrimType, MappedType)):
            rows = _numbered(text) if el.name == "string" else _nonblank(text)
            return {i: _parse_at(src, n, v, el) for i, (n, v) in enumerate(rows)}
        raise BuiltinError(f"readData: cannot read an array of {el} (only primitives and structs)")
    raise BuiltinError(f"readData: cannot read a value of type {type_}")


def _nonblank(text: str) -> list[tuple[int, str]]:
    return [(n, ln) for n, ln in _numbered(text) if ln.strip()]


def _read_struct(t: StructType, rows: list[tuple[int, str]], name: str,
                 src: _Source) -> StructValue:
    """A header line, then one line of values (the layout writeData writes)."""
    if not rows:
        raise src.error(None, "Missing header")
    header_line, first = rows[0]
    header = _WS.split(first.strip())
    _check_header(t, header, src, header_line)
    if len(rows) < 2:
        raise src.error(None, f"Missing values (a line of {len(header)} values after the "
                        f"header, line {header_line})")
    if len(rows) > 2:
        raise src.error(rows[2][0], f"one line of values was expected after the header for "
                        f"a {t.name}, not several (an array is read as {t.name}[])")
    return _struct_from_row(t, _leaf_fields(t, src), header, rows[1], name, src, header_line)


def _read_struct_array(el: StructType, rows: list[tuple[int, str]], name: str,
                       src: _Source) -> dict[int, StructValue]:
    if not rows:
        return {}
    header_line, first = rows[0]
    header = _WS.split(first.strip())
    _check_header(el, header, src, header_line)
    fields = _leaf_fields(el, src)
    return {i: _struct_from_row(el, fields, header, r, f"{name}[{i}]", src, header_line)
            for i, r in enumerate(rows[1:])}


# --------------------------------------------------------------------------- readStructured


def _container_for(t: SwiftType, name: str) -> Any:
    if isinstance(t, StructType):
        return StructValue(t.name, name, {})
    if isinstance(t, ArrayType):
        return {}
    return None


def _key_of(step: Index, t: ArrayType) -> Any:
    k = step.key
    if t.key in ("int", "auto"):
        try:
            return int(k)
        except (TypeError, ValueError):
            raise BuiltinError(f"readStructured: bad array index {k!r}") from None
    if t.key == "float":
        return float(k)
    if t.key == "boolean":
        return str(k).lower() == "true"
    return str(k)


def read_structured(text: str, type_: TypeLike | None, name: str = "?", source: str | None = None) -> Any:
    """Parse ``PATH = VALUE`` lines (``readStructured``/``readData2``, 0.96: string values
    keep their quotes); errors name ``source`` (the file) and the line when given."""
    try:
        return _read_structured(text, type_, name)
    except BuiltinError as e:
        if source is None:
            raise
        raise BuiltinError(f"{source}: {e.message}") from None


def _read_structured(text: str, type_: TypeLike | None, name: str) -> Any:
    t = as_data_type(type_)
    if t is None:
        raise BuiltinError("readStructured: the type of the result is not known")
    root: Any = _container_for(t, name)
    for lineno, raw in enumerate(_lines(text), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise BuiltinError(f"readStructured: line {lineno}: expected 'path = value': {raw}")
        p, _, v = line.partition("=")
        try:
            steps = parse_path(p.strip())
        except ValueError as e:
            raise BuiltinError(f"readStructured: line {lineno}: {e}") from None
        v = v.strip()
        if not steps:
            if isinstance(t, (PrimType, MappedType)):
                root = _value(v, t, lineno)
                continue
            raise BuiltinError(f"readStructured: line {lineno}: cannot assign a value to the whole {t}")
        cur_t: SwiftType = t
        holder: Any = root
        path_name = name
        for i, step in enumerate(steps):
            last = i == len(steps) - 1
            if isinstance(step, Index):
                if not isinstance(cur_t, ArrayType):
                    raise BuiltinError(f"readStructured: line {lineno}: {path_name} is not an array")
                key = _key_of(step, cur_t)
                path_name = f"{path_name}[{trace_str(key)}]"
                nxt_t = cur_t.elem
                if last:
                    holder[key] = _value(v, nxt_t, lineno)
                else:
                    if key not in holder:
                        holder[key] = _container_for(nxt_t, path_name)
                    holder = holder[key]
            else:
                if not isinstance(cur_t, StructType):
                    raise BuiltinError(f"readStructured: line {lineno}: {path_name} is not a struct")
                fields = cur_t.field_dict()
                if step.name not in fields:
                    raise BuiltinError(
                        f"readStructured: line {lineno}: type {cur_t.name} has no field {step.name!r}")
                path_name = f"{path_name}.{step.name}"
                nxt_t = fields[step.name]
                if last:
                    holder.fields[step.name] = _value(v, nxt_t, lineno)
                else:
                    if step.name not in holder.fields:
                        holder.fields[step.name] = _container_for(nxt_t, path_name)
                    holder = holder.fields[step.name]
            cur_t = nxt_t
    return root


def _value(text: str, t: SwiftType, lineno: int) -> Any:
    """One ``PATH = VALUE`` line's value; a value that is not of the path's type is the
    line's error."""
    if not isinstance(t, (PrimType, MappedType)):
        raise BuiltinError(f"readStructured: line {lineno}: a value for a {t}: expected a path "
                           "down to a single value")
    try:
        return parse_primitive(text, t)
    except BuiltinError as e:
        raise BuiltinError(f"readStructured: line {lineno}: {e.message}") from None


# --------------------------------------------------------------------------- writeData


def _java_string_hash(s: str) -> int:
    h = 0
    for ch in s.encode("utf-16-be").decode("utf-16-be"):
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def java_hash_order(names: list[str]) -> list[str]:
    """Iteration order of a Java 8 ``HashMap`` holding ``names`` (inserted in order):
    by bucket ``(h ^ h >>> 16) & (capacity - 1)``, insertion order within a bucket."""
    cap = 16
    while len(names) > cap * 0.75:
        cap *= 2

    def bucket(n: str) -> int:
        h = _java_string_hash(n)
        return (h ^ (h >> 16)) & (cap - 1)

    return [n for _, _, n in sorted((bucket(n), i, n) for i, n in enumerate(names))]


def _struct_field_names(v: StructValue, t: SwiftType | None) -> list[str]:
    if isinstance(t, StructType):
        return [n for n, _ in t.fields]
    return list(v.fields)


def write_data(value: Any, type_: TypeLike | None = None) -> str:
    """Render ``value`` the way 0.96 ``writeData`` wrote it."""
    t = as_data_type(type_) if type_ is not None else None
    if isinstance(value, StructValue):
        names = java_hash_order(_struct_field_names(value, t))
        return "".join(n + " " for n in names) + "\n" + _struct_row(value, names)
    if isinstance(value, dict):
        items = sorted_items(value)
        if items and isinstance(items[0][1], StructValue):
            et = t.elem if isinstance(t, ArrayType) else None
            names = java_hash_order(_struct_field_names(items[0][1], et))
            out = ["".join(n + " " for n in names) + "\n"]
            for _, sv in items:
                out.append(_struct_row(sv, names))
            return "".join(out)
        if items and isinstance(items[0][1], dict):
            raise BuiltinError("writeData: cannot write an array of arrays")
        return "".join(_leaf_str(v) + "\n" for _, v in items)
    return _leaf_str(value)


def _struct_row(v: StructValue, names: list[str]) -> str:
    """One row: each field's value and a space.  0.96 wrote ``getValue().toString()``
    of each member, which for a struct or array member was a null pointer failure: a
    member that is not a single value is refused here with its name instead."""
    cells = []
    for n in names:
        x = v.fields.get(n)
        if isinstance(x, (dict, StructValue)):
            raise BuiltinError(
                f"writeData: {v.name}.{n} is {'an array' if isinstance(x, dict) else 'a struct'}; "
                "a struct is written as one row of single values (int, float, string, "
                "boolean, file)")
        cells.append(_leaf_str(x) + " ")
    return "".join(cells) + "\n"


def _leaf_str(v: Any) -> str:
    if isinstance(v, FileValue):
        return v.path or ""
    return trace_str(v)
