"""A package's exports imported when first asked for (PEP 562 ``__getattr__``), so that
``import swiftnb.logs`` stays cheap and pandas or bokeh load only for what uses them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports", "exported"]

#: module -> the names a package exports from it
Exports = Mapping[str, Sequence[str]]


def exported(modules: Exports) -> list[str]:
    """The package's ``__all__``: every name ``modules`` lists, sorted."""
    return sorted(name for names in modules.values() for name in names)


def lazy_exports(package: str, modules: Exports) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``name`` from the module that lists it."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
