"""Where each key of a HOCON file was set: file and line, for origins and messages.

pyhocon parses values but forgets positions, and Swift users expect both the
``# [R] line 27`` annotations of the log's configuration dump and errors that say
``swift.conf:27``.  This module scans the same text with a small HOCON tokenizer and
replays the assignments in order on a shared ``Origins`` map (later assignments win,
a scalar or ``null`` replaces a whole subtree, objects merge), which is how the values
themselves merge.  It never decides what a value is: pyhocon does that.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from collections.abc import Callable, Mapping

from swiftnb.errors import SwiftnbError

Path = tuple[str, ...]

_PROPS_IN_INCLUDE = re.compile(r"\$\{\??([^}]*)\}")


def system_properties(env: Mapping[str, str]) -> dict[str, str]:
    """The Java system properties Swift users referred to as ``${swift.home}`` etc."""
    home = env.get("HOME") or os.path.expanduser("~")
    return {
        "swift.home": env.get("SWIFT_HOME") or os.path.dirname(os.path.abspath(__file__)),
        "user.home": home,
        "user.name": env.get("USER") or env.get("LOGNAME") or os.path.basename(home),
    }


def expander(env: Mapping[str, str]):
    """Expands ``${env.X}`` and system properties in include paths, as Swift did."""
    props = system_properties(env)

    def expand(text: str) -> str:
        def one(match: re.Match) -> str:
            name = match.group(1).strip()
            if name.startswith("env."):
                return env.get(name[4:], "")
            return props.get(name, env.get(name, ""))

        return _PROPS_IN_INCLUDE.sub(one, text)

    return expand


@dataclass(frozen=True)
class Origin:
    """Where a value came from: layer tag ([D] [S] [U] [R] [C]), file, line."""

    tag: str
    file: str | None = None
    line: int | None = None
    substituted: bool = False  # the value used a ${...} substitution
    primary: bool = True  # the layer's own file (not an included one)

    def annotation(self) -> str:
        """The text after '# ' in Swift's configuration dump."""
        # Swift 0.96 (typesafe-config) lost the file of a value built from an ${env.X}
        # substitution, and printed such values, like command-line ones, as "[C]".
        if self.tag == "[C]" or self.substituted or self.line is None:
            return "[C]" if self.tag == "[C]" or self.substituted else self.tag
        if self.primary:
            return f"{self.tag} line {self.line}"
        return f"{self.tag} {os.path.basename(self.file or '')} line {self.line}"

    def location(self) -> str:
        """``file:line`` for messages (``<Command Line>`` for command-line values)."""
        if self.tag == "[C]" and self.file is None:
            return "<Command Line>"
        if self.line is None:
            return self.file or self.tag
        return f"{self.file}:{self.line}"


