"""A provider's ``execution.options``, declared once as a typed class.

Each provider declares its options as a frozen dataclass deriving from
:class:`ProviderOptions` (field name = the swift.conf key, annotation = its type, default
= its default).  :meth:`ProviderOptions.from_site` reads a site's options against the
class its ``execution.type`` selects: a key of another provider (a sim key on a coaster
site) or a misspelt key is refused with the file and line it came from and the nearest
valid key, a value of the wrong type likewise.  Keys every site may carry for the
brokerage policy (``cores``, ``maxTime``...) are accepted everywhere.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

__all__ = ["ProviderOptions", "OptionsError", "BROKERAGE_KEYS"]

#: site attributes the brokerage policy reads (seed 004): accepted on every site
BROKERAGE_KEYS = frozenset({
    "status", "maxTime", "maxWallTime", "maxJobTime", "cores", "coresPerNode", "minMemory",
    "maxMemory", "arch", "gpu", "numSlots", "localData",
})

O = TypeVar("O", bound="ProviderOptions")


class OptionsError(ValueError):
    """A site's execution options do not fit its provider; the message is for people."""


def _convert(value: Any, kind: Any, key: str) -> Any:
    origin = typing.get_origin(kind)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        if value is None:
            return None
        return _convert(value, args[0], key)
    if kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise OptionsError(f"{key}: expected true or false, got {value!r}")
    if kind in (int, float):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise OptionsError(f"{key}: expected a number, got {value!r}") from None
        if kind is int:
            if not number.is_integer():
                raise OptionsError(f"{key}: expected a whole number, got {value!r}")
            return int(number)
        return number
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

    @classmethod
    def from_mapping(cls: type[O], options: Mapping[str, Any], *, where: str = "options",
                     origin: typing.Callable[[str], str] | None = None) -> O:
        """Options from a mapping; ``where`` prefixes messages (``site.x.execution.options``)
        and ``origin(key)`` says where a key was written (``swift.conf:12``)."""
        hints = typing.get_type_hints(cls)
        fields = {f.name for f in dataclasses.fields(cls)}
        values: dict[str, Any] = {}
        for key, value in options.items():
            name = cls.ALIASES.get(key, key)
            place = f"{origin(key)}: " if origin is not None and origin(key) else ""
            if name not in fields:
                if key in cls.EXTRA_KEYS:
                    continue
                near = difflib.get_close_matches(key, sorted(fields | set(cls.ALIASES)), n=1)
                hint = f"; did you mean {near[0]}?" if near else ""
                raise OptionsError(f"{place}{where}.{key}: not an option of this site's "
                                   f"execution type{hint}")
            try:
                values[name] = _convert(value, hints[name], f"{where}.{key}")
            except OptionsError as exc:
                raise OptionsError(f"{place}{exc}") from None
        return cls(**values)
