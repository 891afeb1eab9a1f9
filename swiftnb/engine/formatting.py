"""Value -> text conversions, exactly as Swift/K 0.96 (a Java program) printed them.

Swift has several *different* conversions (reference section 2.2) and scripts' expected
outputs depend on each of them:

* :func:`java_double` — ``Double.toString`` (``3.0``, ``0.3333333333333333``, ``1.0E10``).
* :func:`trace_str` — ``trace``/``toString`` rendering (``Misc.prettyPrint``), arrays as
  ``{k = v, ...}``, structs and files as their node descriptors.
* :func:`strcat_str` — ``strcat`` and ``+`` with a string: integral floats lose ``.0``.
* :func:`app_arg_str` — app command-line words and ``strjoin``: Java ``String.valueOf``.
* :func:`swift_format` — the Swift format language of ``sprintf``/``tracef``/``printf``/
  ``fprintf`` (``%s %i %d %f %b %q %M %p %k %%`` and backslash escapes).
* :func:`java_format` — Java ``String.format`` for ``format()``.
"""

from __future__ import annotations

import math
import re
import struct
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, cast
from collections.abc import Sequence

from swiftnb.engine.data import (
    BuiltinError,
    FileValue,
    StructValue,
    leaf_files,
    sorted_items,
)

__all__ = [
    "java_double",
    "java_str",
    "trace_str",
    "trace_line",
    "strcat_str",
    "app_arg_str",
    "strjoin_str",
    "node_str",
    "swift_format",
    "java_format",
    "type_name_of",
]

TRACE_PREFIX = "SwiftScript trace: "
#: ``prettyPrint`` stops after this many array entries and appends ``, ...``.
TRACE_ARRAY_LIMIT = 11


# --------------------------------------------------------------------------- doubles