class Origins:
    """Ordered map key path -> Origin, updated with HOCON's merge rules.

    ``leaves`` and ``objects`` are read directly; they are changed only through the
    methods, which keep a count of the entries under each path so that setting a key
    with nothing under it (nearly every key) does not scan them all: a tc.data of
    25,000 lines took 81 s in that scan."""

    def __init__(self) -> None:
        self.leaves: dict[Path, Origin] = {}
        self.objects: dict[Path, Origin] = {}
        self._below: dict[Path, int] = {}  # entries strictly under a path

    def _put(self, table: dict[Path, Origin], path: Path, origin: Origin) -> None:
        if path not in table:
            for i in range(len(path)):
                self._below[path[:i]] = self._below.get(path[:i], 0) + 1
        table[path] = origin

    def _pop(self, table: dict[Path, Origin], path: Path) -> None:
        if path not in table:
            return
        del table[path]
        for i in range(len(path)):
            left = self._below[path[:i]] - 1
            if left:
                self._below[path[:i]] = left
            else:
                del self._below[path[:i]]

    def _drop_under(self, path: Path) -> None:
        n = len(path)
        for table in (self.leaves, self.objects):
            self._pop(table, path)
            if self._below.get(path):
                for key in [k for k in table if k[:n] == path]:
                    self._pop(table, key)

    def set_leaf(self, path: Path, origin: Origin) -> None:
        self._drop_under(path)
        self._put(self.leaves, path, origin)

    def set_object(self, path: Path, origin: Origin) -> None:
        for i in range(1, len(path) + 1):
            self._pop(self.leaves, path[:i])
        self._put(self.objects, path, origin)

    def set_null(self, path: Path) -> None:
        self._drop_under(path)

    def update(self, other: Origins) -> None:
        """Take every origin ``other`` holds (the built-in defaults' snapshot)."""
        for path, origin in other.leaves.items():
            self._put(self.leaves, path, origin)
        for path, origin in other.objects.items():
            self._put(self.objects, path, origin)

    def get(self, path: Path) -> Origin | None:
        """The origin of ``path`` or of its nearest recorded ancestor."""
        for i in range(len(path), 0, -1):
            found = self.leaves.get(path[:i]) or self.objects.get(path[:i])
            if found is not None:
                return found
        # Only deeper keys were recorded (``lazy.errors: true`` asked about ``lazy``).
        n = len(path)
        below = [o for k, o in list(self.leaves.items()) + list(self.objects.items())
                 if k[:n] == path]
        return below[0] if below else None


#: the limits of what a configuration may be: guards against hostile or runaway input,
#: set far above real use.  The largest real Swift configuration we know (27 sites in
#: 1,297 lines) has more than 1,000 keys; a file of
#: the largest size, 120 site blocks, parses in 7 s here (pyhocon copies an object each
#: time a top-level statement adds to it).  A file past one is refused, saying which
#: limit it passed.
MAX_CONFIG_BYTES = 256 * 1024
MAX_LEGACY_BYTES = 4 * 1024 * 1024  # tc.data and properties: read in linear time
MAX_KEYS = 10_000         # key assignments in one file (with what it includes)
MAX_LIST_ITEMS = 5000     # values inside lists, in one file (5,000 parse in 5 s)
#: statements at the top of a file that add to an object an earlier one made
#: (``site.local.app.a1: {...}``, ``site.local.app.a2: {...}``...): pyhocon copies the
#: whole object for each, so their cost grows with the square of their number (2,500
#: take a minute here, 5,000 four); inside braces (``site.local { app.a1 {...} ... }``) the
#: same keys cost nothing extra and only MAX_KEYS applies
MAX_TOP_MERGES = 1000
MAX_NESTING = 32          # objects and lists inside each other, and parts of a key path
MAX_INCLUDE_DEPTH = 16    # files including files


class ScanError(SwiftnbError):
    """A file the scanner refuses before pyhocon reads it (a missing or cyclic include,
    too deep, too many keys); ``str()`` is the message, with file and line."""


