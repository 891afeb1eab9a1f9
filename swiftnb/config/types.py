"""Value types of swift.conf keys, as Swift 0.96's schema named them.

Each type turns a value read from HOCON (or a string from the command line or a
properties file) into the Python value the model holds, or raises ``BadValue`` whose
text says what was expected.  Strings are converted where the schema wants numbers or
booleans, as typesafe-config did: ``maxJobs: "20"`` is the number 20.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from swiftnb.errors import SwiftnbError

# Swift's "off" throttle is Integer.MAX_VALUE; keeping an int lets callers compare.
THROTTLE_OFF = 2**31 - 1


class BadValue(SwiftnbError):
    """A value of the wrong type; the message is the 'expected ...' part."""


#: Java's int, which Swift 0.96 read most counts, throttles and times into
JAVA_INT_MIN, JAVA_INT_MAX = -2**31, 2**31 - 1

#: numbers as a configuration may write them (ASCII digits only: Python's int() and
#: float() would also take "1_000", "\u0661" or "nan", which no Swift file meant)
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _java_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "off"):
        return False
    raise BadValue("expected a boolean (true or false)")


def _number(value: Any) -> int | float | None:
    """The number ``value`` holds (an int when it is whole), or None: not a finite
    number (NaN, infinity, a word, a list...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        if _INT_TEXT.fullmatch(text):
            return int(text)
        if not _FLOAT_TEXT.fullmatch(text):
            return None
        value = float(text)
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    return None


def _range(low: float, high: float, integer: bool) -> str:
    """``an integer from 0 to 2147483647``, ``a number from 1 to 100``."""
    return f"{'an integer' if integer else 'a number'} from {_shown(low)} to {_shown(high)}"


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else f"{number:.10g}"


def in_range(value: Any, low: float, high: float, integer: bool) -> int | float:
    """``value`` as a number within [low, high] (an int if ``integer``), or BadValue
    saying the range."""
    number = _number(value)
    if number is None or (integer and not isinstance(number, int)) or \
            not low <= number <= high:
        raise BadValue("expected " + _range(low, high, integer))
    return number if integer else float(number)


#: the kinds of numbers: whether whole, and the range a key of the kind takes unless
#: its schema entry narrows it (Java's int for most, as 0.96 read them)
_NUMERIC: dict[str, tuple[bool, float, float]] = {
    "int": (True, JAVA_INT_MIN, JAVA_INT_MAX),
    "nonneg": (True, 0, JAVA_INT_MAX),
    "posint": (True, 1, JAVA_INT_MAX),
    "throttle": (True, 1, JAVA_INT_MAX),
    "float": (False, JAVA_INT_MIN, JAVA_INT_MAX),
    "posfloat": (False, 0, JAVA_INT_MAX),
}


@dataclass(frozen=True)
class ValueType:
    """One schema type: ``kind`` selects the conversion; ``low``/``high`` bound a
    number (the kind's range, narrowed where a key gives its own)."""

    kind: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def __post_init__(self) -> None:
        """A number kind's range, narrowed by ``low``/``high`` where given."""
        if self.kind in _NUMERIC:
            _, kind_low, kind_high = _NUMERIC[self.kind]
            object.__setattr__(self, "low", kind_low if self.low is None
                               else max(self.low, kind_low))
            object.__setattr__(self, "high", kind_high if self.high is None
                               else min(self.high, kind_high))

    def describe(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        if self.kind in _NUMERIC:
            assert self.low is not None and self.high is not None
            text = _range(self.low, self.high, _NUMERIC[self.kind][0])
            return text + ' or "off"' if self.kind == "throttle" else text
        return _DESCRIPTIONS.get(self.kind, self.kind)

    def from_text(self, value: str) -> Any:
        """A string from the command line or a legacy file as the key's value where it
        reads as one (``"12"`` -> 12), else as given: validation then names the file,
        line and what was expected."""
        if self.kind == "stringlist":
            return [v.strip() for v in value.split(",") if v.strip()]
        if self.kind == "throttle" and value.strip().lower() == "off":
            return "off"
        if self.kind in _NUMERIC or self.kind == "bool":
            try:
                return self.convert(value)
            except BadValue:
                return value
        return value

    def convert(self, value: Any) -> Any:
        kind = self.kind
        if kind == "any":
            return value
        if kind == "object":
            if not isinstance(value, dict):
                raise BadValue("expected an object ({ ... })")
            return value
        if isinstance(value, (dict, list)) and kind not in ("stringlist", "portrange"):
            what = "an object" if isinstance(value, dict) else "a list"
            raise BadValue(f"expected {self.describe()}, not {what}")
        if kind == "string":
            return _text(value)
        if kind == "bool":
            return _java_bool(value)
        if kind == "throttle" and isinstance(value, str) and value.strip().lower() == "off":
            return THROTTLE_OFF
        if kind in _NUMERIC:
            assert self.low is not None and self.high is not None
            try:
                return in_range(value, self.low, self.high, _NUMERIC[kind][0])
            except BadValue:
                raise BadValue("expected " + self.describe()) from None
        if kind == "time":
            return time_to_seconds(value)
        if kind == "stringlist":
            return string_list(value)
        if kind == "choice":
            text = _text(value)
            if text not in self.choices:
                raise BadValue("expected one of " + ", ".join(self.choices))
            return text
        if kind == "portrange":
            return port_range(value)
        if kind == "size":
            return size_in_bytes(value)
        raise AssertionError(f"unknown schema type {kind}")


_DESCRIPTIONS = {
    "any": "any value",
    "object": "an object ({ ... })",
    "string": "a string",
    "bool": "a boolean (true or false)",
    "time": 'a time ("MM", "HH:MM" or "HH:MM:SS") of at most 596523:14:07',
    "stringlist": 'a list of strings or a comma-separated string',
    "portrange": 'a port range "low, high"',
    "size": 'a size in bytes, or with a unit: "512 MB", "1 GB", "0"',
    "distribution": 'a duration in seconds: N, "exp:MEAN", "uniform:A:B" or "normal:MEAN:SD"',
    "outages": 'a list of outages [{start: S, duration: D}, ...] or "START+DURATION, ..."',
}


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        raise BadValue("expected a string, not a list")
    return str(value)


def string_list(value: Any) -> list[str]:
    """``[a, b]``, ``a`` or ``"a, b"`` -> ``["a", "b"]`` (Swift's StringList)."""
    if isinstance(value, list):
        items = []
        for item in value:
            if isinstance(item, (dict, list)):
                raise BadValue("expected a list of strings")
            items.append(_text(item).strip())
        return [item for item in items if item]
    if isinstance(value, dict):
        raise BadValue("expected a list of strings")
    return [part.strip() for part in _text(value).split(",") if part.strip()]


_TIME = re.compile(r"^\s*([0-9]+)(?::([0-9]+))?(?::([0-9]+))?\s*$")


def time_to_seconds(value: Any) -> int:
    """Swift's Time: "MM", "HH:MM" or "HH:MM:SS"; a bare number means minutes.  At most
    Java's largest int of seconds (0.96 held times in one)."""
    expected = BadValue("expected " + _DESCRIPTIONS["time"])
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        raise expected
    if isinstance(value, (int, float)):
        if not 0 <= value * 60 <= JAVA_INT_MAX:  # also NaN and infinity
            raise expected
        return int(round(value * 60))
    match = _TIME.match(str(value))
    if not match:
        raise expected
    parts = [int(p) for p in match.groups() if p is not None]
    if len(parts) == 1:
        seconds = parts[0] * 60
    elif len(parts) == 2:
        seconds = parts[0] * 3600 + parts[1] * 60
    else:
        seconds = parts[0] * 3600 + parts[1] * 60 + parts[2]
    if seconds > JAVA_INT_MAX:
        raise expected
    return seconds


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.I)
_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def size_in_bytes(value: Any) -> int:
    """``"1 GB"`` -> 1073741824: a size as Java settings write them (binary units,
    ``KB``/``K``/``KiB`` alike; a bare number is bytes)."""
    expected = BadValue("expected " + _DESCRIPTIONS["size"])
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        raise expected
    if isinstance(value, (int, float)):
        if not 0 <= value < 2**63:
            raise expected
        return int(value)
    match = _SIZE.match(str(value))
    if not match:
        raise expected
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).upper()])


