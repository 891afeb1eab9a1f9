"""A notebook's Swift state: the declarations and values that persist across cells.

Each cell is checked and run as its own program, made of

* a *prelude*: the types and procedures declared by earlier cells (AST nodes as they were
  parsed, so their positions stay those of their cells), and one declaration without a
  value for each top-level variable computed earlier (or each Python value the cell uses);
* the cell's own declarations and statements (positions ``cell:LINE:COL``).

A type or variable the cell declares again replaces the prelude's one, and so does a
procedure declared again with the same input types; a procedure of the same name with
other input types is an overload kept beside the earlier ones (Swift/K trunk overloads
by argument types).  So re-running a cell never fails with "already defined".  The
earlier values reach the run as the engine's ``Run(seed=...)``: the closed dataflow
nodes themselves, so apps do not run again and files keep their paths.  The checker is
told that the prelude's variables have values (``lang.check(..., given=...)``: not
"uninitialised"); everything else is the ordinary front end and engine.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from swiftnb import lang
from swiftnb.lang import ast as A
from swiftnb.lang.checked import CheckedProgram

if TYPE_CHECKING:
    from swiftnb.runner import RunHandle

__all__ = ["SwiftSession", "CellProgram", "ProcEntry", "CELL_FILE", "located_warnings", "walk",
           "input_types"]

#: the file name of every cell in positions and messages (``cell:3:5: ...``)
CELL_FILE = "cell"


@dataclass
class VarEntry:
    """A top-level variable of an earlier cell (or a Python value): how to declare it
    and the value to seed."""

    name: str
    decl: A.VarDecl
    value: Any
    python: bool = False  # came from the Python namespace


@dataclass
class ProcEntry:
    """One declaration of a procedure the session keeps, with what shift-tab shows of it:
    its header as written and the comment above it (both empty when it was imported)."""

    decl: A.Procedure
    source: str = ""
    doc: str = ""


@dataclass
class CellProgram:
    """A checked cell with its prelude: ``checked`` is what ``start_run`` runs (the
    engine takes each call's overload from it), ``seed`` the earlier values it starts
    with; the rest is what :meth:`SwiftSession.commit` keeps."""

    checked: CheckedProgram
    seed: dict[str, Any]
    text: str
    declared_types: list[str] = field(default_factory=list)
    declared_procs: list[str] = field(default_factory=list)
    declared_vars: list[str] = field(default_factory=list)
    python_names: list[str] = field(default_factory=list)
    cell_ast: A.Program | None = None
    #: types and procedures of the modules the cell imports (kept for later cells)
    imported: tuple[tuple[A.TypeDecl, ...], tuple[A.Procedure, ...]] = ((), ())
    #: the warnings to show under the cell, at their ``cell:line:col`` when the cell's
    #: own text says them (:func:`located_warnings`)
    notes: list[str] = field(default_factory=list)


def walk(node: A.Node | tuple) -> Iterator[A.Node]:
    """Every AST node under ``node`` (dataclass fields, tuples)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
            continue
        if not isinstance(n, A.Node):
            continue
        yield n
        for f in dataclasses.fields(n):
            v = getattr(n, f.name, None)
            if isinstance(v, (A.Node, tuple)):
                stack.append(v)


def located_warnings(messages: list[str], program: A.Program, text: str) -> dict[str, str]:
    """The checker's warnings that ``program`` (a cell's own AST) says, each at its first
    call: ``cell:2:12: Warning: The @ syntax ...`` with the source line, as errors show.

    The checker (like Swift 0.96) says each message once per run and without a place;
    in a notebook the cell's line and column say which call to change."""
    from swiftnb.lang.builtins import AT_SYNTAX_WARNING, deprecation_warning
    from swiftnb.lang.errors import Diagnostic, source_line

    wanted = set(messages)
    found: dict[str, A.Pos] = {}
    for node in walk(program):
        if not isinstance(node, A.Call) or node.pos.file != program.filename:
            continue
        said = [AT_SYNTAX_WARNING] if node.at_syntax else []
        said.append(deprecation_warning(node.name) or "")
        for message in said:
            if message in wanted and (message not in found or node.pos < found[message]):
                found[message] = node.pos
    return {message: Diagnostic(pos.file, pos.line, pos.column, f"Warning: {message}",
                                source_line(text, pos.line)).render()
            for message, pos in sorted(found.items(), key=lambda item: item[1])}


def top_declared(program: A.Program) -> list[tuple[str, A.VarDecl]]:
    """The top-level variables a program declares, each with a value-less declaration."""
    out: list[tuple[str, A.VarDecl]] = []
    for st in program.statements:
        if isinstance(st, A.VarDecl):
            for d in st.declarators:
                bare = A.Declarator(d.pos, d.name, d.dims, None, None)
                out.append((d.name, A.VarDecl(st.pos, st.type, (bare,), st.is_global)))
        elif isinstance(st, A.MultiAssign):
            for t in st.targets:
                if t.declared_type is not None and isinstance(t.target, A.Name):
                    bare = A.Declarator(t.pos, t.target.name)
                    out.append((t.target.name, A.VarDecl(t.pos, t.declared_type, (bare,))))
    return out


def _bound_names(program: A.Program) -> set[str]:
    """Every name a program binds anywhere (declarations, loop variables, formals)."""
    names: set[str] = set()
    for n in walk(program):
        if isinstance(n, A.Declarator):
            names.add(n.name)
        elif isinstance(n, (A.Foreach,)):
            names.add(n.var)
            if n.index:
                names.add(n.index)
        elif isinstance(n, A.Iterate):
            names.add(n.var)
        elif isinstance(n, A.Formal):
            names.add(n.name)
        elif isinstance(n, A.ReturnTarget) and isinstance(n.target, A.Name) \
                and n.declared_type is not None:
            names.add(n.target.name)
    return names


def _key_text(key: A.TypeExpr | None) -> str:
    """An array dimension as the checker writes it (``int`` keys are plain ``[]``)."""
    return "[]" if key is None or key.name == "int" else f"[{key.name}]"


def _resolved(te: A.TypeExpr, types: Mapping[str, A.TypeDecl],
              seen: frozenset[str] = frozenset()) -> tuple[str, str]:
    """(element type name, dimensions) of a type expression, aliases followed."""
    dims = "".join(_key_text(k) for k in te.dims)
    td = types.get(te.name)
    if td is None or td.kind != "alias" or td.alias_of is None or te.name in seen:
        return te.name, dims
    element, inner = _resolved(td.alias_of, types, seen | {te.name})
    return element, dims + inner


def input_types(proc: A.Procedure, types: Mapping[str, A.TypeDecl]) -> tuple[str, ...]:
    """The types of a procedure's mandatory inputs (``types``: the type declarations in
    scope, for aliases).  Two declarations of one name with the same ones are one
    procedure declared again, as the checker's overloading rule has it; with different
    ones they are overloads."""
    out = []
    for f in proc.inputs:
        if f.default is None:
            element, inner = _resolved(f.type, types)
            out.append(element + "".join(_key_text(d) for d in f.dims) + inner)
    return tuple(out)


_PY_TYPES = ((bool, "boolean"), (int, "int"), (float, "float"), (str, "string"))


def _scalar_type(value: Any) -> str | None:
    for t, name in _PY_TYPES:
        if isinstance(value, t):
            return name
    return None


def python_type(value: Any, pos: A.Pos) -> A.TypeExpr | None:
    """The Swift type of a Python value passed into a cell, or None if it has none:
    bool/int/float/str, lists of them (``T[]``) and dicts (``T[int]``, ``T[string]``)."""
    st = _scalar_type(value)
    if st is not None:
        if st == "int" and not -(2**31) <= value < 2**31:
            return None
        return A.TypeExpr(pos, st)
    if isinstance(value, (list, tuple)) and value:
        kinds = {_scalar_type(v) for v in value}
        if len(kinds) == 1 and None not in kinds:
            return A.TypeExpr(pos, cast(str, kinds.pop()), (None,))
        if kinds <= {"int", "float"}:
            return A.TypeExpr(pos, "float", (None,))
        return None
    if isinstance(value, Mapping) and value:
        kinds = {_scalar_type(v) for v in value.values()}
        keys = {_scalar_type(k) for k in value}
        if len(kinds) == 1 and None not in kinds and len(keys) == 1 and \
                keys <= {"int", "string"}:
            key = None if keys == {"int"} else A.TypeExpr(pos, "string")
            return A.TypeExpr(pos, cast(str, kinds.pop()), (key,))
    return None


class SwiftSession:
    """The Swift side of a notebook: compile cells against what came before, remember
    what each run declared and computed."""

    def __init__(self, base_dir: str = ".") -> None:
        self.base_dir = os.path.abspath(base_dir)
        self.types: dict[str, A.TypeDecl] = {}
        #: name -> its declarations (overloads), in the order they were first declared
        self.procs: dict[str, list[ProcEntry]] = {}
        self.vars: dict[str, VarEntry] = {}
        self._warned: set[str] = set()
        self.last_run: RunHandle | None = None

    # ---------------------------------------------------------------- compiling
    def compile_cell(self, text: str, python_ns: Mapping[str, Any] | None = None) -> CellProgram:
        """Check ``text`` against the session; raises ``lang.CompileError``."""
        cell = lang.parse(text, CELL_FILE)
        imports, cell_types, cell_procs, cell_stmts = self._imports(cell, text)
        own_types = {t.name for t in cell.types}
        own_procs = {p.name for p in cell.procedures}
        new_types = own_types | {t.name for t in cell_types}  # replace the prelude's
        own_vars = [name for name, _ in top_declared(cell)]
        types = tuple(t for n, t in self.types.items() if n not in new_types) + cell.types
        in_scope = {t.name: t for t in cell_types + types}
        redeclared = {(p.name, input_types(p, in_scope)) for p in cell_procs + cell.procedures}
        procs = tuple(e.decl for name, entries in self.procs.items() for e in entries
                      if (name, input_types(e.decl, in_scope)) not in redeclared)
        procs += cell.procedures
        prelude: list[A.Stmt] = []
        seed: dict[str, Any] = {}
        given: list[A.Declarator] = []
        for name, entry in self.vars.items():
            if name in own_vars:
                continue
            prelude.append(entry.decl)
            given.append(entry.decl.declarators[0])
            seed[name] = entry.value
        python_names: list[str] = []
        if python_ns is not None:
            bound = _bound_names(cell) | set(self.vars) | own_types | own_procs
            known = {n for n in self.procs} | {p.name for p in cell.procedures}
            for n in walk(cell):
                if not isinstance(n, A.Name) or n.name in bound or n.name in known \
                        or n.name in python_names or n.name not in python_ns:
                    continue
                value = python_ns[n.name]
                texpr = python_type(value, A.Pos(CELL_FILE, 0, 0))
                if texpr is None:
                    continue
                decl = A.VarDecl(texpr.pos, texpr, (A.Declarator(texpr.pos, n.name),))
                prelude.append(decl)
                given.append(decl.declarators[0])
                seed[n.name] = value
                python_names.append(n.name)
        program = A.Program(cell.pos, cell.imports, cell_types + types, cell_procs + procs,
                            tuple(prelude) + cell_stmts + cell.statements, CELL_FILE)
        sources = {CELL_FILE: text, **imports}
        checked = lang.check(program, sources, given)
        # checked.warnings stay whole: the engine is seeded with them and says none twice
        located = located_warnings(checked.warnings, cell, text)
        unlocated = [w for w in checked.warnings if w not in located and w not in self._warned]
        self._warned.update(unlocated)  # said by an earlier cell's procedure: once
        notes = [*located.values(), *(f"Warning: {w}" for w in unlocated)]
        return CellProgram(checked, seed, text, sorted(own_types), sorted(own_procs),
                           own_vars, python_names, cell, (cell_types, cell_procs), notes)

    def _imports(self, cell: A.Program, text: str) -> tuple[dict, tuple, tuple, tuple]:
        """The modules a cell imports, merged the way ``lang`` merges them."""
        if not cell.imports:
            return {}, (), (), ()
        from swiftnb.lang import _merge  # the front end's import resolution

        merged, sources = _merge(cell, CELL_FILE, text, self.base_dir, None)
        n_t, n_p, n_s = len(cell.types), len(cell.procedures), len(cell.statements)
        sources.pop(CELL_FILE, None)
        return (sources, merged.types[:len(merged.types) - n_t],
                merged.procedures[:len(merged.procedures) - n_p],
                merged.statements[:len(merged.statements) - n_s])

    # ---------------------------------------------------------------- after a run
    def commit(self, cell: CellProgram, run: RunHandle | None = None) -> dict[str, Any]:
        """Remember a cell's declarations and, after its run, the values it computed
        (closed ones; a failed or unfinished value is forgotten).  Returns the values as
        Python (what the kernel puts in the Python namespace)."""
        from swiftnb.engine import values as V

        program = cell.cell_ast
        assert program is not None
        for t in cell.imported[0]:
            self.types[t.name] = t
        cell_ast_types = {t.name: t for t in program.types}
        for name in cell.declared_types:
            self.types[name] = cell_ast_types[name]
        for p in cell.imported[1]:
            self._keep(ProcEntry(p))
        for p in program.procedures:
            self._keep(ProcEntry(p, _proc_source(cell.text, p),
                                 _doc_comment(cell.text, p.pos.line)))
        for name in cell.declared_vars:
            self.vars.pop(name, None)
        plain: dict[str, Any] = {}
        if run is None:
            return plain
        self.last_run = run
        engine = run.run
        compiler = engine.compiler
        if compiler is None:   # the run ended before its program compiled
            return plain
        decls = dict(top_declared(program))
        frame = engine.top_frame
        for name in cell.declared_vars:
            sym = compiler.top.syms.get(name)
            if sym is None or sym.slot >= len(frame):
                continue
            node = frame[sym.slot]
            if isinstance(node, V.Node):
                if node.state != V.CLOSED:
                    continue
                plain[name] = V.to_python(node)
            elif node is None:
                continue
            else:
                plain[name] = node
            self.vars[name] = VarEntry(name, decls[name], node)
        return plain

    def _keep(self, entry: ProcEntry) -> None:
        """Keep a committed declaration: in place of the one of its name and input types,
        else beside the other overloads of its name."""
        overloads = self.procs.setdefault(entry.decl.name, [])
        key = input_types(entry.decl, self.types)
        for i, old in enumerate(overloads):
            if input_types(old.decl, self.types) == key:
                overloads[i] = entry
                return
        overloads.append(entry)

    def reset(self) -> None:
        self.types.clear()
        self.procs.clear()
        self.vars.clear()
        self._warned.clear()

    # ---------------------------------------------------------------- introspection
    def declared_names(self) -> list[str]:
        return sorted({*self.types, *self.procs, *self.vars})

    def describe(self) -> str:
        lines = []
        for name in self.types:
            lines.append(f"type {name}")
        for entries in self.procs.values():
            lines.extend(signature_text(e.decl) for e in entries)
        for v in self.vars.values():
            lines.append(var_text(v.decl))
        return "\n".join(lines) if lines else "(no Swift declarations)"


def type_text(t: A.TypeExpr) -> str:
    dims = "".join("[]" if d is None else f"[{type_text(d)}]" for d in t.dims)
    return t.name + dims


def var_text(decl: A.VarDecl) -> str:
    """``file parts[]``: a variable declaration as written (without value or mapping)."""
    d = decl.declarators[0]
    dims = "".join("[]" if x is None else f"[{type_text(x)}]" for x in d.dims)
    return f"{type_text(decl.type)} {d.name}{dims}"


def _formal_text(f: A.Formal) -> str:
    dims = "".join("[]" if d is None else f"[{type_text(d)}]" for d in f.dims)
    return f"{type_text(f.type)} {f.name}{dims}"


def signature_text(p: A.Procedure) -> str:
    """``app (file o) cat (file i)``: how a procedure is called."""
    kind = "app " if isinstance(p, A.AppProcedure) else ""
    outs = ", ".join(_formal_text(f) for f in p.outputs)
    ins = ", ".join(_formal_text(f) for f in p.inputs)
    return f"{kind}({outs}) {p.name} ({ins})"


def _doc_comment(text: str, line: int) -> str:
    """The comment lines right above line ``line`` (``//``, ``#`` or a ``/* */`` block)."""
    lines = text.splitlines()
    i = line - 2
    doc: list[str] = []
    while i >= 0:
        s = lines[i].strip()
        if s.startswith("//") or s.startswith("#"):
            doc.append(s.lstrip("/#").strip())
        elif s.endswith("*/"):
            block = []
            while i >= 0:
                t = lines[i].strip()
                block.append(t.strip("/*").strip())
                if t.startswith("/*"):
                    break
                i -= 1
            doc.extend(block)
        else:
            break
        i -= 1
    return "\n".join(reversed([d for d in doc if d]))


def _proc_source(text: str, p: A.Procedure) -> str:
    """The procedure's header line(s) as written (up to its opening brace)."""
    lines = text.splitlines()
    if not 0 < p.pos.line <= len(lines):
        return ""
    out = []
    for ln in lines[p.pos.line - 1:]:
        out.append(ln)
        if "{" in ln:
            break
    return "\n".join(out)
