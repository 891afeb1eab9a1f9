"""Swift's built-in functions and procedures (library v1 of Swift/K 0.96 plus the common
library-v2 names), as plain-data Python callables in one registry.

Use :func:`lookup` (accepts ``@name`` and ``name``) to find a :class:`Builtin`; call
``b.fn(ctx, *args)`` (``await`` it when ``b.is_async``).  See docs/builtins.md.
"""

from swiftnb.engine.builtins.registry import (  # noqa: F401
    AT_SYNTAX_WARNING,
    REGISTRY,
    Builtin,
    deprecation_warning,
    lookup,
    register,
)
from swiftnb.engine.builtins import io, numbers, strings, v2  # noqa: F401,E402  (registers)

__all__ = ["AT_SYNTAX_WARNING", "REGISTRY", "Builtin", "deprecation_warning", "lookup", "register"]
