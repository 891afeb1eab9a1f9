"""Compile diagnostics: what went wrong, where, shown the way a person reads it.

A :class:`Diagnostic` is one message at one position; :class:`CompileError` carries one or
more of them (the checker collects several per run).  ``render()`` prints, for each,
``file:line:col: message``, the source line and a caret under the column.
"""

from __future__ import annotations

from dataclasses import dataclass

from swiftnb.errors import SwiftnbError


@dataclass(frozen=True, slots=True)
class Diagnostic:
    file: str
    line: int
    column: int
    message: str
    source_line: str = ""

    def render(self) -> str:
        head = f"{self.file}:{self.line}:{self.column}: {self.message}"
        if not self.source_line:
            return head
        text, column = _excerpt(self.source_line.rstrip("\r\n"), self.column)
        caret = " " * max(column - 1, 0) + "^"
        return f"{head}\n    {text.expandtabs(1)}\n    {caret}"

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"


class CompileError(SwiftnbError):
    """A script that cannot run: syntax errors (one) or semantic errors (several)."""

    def __init__(self, diagnostics: list[Diagnostic] | Diagnostic) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = [diagnostics]
        self.diagnostics: list[Diagnostic] = list(diagnostics)
        super().__init__(self.render_short())

    @property
    def messages(self) -> list[str]:
        return [d.message for d in self.diagnostics]

    def render_short(self) -> str:
        return "\n".join(str(d) for d in self.diagnostics)

    def render(self) -> str:
        return "\n".join(d.render() for d in self.diagnostics)


#: a source line longer than this is shown as an excerpt around the column
EXCERPT = 120


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """At most EXCERPT characters of ``line`` around ``column`` (1-based), with '...'
    where it was cut, and the column within that excerpt: a message about a
    megabyte-long line shows where, not the megabyte."""
    if len(line) <= EXCERPT:
        return line, column
    start = min(max(column - 1 - EXCERPT // 2, 0), len(line) - EXCERPT)
    end = start + EXCERPT
    head = "..." if start else ""
    tail = "..." if end < len(line) else ""
    return head + line[start:end] + tail, column - start + len(head)


def source_line(text: str, line: int) -> str:
    """The ``line``-th (1-based) line of ``text``, or '' when out of range."""
    if line < 1:
        return ""
    start = 0
    for _ in range(line - 1):
        start = text.find("\n", start)
        if start < 0:
            return ""
        start += 1
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]
