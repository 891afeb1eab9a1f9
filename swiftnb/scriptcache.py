"""Scripts' parses kept between runs, as Swift/K kept ``SCRIPT.kml`` for an unchanged script.

Parsing a script takes a millisecond; loading the parser does not: importing lark and
building its tables is some 35 ms, a sixth of a ``swiftnb`` start.  A script file that
parsed before, unchanged, is read back from the disk cache (``swiftnb.diskcache``,
``scripts/``) instead, and lark is not loaded at all.  A kept parse is used only when its
file name, its text and the code that made it (parser, AST, grammar, lark) are all the
same; only parses that succeeded are kept (an error is always reported by the parser
itself).  ``-recompile`` (as in Swift) and ``SWIFTNB_NO_CACHE`` bypass it.

The ``swiftnb`` command hands :func:`parse` (or, for ``-recompile``, :func:`reparse`) to
``lang.load``: the language package itself keeps nothing, as it imports nothing of
swiftnb outside itself.
"""

from __future__ import annotations

import importlib.util
import os

from swiftnb import diskcache, lang
from swiftnb.lang import ast

#: kept parses at most; when more, the oldest half go
MAX_KEPT = 256

_LANG = os.path.dirname(os.path.abspath(lang.__file__))
_code: diskcache.Key | None = None


def _code_state() -> diskcache.Key | None:
    """The state of the code that parses (None: some of it cannot be found)."""
    global _code
    if _code is None:
        spec = importlib.util.find_spec("lark")
        if spec is None or not spec.origin:
            return None
        _code = diskcache.code_state(
            [os.path.join(_LANG, name) for name in ("parser.py", "ast.py", "swift.lark")]
            + [spec.origin])
    return _code


def _place(filename: str, text: str) -> tuple[str, diskcache.Key] | None:
    """(cache file, full key) for this script, or None when nothing is kept."""
    code = _code_state()
    if code is None:
        return None
    key = (filename, text, *code)
    path = diskcache.place("scripts", key)
    return None if path is None else (path, key)


def lookup(text: str, filename: str) -> ast.Program | None:
    """The kept parse of this script, or None."""
    found = _place(filename, text)
    if found is None:
        return None
    program = diskcache.load(*found)
    return program if isinstance(program, ast.Program) else None


def keep(text: str, filename: str, program: ast.Program) -> None:
    """Keep a successful parse for the next run of the same script."""
    found = _place(filename, text)
    if found is None:
        return
    path, key = found
    diskcache.store(path, key, program)
    diskcache.prune(os.path.dirname(path), MAX_KEPT)


def parse(text: str, path: str) -> ast.Program:
    """``lang.parse`` of a script file, reusing its kept parse when it is unchanged."""
    program = lookup(text, path)
    return program if program is not None else reparse(text, path)


def reparse(text: str, path: str) -> ast.Program:
    """``lang.parse`` of a script file, kept for its next run (``-recompile``)."""
    program = lang.parse(text, path)
    keep(text, path, program)
    return program
