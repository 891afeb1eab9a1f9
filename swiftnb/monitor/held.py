"""The console output a full-screen monitor holds back while it owns the terminal.

The ticker, warnings and the script's own output go to ``sys.stdout``/``sys.stderr`` (in
``swiftnb run``: the tees that copy into ``swift.out``).  Written while the monitor draws,
they would tear its screen; held, they are written through the same streams, in order,
once the monitor leaves, so the terminal and ``swift.out`` still get every line.
"""

from __future__ import annotations

import sys
from typing import TextIO

__all__ = ["HeldOutput"]


class _Holder:
    """A text stream that keeps what it is given for later."""

    def __init__(self, target: TextIO, parts: list[tuple[TextIO, str]]) -> None:
        self.target = target
        self._parts = parts

    def write(self, text: str) -> int:
        self._parts.append((self.target, text))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return self.target.encoding


class HeldOutput:
    """Swap ``sys.stdout``/``sys.stderr`` for holders; :meth:`release` puts them back and
    writes what was held through them, in the order it came."""

    def __init__(self) -> None:
        self._parts: list[tuple[TextIO, str]] = []
        self._saved: tuple[TextIO, TextIO] | None = None

    def hold(self) -> None:
        if self._saved is not None:
            return
        self._saved = (sys.stdout, sys.stderr)
        sys.stdout = _Holder(sys.stdout, self._parts)
        sys.stderr = _Holder(sys.stderr, self._parts)

    def release(self) -> None:
        if self._saved is None:
            return
        sys.stdout, sys.stderr = self._saved
        self._saved = None
        parts, self._parts[:] = list(self._parts), []
        for stream, text in parts:
            stream.write(text)
        for stream in {id(s): s for s, _ in parts}.values():
            stream.flush()
