"""Syntax errors after the first: panic-mode recovery at the top level, with scanners
that are linear whatever the text (see the comments below)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from swiftnb.lang import ast
from swiftnb.lang.errors import CompileError, Diagnostic, source_line

__all__ = ["later_errors", "offset_of", "MAX_SYNTAX_ERRORS"]

#: parses a whole text, raising CompileError with its first syntax error
ParseOne = Callable[[str, str], ast.Program]


# ---------------------------------------------------------------------------- recovery
#
# After a syntax error, panic mode at the top level: skip to the end of the top-level
# declaration or statement that holds the error (its ';' or its closing '}' at brace
# depth 0, plus an 'else' / 'until (...);' / ';' that still belongs to it), blank out
# everything before that point (newlines kept, so positions stay exact) and parse the
# rest again.  Each later error is therefore found by a parse that starts at a real item
# boundary, so it is not a consequence of the earlier one.  lark's own ``on_error``
# (drop the bad token and resume in the same state) was tried and rejected: after a
# missing ')' it reports every following token of the line and then trips the inline
# transformer.  At most one error per top-level item is reported.

MAX_SYNTAX_ERRORS = 10

# The scanners below are linear whatever the text, like _TOKEN_RE.  An unterminated '/*'
# comments out the rest of the text (where 0.96's lexer stopped).  An unterminated string (OPEN) is a quote of its
# own, and the rest of its line is scanned as code, but without strings: every later
# quote of that line is unterminated too (after a quote, escapes pair up the same way
# whichever earlier quote the string started at), and trying each of them would be
# quadratic in the length of the line.
_STRINGS = r"""
 (?P<STR>"(?:[^"\\\r\n]++|\\.)*+")