def _digits_exp(d: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of |d| and the decimal exponent of the first
    digit (``123.5`` -> ("1235", 2)).  Python's repr and Java 19+'s Double.toString both
    produce the shortest digit string that round-trips."""
    sign, digits, exp_ = Decimal(repr(abs(d))).as_tuple()
    exp = cast(int, exp_)  # d is finite: not 'n', 'N' or 'F'
    ds = "".join(map(str, digits)).lstrip("0") or "0"
    # value = int(digits) * 10**exp; position of the first significant digit:
    total = len("".join(map(str, digits)))
    lead_zeros = total - len("".join(map(str, digits)).lstrip("0"))
    e10 = total - lead_zeros + exp - 1
    ds = ds.rstrip("0") or "0"
    return ds, e10


def _long_digits(a: float) -> tuple[str, int] | None:
    """Java's ``FloatingDecimal`` fast path for integral doubles in [2^53, 2^63): it prints
    the exact integer less floor(log10(2^(binExp-54))) low digits (rounded half up), which
    gives one or two more digits than the shortest form (``5.9990774174588646E17``
    where the shortest is ``5.999077417458865E17``).  Swift ran on Java 7/8, so traces of
    such values carry those digits.  Returns (digits, exponent of the first digit) or
    None when the general (shortest) algorithm applies."""
    bits = struct.unpack("<Q", struct.pack("<d", a))[0]
    bin_exp = ((bits >> 52) & 0x7FF) - 1023
    if not 53 <= bin_exp <= 62:
        return None
    lvalue = ((bits & ((1 << 52) - 1)) | (1 << 52)) << (bin_exp - 52)
    p2 = bin_exp - 53 - 1
    insignificant = len(str(1 << p2)) - 1 if p2 > 1 else 0
    if insignificant:
        pow10 = 10**insignificant
        lvalue, residue = divmod(lvalue, pow10)
        if residue >= pow10 >> 1:
            lvalue += 1
    digits = str(lvalue)
    e10 = len(digits) - 1 + insignificant
    return digits.rstrip("0") or "0", e10


def java_double(d: float) -> str:
    """Java ``Double.toString(d)``.

    Plain notation with at least one fractional digit for 1e-3 <= |d| < 1e7, otherwise
    ``d.dddE[-]n``; ``NaN``, ``Infinity``, ``-Infinity``, ``-0.0``.
    """
    if d != d:
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0.0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    a = abs(d)
    if 1e-3 <= a < 1e7:
        # Python's repr is also the shortest round-trip form and never uses an exponent
        # in this range, so it is Java's text already ("3.0", "0.001", "12345.5")
        return repr(d)
    sign = "-" if d < 0 else ""
    long_path = _long_digits(a)
    digits, e10 = long_path if long_path is not None else _digits_exp(a)
    if 1e-3 <= a < 1e7:
        if e10 >= 0:
            intpart = digits[: e10 + 1].ljust(e10 + 1, "0")
            frac = digits[e10 + 1 :] or "0"
        else:
            intpart = "0"
            frac = "0" * (-e10 - 1) + digits
        return f"{sign}{intpart}.{frac}"
    mant = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mant}E{e10}"


def java_str(v: Any) -> str:
    """Java ``String.valueOf`` of a primitive: booleans lower case, doubles per
    :func:`java_double`, strings raw."""
    c = v.__class__
    if c is str:  # a command line's usual words first: they are on every app call's path
        return v
    if c is int:
        return str(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return java_double(v)
    if v is None:
        return "null"
    if isinstance(v, (dict, StructValue, FileValue)):
        return trace_str(v)
    return str(v)


# --------------------------------------------------------------------------- trace


def type_name_of(v: Any) -> str:
    """The Swift type name of a plain value (for messages and descriptors)."""
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, StructValue):
        return v.type_name
    if isinstance(v, FileValue):
        return v.type_name
    if isinstance(v, dict):
        for _, x in sorted_items(v):
            return type_name_of(x) + "[]"
        return "any[]"
    return "any"


def node_str(v: Any, name: str = "?") -> str:
    """The data node debug string Swift prints for ``%p`` and for structs/files in traces:
    ``s:S - Closed``, ``g:file = <FILE> - Closed``, ``x:int = 3 - Closed``."""
    if isinstance(v, StructValue):
        return f"{v.name}:{v.type_name} - Closed"
    if isinstance(v, FileValue):
        return f"{v.name}:{v.type_name} = <FILE> - Closed"
    if v is None:
        return f"{name}:string - Closed"
    if isinstance(v, dict):
        return f"{name}:{type_name_of(v)} - Closed"
    return f"{name}:{type_name_of(v)} = {java_str(v)} - Closed"


def trace_str(v: Any) -> str:
    """``Misc.prettyPrint``: what ``trace`` and ``toString`` print for one value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return java_double(v)
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        parts = []
        for i, (k, x) in enumerate(sorted_items(v)):
            parts.append(f"{trace_str(k)} = {trace_str(x)}")
            if i + 1 >= TRACE_ARRAY_LIMIT:
                parts.append("...")
                break
        return "{" + ", ".join(parts) + "}"
    return node_str(v)


def trace_line(values: Sequence[Any]) -> str:
    """The whole trace line, without the newline: ``SwiftScript trace: a, b``."""
    return TRACE_PREFIX + ", ".join(trace_str(v) for v in values)


# --------------------------------------------------------------------------- other conversions


def strcat_str(v: Any) -> str:
    """Karajan ``TypeUtil.toString``, used by ``strcat`` and ``+`` with a string operand:
    a float equal to its rounded value prints as a long (``1.0`` -> ``1``)."""
    if isinstance(v, float) and math.isfinite(v) and v == math.floor(v) and abs(v) < 2**63:
        return str(int(v))
    if isinstance(v, (dict, StructValue, FileValue)):
        return trace_str(v)
    return java_str(v)


def app_arg_str(v: Any) -> str:
    """An app command-line word: Java ``String.valueOf`` (``1.0``, ``true``)."""
    return java_str(v)


strjoin_str = app_arg_str


# --------------------------------------------------------------------------- Swift format


def _dmesg(v: Any, name: str | None) -> str:
    return f'Variable "{name or "?"}" is a {type_name_of(v)}'


def _q_str(v: Any) -> str:
    if not isinstance(v, dict):
        return java_str(v)
    n = len(v)
    out = []
    for i in range(n):
        x = v.get(i)
        out.append(_q_str(x) if isinstance(x, dict) else java_str(x))
    return "[" + ",".join(out) + "]"


def _m_str(v: Any) -> str:
    files = [f.path or "" for f in leaf_files(v)]
    if len(files) == 1:
        return files[0]
    return "[" + ", ".join(files) + "]"


def swift_format(spec: str, args: Sequence[Any], names: Sequence[str | None] | None = None) -> str:
    """Swift's own format language (``Sprintf.java``), shared by ``sprintf``, ``tracef``,
    ``printf`` and ``fprintf``.

    Backslash escapes ``\\n``, ``\\t``, ``\\\\`` left in the string after Swift-level
    escaping are processed again; any other escape is an error.  Errors raise
    :class:`BuiltinError` with Swift's messages (``tracef(): too many specifiers!``).
    """
    out: list[str] = []
    arg = 0
    i = 0
    n = len(spec)
    names = list(names or [])
    while i < n:
        c = spec[i]
        if c == "%":
            i += 1
            if i >= n:
                raise BuiltinError("tracef(): Specifier at end of format string!")
            d = spec[i]
            if d == "%":
                out.append("%")
            else:
                if arg >= len(args):
                    raise BuiltinError("tracef(): too many specifiers!")
                v = args[arg]
                name = names[arg] if arg < len(names) else None
                if d == "s":
                    out.append(java_str(v))
                elif d in "id":
                    if isinstance(v, bool) or not isinstance(v, int):
                        raise BuiltinError(f"tracef(): %{d} requires an int! {_dmesg(v, name)}")
                    out.append(str(v))
                elif d == "f":
                    if isinstance(v, bool) or not isinstance(v, (int, float)):
                        raise BuiltinError(f"tracef(): %f requires a float! {_dmesg(v, name)}")
                    out.append(java_double(float(v)))
                elif d == "b":
                    if not isinstance(v, bool):
                        raise BuiltinError(f"tracef(): %b requires a boolean! {_dmesg(v, name)}")
                    out.append(java_str(v))
                elif d == "q":
                    if not isinstance(v, dict):
                        raise BuiltinError(f"tracef(): %q requires an array! {_dmesg(v, name)}")
                    out.append(_q_str(v))
                elif d == "M":
                    out.append(_m_str(v))
                elif d == "p":
                    out.append(node_str(v, name or "?") if not isinstance(v, (StructValue, FileValue)) else node_str(v))
                elif d == "k":
                    pass
                else:
                    raise BuiltinError(f"tracef(): Unknown format: %{d}")
                arg += 1
        elif c == "\\":
            i += 1
            if i >= n:
                raise BuiltinError("tracef(): Backslash at end of format string!")
            d = spec[i]
            if d == "n":
                out.append("\n")
            elif d == "t":
                out.append("\t")
            elif d == "\\":
                out.append("\\")
            else:
                raise BuiltinError(f"tracef(): unknown backslash escape sequence! (\\{d})\n"
                                   f"\t in {spec} character: {i}")
        else:
            out.append(c)
        i += 1
    return "".join(out)


# --------------------------------------------------------------------------- Java String.format

_JFMT = re.compile(
    r"%(?:(?P<index>\d+\$|<)?(?P<flags>[-#+ 0,(]*)(?P<width>\d+)?(?:\.(?P<prec>\d+))?)(?P<conv>[a-zA-Z%])"
)


def _round_half_up(v: float, prec: int) -> str:
    """Java's %f: round the shortest decimal representation half-up (Python's own %f
    rounds the exact binary value half-even, which differs for 0.125, 0.15...)."""
    if not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    q = Decimal(1).scaleb(-prec)
    r = Decimal(repr(v)).quantize(q, rounding=ROUND_HALF_UP)
    return ("-" if r.is_signed() else "") + f"{abs(r):f}"


def _sci_half_up(v: float, prec: int, upper: bool) -> str:
    if not math.isfinite(v):
        return "NaN" if v != v else ("Infinity" if v > 0 else "-Infinity")
    if v == 0:
        mant = "0" + ("." + "0" * prec if prec else "")
        s = f"{mant}e+00"
    else:
        d = Decimal(repr(abs(v)))
        e = d.adjusted()
        m = (d.scaleb(-e)).quantize(Decimal(1).scaleb(-prec), rounding=ROUND_HALF_UP)
        if m >= 10:
            e += 1
            m = (d.scaleb(-e)).quantize(Decimal(1).scaleb(-prec), rounding=ROUND_HALF_UP)
        s = f"{m:f}e{'+' if e >= 0 else '-'}{abs(e):02d}"
        if v < 0:
            s = "-" + s
    return s.upper() if upper else s


def _group(intpart: str) -> str:
    neg = intpart.startswith("-")
    digits = intpart[1:] if neg else intpart
    g = f"{int(digits):,}" if digits else digits
    return ("-" if neg else "") + g


def _apply_flags(body: str, flags: str, width: int | None, numeric: bool) -> str:
    neg = body.startswith("-")
    if numeric:
        if neg and "(" in flags:
            body = "(" + body[1:] + ")"
        elif not neg and "+" in flags:
            body = "+" + body
        elif not neg and " " in flags:
            body = " " + body
    if width and len(body) < width:
        if "-" in flags:
            body = body.ljust(width)
        elif "0" in flags and numeric:
            sign = body[0] if body[:1] in "+- (" and body[:1] != "" else ""
            rest = body[len(sign):]
            body = sign + rest.rjust(width - len(sign), "0")
        else:
            body = body.rjust(width)
    return body


def java_format(fmt: str, args: Sequence[Any]) -> str:
    """Java ``String.format(fmt, args...)`` for the conversions scripts use:
    ``%s %S %d %x %X %o %f %e %E %g %G %b %c %n %%`` with flags ``-#+ 0,(``, width,
    precision and ``n$`` argument indices.  Errors raise :class:`BuiltinError` with the
    Java exception name, as Swift surfaced it."""
    out: list[str] = []
    pos = 0
    ordinary = 0
    last = -1
    for m in _JFMT.finditer(fmt):
        out.append(fmt[pos : m.start()])
        pos = m.end()
        conv = m.group("conv")
        flags = m.group("flags") or ""
        width = int(m.group("width")) if m.group("width") else None
        prec = int(m.group("prec")) if m.group("prec") is not None else None
        if conv == "%":
            out.append(_apply_flags("%", flags, width, False))
            continue
        if conv == "n":
            out.append("\n")
            continue
        idx = m.group("index")
        if idx == "<":
            ai = last
        elif idx:
            ai = int(idx[:-1]) - 1
        else:
            ai = ordinary
            ordinary += 1
        if ai < 0 or ai >= len(args):
            raise BuiltinError(f"java.util.MissingFormatArgumentException: Format specifier '{m.group(0)}'")
        last = ai
        v = args[ai]
        lc = conv.lower()
        upper = conv.isupper()
        if lc == "s":
            body = java_str(v)
            if prec is not None:
                body = body[:prec]
            body = _apply_flags(body, flags, width, False)
        elif lc == "b":
            body = java_str(v if isinstance(v, bool) else v is not None)
            if prec is not None:
                body = body[:prec]
            body = _apply_flags(body, flags, width, False)
        elif lc == "c":
            if isinstance(v, int) and not isinstance(v, bool):
                body = chr(v)
            elif isinstance(v, str) and len(v) == 1:
                body = v
            else:
                raise BuiltinError(f"java.util.IllegalFormatConversionException: c != {_jclass(v)}")
            body = _apply_flags(body, flags, width, False)
        elif lc in "dxo":
            if isinstance(v, bool) or not isinstance(v, int):
                raise BuiltinError(f"java.util.IllegalFormatConversionException: {conv} != {_jclass(v)}")
            if lc == "d":
                body = str(v)
                if "," in flags:
                    body = _group(body)
            else:
                u = v if v >= 0 else v + (1 << 32)
                body = format(u, "x" if lc == "x" else "o")
                if "#" in flags:
                    body = ("0x" if lc == "x" else "0") + body
            body = _apply_flags(body, flags, width, True)
        elif lc in "feg":
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise BuiltinError(f"java.util.IllegalFormatConversionException: {conv} != {_jclass(v)}")
            if isinstance(v, int):
                raise BuiltinError(f"java.util.IllegalFormatConversionException: {conv} != java.lang.Integer")
            p = 6 if prec is None else prec
            if lc == "f":
                body = _round_half_up(v, p)
                if "," in flags and math.isfinite(v):
                    ip, _, fp = body.partition(".")
                    body = _group(ip) + ("." + fp if fp else "")
            elif lc == "e":
                body = _sci_half_up(v, p, False)
            else:
                p = 1 if p == 0 else p
                a = abs(v)
                # Java rounds to p significant digits first, then chooses the form
                # from the rounded magnitude (99.99 with %.3g is "100")
                r = (Decimal(repr(a)).scaleb(-Decimal(repr(a)).adjusted())
                     .quantize(Decimal(1).scaleb(-(p - 1)), rounding=ROUND_HALF_UP)
                     .scaleb(Decimal(repr(a)).adjusted())) if a and math.isfinite(a) else Decimal(0)
                if a != 0 and math.isfinite(a) and (r < Decimal("1e-4") or r >= Decimal(10) ** p):
                    body = _sci_half_up(v, p - 1, False)
                elif not math.isfinite(a):
                    body = _round_half_up(v, 0)
                else:
                    # Java: digits after the point = precision - (exponent + 1)
                    e = r.adjusted() if r else 0
                    body = _round_half_up(v, max(p - e - 1, 0))
            if upper:
                body = body.upper()
            body = _apply_flags(body, flags, width, True)
            out.append(body)
            continue
        else:
            raise BuiltinError(f"java.util.UnknownFormatConversionException: Conversion = '{conv}'")
        if upper:
            body = body.upper()
        out.append(body)
    out.append(fmt[pos:])
    return "".join(out)


def _jclass(v: Any) -> str:
    if isinstance(v, bool):
        return "java.lang.Boolean"
    if isinstance(v, int):
        return "java.lang.Integer"
    if isinstance(v, float):
        return "java.lang.Double"
    if isinstance(v, str):
        return "java.lang.String"
    return "java.lang.Object"
