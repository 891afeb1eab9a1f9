"""The table of built-in functions and procedures: name -> implementation.

Every builtin is a plain Python callable ``fn(ctx, *args)`` taking a
:class:`~swiftnb.engine.data.BuiltinContext` and the closed argument values as plain data
(:mod:`swiftnb.engine.data`) and returning plain data (``None`` for procedures without
outputs).  ``is_async`` marks the few that really wait (``system`` runs a subprocess):
the engine awaits those and calls the others directly, on the hot path.

``waits`` says what the engine must wait for before the call:

* ``"closed"`` — every argument deeply closed (the default; Swift's rule for builtins).
* ``"mapping"`` — only the *mapping* of the first argument (``filename``, ``filenames``,
  ``dirname`` are used on app outputs that do not exist yet); the engine passes a
  :class:`~swiftnb.engine.data.FileValue`/composite built from the mapper, other
  arguments closed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Builtin", "REGISTRY", "register", "lookup", "AT_SYNTAX_WARNING", "deprecation_warning"]

AT_SYNTAX_WARNING = "The @ syntax for function invocation is deprecated"


@dataclass(frozen=True, slots=True)
class Builtin:
    """One builtin: its Swift name, implementation and call conventions."""

    name: str
    fn: Callable[..., Any]
    is_async: bool = False
    #: "function" (an expression with one value) or "procedure" (a statement; may have
    #: no output, e.g. trace)
    kind: str = "function"
    waits: str = "closed"
    #: the canonical name when this is a deprecated alias (``toint`` -> ``toInt``)
    alias_of: str | None = None
    #: needs ``ctx.return_type`` (readData) / ``ctx.return_file`` (writeData)
    needs_return_type: bool = False
    needs_return_file: bool = False
    doc: str = ""
    #: needs ``ctx.arg_types``, its arguments' static types (writeData of an empty array)
    needs_arg_types: bool = False

    @property
    def deprecated(self) -> str | None:
        """The warning text 0.96 printed for a deprecated lower-case alias, else None."""
        if self.alias_of is None:
            return None
        # 0.96 declared readData & co. as procedures in its library table
        what = "Procedure" if self.kind == "procedure" or self.alias_of in _PROCEDURE_LIKE else "Function"
        return f"{what} {self.name} is deprecated"


REGISTRY: dict[str, Builtin] = {}
_PROCEDURE_LIKE = frozenset({"readData", "readData2", "readStructured", "writeData"})


def register(
    *names: str,
    kind: str = "function",
    waits: str = "closed",
    deprecated: tuple[str, ...] = (),
    needs_return_type: bool = False,
    needs_return_file: bool = False,
    needs_arg_types: bool = False,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: register ``fn`` under ``names`` (first is canonical) and under the
    deprecated lower-case ``deprecated`` aliases."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        is_async = inspect.iscoroutinefunction(fn)
        doc = inspect.getdoc(fn) or ""
        for n in names:
            REGISTRY[n] = Builtin(n, fn, is_async, kind, waits, None, needs_return_type,
                                  needs_return_file, doc, needs_arg_types)
        for n in deprecated:
            REGISTRY[n] = Builtin(n, fn, is_async, kind, waits, names[0], needs_return_type,
                                  needs_return_file, doc, needs_arg_types)
        return fn

    return deco


def lookup(name: str) -> Builtin | None:
    """The builtin called ``name`` (``@name`` and ``name`` spellings alike), or None."""
    if name.startswith("@"):
        name = name[1:]
    return REGISTRY.get(name)


def deprecation_warning(name: str) -> str | None:
    """Warning text for calling ``name`` (without ``Warning: `` prefix), or None."""
    b = lookup(name)
    return b.deprecated if b else None