def seconds_to_time(seconds: int) -> str:
    """Seconds -> "HH:MM:SS", the form swift-convert-config wrote."""
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def port_range(value: Any) -> tuple[int, int]:
    """``"50000, 50100"`` (or a two-element list) -> (50000, 50100)."""
    parts = value if isinstance(value, list) else str(value).replace(" ", "").split(",")
    numbers = [_number(p) for p in parts]
    ints = [n for n in numbers if isinstance(n, int)]
    if len(numbers) != 2 or len(ints) != 2:
        raise BadValue('expected a port range "low, high"')
    low, high = ints
    if not (0 < low <= high < 65536):
        raise BadValue('expected a port range "low, high" with 0 < low <= high < 65536')
    return (low, high)


@dataclass(frozen=True)
class Distribution:
    """A random duration for sim sites: constant, exp:MEAN, uniform:A:B, normal:MEAN:SD,
    or empirical:X,Y,... (one of the observed samples, resampled: what-if models)."""

    kind: str
    params: tuple[float, ...]

    @property
    def mean(self) -> float:
        if self.kind == "uniform":
            return (self.params[0] + self.params[1]) / 2
        if self.kind == "empirical":
            return sum(self.params) / len(self.params)
        return self.params[0]

    def sample(self, rng) -> float:
        """One draw from ``rng`` (a random.Random); never negative."""
        if self.kind == "const":
            return self.params[0]
        if self.kind == "exp":
            return rng.expovariate(1.0 / self.params[0]) if self.params[0] > 0 else 0.0
        if self.kind == "uniform":
            return rng.uniform(self.params[0], self.params[1])
        if self.kind == "empirical":
            return float(rng.choice(self.params))
        return max(0.0, rng.gauss(self.params[0], self.params[1]))