|(?P<OPEN>")
"""
_SCAN = r"""
 (?P<SKIP>\s++|//[^\n]*+|\#[^\n]*+|/\*[\s\S]*?\*/)
|(?P<UNCLOSED>/\*[\s\S]*+)
|(?P<WORD>[A-Za-z_][A-Za-z0-9_]*+)
|(?P<NUM>[0-9.]++(?:[eE][+-]?[0-9]+)?)
|(?P<OP>\|\||&&|==|!=|<=|>=|<<|%/|%%|[\s\S])
"""
_SCAN_RE = re.compile(_STRINGS + "|" + _SCAN, re.X)
_SCAN_NO_STRINGS_RE = re.compile(_SCAN, re.X)
# What _resync needs to see: braces and ';' (P), outside strings and comments (matched
# whole so that their insides are skipped; '%/' too, which is no comment start), and
# '<name;' (a '<' left over after the '<<' pairs of a run), which opens a mapping's
# parameters rather than ending a statement; the regex engine's own search passes over
# anything else.
_GAP = r"(?:\s++|//[^\n]*+|\#[^\n]*+|/\*[\s\S]*?\*/)*+"
_MARKS = rf"""
 //[^\n]*+|\#[^\n]*+|/\*[\s\S]*?(?:\*/|\Z)|%/
|(?<!<)(?:<<)*+<{_GAP}[A-Za-z_][A-Za-z0-9_]*+{_GAP};
|(?P<P>[{{}};])
"""
_MARKS_RE = re.compile(_STRINGS + "|" + _MARKS, re.X)
_MARKS_NO_STRINGS_RE = re.compile(_MARKS, re.X)


def _matches(text: str, start: int, pattern: re.Pattern[str],
             without_strings: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, start)``, except after an unterminated string (OPEN):
    from its quote to the end of its line, ``without_strings`` scans instead."""
    pos = start
    while pos <= len(text):
        for m in pattern.finditer(text, pos):
            yield m
            if m.lastgroup == "OPEN":
                break
        else:
            return
        quote_end = m.end()
        eol = text.find("\n", quote_end)
        pos = len(text) if eol < 0 else eol
        for rest in without_strings.finditer(text, quote_end, pos):
            if text.startswith("/*", rest.start()):
                # a block comment may go on past the line: ``pattern`` sees all of it
                comment = pattern.match(text, rest.start())
                assert comment is not None  # its catch-all takes at least '/'
                yield comment
                pos = comment.end()
                break
            yield rest


def _scan(text: str, start: int = 0) -> Iterator[tuple[str, str, int, int]]:
    """A lexer that never fails (an unknown character is a token of its own):
    (kind, text, start, end) of each significant token from ``start`` on."""
    for m in _matches(text, start, _SCAN_RE, _SCAN_NO_STRINGS_RE):
        kind = m.lastgroup
        if kind == "UNCLOSED":  # a token, so that a later error is found there
            yield "OP", "/*", m.start(), m.end()
        elif kind != "SKIP":
            yield "OP" if kind == "OPEN" else kind, m.group(), m.start(), m.end()  # type: ignore[misc]  # every alternative is a named group


def offset_of(text: str, line: int, column: int) -> int:
    start = 0
    for _ in range(line - 1):
        nl = text.find("\n", start)
        if nl < 0:
            return len(text)
        start = nl + 1
    return min(start + max(column - 1, 0), len(text))


def _resync(text: str, error_at: int) -> int | None:
    """The offset where the top-level item after the one holding ``error_at`` starts,
    or None when nothing follows."""
    depth = 0
    passed = 0  # the marks before this offset were passed over by the look-ahead
    for m in _matches(text, 0, _MARKS_RE, _MARKS_NO_STRINGS_RE):
        v = m.group("P")
        if v is None or m.start() < passed:
            continue
        if v == "{":
            depth += 1
            continue
        if v == "}":
            depth = max(depth - 1, 0)
            if depth or m.start() < error_at:
                continue
        elif depth or m.start() < error_at:
            continue
        # the item ends here, with any ';' and '}' that follow ('type T {...};', a stray
        # '}'), unless an 'else' or 'until' continues the same statement
        resume = m.end()
        for _, t, start, end in _scan(text, resume):
            if t in (";", "}"):
                resume = end
                continue
            if t not in ("else", "until"):
                return resume
            passed = start
            break
        else:
            return None
    return None


def _after_missing_semicolon(text: str, at: int, resume: int, parse_one: ParseOne) -> int:
    """After ``expected ';'``, go on at the token that was found instead (the ';' was
    most likely forgotten) when the text from there to ``resume`` is a complete item on
    its own; otherwise keep ``resume``, which skips that item."""
    start = next((t[2] for t in _scan(text, at)), None)
    if start is None or start >= resume:
        return resume
    try:
        parse_one(text[start:resume], "<item>")
    except CompileError as exc:  # a chain of forgotten ';' is fine, anything else is not
        if not exc.diagnostics[0].message.startswith("expected ';' after statement"):
            return resume
    return start


_NOT_NEWLINE_RE = re.compile(r"[^\n]++")


def later_errors(text: str, filename: str, first: Diagnostic,
                 parse_one: ParseOne) -> list[Diagnostic]:
    """The syntax errors after ``first``, one per top-level item (see above);
    ``parse_one`` parses a text, raising CompileError with its first error."""
    found: list[Diagnostic] = []
    last = first
    while len(found) < MAX_SYNTAX_ERRORS - 1:
        at = offset_of(text, last.line, last.column)
        resume = _resync(text, at)
        if last.message.startswith("expected ';' after statement"):
            resume = _after_missing_semicolon(text, at,
                                              len(text) if resume is None else resume,
                                              parse_one)
            if resume >= len(text):
                resume = None
        if resume is None:
            break
        rest = _NOT_NEWLINE_RE.sub(lambda m: " " * len(m.group()), text[:resume]) + \
            text[resume:]
        try:
            parse_one(rest, filename)
            break
        except CompileError as exc:
            d = exc.diagnostics[0]
        if offset_of(text, d.line, d.column) < resume:
            break
        d = Diagnostic(d.file, d.line, d.column, d.message, source_line(text, d.line))
        found.append(d)
        last = d
    return found
