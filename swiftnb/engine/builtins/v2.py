"""Trunk's library v2 (reference 1.8.2): the assertions and ``read``/``write`` with their
formats.  Messages and file formats follow trunk's ``swiftscript/v2`` classes
(``Assertions``, ``IO``, ``serialization``); the code is ours."""

from __future__ import annotations

import enum
from typing import Any

from swiftnb.engine import datafiles
from swiftnb.engine.builtins.io import read_text, write_text
from swiftnb.engine.builtins.numbers import parse_java_double, parse_java_int
from swiftnb.engine.builtins.registry import register
from swiftnb.engine.data import (
    ArrayType,
    AssertionFailed,
    BuiltinContext,
    BuiltinError,
    FileValue,
    PrimType,
    StructType,
    StructValue,
    as_data_type,
    sorted_items,
)
from swiftnb.engine.formatting import java_str
from swiftnb.lang.builtins import SERIALIZATION_FORMATS

DEFAULT_MSG = "assertion failed"


# ------------------------------------------------------------------ assertions


def _shown(v: Any) -> str:
    """A value in an assertion message: strings quoted, others as Java prints them."""
    return f'"{v}"' if isinstance(v, str) else java_str(v)


def _fail(msg: str, detail: str | None = None) -> None:
    raise AssertionFailed(msg if detail is None else f"{msg} ({detail})")


def _numbers(a: Any, b: Any) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and \
        isinstance(b, (int, float)) and not isinstance(b, bool)


def assert_v2(ctx: BuiltinContext, cond: Any, msg: str = DEFAULT_MSG) -> None:
    """assert(boolean c[, string msg]) under ``import "stdlib.v2";`` (the compiler calls
    it in place of v1's ``assert``): fails the run with MSG, default ``assertion
    failed``, without v1's ``swift: assert failed:`` line."""
    if not cond:
        _fail(msg)


@register("assertEqual", kind="procedure")
def assert_equal(ctx: BuiltinContext, a: Any, b: Any, msg: str = DEFAULT_MSG) -> None:
    """assertEqual(v1, v2[, msg]) for two strings, ints, floats or booleans: fails with
    ``MSG (v1 == v2)`` (strings quoted; an int against a float compares as floats)."""
    if _numbers(a, b) and (isinstance(a, float) or isinstance(b, float)):
        if float(a) != float(b):
            _fail(msg, f"{java_str(float(a))} == {java_str(float(b))}")
        return
    if a != b or type(a) is not type(b):
        _fail(msg, f"{_shown(a)} == {_shown(b)}")


@register("assertAlmostEqual", kind="procedure")
def assert_almost_equal(ctx: BuiltinContext, a: Any, b: Any, tol: Any, msg: str = DEFAULT_MSG) -> None:
    """assertAlmostEqual(float v1, float v2, float tol[, msg]): |v1 - v2| <= tol, else
    ``MSG (v1 == v2 +/- tol)``."""
    x, y, t = float(a), float(b), float(tol)
    if not abs(x - y) <= t:
        _fail(msg, f"{java_str(x)} == {java_str(y)} +/- {java_str(t)}")


def _compare(op: str, holds: bool, a: Any, b: Any, msg: str) -> None:
    if not holds:
        if isinstance(a, float) or isinstance(b, float):
            a, b = float(a), float(b)
        _fail(msg, f"{_shown(a)} {op} {_shown(b)}")


@register("assertLT", kind="procedure")
def assert_lt(ctx: BuiltinContext, a: Any, b: Any, msg: str = DEFAULT_MSG) -> None:
    """assertLT(v1, v2[, msg]) for ints or floats: v1 < v2, else ``MSG (v1 < v2)``."""
    _compare("<", a < b, a, b, msg)


@register("assertLTE", kind="procedure")
def assert_lte(ctx: BuiltinContext, a: Any, b: Any, msg: str = DEFAULT_MSG) -> None:
    """assertLTE(v1, v2[, msg]): v1 <= v2, else ``MSG (v1 <= v2)``."""
    _compare("<=", a <= b, a, b, msg)


@register("assertGT", kind="procedure")
def assert_gt(ctx: BuiltinContext, a: Any, b: Any, msg: str = DEFAULT_MSG) -> None:
    """assertGT(v1, v2[, msg]): v1 > v2, else ``MSG (v1 > v2)`` (not in trunk's table;
    the counterpart of assertLT)."""
    _compare(">", a > b, a, b, msg)


