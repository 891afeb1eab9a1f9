"""The Swift language front end: text -> AST -> checked program.

Knows nothing of execution (imports nothing of swiftnb outside ``swiftnb.lang``).

* :func:`parse` — one text to an :class:`ast.Program` (syntax errors raise
  :class:`CompileError`).
* :func:`check` — a program to a :class:`CheckedProgram` (every semantic error found is
  raised together in one :class:`CompileError`).
* :func:`load` — a script file with its imports, parsed, merged and checked.
* :func:`compile_source` — the same for a text (notebook cells), imports resolved
  against ``base_dir``.

Imports: ``import "name";`` loads ``name.swift`` from, in order, each directory of
``$SWIFT_LIB`` (as the User Guide says), the importing file's folder, the main script's
folder and the current directory; each module is loaded once (cycles are fine).  ``stdlib.v1`` is
accepted and ignored (every builtin is always available); ``stdlib.v2`` declares ``PI``
and ``E`` and makes ``assert`` trunk's (docs/language.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable

from swiftnb.lang import ast, types
from swiftnb.lang.checked import (Binding, CheckedProgram, Param, Signature, Symbol,
                                  Write)
from swiftnb.lang.checker import check as _check
from swiftnb.lang.errors import CompileError, Diagnostic, source_line

_STDLIB = {"stdlib.v1", "stdlib.v2"}


def parse(text: str, filename: str = "<string>") -> ast.Program:
    """Parse one source text into an :class:`ast.Program`; raise :class:`CompileError`
    with the syntax errors.  (The parser, and lark, are loaded on the first call.)"""
    from swiftnb.lang.parser import parse as parse_text

    return parse_text(text, filename)


#: how a script file's text becomes its AST: ``parse``, or one that reuses the parse of an
#: unchanged file (the ``swiftnb`` command's ``swiftnb.scriptcache``)
ParseFile = Callable[[str, str], ast.Program]


def check(program: ast.Program, sources: dict[str, str] | None = None,
          given: Iterable[ast.Node] = ()) -> CheckedProgram:
    """Check a parsed (and, for imports, merged) program.  ``given``: the Declarator
    nodes of variables whose values are seeded from outside (the notebook kernel's
    earlier cells), which are therefore not "uninitialised"."""
    return _check(program, sources, given)


def _search_dirs(folder: str, root: str, search_path: list[str] | None) -> list[str]:
    if search_path is None:
        lib = os.environ.get("SWIFT_LIB", "")
        search_path = [d for d in lib.split(os.pathsep) if d]
    return list(dict.fromkeys([*search_path, folder, root, os.getcwd()]))


def _find_module(name: str, dirs: list[str]) -> str | None:
    candidates = [name] if name.endswith(".swift") else [name + ".swift", name]
    if os.path.isabs(name):
        for c in candidates:
            if os.path.isfile(c):
                return c
        return None
    for d in dirs:
        for c in candidates:
            p = os.path.join(d, c)
            if os.path.isfile(p):
                return p
    return None


def _merge(main: ast.Program, main_name: str, main_text: str, base_dir: str,
           search_path: list[str] | None,
           parse_file: ParseFile = parse) -> tuple[ast.Program, dict[str, str]]:
    sources: dict[str, str] = {main_name: main_text}
    seen: set[str] = set()
    if os.path.isfile(main_name):
        seen.add(os.path.realpath(main_name))
    types_: list = []
    procs: list = []
    stmts: list = []
    imports: list = []
    errors: list[Diagnostic] = []

    def visit(prog: ast.Program, folder: str, text: str) -> None:
        for imp in prog.imports:
            imports.append(imp)
            if imp.path in _STDLIB:
                continue
            path = _find_module(imp.path, _search_dirs(folder, base_dir, search_path))
            if path is None:
                errors.append(Diagnostic(
                    imp.pos.file, imp.pos.line, imp.pos.column,
                    f"When processing import {imp.path}: {imp.path}.swift (No such file or "
                    "directory)", source_line(text, imp.pos.line)))
                continue
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            try:
                sub_text = read_script(path)
            except CompileError as exc:
                errors.extend(exc.diagnostics)
                continue
            except OSError as exc:
                errors.append(Diagnostic(imp.pos.file, imp.pos.line, imp.pos.column,
                                         f"When processing import {imp.path}: {exc}",
                                         source_line(text, imp.pos.line)))
                continue
            sources[path] = sub_text
            sub = parse_file(sub_text, path)
            visit(sub, os.path.dirname(path) or ".", sub_text)
            types_.extend(sub.types)
            procs.extend(sub.procedures)
            stmts.extend(sub.statements)

    visit(main, base_dir, main_text)
    if errors:
        raise CompileError(errors)
    if not imports:
        return main, sources
    merged = ast.Program(main.pos, tuple(imports), tuple(types_) + main.types,
                         tuple(procs) + main.procedures, tuple(stmts) + main.statements,
                         main.filename)
    return merged, sources


def compile_source(text: str, filename: str = "<string>", base_dir: str = ".",
                   search_path: list[str] | None = None) -> CheckedProgram:
    """Parse, resolve imports (against ``base_dir``) and check a source text."""
    return _compile(parse(text, filename), text, filename, base_dir, search_path, parse)


def _compile(program: ast.Program, text: str, filename: str, base_dir: str,
             search_path: list[str] | None, parse_file: ParseFile) -> CheckedProgram:
    merged, sources = _merge(program, filename, text, base_dir, search_path, parse_file)
    return _check(merged, sources)


def read_script(path: str) -> str:
    """A script file's text.  Scripts are UTF-8 (a BOM is dropped): a file that is not
    (Latin-1, binary) is refused with the line, column and value of its first bad byte,
    as configuration files are, rather than read with replacement characters that would
    end up in file names and strings.  OSError as ``open`` raises it."""
    with open(path, "rb") as handle:
        data = handle.read()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        start = exc.start
        line = data.count(b"\n", 0, start) + 1
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise CompileError(Diagnostic(
            path, line, column, f"not a UTF-8 text file (line {line}: byte "
            f"0x{data[start]:02x}); save it as UTF-8")) from None


def load(path: str | os.PathLike, search_path: list[str] | None = None,
         parse_file: ParseFile = parse) -> CheckedProgram:
    """Read, parse, import and check a script file.

    ``search_path`` replaces ``$SWIFT_LIB`` when given; ``parse_file`` parses the script
    and the files it imports (``parse``, or one that keeps parses between runs).  Raises :class:`CompileError`
    (syntax or semantic, or a file that exists but cannot be read) and
    :class:`FileNotFoundError` when there is no such file.
    """
    path = os.fspath(path)
    try:
        text = read_script(path)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a directory, no permission...: an error for people
        raise CompileError(Diagnostic(path, 1, 1, "cannot read the script: "
                                      f"{exc.strerror or exc}")) from None
    return _compile(parse_file(text, path), text, path, os.path.dirname(path) or ".",
                    search_path, parse_file)


__all__ = [
    "ast", "types", "parse", "ParseFile", "check", "load", "read_script", "compile_source", "CompileError",
    "Diagnostic", "CheckedProgram", "Symbol", "Write", "Signature", "Param", "Binding",
]
