"""Conversions (``toInt``, ``toFloat``, ``toString``), math, statistics and ``java``."""

from __future__ import annotations

import math
import re
from typing import Any

from swiftnb.engine.builtins.registry import register
from swiftnb.engine.data import BuiltinContext, BuiltinError, sorted_items
from swiftnb.engine.formatting import java_format as _java_format
from swiftnb.engine.formatting import java_str, trace_str

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
_JAVA_INT = re.compile(r"[+-]?\d+\Z")
_JAVA_DOUBLE = re.compile(
    r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)|0[xX][0-9a-fA-F]+(\.[0-9a-fA-F]*)?[pP][+-]?\d+)[fFdD]?\Z"
)


def _nfe(s: str) -> BuiltinError:
    return BuiltinError(f'java.lang.NumberFormatException: For input string: "{s}"')


def parse_java_int(s: str, base: int = 10) -> int:
    """Java ``Integer.parseInt``: optional sign, digits only (no spaces), 32-bit range."""
    if base == 10:
        if not _JAVA_INT.match(s):
            raise _nfe(s)
        v = int(s)
    else:
        try:
            if s.strip() != s or not s or "_" in s:
                raise ValueError
            v = int(s, base)
        except ValueError:
            raise _nfe(s) from None
    if not INT_MIN <= v <= INT_MAX:
        raise _nfe(s)
    return v


def parse_java_double(s: str) -> float:
    """Java ``Double.parseDouble``: surrounding whitespace allowed, ``1e5``, ``NaN``,
    ``Infinity``, a trailing ``d``/``f``."""
    t = s.strip()
    if not _JAVA_DOUBLE.match(t):
        raise _nfe(s)
    t = t.rstrip("fFdD") if not t.endswith(("NaN", "Infinity")) else t
    if "x" in t.lower():
        return float.fromhex(t)
    return float(t.replace("Infinity", "inf"))


@register("toInt", deprecated=("toint",))
def to_int(ctx: BuiltinContext, v: Any) -> int:
    """toInt(any) -> int. Strings via Java ``Integer.valueOf`` (``"010"`` is 10; spaces
    around the number are ignored); floats truncate toward zero; ints unchanged."""
    if isinstance(v, bool):
        raise BuiltinError(f"toInt(): cannot convert a boolean ({java_str(v)}) to int")
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if v != v:
            return 0
        return max(INT_MIN, min(INT_MAX, int(v))) if math.isfinite(v) else (INT_MAX if v > 0 else INT_MIN)
    s = str(v)
    try:
        return parse_java_int(s.strip())
    except BuiltinError:
        raise _nfe(s) from None


@register("toFloat", deprecated=("tofloat",))
def to_float(ctx: BuiltinContext, v: Any) -> float:
    """toFloat(any) -> float. Strings via Java ``Double.valueOf``; ints widened."""
    if isinstance(v, bool):
        raise BuiltinError(f"toFloat(): cannot convert a boolean ({java_str(v)}) to float")
    if isinstance(v, (int, float)):
        return float(v)
    return parse_java_double(str(v))


@register("toString", deprecated=("tostring",))
def to_string(ctx: BuiltinContext, v: Any) -> str:
    """toString(any) -> string. The trace rendering of one value (``toString(1.0)`` is
    ``1.0``; a struct gives ``s:S - Closed``)."""
    return trace_str(v)


@register("parseInt")
def parse_int(ctx: BuiltinContext, s: str, base: int = 10) -> int:
    """parseInt(string s[, int base]) -> int. Java ``Integer.parseInt``."""
    return parse_java_int(s, base)


@register("parseFloat")
def parse_float(ctx: BuiltinContext, s: str) -> float:
    """parseFloat(string s) -> float. Java ``Double.parseDouble``."""
    return parse_java_double(s)


# ------------------------------------------------------------------ math

def _f(x: Any) -> float:
    return float(x)


