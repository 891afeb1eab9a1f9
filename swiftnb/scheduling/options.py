"""A provider's ``execution.options``, declared once as a typed class.

Each provider declares its options as a frozen dataclass deriving from
:class:`ProviderOptions` (field name = the swift.conf key, annotation = its type, default
= its default; a field whose values need more than a type, a duration distribution say,
names its reader with ``option(convert=...)``, and ``check`` says what a value may not
be).  :meth:`ProviderOptions.from_site` reads a site's options against the
class its ``execution.type`` selects: a key of another provider (a sim key on a coaster
site) or a misspelt key is refused with the file and line it came from and the nearest
valid key, a value of the wrong type likewise.  A coaster key on another site, which
Swift 0.96's schema accepted everywhere, is a warning instead (``warn``).  Keys every
site may carry for the brokerage policy (``cores``, ``maxTime``...) are accepted
everywhere.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

from swiftnb.config.schema import SWIFT_EXECUTION_OPTION_NAMES as COASTER_OPTION_NAMES
from swiftnb.config.types import JAVA_INT_MAX, JAVA_INT_MIN, BadValue, in_range
from swiftnb.errors import SwiftnbError
from swiftnb.nearest import close_matches

__all__ = ["ProviderOptions", "OptionsError", "BROKERAGE_KEYS", "option"]

#: site attributes the brokerage policy reads (seed 004): accepted on every site
BROKERAGE_KEYS = frozenset({
    "status", "maxTime", "maxWallTime", "maxJobTime", "cores", "coresPerNode", "minMemory",
    "maxMemory", "arch", "gpu", "numSlots", "localData",
})

O = TypeVar("O", bound="ProviderOptions")


def option(default: Any, *, convert: typing.Callable[[Any], Any] | None = None) -> Any:
    """A field with a reader of its own: ``convert(raw)`` returns the value or raises
    ValueError with what was expected."""
    return dataclasses.field(default=default, metadata={"convert": convert} if convert else {})


class OptionsError(SwiftnbError, ValueError):
    """A site's execution options do not fit its provider; the message is for people."""


def _shown_value(value: Any) -> str:
    """A written value for a message: a huge number is not printed in full."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _convert(value: Any, kind: Any) -> Any:
    """A written value as the field's type (OptionsError: what was expected)."""
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if value is None:
            return None
        return _convert(value, args[0])
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise OptionsError(f"invalid value {value!r}, expected true or false")
    if kind in (int, float):
        # Java's int, as 0.96 read these options (and as every swift.conf count is)
        try:
            return in_range(value, JAVA_INT_MIN, JAVA_INT_MAX, integer=kind is int)
        except BadValue as exc:
            raise OptionsError(f"invalid value {_shown_value(value)}, {exc}") from None
    if kind is str:
        return str(value)
    if origin in (tuple, list):
        items = value if isinstance(value, (list, tuple)) else [
            v.strip() for v in str(value).split(",") if v.strip()]
        return tuple(str(v) for v in items)
    return value  # Any / Mapping: as written


@dataclasses.dataclass(frozen=True)
class ProviderOptions:
    """Base of the typed ``execution.options`` of a provider."""

    #: other spellings of keys (Swift's old names) -> field name
    ALIASES: ClassVar[Mapping[str, str]] = {}
    #: keys accepted without a field (read by another layer, e.g. the brokerage)
    EXTRA_KEYS: ClassVar[frozenset[str]] = BROKERAGE_KEYS

    def check(self) -> typing.Iterator[tuple[str, str]]:
        """(key, problem) for each value out of its range (an override says which)."""
        return iter(())

    @classmethod
    def from_mapping(cls: type[O], options: Mapping[str, Any], *, where: str = "options",
                     origin: typing.Callable[[str], str] | None = None,
                     type_name: str = "",
                     warn: typing.Callable[[str], None] | None = None) -> O:
        """Options from a mapping; ``where`` prefixes messages (``site.x.execution.options``)
        and ``origin(key)`` says where a key was written (``swift.conf:12``).  ``warn``
        is told of a coaster key on a site of another type, which Swift 0.96's schema
        accepted on every site and this provider ignores (without ``warn``, refused)."""
        hints = typing.get_type_hints(cls)
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}

        def fail(key: str, problem: str) -> OptionsError:
            place = origin(key) if origin is not None else ""
            return OptionsError(f"{place + ': ' if place else ''}{where}.{key}: {problem}")

        for key, value in options.items():
            name = cls.ALIASES.get(key, key)
            field = fields.get(name)
            if field is None:
                if key in cls.EXTRA_KEYS:
                    continue
                kind = f" for execution type \"{type_name}\"" if type_name else ""
                if key in COASTER_OPTION_NAMES:  # a 0.96 coaster key on another site
                    problem = fail(key, f"a coaster option (blocks of pilot jobs), with no "
                                        f"effect{kind}: remove it, or make the site "
                                        "execution.type \"coaster\" with a jobManager such "
                                        "as \"local:slurm\"")
                    if warn is None:
                        raise problem
                    warn(str(problem))
                    continue
                near = close_matches(key, sorted(set(fields) | set(cls.ALIASES)))
                raise fail(key, f"unknown key{kind}" + (f", did you mean {near[0]}?" if near
                                                        else ""))
            convert = field.metadata.get("convert")
            try:
                values[name] = (convert(value) if convert is not None
                                else _convert(value, hints[name]))
            except (OptionsError, ValueError, TypeError) as exc:
                raise fail(key, str(exc)) from None
        made = cls(**values)
        for key, why in made.check():
            written = next((k for k, v in cls.ALIASES.items() if v == key and k in options), key)
            raise fail(written, why)
        return made
