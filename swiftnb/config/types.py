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

# Swift's "off" throttle is Integer.MAX_VALUE; keeping an int lets callers compare.
THROTTLE_OFF = 2**31 - 1


class BadValue(Exception):
    """A value of the wrong type; the message is the 'expected ...' part."""


def _java_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "off"):
        return False
    raise BadValue("expected a boolean (true or false)")


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise BadValue("expected an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            pass
    raise BadValue("expected an integer")


def _float(value: Any) -> float:
    if isinstance(value, bool):
        raise BadValue("expected a number")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise BadValue("expected a number")


@dataclass(frozen=True)
class ValueType:
    """One schema type: ``name`` for messages, ``kind`` selects the conversion."""

    kind: str
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None

    def describe(self) -> str:
        return _DESCRIPTIONS.get(self.kind, self.kind) if self.kind not in (
            "choice", "interval") else (
            "one of " + ", ".join(self.choices) if self.kind == "choice"
            else f"a number between {self.low:g} and {self.high:g}")

    def convert(self, value: Any) -> Any:
        kind = self.kind
        if kind == "any":
            return value
        if kind == "object":
            if not isinstance(value, dict):
                raise BadValue("expected an object ({ ... })")
            return value
        if kind == "distribution" and isinstance(value, dict):
            for app, one in value.items():  # per app: {ALL: 10, blast: "exp:60"}
                try:
                    parse_distribution(one)
                except BadValue as exc:
                    raise BadValue(f"{exc} (for app {app})") from None
            return value
        if isinstance(value, dict):
            raise BadValue("expected " + self.describe() + ", not an object")
        if kind == "string":
            if isinstance(value, list):
                raise BadValue("expected a string, not a list")
            return _text(value)
        if kind == "bool":
            return _java_bool(value)
        if kind == "int":
            return _int(value)
        if kind == "nonneg":
            number = _int(value)
            if number < 0:
                raise BadValue("expected an integer greater than or equal to 0")
            return number
        if kind == "posint":
            number = _int(value)
            if number < 1:
                raise BadValue("expected an integer greater than 0")
            return number
        if kind == "float":
            return _float(value)
        if kind == "gtzero":
            number = _float(value)
            if not number > 0:
                raise BadValue("expected a number greater than 0")
            return number
        if kind == "autoint":
            if isinstance(value, str) and value.strip().lower() == "auto":
                return "auto"
            try:
                number = _int(value)
            except BadValue:
                number = -1
            if number < 0:
                raise BadValue("expected " + self.describe())
            return number
        if kind == "posfloat":
            number = _float(value)
            if number < 0:
                raise BadValue("expected a positive number")
            return number
        if kind == "interval":
            number = _float(value)
            assert self.low is not None and self.high is not None
            if not self.low <= number <= self.high:
                raise BadValue(f"expected a number between {self.low:g} and {self.high:g}")
            return number
        if kind == "throttle":
            if isinstance(value, str) and value.strip().lower() == "off":
                return THROTTLE_OFF
            try:
                number = _int(value)
            except BadValue:
                raise BadValue('expected a positive integer or "off"') from None
            if number < 1:
                raise BadValue('expected a positive integer or "off"')
            return number
        if kind == "time":
            return time_to_seconds(value)
        if kind == "seconds":
            try:
                return _int(value)
            except BadValue:
                raise BadValue("expected a number of seconds") from None
        if kind == "stringlist":
            return string_list(value)
        if kind == "choice":
            text = _text(value)
            if text not in self.choices:
                raise BadValue("expected one of " + ", ".join(self.choices))
            return text
        if kind == "portrange":
            return port_range(value)
        if kind == "distribution":
            parse_distribution(value)
            return value
        if kind == "outages":
            return parse_outages(value)
        raise AssertionError(f"unknown schema type {kind}")


_DESCRIPTIONS = {
    "any": "any value",
    "object": "an object ({ ... })",
    "string": "a string",
    "bool": "a boolean (true or false)",
    "int": "an integer",
    "nonneg": "an integer greater than or equal to 0",
    "posint": "an integer greater than 0",
    "float": "a number",
    "posfloat": "a positive number",
    "gtzero": "a number greater than 0",
    "autoint": 'an integer greater than or equal to 0, or "auto"',
    "throttle": 'a positive integer or "off"',
    "time": 'a time ("MM", "HH:MM" or "HH:MM:SS")',
    "seconds": "a number of seconds",
    "stringlist": 'a list of strings or a comma-separated string',
    "portrange": 'a port range "low, high"',
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


_TIME = re.compile(r"^\s*(\d+)(?::(\d+))?(?::(\d+))?\s*$")


def time_to_seconds(value: Any) -> int:
    """Swift's Time: "MM", "HH:MM" or "HH:MM:SS"; a bare number means minutes."""
    if isinstance(value, bool):
        raise BadValue(_DESCRIPTIONS["time"])
    if isinstance(value, (int, float)):
        if not 0 <= value < 1e12:  # also NaN and infinity
            raise BadValue("expected " + _DESCRIPTIONS["time"])
        return int(round(value * 60))
    match = _TIME.match(str(value))
    if not match:
        raise BadValue("expected " + _DESCRIPTIONS["time"])
    parts = [int(p) for p in match.groups() if p is not None]
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 3600 + parts[1] * 60
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


def seconds_to_time(seconds: int) -> str:
    """Seconds -> "HH:MM:SS", the form swift-convert-config wrote."""
    seconds = int(seconds)
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def port_range(value: Any) -> tuple[int, int]:
    """``"50000, 50100"`` (or a two-element list) -> (50000, 50100)."""
    parts = value if isinstance(value, list) else str(value).replace(" ", "").split(",")
    try:
        low, high = (int(str(p).strip()) for p in parts)
    except ValueError:
        raise BadValue('expected a port range "low, high"') from None
    if not (0 < low <= high < 65536):
        raise BadValue('expected a port range "low, high" with 0 < low <= high < 65536')
    return (low, high)


@dataclass(frozen=True)
class Distribution:
    """A random duration for sim sites: constant, exp:MEAN, uniform:A:B, normal:MEAN:SD."""

    kind: str
    params: tuple[float, ...]

    @property
    def mean(self) -> float:
        if self.kind == "uniform":
            return (self.params[0] + self.params[1]) / 2
        return self.params[0]

    def sample(self, rng) -> float:
        """One draw from ``rng`` (a random.Random); never negative."""
        if self.kind == "const":
            return self.params[0]
        if self.kind == "exp":
            return rng.expovariate(1.0 / self.params[0]) if self.params[0] > 0 else 0.0
        if self.kind == "uniform":
            return rng.uniform(self.params[0], self.params[1])
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
        if start < 0 or duration < 0:
            raise BadValue(expected)
        result.append((start, duration))
    return result


def T(kind: str, *choices: str) -> ValueType:
    return ValueType(kind, tuple(choices))


def interval(low: float, high: float) -> ValueType:
    return ValueType("interval", (), low, high)


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
