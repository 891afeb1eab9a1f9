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
from typing import Any

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


def _struct_from_row(st: StructType, header: list[str], values: list[str], name: str) -> StructValue:
    fields = st.field_dict()
    if len(values) != len(header):
        raise BuiltinError(
            f'Column count for line "{" ".join(values)}" does not match the header column '
            f"count of {len(header)}"
        )
    out: dict[str, Any] = {}
    for h, v in zip(header, values):
        out[h] = parse_primitive(v, fields[h])
    return StructValue(st.name, name, out)


def _check_header(st: StructType, header: list[str]) -> None:
    names = [n for n, _ in st.fields]
    if len(header) != len(names):
        raise BuiltinError(
            f"File header does not match type. Expected {len(names)} whitespace separated "
            f"items. Got {len(header)} instead."
        )
    if set(header) != set(names):
        raise BuiltinError(
            "File header does not match type. Expected the following whitespace separated "
            f"header items: [{', '.join(names)}]. Instead, the header was: [{', '.join(header)}]"
        )


def read_data(text: str, type_: Any, name: str = "?") -> Any:
    """Parse ``text`` as ``readData`` into a value of ``type_`` (0.96 format)."""
    t = as_data_type(type_)
    if t is None:
        raise BuiltinError("readData: the type of the result is not known")
    lines = _lines(text)
    if isinstance(t, (PrimType, MappedType)):
        return parse_primitive("".join(lines), t)
    if isinstance(t, StructType):
        rows = [ln for ln in lines if ln.strip()]
        if not rows:
            raise BuiltinError("Missing header")
        header = _WS.split(rows[0].strip())
        _check_header(t, header)
        if len(rows) < 2:
            raise BuiltinError("Missing values")
        return _struct_from_row(t, header, _WS.split(rows[1].strip()), name)
    if isinstance(t, ArrayType):
        el = t.elem
        if isinstance(el, StructType):
            rows = [ln for ln in lines if ln.strip()]
            if not rows:
                return {}
            header = _WS.split(rows[0].strip())
            _check_header(el, header)
            return {
                i: _struct_from_row(el, header, _WS.split(r.strip()), f"{name}[{i}]")
                for i, r in enumerate(rows[1:])
            }
        if isinstance(el, (PrimType, MappedType)):
            if el.name == "string":
                vals = lines
            else:
                vals = [ln for ln in lines if ln.strip()]
            return {i: parse_primitive(v, el) for i, v in enumerate(vals)}
        raise BuiltinError(f"readData: cannot read an array of {el} (only primitives and structs)")
    raise BuiltinError(f"readData: cannot read a value of type {type_}")


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


def read_structured(text: str, type_: Any, name: str = "?") -> Any:
    """Parse ``PATH = VALUE`` lines (``readStructured``/``readData2``, 0.96: string values
    keep their quotes)."""
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
                root = parse_primitive(v, t)
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
                    holder[key] = parse_primitive(v, nxt_t)
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
                    holder.fields[step.name] = parse_primitive(v, nxt_t)
                else:
                    if step.name not in holder.fields:
                        holder.fields[step.name] = _container_for(nxt_t, path_name)
                    holder = holder.fields[step.name]
            cur_t = nxt_t
    return root


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


def write_data(value: Any, type_: Any = None) -> str:
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