def text_problem(path: str, limit: int = MAX_CONFIG_BYTES) -> tuple[str | None, str | None]:
    """(text, None) or (None, why it cannot be read): a configuration file must be
    readable UTF-8 text of at most ``limit`` bytes; a binary or Latin-1 file gets the
    place of its first bad byte."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    if len(data) > limit:
        return None, f"too large for a configuration file (more than {limit} bytes)"
    try:  # a byte-order mark (Windows editors write one) is no part of the text
        return data.decode("utf-8").removeprefix("\ufeff"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return None, (f"not a UTF-8 text file (line {line}: byte 0x{data[exc.start]:02x}); "
                      "save it as UTF-8")


# ---------------------------------------------------------------- tokenizer

_PUNCT = "{}[],:="
_UNQUOTED_STOP = set(' \t\r\n"{}[],:=#\ufeff')
_SUBST = re.compile(r"\$\{\??[^}]*\}")


@dataclass
class Tok:
    kind: str  # NL, PUNCT, STR, UNQ, SUBST, EOF
    text: str
    line: int
    start: int
    end: int


def tokenize(text: str) -> list[Tok]:
    toks: list[Tok] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            toks.append(Tok("NL", c, line, i, i + 1))
            line += 1
            i += 1
        elif c in " \t\r\ufeff\f\v":
            i += 1
        elif c == "#" or text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("+=", i):
            toks.append(Tok("PUNCT", "+=", line, i, i + 2))
            i += 2
        elif c in _PUNCT:
            toks.append(Tok("PUNCT", c, line, i, i + 1))
            i += 1
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            while j < n and text[j] == '"':
                j += 1
            toks.append(Tok("STR", text[i + 3:j - 3], line, i, j))
            line += text.count("\n", i, j)
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            raw = text[i:j]
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw.strip('"')
            toks.append(Tok("STR", value, line, i, j))
            i = j
        elif text.startswith("${", i):
            m = _SUBST.match(text, i)
            j = m.end() if m else n
            toks.append(Tok("SUBST", text[i:j], line, i, j))
            i = j
        else:
            j = i
            while j < n and text[j] not in _UNQUOTED_STOP and not text.startswith(
                    "//", j) and not text.startswith("${", j) and not text.startswith(
                    "+=", j):
                j += 1
            if j == i:  # a lone '$' or similar: take it as text
                j = i + 1
            toks.append(Tok("UNQ", text[i:j], line, i, j))
            i = j
    toks.append(Tok("EOF", "", line, n, n))
    return toks


# ------------------------------------------------------------------ scanner

@dataclass
class IncludeSite:
    """An ``include`` statement: where its target sits in the text, and the file."""

    start: int
    end: int
    path: str


class Scanner:
    """Replays one file's assignments onto ``origins``."""

    def __init__(self, origins: Origins, tag: str, expand: Callable[[str], str]) -> None:
        self.origins = origins
        self.tag = tag
        self.expand = expand  # expands ${env.X} etc. in include paths

    def scan_file(self, path: str, text: str, prefix: Path = (), primary: bool = True,
                  real_path: str | None = None) -> list[IncludeSite]:
        """Record the file's keys; return its include statements (resolved paths).

        ``path`` names the file in messages; ``real_path`` (default ``path``) is where
        it is, for resolving relative includes.  Raises ScanError for an include that
        is missing, unreadable or cyclic, and for a file past the limits (MAX_*).
        """
        self.nulls: list[Path] = []  # paths set to null (they cut earlier files off)
        self.keys = 0
        self.top_objects: set[str] = set()  # first parts of the top-level object keys
        self.top_merges = 0
        self.trail: list[tuple[str, str]] = []  # (file:line of an include, real path)
        self.top = os.path.realpath(real_path or path)
        return self._scan(path, text, prefix, primary, self.top)

    def _scan(self, path: str, text: str, prefix: Path, primary: bool,
              real: str) -> list[IncludeSite]:
        self.file, self.primary, self.real = path, primary, real
        self.toks = tokenize(text)
        _check_shape(path, self.toks)
        self.pos = 0
        self.includes: list[IncludeSite] = []
        try:
            self._body(prefix, closing=False)
        except _Stop:
            pass  # malformed text: pyhocon reports the syntax error itself
        return self.includes

    # -- helpers
    def _peek(self) -> Tok:
        return self.toks[self.pos]

    def _next(self) -> Tok:
        tok = self.toks[self.pos]
        if tok.kind != "EOF":
            self.pos += 1
        return tok

    def _origin(self, line: int, substituted: bool = False) -> Origin:
        return Origin(self.tag, self.file, line, substituted, self.primary)

    # -- grammar
    def _body(self, prefix: Path, closing: bool) -> None:
        while True:
            tok = self._peek()
            if tok.kind == "NL" or (tok.kind == "PUNCT" and tok.text == ","):
                self._next()
                continue
            if tok.kind == "EOF":
                if closing:
                    raise _Stop()
                return
            if tok.kind == "PUNCT" and tok.text == "}":
                self._next()
                if not closing:
                    raise _Stop()
                return
            if tok.kind == "UNQ" and tok.text == "include" and self._include(prefix):
                continue
            self._field(prefix)

    def _include(self, prefix: Path) -> bool:
        start = self.pos
        self._next()
        tok = self._peek()
        target_tok = None
        first = last = tok
        if tok.kind == "STR":
            target_tok = self._next()
            first = last = target_tok
        elif tok.kind == "UNQ" and tok.text.split("(")[0] in ("file", "required", "url",
                                                              "classpath"):
            first = tok
            depth = 0
            while True:
                t = self._next()
                if t.kind == "STR" and target_tok is None:
                    target_tok = t
                if t.kind in ("NL", "EOF"):
                    break
                depth += t.text.count("(") - t.text.count(")")
                last = t
                if depth <= 0 and ")" in t.text:
                    break
        if target_tok is None:
            self.pos = start
            return False
        include_line = target_tok.line
        target = self.expand(target_tok.text)
        full = target if os.path.isabs(target) else os.path.join(
            os.path.dirname(self.real), target)
        here = f"{self.file}:{include_line}: include {json.dumps(target_tok.text)}"
        if not os.path.isfile(full):
            raise ScanError(f"{here}: file not found")
        self.includes.append(IncludeSite(first.start, last.end, full))
        real = os.path.realpath(full)
        trail = self.trail + [(f"{self.file}:{include_line}", real)]
        chain = " -> ".join(place for place, _ in trail) + f" -> {target_tok.text}"
        if real in {self.top} | {r for _, r in self.trail}:
            raise ScanError(f"{here}: include cycle {chain}: a file may not include "
                            "itself, directly or through other files")
        if len(trail) > MAX_INCLUDE_DEPTH:
            raise ScanError(f"{here}: includes nested more than {MAX_INCLUDE_DEPTH} deep "
                            f"({chain})")
        sub, problem = text_problem(full)
        if sub is None:
            raise ScanError(f"{here}: cannot read {full}: {problem}")
        state = (self.file, self.real, self.primary, self.toks, self.pos, self.includes,
                 self.trail)
        self.trail = trail
        self._scan(full, sub, prefix, False, real)
        (self.file, self.real, self.primary, self.toks, self.pos, self.includes,
         self.trail) = state
        return True

    def _key(self) -> tuple[Path, int]:
        parts: list[str] = []
        glue = False
        tok = self._peek()
        line = tok.line
        while tok.kind in ("STR", "UNQ"):
            self._next()
            if tok.kind == "STR":
                if glue and parts:
                    parts[-1] += tok.text
                else:
                    parts.append(tok.text)
                glue = True
            else:
                pieces = tok.text.split(".")
                for k, piece in enumerate(pieces):
                    if k == 0 and glue and parts and piece:
                        parts[-1] += piece
                    elif piece:
                        parts.append(piece)
                glue = not tok.text.endswith(".")
            tok = self._peek()
            if tok.kind in ("STR", "UNQ") and tok.start > self.toks[self.pos - 1].end:
                glue = False
        if not parts:
            raise _Stop()
        return tuple(parts), line

    def _field(self, prefix: Path) -> None:
        key, line = self._key()
        path = prefix + key
        self.keys += 1
        if self.keys > MAX_KEYS:
            raise ScanError(f"{self.file}:{line}: more than {MAX_KEYS} keys in one "
                            "configuration (with its includes); split it, or merge keys")
        if len(path) > MAX_NESTING:
            raise ScanError(f"{self.file}:{line}: {'.'.join(path[:3])}...: a key path of "
                            f"more than {MAX_NESTING} parts")
        tok = self._peek()
        if tok.kind == "PUNCT" and tok.text in (":", "=", "+="):
            self._next()
            while self._peek().kind == "NL":
                self._next()
        elif not (tok.kind == "PUNCT" and tok.text == "{"):
            raise _Stop()
        if not prefix:
            opens = self._peek()
            self._count_top_merge(key, line, len(key) > 1 or (
                opens.kind == "PUNCT" and opens.text == "{"))
        self._value(path, line)

    def _count_top_merge(self, key: Path, line: int, is_object: bool) -> None:
        """Count a top-level statement that adds to an object made before (see
        MAX_TOP_MERGES)."""
        if not is_object:
            return
        if key[0] in self.top_objects:
            self.top_merges += 1
            if self.top_merges > MAX_TOP_MERGES:
                raise ScanError(
                    f"{self.file}:{line}: more than {MAX_TOP_MERGES} top-level statements "
                    f"add to objects made before ({key[0]}...); write them inside one "
                    f"block ({key[0]} {{ ... }}), where their number is not limited")
        self.top_objects.add(key[0])

    def _value(self, path: Path, line: int) -> None:
        tok = self._peek()
        if tok.kind == "PUNCT" and tok.text == "{":
            self._next()
            self.origins.set_object(path, self._origin(line))
            self._body(path, closing=True)
            self._rest_of_value()
            return
        if tok.kind == "PUNCT" and tok.text == "[":
            substituted = self._skip_balanced()
            substituted |= self._rest_of_value()
            self.origins.set_leaf(path, self._origin(line, substituted))
            return
        first = tok
        substituted = self._rest_of_value()
        if first.kind == "UNQ" and first.text == "null" and self.toks[self.pos - 1] is first:
            self.origins.set_null(path)
            self.nulls.append(path)
            return
        self.origins.set_leaf(path, self._origin(line, substituted))

    def _rest_of_value(self) -> bool:
        """Consume to the end of the value; True if a ${...} substitution was seen."""
        substituted = False
        while True:
            tok = self._peek()
            if tok.kind in ("NL", "EOF"):
                return substituted
            if tok.kind == "PUNCT" and tok.text in (",", "}"):
                return substituted
            if tok.kind == "PUNCT" and tok.text in ("[", "{"):
                substituted |= self._skip_balanced()
                continue
            if tok.kind == "SUBST":
                substituted = True
            self._next()

    def _skip_balanced(self) -> bool:
        depth = 0
        substituted = False
        while True:
            tok = self._next()
            if tok.kind == "EOF":
                raise _Stop()
            if tok.kind == "SUBST":
                substituted = True
            if tok.kind == "PUNCT" and tok.text in "[{":
                depth += 1
            elif tok.kind == "PUNCT" and tok.text in "]}":
                depth -= 1
                if depth == 0:
                    return substituted


def _check_shape(path: str, toks: list[Tok]) -> None:
    """ScanError when objects and lists nest more than MAX_NESTING deep (pyhocon's
    parse, and this scanner, recurse once per level) or lists hold more than
    MAX_LIST_ITEMS values (pyhocon reads each slowly)."""
    open_brackets: list[str] = []
    items = 0
    for tok in toks:
        if tok.kind in ("STR", "UNQ", "SUBST") and "[" in open_brackets:
            items += 1
            if items > MAX_LIST_ITEMS:
                raise ScanError(f"{path}:{tok.line}: more than {MAX_LIST_ITEMS} values in "
                                "lists in one configuration file")
        if tok.kind != "PUNCT":
            continue
        if tok.text in ("{", "["):
            open_brackets.append(tok.text)
            if len(open_brackets) > MAX_NESTING:
                raise ScanError(f"{path}:{tok.line}: objects and lists nested more than "
                                f"{MAX_NESTING} deep")
        elif tok.text in ("}", "]") and open_brackets:
            open_brackets.pop()


class _Stop(SwiftnbError):
    pass
