"""String builtins: Swift library v1 (``strcat``, ``strcut``, ``strsplit``, ``regexp``...)
and the common library-v2 names (``substring``, ``indexOf``, ``toUpper``, ``split``...)."""

from __future__ import annotations

import re
from typing import Any

from swiftnb.engine.builtins.jregex import compile_java, java_split, replace_all, replace_first
from swiftnb.engine.builtins.registry import register
from swiftnb.engine.data import BuiltinContext, BuiltinError, sorted_items
from swiftnb.engine.formatting import java_format, strcat_str, strjoin_str, swift_format


def _array(values: list[str]) -> dict[int, str]:
    return dict(enumerate(values))


@register("strcat")
def strcat(ctx: BuiltinContext, *args: Any) -> str:
    """strcat(any...) -> string. Concatenation; integral floats print without ``.0``
    (``strcat(1.0, 2.5)`` is ``12.5``)."""
    return "".join(strcat_str(a) for a in args)


@register("strcut")
def strcut(ctx: BuiltinContext, s: str, pattern: str) -> str:
    """strcut(string s, string regex) -> string. Group 1 of the first match of the Java
    regex in ``s``.  No match: ``@strcut could not match pattern P against string S``;
    no group: ``No group 1``."""
    rx = compile_java(pattern)
    m = rx.search(s)
    if m is None:
        raise BuiltinError(f"@strcut could not match pattern {pattern} against string {s}")
    if rx.groups < 1:
        raise BuiltinError("No group 1")
    return m.group(1) or ""


@register("strstr")
def strstr(ctx: BuiltinContext, s: str, find: str) -> int:
    """strstr(string s, string find) -> int. Index of ``find`` in ``s``, -1 if absent."""
    return s.find(find)


@register("strsplit")
def strsplit(ctx: BuiltinContext, s: str, pattern: str) -> dict[int, str]:
    """strsplit(string s, string regex) -> string[]. Java ``String.split``: inner empty
    strings kept, trailing ones dropped (``strsplit("a,b,,c", ",")`` has 4 elements)."""
    return _array(java_split(s, pattern))


@register("strjoin")
def strjoin(ctx: BuiltinContext, array: dict, delim: str) -> str:
    """strjoin(any[] a, string delim) -> string. Elements in key order, Java
    ``String.valueOf`` each (floats keep ``.0``); empty array -> ``""``."""
    return delim.join(strjoin_str(v) for _, v in sorted_items(array))


@register("regexp")
def regexp(ctx: BuiltinContext, s: str, pattern: str, replacement: str) -> str:
    """regexp(string s, string regex, string repl) -> string. Java ``replaceFirst``:
    ``$0``/``$1`` refer to groups (``regexp("abc123def","[0-9]+","<$0>")`` ->
    ``abc<123>def``)."""
    return replace_first(s, pattern, replacement)


@register("sprintf")
def sprintf(ctx: BuiltinContext, fmt: str, *args: Any) -> str:
    """sprintf(string fmt, any...) -> string. Swift format (``%s %i %d %f %b %q %M %p %k %%``)."""
    return swift_format(fmt, args, ctx.arg_names and ctx.arg_names[1:])


@register("format")
def format_(ctx: BuiltinContext, fmt: str, *args: Any) -> str:
    """format(string fmt, any...) -> string. Java ``String.format`` (``%.2f``, ``%5s``, ``%05d``)."""
    return java_format(fmt, args)


@register("pad")
def pad(ctx: BuiltinContext, width: int, v: Any) -> str:
    """pad(int width, int v) -> string. ``v`` zero-padded to ``width`` digits (``pad(5,42)``
    is ``00042``)."""
    s = str(v)
    neg = s.startswith("-")
    digits = s[1:] if neg else s
    return ("-" if neg else "") + digits.rjust(width - (1 if neg else 0), "0")


# ------------------------------------------------------------------ library v2 names (0-based)


def _bounds(s: str, start: int, end: int | None, name: str) -> tuple[int, int]:
    n = len(s)
    e = n if end is None or end < 0 else end
    if start < 0 or start > n or e > n or start > e:
        raise BuiltinError(f"{name}: index out of range: start {start}, end {e}, length {n}")
    return start, e


@register("substring")
def substring(ctx: BuiltinContext, s: str, start: int, end: int | None = None) -> str:
    """substring(string s, int start[, int end]) -> string. Java ``substring`` (0-based,
    end exclusive)."""
    a, b = _bounds(s, start, end, "substring")
    return s[a:b]