@register("assertGTE", kind="procedure")
def assert_gte(ctx: BuiltinContext, a: Any, b: Any, msg: str = DEFAULT_MSG) -> None:
    """assertGTE(v1, v2[, msg]): v1 >= v2, else ``MSG (v1 >= v2)``."""
    _compare(">=", a >= b, a, b, msg)


# ------------------------------------------------------------------ read / write


class Format(enum.Enum):
    """The serialization formats of trunk's ``read``/``write`` (IO.READERS/WRITERS)."""

    NONE = "None"
    FIELD_AND_VALUE = "FieldAndValue"
    CSV = "CSV"


_FORMATS = {name: Format(canonical) for name, canonical in SERIALIZATION_FORMATS.items()}
#: CSV's default separators: reading splits on any of them, writing uses the first
CSV_SEPARATORS = "\t "


def format_of(name: str, what: str) -> Format:
    """The format named ``name``; an unknown one is trunk's error, with the accepted names."""
    fmt = _FORMATS.get(name)
    if fmt is None:
        raise BuiltinError(f"Unsupported {what} format: '{name}' (accepted: "
                           f"{', '.join(_FORMATS)})")
    return fmt


def _separator(options: dict | None) -> str | None:
    if not options:
        return None
    sep = options.get("separator")
    if sep is not None and (not isinstance(sep, str) or not sep):
        raise BuiltinError(f"read/write: option separator must be a non-empty string, "
                           f"not {java_str(sep)}")
    return sep


@register("read", needs_return_type=True)
async def read(ctx: BuiltinContext, f: Any, format: str = "None", options: dict | None = None) -> Any:
    """T read(file|string f[, string format[, string[string] options]]). Formats:
    ``None`` (one primitive: the whole file), ``FieldAndValue``/``FV`` (``path = value``
    lines), ``CSV`` (readData's layout, strings may be double-quoted; option
    ``separator``, default tab or space)."""
    fmt = format_of(format, "de-serialization")
    rtype = ctx.return_type  # before the wait: the context is shared by all calls
    t = as_data_type(rtype)
    text = await read_text(ctx, f, "read")
    if fmt is Format.NONE:
        if not isinstance(t, PrimType):
            raise BuiltinError("This format only supports primitive data")
        return _primitive("\n".join(text.splitlines()), t)
    if fmt is Format.FIELD_AND_VALUE:
        return datafiles.read_structured(text, rtype)
    return _read_csv(text, t, _separator(options) or CSV_SEPARATORS)


def _primitive(text: str, t: PrimType) -> Any:
    if t.name == "int":
        return parse_java_int(text.strip())
    if t.name == "float":
        return parse_java_double(text.strip())
    if t.name == "boolean":
        return text.strip().lower() == "true"
    return text


def _split_csv(line: str, seps: str) -> list[str]:
    """Split on any separator character; runs of separators count once; ``"..."``
    quotes a field, ``""`` inside it is one quote (trunk's ReadData.split)."""
    out: list[str] = []
    cur: list[str] = []
    quoted = False
    i = 0
    while i < len(line):
        c = line[i]
        if quoted:
            if c == '"' and line[i + 1:i + 2] == '"':
                cur.append('"')
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur.append(c)
        elif c == '"':
            quoted = True
        elif c in seps:
            if cur:
                out.append("".join(cur))
                cur = []
        else:
            cur.append(c)
        i += 1
    if cur:
        out.append("".join(cur))
    return out


def _read_csv(text: str, t: Any, seps: str) -> Any:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if isinstance(t, PrimType):
        return _primitive("".join(text.splitlines()), t)
    if isinstance(t, StructType):
        header = _csv_header(t, lines, seps)
        if len(lines) < 2:
            raise BuiltinError("Missing values")
        return _csv_row(t, header, lines[1], seps, "?")
    if isinstance(t, ArrayType) and isinstance(t.elem, StructType):
        if not lines:
            return {}
        header = _csv_header(t.elem, lines, seps)
        return {i: _csv_row(t.elem, header, ln, seps, f"?[{i}]")
                for i, ln in enumerate(lines[1:])}
    if isinstance(t, ArrayType) and isinstance(t.elem, PrimType):
        return {i: _primitive(_unquote(ln), t.elem) for i, ln in enumerate(lines)}
    raise BuiltinError(f"read: the CSV format cannot read a value of type {t}")


