"""The nearest name to a misspelt one, for the "did you mean ...?" of messages."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["close_matches"]


def close_matches(word: str, choices: Iterable[str], cutoff: float = 0.6) -> list[str]:
    """The choice most like ``word`` (difflib's ratio at least ``cutoff``) as a list of
    one, or an empty list.  difflib is imported here, when a name is misspelt: at module
    level it would cost every ``swiftnb`` start 1.6 ms."""
    import difflib

    return difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
