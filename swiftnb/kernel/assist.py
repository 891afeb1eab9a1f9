"""Editing help for Swift cells: completion, inspection (shift-tab), is_complete.

Pure functions of the text, the cursor and the session, so they are tested without a
kernel.  The names come from the front end's own tables: keywords of the parser,
builtins of :mod:`swiftnb.lang.builtins`, mappers of :mod:`swiftnb.lang.mappers`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from swiftnb.lang.builtins import BUILTINS
from swiftnb.lang.mappers import NAMES as MAPPER_NAMES
from swiftnb.lang.parser import KEYWORDS

if TYPE_CHECKING:
    from swiftnb.kernel.session import ProcEntry, SwiftSession

__all__ = ["complete", "inspect", "is_complete", "KEYWORDS_ALL", "TYPE_NAMES"]

#: keywords plus the words a user types where the parser expects a type or literal
TYPE_NAMES = ("int", "float", "string", "boolean", "file", "external", "auto")
KEYWORDS_ALL = tuple(sorted(set(KEYWORDS) | set(TYPE_NAMES) | {"app", "type"}))

_WORD = re.compile(r"[A-Za-z_@][A-Za-z0-9_.]*$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DECL = re.compile(
    r"(?:\b(?:int|float|string|boolean|file|external|[A-Z_a-z][A-Za-z0-9_]*)"
    r"(?:\[[^\]]*\])*\s+([A-Za-z_][A-Za-z0-9_]*)\s*(?:\[[^\]]*\])*\s*(?:<|=|;|,))"
    r"|(?:\)\s*([A-Za-z_][A-Za-z0-9_]*)\s*\()"
    r"|(?:\btype\s+([A-Za-z_][A-Za-z0-9_]*))")


def _prefix(code: str, cursor_pos: int) -> tuple[str, int]:
    m = _WORD.search(code[:cursor_pos])
    if not m:
        return "", cursor_pos
    word = m.group(0)
    if "." in word:  # struct member access: complete nothing smart, just the tail
        tail = word.rsplit(".", 1)[1]
        return tail, cursor_pos - len(tail)
    return word, m.start()


def _cell_names(code: str) -> set[str]:
    names: set[str] = set()
    for m in _DECL.finditer(code):
        names.update(g for g in m.groups() if g)
    names -= set(KEYWORDS_ALL)
    return names


def candidates(code: str, session: SwiftSession | None = None) -> dict[str, str]:
    """name -> kind for everything that can be written at a word position."""
    out: dict[str, str] = {k: "keyword" for k in KEYWORDS_ALL}
    out.update({b: "builtin" for b in BUILTINS})
    out.update({m: "mapper" for m in MAPPER_NAMES})
    if session is not None:
        out.update({t: "type" for t in session.types})
        out.update({p: "procedure" for p in session.procs})
        out.update({v: "variable" for v in session.vars})
    for n in _cell_names(code):
        out.setdefault(n, "name")
    return out


def _in_mapping(before: str) -> bool:
    """Is the cursor inside ``<...>`` of a declaration (``file f <mapper; ...>``)?"""
    lt = before.rfind("<")
    return lt >= 0 and lt > max(before.rfind(c) for c in ";>{}")


def _fields(code: str, cursor_pos: int, session: SwiftSession | None) -> list[str] | None:
    """Field names when the cursor follows ``var.`` of a struct-typed session variable."""
    m = re.search(r"([A-Za-z_]\w*)\.(\w*)$", code[:cursor_pos])
    if m is None or session is None or m.group(1) not in session.vars:
        return None
    decl = session.vars[m.group(1)].decl
    if decl.declarators[0].dims or decl.type.dims:
        return None
    tdecl = session.types.get(decl.type.name)
    if tdecl is None or not tdecl.fields:
        return None
    return [f.name for f in tdecl.fields if f.name.startswith(m.group(2))]


def complete(code: str, cursor_pos: int, session: SwiftSession | None = None) -> dict[str, Any]:
    """A Jupyter complete_reply content."""
    prefix, start = _prefix(code, cursor_pos)
    fields = _fields(code, cursor_pos, session)
    if fields is not None:
        return {"status": "ok", "matches": fields, "cursor_start": start,
                "cursor_end": cursor_pos, "metadata": {}}
    at = prefix.startswith("@")
    word = prefix[1:] if at else prefix
    names = candidates(code, session)
    if not _in_mapping(code[:start]):  # mapper names only where a mapping is written
        names = {n: k for n, k in names.items() if k != "mapper"}
    matches = sorted((n for n in names if n.startswith(word) and n != word),
                     key=lambda n: (n.lower(), n))
    if word in names:
        matches.insert(0, word)
    if at:
        matches = ["@" + m for m in matches]
    return {"status": "ok", "matches": matches, "cursor_start": start,
            "cursor_end": cursor_pos,
            "metadata": {"_jupyter_types_experimental": [
                {"text": m, "type": names.get(m.lstrip("@"), "name"), "start": start,
                 "end": cursor_pos} for m in matches]}}


def _word_at(code: str, cursor_pos: int) -> str:
    for m in _IDENT.finditer(code):
        if m.start() <= cursor_pos <= m.end():
            return m.group(0)
    return ""


def _builtin_text(name: str) -> str:
    kind, returns, params = BUILTINS[name]
    ps = ", ".join(p.replace("...", "") + ("..." if p.startswith("...") else "") for p in params)
    head = f"{returns} {name}({ps})" if returns else f"{name}({ps})"
    return f"{head}\n\nbuilt-in {kind} (see docs/builtins.md)"


def _procedure_text(entry: ProcEntry) -> str:
    """One declaration as shift-tab shows it: signature, doc comment, header as written."""
    from swiftnb.kernel.session import signature_text

    return "\n\n".join(part for part in (signature_text(entry.decl), entry.doc, entry.source)
                       if part)


def inspect(code: str, cursor_pos: int, session: SwiftSession | None = None) -> dict[str, Any]:
    """A Jupyter inspect_reply content: a procedure's signature and doc comment (each
    overload's), a variable's type, a builtin's or mapper's signature."""
    from swiftnb.kernel.session import var_text

    name = _word_at(code, cursor_pos)
    if not name and cursor_pos > 0:
        name = _word_at(code, cursor_pos - 1)
    text = None
    if session is not None and name in session.procs:
        text = "\n\n".join(_procedure_text(e) for e in session.procs[name])
    elif session is not None and name in session.vars:
        entry = session.vars[name]
        text = var_text(entry.decl)
        try:
            from swiftnb.engine import values as V

            value = entry.value
            if isinstance(value, V.Node):
                value = V.to_python(value)
            text += f" = {value!r}"
        except Exception:  # noqa: BLE001
            pass
    elif session is not None and name in session.types:
        text = f"type {name}"
    elif name in BUILTINS:
        text = _builtin_text(name)
    elif name in MAPPER_NAMES:
        from swiftnb.lang.mappers import MAPPERS

        canonical = MAPPER_NAMES[name]
        alias, params, required = MAPPERS[canonical]
        text = (f"mapper {canonical} (alias {alias})\nparameters: "
                f"{', '.join(sorted(params)) if params is not None else 'any'}"
                + (f"\nrequired: {', '.join(required)}" if required else ""))
    elif name in KEYWORDS_ALL:
        text = f"{name}: Swift keyword"
    if text is None:
        return {"status": "ok", "found": False, "data": {}, "metadata": {}}
    return {"status": "ok", "found": True, "data": {"text/plain": text}, "metadata": {}}


def _scan(code: str) -> tuple[int, bool, bool]:
    """(bracket depth, inside a string, inside a /* comment */) at the end of ``code``."""
    depth = 0
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c == '"':
            i += 1
            while i < n and code[i] != '"':
                if code[i] == "\\":
                    i += 1
                elif code[i] == "\n":
                    break
                i += 1
            if i >= n:
                return depth, True, False
        elif c == "/" and code.startswith("/*", i):
            end = code.find("*/", i + 2)
            if end < 0:
                return depth, False, True
            i = end + 1
        elif c == "#" or (c == "/" and code.startswith("//", i)):
            end = code.find("\n", i)
            i = n if end < 0 else end
            continue
        elif c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        i += 1
    return depth, False, False


def is_complete(code: str) -> dict[str, Any]:
    """A Jupyter is_complete_reply content for a Swift cell."""
    from swiftnb import lang

    if code.lstrip().startswith("%"):
        return {"status": "complete"}
    depth, in_string, in_comment = _scan(code)
    if depth < 0:
        return {"status": "invalid"}
    if depth > 0 or in_string or in_comment:
        return {"status": "incomplete", "indent": "    " * depth}
    stripped = code.strip()
    if not stripped:
        return {"status": "complete"}
    try:
        lang.parse(code, "cell")
    except lang.CompileError as exc:
        last = len(code.rstrip().splitlines())
        d = exc.diagnostics[0] if exc.diagnostics else None
        if d is not None and (d.line > last or "end of input" in d.message
                              or "$END" in d.message or "end of file" in d.message):
            return {"status": "incomplete", "indent": ""}
        if not stripped.endswith((";", "}")):
            return {"status": "incomplete", "indent": ""}
        return {"status": "invalid"}
    return {"status": "complete"}
