"""The Swift language front end: text -> AST -> checked program.

Knows nothing of execution (imports nothing of swiftnb outside ``swiftnb.lang``).
"""

from swiftnb.lang import ast, types

__all__ = ["ast", "types"]