def _math1(name: str, fn) -> None:
    def impl(ctx: BuiltinContext, x: Any) -> float:
        try:
            return fn(_f(x))
        except (ValueError, OverflowError):
            return math.nan
    impl.__doc__ = f"{name}(float) -> float."
    register(name)(impl)


def _java_log(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < 0:
        return math.nan
    return math.log(x)


def _java_log10(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < 0:
        return math.nan
    return math.log10(x)


for _name, _fn in {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
    "atan": math.atan, "exp": math.exp, "ln": _java_log, "log10": _java_log10,
    "cbrt": lambda x: math.copysign(abs(x) ** (1.0 / 3.0), x) if x == x else x,
    "floor": lambda x: float(math.floor(x)) if math.isfinite(x) else x,
    "ceil": lambda x: float(math.ceil(x)) if math.isfinite(x) else x,
    "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan,
}.items():
    _math1(_name, _fn)


def _java_round(x: float) -> int:
    """Java ``Math.round``: floor(x + 0.5)."""
    if x != x:
        return 0
    return int(math.floor(x + 0.5))


@register("round")
def round_(ctx: BuiltinContext, x: Any) -> float:
    """round(float) -> float. Half up (``round(2.5)`` = 3.0, ``round(-2.5)`` = -2.0)."""
    x = _f(x)
    return float(_java_round(x)) if math.isfinite(x) else x


@register("log")
def log(ctx: BuiltinContext, x: Any, base: Any = None) -> float:
    """log(float x[, float base]) -> float. Natural log, or log to ``base``."""
    v = _java_log(_f(x))
    return v if base is None else v / _java_log(_f(base))


@register("atan2")
def atan2(ctx: BuiltinContext, y: Any, x: Any) -> float:
    """atan2(float y, float x) -> float."""
    return math.atan2(_f(y), _f(x))


def _java_pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf
    except ValueError:
        if a == 0 and b < 0:
            return math.inf
        return math.nan


@register("pow")
def pow_(ctx: BuiltinContext, a: Any, b: Any) -> float:
    """pow(float a, float b) -> float (Java ``Math.pow``)."""
    return _java_pow(_f(a), _f(b))


def _num_result(values: tuple) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


@register("min")
def min_(ctx: BuiltinContext, a: Any, b: Any) -> Any:
    """min(a, b): int if both are int, else float."""
    return min(a, b) if _num_result((a, b)) else float(min(_f(a), _f(b)))


@register("max")
def max_(ctx: BuiltinContext, a: Any, b: Any) -> Any:
    """max(a, b): int if both are int, else float."""
    return max(a, b) if _num_result((a, b)) else float(max(_f(a), _f(b)))


@register("abs")
def abs_(ctx: BuiltinContext, a: Any) -> Any:
    """abs(int|float): same type."""
    return abs(a)


@register("isNaN")
def is_nan(ctx: BuiltinContext, x: Any) -> bool:
    """isNaN(float) -> boolean."""
    return _f(x) != _f(x)


@register("sum")
def sum_(ctx: BuiltinContext, array: dict) -> Any:
    """sum(int[]|float[]): int for int arrays, float otherwise."""
    vals = [v for _, v in sorted_items(array)]
    return sum(vals) if _num_result(tuple(vals)) else float(sum(_f(v) for v in vals))


@register("avg")
def avg(ctx: BuiltinContext, array: dict) -> float:
    """avg(int[]|float[]) -> float. NaN for an empty array."""
    vals = [_f(v) for _, v in sorted_items(array)]
    return sum(vals) / len(vals) if vals else math.nan


@register("moment")
def moment(ctx: BuiltinContext, array: dict, n: int, center: Any = 0.0) -> float:
    """moment(float[] a, int n, float center) -> float. Mean of (x - center)**n."""
    vals = [_f(v) for _, v in sorted_items(array)]
    return sum((v - _f(center)) ** n for v in vals) / len(vals) if vals else math.nan


def _jint(n: int) -> int:
    """Java int overflow: wrap to 32 bits, signed."""
    n &= 0xFFFFFFFF
    return n - (1 << 32) if n >= 1 << 31 else n


def _jrem(a: int, b: int) -> int:
    """Java ``%``: the remainder takes the sign of the dividend."""
    r = abs(a) % b
    return -r if a < 0 else r


def _java_random() -> float:
    """``java("java.lang.Math", "random")``: a float in [0, 1)."""
    import random  # here: few scripts draw numbers (1 ms of every start)

    return random.random()


def _digest(seed: int, seq: int) -> bytes:
    """SHA-1 of (seed, seq), four bytes each, as trunk's v2 Random hashes them (each byte
    is Java's ``(byte) (n % 0xff)``, then ``n >>= 8``)."""
    out = bytearray()
    for n in (_jint(seed), _jint(seq)):
        for _ in range(4):
            out.append(_jrem(n, 0xFF) & 0xFF)
            n >>= 8
    import hashlib  # here: few scripts draw numbers, and hashlib is 2 ms of every start

    return hashlib.sha1(bytes(out)).digest()


def _unit(buf: bytes | bytearray, start: int) -> float:
    """7 bytes from ``start``, their low 52 bits scaled to [0, 1] (trunk's toDouble)."""
    n = int.from_bytes(buf[start:start + 7], "big")
    return (n & 0xFFFFFFFFFFFFF) / 0xFFFFFFFFFFFFF


@register("randomInt")
def random_int(ctx: BuiltinContext, seed: int, seq: int, lo: int, hi: int) -> int:
    """randomInt(int seed, int seq, int min, int max) -> int in [min, max), the same
    number for the same (seed, seq) as trunk (SHA-1 based, rejection sampling)."""
    span = _jint(hi - lo)
    if span <= 0:
        raise BuiltinError(f"randomInt: max ({hi}) must be greater than min ({lo})")
    mask = 1
    while mask < span:
        mask = (mask << 1) + 1
    h = int.from_bytes(_digest(seed, seq)[:8], "big")
    step = 0
    while (h & mask) >= span:
        step += 1
        h ^= int.from_bytes(_digest(seed, _jint(seq + step))[:8], "big")
    return (h & mask) + lo


@register("randomFloat")
def random_float(ctx: BuiltinContext, seed: int, seq: int, lo: Any, hi: Any) -> float:
    """randomFloat(int seed, int seq, float min, float max) -> float in [min, max],
    trunk's number for (seed, seq)."""
    return _f(lo) + (_f(hi) - _f(lo)) * _unit(_digest(seed, seq), 0)


@register("randomGaussian")
def random_gaussian(ctx: BuiltinContext, seed: int, seq: int) -> float:
    """randomGaussian(int seed, int seq) -> float, standard normal (Box-Muller over the
    pair of sequence numbers seq, seq+1 as trunk pairs them)."""
    mseq = seq - _jrem(seq, 2)
    buf = bytearray(_digest(seed, mseq))
    step = 0
    while True:
        u1, u2 = _unit(buf, 0), _unit(buf, 8)
        if u1 > 0:
            break
        other = _digest(seed, _jint(mseq + step))
        step += 1
        buf = bytearray(a ^ b for a, b in zip(buf, other))
    d = math.cos(2 * math.pi * u2) if _jrem(seq, 2) == 0 else math.sin(2 * math.pi * u2)
    return d * math.sqrt(-2.0 * math.log(u1))


# ------------------------------------------------------------------ java()

def _jround(x: Any) -> int:
    return _java_round(_f(x))


def _jsignum(x: Any) -> float:
    x = _f(x)
    return x if x == 0 or x != x else math.copysign(1.0, x)


_JAVA_STATICS: dict[str, dict[str, Any]] = {
    "java.lang.Math": {
        "sin": lambda x: math.sin(_f(x)), "cos": lambda x: math.cos(_f(x)),
        "tan": lambda x: math.tan(_f(x)), "asin": lambda x: math.asin(_f(x)),
        "acos": lambda x: math.acos(_f(x)), "atan": lambda x: math.atan(_f(x)),
        "atan2": lambda y, x: math.atan2(_f(y), _f(x)),
        "sinh": lambda x: math.sinh(_f(x)), "cosh": lambda x: math.cosh(_f(x)),
        "tanh": lambda x: math.tanh(_f(x)),
        "exp": lambda x: math.exp(_f(x)), "log": lambda x: _java_log(_f(x)),
        "log10": lambda x: _java_log10(_f(x)), "sqrt": lambda x: math.sqrt(_f(x)) if _f(x) >= 0 else math.nan,
        "cbrt": lambda x: math.copysign(abs(_f(x)) ** (1 / 3), _f(x)),
        "pow": lambda a, b: _java_pow(_f(a), _f(b)), "hypot": lambda a, b: math.hypot(_f(a), _f(b)),
        "ceil": lambda x: float(math.ceil(_f(x))), "floor": lambda x: float(math.floor(_f(x))),
        "rint": lambda x: float(round(_f(x))), "round": _jround,
        "abs": lambda x: abs(x), "max": lambda a, b: max(a, b), "min": lambda a, b: min(a, b),
        "signum": _jsignum, "toRadians": lambda x: math.radians(_f(x)),
        "toDegrees": lambda x: math.degrees(_f(x)), "random": _java_random,
        "expm1": lambda x: math.expm1(_f(x)), "log1p": lambda x: math.log1p(_f(x)),
    },
    "java.lang.Integer": {
        "parseInt": lambda s, b=10: parse_java_int(s, b), "valueOf": lambda s: parse_java_int(str(s)),
        "toString": lambda i, b=10: str(i) if b == 10 else _to_base(i, b),
        "toHexString": lambda i: format(i & 0xFFFFFFFF, "x"),
        "toBinaryString": lambda i: format(i & 0xFFFFFFFF, "b"),
        "toOctalString": lambda i: format(i & 0xFFFFFFFF, "o"),
        "max": max, "min": min, "signum": lambda i: (i > 0) - (i < 0),
    },
    "java.lang.Double": {
        "parseDouble": parse_java_double, "valueOf": lambda s: parse_java_double(str(s)),
        "toString": lambda d: java_str(float(d)), "isNaN": lambda d: d != d,
        "isInfinite": lambda d: math.isinf(d),
    },
    "java.lang.String": {
        "valueOf": lambda v: java_str(v),
        "format": lambda fmt, *a: _java_format(fmt, a),
    },
    "java.lang.System": {
        "getenv": lambda name: __import__("os").environ.get(name),
        "getProperty": lambda name: {"line.separator": "\n", "file.separator": "/",
                                     "path.separator": ":"}.get(name),
    },
}


def _to_base(i: int, b: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    if i == 0:
        return "0"
    neg, i, out = i < 0, abs(i), []
    while i:
        i, r = divmod(i, b)
        out.append(digits[r])
    return ("-" if neg else "") + "".join(reversed(out))


@register("java")
def java(ctx: BuiltinContext, cls: str, method: str, *args: Any) -> Any:
    """java(string class, string method, any...) -> any. Calls a static Java method; the
    classes provided are java.lang.Math, Integer, Double, String and System (the ones
    Swift scripts use), e.g. ``java("java.lang.Math", "sin", 0.5)`` -> 0.479425538604203."""
    full = cls if "." in cls else "java.lang." + cls
    table = _JAVA_STATICS.get(full)
    if table is None:
        raise BuiltinError(f"java(): class not found: {cls}")
    fn = table.get(method)
    if fn is None:
        raise BuiltinError(f"java(): no static method {method} in class {full}")
    try:
        result = fn(*args)
    except TypeError:
        raise BuiltinError(f"java(): no method {full}.{method} for {len(args)} argument(s)") from None
    except (ValueError, OverflowError):
        result = math.nan
    if result is None:
        raise BuiltinError(f"java(): {full}.{method} returned null")
    return result