#: the longest simulated duration a sim option may ask for (one year): a longer one is a
#: typo, and its virtual timestamps would overflow the log's dates
MAX_SIM_SECONDS = 365 * 24 * 3600.0


def parse_distribution(value: Any) -> Distribution:
    expected = "expected " + _DESCRIPTIONS["distribution"]
    if isinstance(value, bool) or isinstance(value, (dict, list)):
        raise BadValue(expected)
    if isinstance(value, (int, float)):
        if not 0 <= value <= MAX_SIM_SECONDS:
            raise BadValue(expected + _too_long(value))
        return Distribution("const", (float(value),))
    parts = [p.strip() for p in str(value).split(":")]
    if parts[0] == "empirical" and len(parts) == 2:  # samples: X,Y,...
        parts = ["empirical", *parts[1].split(",")]
    try:
        numbers = tuple(float(p) for p in parts[1:])
        if len(parts) == 1:
            number = float(parts[0])
            if not 0 <= number <= MAX_SIM_SECONDS:  # also NaN
                raise BadValue(expected + _too_long(number))
            return Distribution("const", (number,))
    except ValueError:
        raise BadValue(expected) from None
    arity = {"exp": 1, "uniform": 2, "normal": 2}.get(parts[0])
    if parts[0] == "empirical" and numbers:
        arity = len(numbers)
    if arity is None or len(numbers) != arity or any(math.isnan(n) or n < 0 for n in numbers):
        raise BadValue(expected)
    if any(n > MAX_SIM_SECONDS for n in numbers):
        raise BadValue(expected + _too_long(max(numbers)))
    if parts[0] == "uniform" and numbers[0] > numbers[1]:
        raise BadValue(expected + " (uniform:A:B needs A <= B)")
    return Distribution(parts[0], numbers)


def _too_long(number: float) -> str:
    return (f" of at most {MAX_SIM_SECONDS:.0f} (one year)"
            if number == number and number > MAX_SIM_SECONDS else "")


def parse_outages(value: Any) -> list[tuple[float, float]]:
    """Sim outages: ``[{start: 100, duration: 50}]`` or ``"100+50, 400+20"`` (seconds)."""
    expected = "expected " + _DESCRIPTIONS["outages"]
    items = value if isinstance(value, list) else [
        p for p in str(value).split(",") if p.strip()]
    result = []
    for item in items:
        try:
            if isinstance(item, dict):
                start, duration = float(item["start"]), float(item["duration"])
            else:
                start_text, duration_text = str(item).split("+")
                start, duration = float(start_text), float(duration_text)
        except (KeyError, ValueError, TypeError):
            raise BadValue(expected) from None
        if not (0 <= start <= MAX_SIM_SECONDS and 0 <= duration <= MAX_SIM_SECONDS):
            raise BadValue(expected + f" (each of at most {MAX_SIM_SECONDS:.0f} s)")
        result.append((start, duration))
    return result


def T(kind: str, *choices: str, low: float | None = None,
      high: float | None = None) -> ValueType:
    """A schema type; a number kind gets its kind's range, narrowed by ``low``/``high``."""
    return ValueType(kind, tuple(choices), low, high)


def flatten_options(options: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """An app's ``options`` (or a site's ``jobOptions``) as ``{"mpi.processes": "4"}``:
    nested objects joined with dots (HOCON's ``mpi { processes: 4 }`` and
    ``"mpi.processes": 4`` are the same key), values as strings (``true``/``false``)."""
    flat: dict[str, str] = {}
    for key, value in options.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_options(value, name + "."))
        elif isinstance(value, bool):
            flat[name] = "true" if value else "false"
        else:
            flat[name] = str(value)
    return flat