@register("indexOf")
def index_of(ctx: BuiltinContext, s: str, find: str, start: int = 0, end: int | None = None) -> int:
    """indexOf(string s, string find, int start[, int end]) -> int. Java ``indexOf``
    from ``start``; with ``end``, a match must begin before ``end`` (trunk's IndexOf2).
    -1 if absent."""
    i = s.find(find, max(start, 0))
    return i if end is None or i < end else -1


@register("lastIndexOf")
def last_index_of(ctx: BuiltinContext, s: str, find: str, start: int = -1, end: int | None = None) -> int:
    """lastIndexOf(string s, string find, int start[, int end]) -> int. Java
    ``lastIndexOf`` searching backwards from ``start`` (-1 = the end); with ``end``, a
    match must begin after ``end`` (trunk's LastIndexOf2).  -1 if absent."""
    frm = len(s) if start == -1 else start
    i = s.rfind(find, 0, max(frm, -1) + len(find)) if frm >= 0 else -1
    return -1 if end is not None and i <= end else i


@register("toUpper")
def to_upper(ctx: BuiltinContext, s: str) -> str:
    """toUpper(string) -> string."""
    return s.upper()


@register("toLower")
def to_lower(ctx: BuiltinContext, s: str) -> str:
    """toLower(string) -> string."""
    return s.lower()


@register("trim")
def trim(ctx: BuiltinContext, s: str) -> str:
    """trim(string) -> string. Java ``trim``: strips characters <= space at both ends."""
    i, j = 0, len(s)
    while i < j and s[i] <= " ":
        i += 1
    while j > i and s[j - 1] <= " ":
        j -= 1
    return s[i:j]


@register("split")
def split(ctx: BuiltinContext, s: str, delim: str, maxsplit: int = 0) -> dict[int, str]:
    """split(string s, string delim[, int max]) -> string[]. Plain (non-regex)
    delimiter; consecutive delimiters count as one; at most ``max`` pieces if > 0."""
    if delim == "":
        raise BuiltinError("split: empty delimiter")
    runs = "(?:" + re.escape(delim) + ")+"
    body = re.sub("^" + runs, "", s)
    pieces = re.split(runs, body, maxsplit=maxsplit - 1 if maxsplit > 0 else 0)
    if pieces and pieces[-1] == "":
        pieces.pop()
    return _array(pieces)


@register("splitRe")
def split_re(ctx: BuiltinContext, s: str, pattern: str, maxsplit: int = 0) -> dict[int, str]:
    """splitRe(string s, string regex[, int max]) -> string[]. Java ``split(regex, max)``."""
    return _array(java_split(s, pattern, maxsplit))


@register("join")
def join(ctx: BuiltinContext, array: dict, delim: str) -> str:
    """join(string[] a, string delim) -> string (like strjoin)."""
    return strjoin(ctx, array, delim)


def _span_replace(s: str, start: int | None, end: int | None, fn) -> str:
    a = 0 if start is None else start
    b = len(s) if end is None or end < 0 else end
    return s[:a] + fn(s[a:b]) + s[b:]


@register("replaceAll")
def replace_all_plain(ctx: BuiltinContext, s: str, find: str, repl: str, start: int | None = None,
                      end: int | None = None) -> str:
    """replaceAll(string s, string find, string repl[, int start, int end]) -> string.
    Plain-text replacement of every occurrence (between start and end if given)."""
    if find == "":
        return s
    return _span_replace(s, start, end, lambda t: t.replace(find, repl))


@register("replaceAllRe")
def replace_all_re(ctx: BuiltinContext, s: str, pattern: str, repl: str, start: int | None = None,
                   end: int | None = None) -> str:
    """replaceAllRe(string s, string regex, string repl[, int start, int end]) -> string.
    Java ``replaceAll`` (``$1`` group references)."""
    return _span_replace(s, start, end, lambda t: replace_all(t, pattern, repl))


@register("matches")
def matches(ctx: BuiltinContext, s: str, pattern: str) -> bool:
    """matches(string s, string regex) -> boolean. Java ``String.matches`` (whole string)."""
    return compile_java(pattern).fullmatch(s) is not None


@register("findAllRe")
def find_all_re(ctx: BuiltinContext, s: str, pattern: str) -> dict[int, str]:
    """findAllRe(string s, string regex) -> string[]. Every non-overlapping match of the
    Java regex, in order (the whole match text)."""
    rx = compile_java(pattern)
    return {i: m.group(0) for i, m in enumerate(rx.finditer(s))}
