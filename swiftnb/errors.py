"""The root of every exception swiftnb raises.

Why one root: a caller embedding swiftnb (a notebook, a workflow system, a test) can
tell "swiftnb refused or failed this, for a reason it explains" from a bug in its own
code or in a library with one ``except SwiftnbError``.  Each subclass still says what
went wrong by its class and, where the failure has kinds, by a ``kind`` value, never by
the wording of its message.

Classes that callers already catch as ``ValueError``, ``OSError`` or ``RuntimeError``
keep that base too (``class ConfigValueError(SwiftnbError, ValueError)``), so nothing
that caught them before stops catching them.  ``tests/test_error_root.py`` checks that
every exception class defined in the package derives from this one and that no two
public classes of the package share a name.
"""

from __future__ import annotations

__all__ = ["SwiftnbError"]


class SwiftnbError(Exception):
    """Something swiftnb refused or could not do; its class says what."""