def _unquote(s: str) -> str:
    return s[1:-1].replace('""', '"') if len(s) >= 2 and s[0] == s[-1] == '"' else s


def _csv_header(st: StructType, lines: list[str], seps: str = CSV_SEPARATORS) -> list[str]:
    if not lines:
        raise BuiltinError("Missing header")
    header = _split_csv(lines[0], seps)
    names = [n for n, _ in st.fields]
    if sorted(header) != sorted(names):
        raise BuiltinError("File header does not match type. Expected the following "
                           f"header items: [{', '.join(names)}]. Instead, the header was: "
                           f"[{', '.join(header)}]")
    return header


def _csv_row(st: StructType, header: list[str], line: str, seps: str,
             name: str) -> StructValue:
    cols = _split_csv(line, seps)
    if len(cols) != len(header):
        raise BuiltinError(f'Column count for line "{line}" does not match the header '
                           f"column count of {len(header)}")
    types = st.field_dict()
    fields: dict[str, Any] = {}
    for h, v in zip(header, cols):
        ft = types[h]
        fields[h] = _primitive(v, ft) if isinstance(ft, PrimType) else v
    return StructValue(st.name, name, {n: fields[n] for n, _ in st.fields})


@register("write", needs_return_file=True)
def write(ctx: BuiltinContext, v: Any, format: str = "None", options: dict | None = None) -> FileValue:
    """file write(any v[, string format[, string[string] options]]). Writes ``v`` to the
    file the call is assigned to: ``None`` (a primitive as text), ``FieldAndValue``/``FV``
    (``path = value`` lines, struct fields in declaration order), ``CSV`` (a header and
    rows; strings double-quoted; option ``separator``, default tab)."""
    fmt = format_of(format, "serialization")
    dest = ctx.return_file
    if dest is None or dest.path is None:
        raise BuiltinError("write: the result must be assigned to a mapped file")
    if fmt is Format.NONE:
        if isinstance(v, (dict, StructValue, FileValue)):
            raise BuiltinError("This format only supports primitive data")
        text = java_str(v)
    elif fmt is Format.FIELD_AND_VALUE:
        text = "".join(f"{path} = {java_str(x)}\n" for path, x in _leaves(v, ""))
    else:
        text = _write_csv(v, (_separator(options) or CSV_SEPARATORS)[0])
    write_text(ctx, dest, text, "write")
    return dest


def _leaves(v: Any, path: str) -> list[tuple[str, Any]]:
    """(path, value) of every primitive inside ``v``, in order (with a stack of its
    own: values may nest thousands deep)."""
    out: list[tuple[str, Any]] = []
    stack = [(v, path)]
    while stack:
        x, at = stack.pop()
        if isinstance(x, FileValue):
            raise BuiltinError("Cannot serialize file-valued data")
        if isinstance(x, StructValue):
            stack.extend((y, f"{at}.{name}" if at else name)
                         for name, y in reversed(list(x.fields.items())))
        elif isinstance(x, dict):
            stack.extend((y, f'{at}["{k}"]' if isinstance(k, str) else f"{at}[{java_str(k)}]")
                         for k, y in reversed(sorted_items(x)))
        else:
            out.append((at or "$", x))
    return out


def _csv_value(x: Any) -> str:
    if isinstance(x, str):
        return '"' + x.replace('"', '""') + '"'
    return java_str(x)


def _write_csv(v: Any, sep: str) -> str:
    if isinstance(v, StructValue):
        return sep.join(v.fields) + "\n" + sep.join(_csv_value(x) for x in v.fields.values()) + "\n"
    if isinstance(v, dict):
        items = [x for _, x in sorted_items(v)]
        if items and isinstance(items[0], StructValue):
            rows = [sep.join(items[0].fields)]
            rows += [sep.join(_csv_value(x) for x in s.fields.values()) for s in items]
            return "\n".join(rows) + "\n"
        if any(isinstance(x, (dict, StructValue)) for x in items):
            raise BuiltinError("write: the CSV format cannot write an array of arrays")
        return "".join(java_str(x) + "\n" for x in items)
    if isinstance(v, FileValue):
        raise BuiltinError("Cannot serialize file-valued data")
    return java_str(v)


__all__ = ["assert_v2", "Format", "format_of", "DEFAULT_MSG", "CSV_SEPARATORS"]
