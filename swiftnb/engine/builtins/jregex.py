"""Java ``java.util.regex`` semantics on Python's ``re``.

Swift's string builtins are thin wrappers over Java (``replaceFirst``, ``String.split``,
``Matcher.find``), so scripts carry Java regular expressions and Java replacement
strings (``$1``).  The two dialects agree on nearly everything scripts use; this module
translates the differences: ``\\p{Alpha}``-style POSIX classes, ``(?<name>...)`` groups,
``$n``/``${name}`` replacements, and Java's ``split`` rules.
"""

from __future__ import annotations

import functools
import re

from swiftnb.engine.data import BuiltinError

__all__ = ["compile_java", "replace_first", "replace_all", "java_split", "java_replacement"]

_POSIX = {
    "Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7F", "Alpha": "a-zA-Z",
    "Digit": "0-9", "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@\\[-`{-~",
    "Graph": "!-~", "Print": " -~", "Blank": " \\t", "Cntrl": "\\x00-\\x1F\\x7F",
    "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0B\\f\\r", "L": "a-zA-Z", "IsAlphabetic": "a-zA-Z",
    "javaLowerCase": "a-z", "javaUpperCase": "A-Z", "IsDigit": "0-9", "N": "0-9",
}


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    n = len(pattern)
    in_class = 0
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if d in "pP" and i + 2 < n and pattern[i + 2] == "{":
                j = pattern.find("}", i + 3)
                if j > 0:
                    name = pattern[i + 3 : j]
                    name = name[2:] if name.startswith("Is") and name[2:] in _POSIX else name
                    rng = _POSIX.get(name)
                    if rng is not None:
                        if in_class:
                            out.append(rng if d == "p" else "")  # negation inside a class: rare
                        else:
                            out.append(("[" if d == "p" else "[^") + rng + "]")
                        i = j + 1
                        continue
            if d == "Q":
                j = pattern.find("\\E", i + 2)
                lit = pattern[i + 2 :] if j < 0 else pattern[i + 2 : j]
                out.append(re.escape(lit))
                i = n if j < 0 else j + 2
                continue
            if d == "z":
                out.append("\\Z")
                i += 2
                continue
            if d == "Z":
                out.append("(?=\\n?\\Z)")
                i += 2
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if c == "[":
            in_class += 1
        elif c == "]" and in_class:
            in_class -= 1
        elif c == "(" and not in_class and pattern.startswith("(?<", i) and i + 3 < n \
                and pattern[i + 3] not in "=!":
            out.append("(?P<")
            i += 3
            continue
        out.append(c)
        i += 1
    return "".join(out)


@functools.lru_cache(maxsize=512)
def compile_java(pattern: str) -> re.Pattern:
    """Compile a Java regular expression; errors become :class:`BuiltinError` with
    Java's exception wording."""
    try:
        return re.compile(_translate(pattern))
    except re.error as e:
        raise BuiltinError(f"java.util.regex.PatternSyntaxException: {e.msg} near index {e.pos}\n{pattern}") from None


def java_replacement(repl: str, m: re.Match) -> str:
    """Expand a Java replacement string (``$1``, ``${name}``, ``\\$`` for a literal)."""
    out: list[str] = []
    i = 0
    n = len(repl)
    while i < n:
        c = repl[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise BuiltinError("character to be escaped is missing")
            out.append(repl[i])
            i += 1
        elif c == "$":
            i += 1
            if i >= n:
                raise BuiltinError("Illegal group reference: group index is missing")
            if repl[i] == "{":
                j = repl.find("}", i)
                if j < 0:
                    raise BuiltinError("named capturing group is missing trailing '}'")
                name = repl[i + 1 : j]
                try:
                    out.append(m.group(name) or "")
                except IndexError:
                    raise BuiltinError(f"No group with name {{{name}}}") from None
                i = j + 1
            elif repl[i].isdigit():
                # Java takes as many digits as still form a valid group number
                num = int(repl[i])
                if num > m.re.groups:
                    raise BuiltinError(f"No group {num}")
                i += 1
                while i < n and repl[i].isdigit() and num * 10 + int(repl[i]) <= m.re.groups:
                    num = num * 10 + int(repl[i])
                    i += 1
                out.append(m.group(num) or "")
            else:
                raise BuiltinError("Illegal group reference")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def replace_first(s: str, pattern: str, repl: str) -> str:
    """Java ``String.replaceFirst``."""
    rx = compile_java(pattern)
    m = rx.search(s)
    if m is None:
        return s
    return s[: m.start()] + java_replacement(repl, m) + s[m.end() :]


def replace_all(s: str, pattern: str, repl: str) -> str:
    """Java ``String.replaceAll``."""
    rx = compile_java(pattern)
    return rx.sub(lambda m: java_replacement(repl, m), s)


def java_split(s: str, pattern: str, limit: int = 0) -> list[str]:
    """Java ``String.split(regex, limit)``: a zero-width match at the very beginning
    yields no leading empty string; with limit 0 trailing empty strings are dropped; no
    match at all gives ``[s]``."""
    rx = compile_java(pattern)
    parts: list[str] = []
    idx = 0
    matched = False
    for m in rx.finditer(s):
        if limit > 0 and len(parts) >= limit - 1:
            break
        if m.end() == 0:
            continue  # zero-length match at the beginning
        parts.append(s[idx : m.start()])
        idx = m.end()
        matched = True
    if not matched:
        return [s]
    parts.append(s[idx:])
    if limit == 0:
        while parts and parts[-1] == "":
            parts.pop()
    return parts
