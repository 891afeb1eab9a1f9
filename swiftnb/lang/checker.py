"""The static checker: names, types, calls, single assignment.  AST -> CheckedProgram.

One pass over declarations (types, procedure signatures, globals), then one pass over
each body.  Swift declarations are visible in their whole block regardless of textual
order (a dataflow language), so every block first declares its variables, then checks
its statements.  Errors are collected (several per run) with positions; an unknown name
or type is typed ``any`` afterwards so that one mistake gives one message.

Messages use the Swift 0.96 wording where 0.96 had one (reference sections 1 and 2.5).
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from typing import NamedTuple

from swiftnb.lang import ast
from swiftnb.lang import builtins as B
from swiftnb.lang import mappers as M
from swiftnb.lang import types as T
from swiftnb.lang.checked import Binding, CheckedProgram, Param, Signature, Symbol, Write
from swiftnb.lang.deepstack import TooDeep, run_deep
from swiftnb.lang.errors import CompileError, Diagnostic, source_line

_SPEC_TYPES = {"int": T.INT, "float": T.FLOAT, "string": T.STRING, "boolean": T.BOOLEAN,
               "any": T.ANY, "string[]": T.ArrayType(T.STRING),
               "string[string]": T.ArrayType(T.STRING, T.STRING)}


class _Scope:
    __slots__ = ("vars", "parent", "owner", "is_root")

    def __init__(self, parent: _Scope | None, owner: ast.Procedure | None = None,
                 is_root: bool = False) -> None:
        self.vars: dict[str, Symbol] = {}
        self.parent = parent
        self.owner = owner
        self.is_root = is_root

    def lookup(self, name: str) -> Symbol | None:
        s: _Scope | None = self
        while s is not None:
            v = s.vars.get(name)
            if v is not None:
                return v
            s = s.parent
        return None


def _describe(kind: str) -> str:
    return {"whole": "assign", "element": "assign", "member": "assign", "append": "append",
            "output": "procedure call"}.get(kind, kind)


class Checker:
    def __init__(self, program: ast.Program, sources: dict[str, str] | None = None,
                 given: Iterable[ast.Node] = ()) -> None:
        self.program = program
        #: declarations whose variables get their values from outside the program (the
        #: notebook kernel seeds earlier cells' values): never "uninitialised"
        self.given = frozenset(given)
        self.sources = sources or {}
        self.errors: list[tuple[ast.Pos, str]] = []
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self.types: dict[str, T.SwiftType] = dict(T.BUILTIN_TYPES)
        self.type_decls: dict[str, ast.TypeDecl] = {}
        self.procs: dict[str, Signature] = {}
        #: every user signature of a name, in declaration order (overloading)
        self.overloads: dict[str, list[Signature]] = {}
        #: ``import "stdlib.v2";``: trunk's library v2 (constants, changed meanings)
        self.stdlib_v2 = any(i.path == "stdlib.v2" for i in program.imports)
        self.builtins_used: dict[str, Signature] = {}
        self.node_types: dict = {}
        self.node_symbols: dict = {}
        self.loop_syms: dict = {}
        self.bindings: dict = {}
        self.outputs: dict = {}
        self.writes_in: dict = {}
        self.symbols: list[Symbol] = []
        self.globals = _Scope(None, is_root=True)
        self.root = _Scope(self.globals, is_root=True)
        # stack of compound statements enclosing the current statement, for writes_in
        self._stmt_stack: list[ast.Node] = []
        #: the if/switch arms around the statement being checked, innermost first
        self._branch: _Arm | None = None
        self._loops: int = 0
        self._whole_writes: dict[tuple, list[tuple[Write, _Arm | None, int, tuple]]] = {}
        self._resolving: set[str] = set()
        self._builtin_sigs: dict[str, Signature] = {}
        self._decl_loops: dict[Symbol, int] = {}
        # kinds of the scopes enclosing the current statement, outermost first:
        # "C" condition (if/switch arm), "L" loop body (foreach/iterate), "A" block
        self._kinds: list[str] = []
        self._current: ast.Node | None = None  # the statement being checked
        self._decl_depth: dict[Symbol, int] = {}
        self._procedure: ast.Procedure | None = None  # the body being checked, if any

    # ================================================================== reporting
    def error(self, pos: ast.Pos, message: str) -> None:
        self.errors.append((pos, message))

    def warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            self.warnings.append(message)

    # ================================================================== types
    def _declare_types(self) -> None:
        for td in self.program.types:
            prev = self.type_decls.get(td.name)
            if prev is not None and _same_type_decl(prev, td):
                continue  # `type file;` in a script and in a module it imports
            if td.name in self.type_decls or td.name in T.BUILTIN_TYPES:
                where = f" on line {prev.pos.line}" if prev else " as a builtin type"
                self.error(td.pos, f"Type {td.name} is already defined{where}")
                continue
            self.type_decls[td.name] = td
            if td.kind == "mapped" or (td.kind == "struct" and not td.fields):
                self.types[td.name] = T.MappedType(td.name)
            elif td.kind == "struct":
                self.types[td.name] = T.StructType(td.name, pos=td.pos)
        for td in self.program.types:
            if td.kind == "alias" and td.name not in self.types:
                self._resolve_alias(td)
        for td in self.program.types:
            t = self.types.get(td.name)
            if td.kind == "struct" and isinstance(t, T.StructType) and not t.fields:
                for f in td.fields:
                    if f.name in t.fields:
                        self.error(f.pos, f"re-definition of field '{f.name}' in type "
                                          f"'{td.name}'")
                        continue
                    ft = self.resolve(f.type, f.dims)
                    t.fields[f.name] = ft
                    self.node_types[f] = ft
        self._check_containment()

    def _check_containment(self) -> None:
        """A structure may not hold itself, directly or through other structures (an
        array of it is fine: arrays start empty).  Its value would never end: Swift/K
        built every field of a structure when it made one, and overflowed its stack."""
        done: set[str] = set()
        for td in self.program.types:
            start = self.types.get(td.name)
            if td.kind != "struct" or td.name in done or not isinstance(start, T.StructType):
                continue
            path = _containment_cycle(start)
            if path is not None:
                done.update(owner.type_name for owner, _ in path)
                route = " -> ".join(f"{owner.type_name}.{name}" for owner, name in path)
                first = next((f for f in td.fields if f.name == path[0][1]), td)
                self.error(first.pos, f"Type {td.name} contains itself ({route} is a "
                                   f"{td.name}): a structure cannot hold a value of its own "
                                   f"type; an array of it ({td.name}[]) can")

    def _resolve_alias(self, td: ast.TypeDecl) -> T.SwiftType:
        if td.name in self.types:
            return self.types[td.name]
        if td.name in self._resolving:
            self.error(td.pos, f"Type {td.name} is defined in terms of itself")
            self.types[td.name] = T.ANY
            return T.ANY
        self._resolving.add(td.name)
        assert td.alias_of is not None
        t = self.resolve(td.alias_of)
        self._resolving.discard(td.name)
        self.types[td.name] = t
        return t

    def named_type(self, name: str, pos: ast.Pos) -> T.SwiftType:
        t = self.types.get(name)
        if t is not None:
            return t
        td = self.type_decls.get(name)
        if td is not None and td.kind == "alias":
            return self._resolve_alias(td)
        if name == "auto":
            self.error(pos, "auto can only be used as the key type of an array: T[auto]")
        else:
            self.error(pos, f"Type {name} is not defined.")
        self.types[name] = T.ANY  # report once
        return T.ANY

    def key_type(self, k: ast.TypeExpr | None) -> T.SwiftType:
        if k is None:
            return T.INT
        t = T.KEY_TYPES.get(k.name)
        if t is None:
            other = self.types.get(k.name)
            if other is None and k.name not in self.type_decls:
                self.error(k.pos, f"Type {k.name} is not defined.")
            else:
                self.error(k.pos, f"Invalid array key type: {k.name} (keys must be int, "
                                  "string, float, boolean or auto)")
            return T.INT
        return t

    def resolve(self, te: ast.TypeExpr, extra_dims: tuple = ()) -> T.SwiftType:
        """Type of ``te`` with a declarator's dims: ``T[K1] a[K2]`` is ``a[k2][k1]``."""
        base = self.named_type(te.name, te.pos)
        dims = tuple(extra_dims) + te.dims
        if not dims:
            return base
        return T.array_of(base, *[self.key_type(k) for k in dims])

    # ================================================================== signatures
    def _formal_params(self, formals: tuple[ast.Formal, ...], proc: ast.Procedure,
                       outputs: bool) -> tuple[Param, ...]:
        params = []
        seen: dict[str, ast.Formal] = {}
        for f in formals:
            t = self.resolve(f.type, f.dims)
            self.node_types[f] = t
            if f.name in seen:
                self.error(f.pos, f"Variable {f.name}, on line {f.pos.line}, was already "
                                  f"defined on line {seen[f.name].pos.line}")
            seen[f.name] = f
            params.append(Param(f.name, t, f.default, f.default is not None, f))
        return tuple(params)

    def _declare_procedures(self) -> None:
        for proc in self.program.procedures:
            sig = self._procedure_signature(proc)
            same = next((o for o in self.overloads.get(proc.name, ())
                         if _positional_types(o) == _positional_types(sig)), None)
            if same is not None:
                # trunk overloads by input types; the same types twice stay an error
                self.error(proc.pos, "Illegal redefinition of procedure attempted for "
                                     f"{proc.name} (the same input types as "
                                     f"{same.describe()})")
                continue
            self.overloads.setdefault(proc.name, []).append(sig)
            self.procs.setdefault(proc.name, sig)

    def _procedure_signature(self, proc: ast.Procedure) -> Signature:
        """The signature of one user procedure (its formals checked for duplicates)."""
        kind = "app" if isinstance(proc, ast.AppProcedure) else "compound"
        outs = self._formal_params(proc.outputs, proc, True)
        ins = self._formal_params(proc.inputs, proc, False)
        names = {p.name: p for p in outs}
        for p in ins:
            first = names[p.name].decl if p.name in names else None
            if first is not None and p.decl is not None:  # (params made above have one)
                self.error(p.decl.pos, f"Variable {p.name}, on line {p.decl.pos.line}, "
                                       "was already defined on line "
                                       f"{first.pos.line}")
        return Signature(proc.name, kind, outs, ins, proc)

    def builtin_signature(self, name: str) -> tuple[str, Signature] | None:
        found = B.lookup(name)
        if found is None:
            return None
        canonical, (kind, returns, params) = found
        sig = self._builtin_sigs.get(canonical)
        if sig is None:
            inputs = []
            variadic = False
            for i, spec in enumerate(params):
                optional = spec.endswith("?")
                if spec.startswith("..."):
                    variadic = True
                    spec = spec[3:]
                name, named, spec = spec.rstrip("?").rpartition(":")
                inputs.append(Param(name or f"arg{i + 1}", _SPEC_TYPES.get(spec, T.ANY),
                                    None, optional, None, spec, bool(named)))
            outputs: tuple[Param, ...] = ()
            if returns is not None:
                outputs = (Param("result", _SPEC_TYPES.get(returns, T.ANY)),)
            sig = Signature(canonical, "builtin", outputs, tuple(inputs), None, variadic,
                            kind, returns)
            self._builtin_sigs[canonical] = sig
        return canonical, sig

    # ================================================================== variables
    def declare(self, scope: _Scope, name: str, t: T.SwiftType, decl: ast.Node, kind: str,
                mapping: ast.Mapping | None = None) -> Symbol:
        prev = scope.lookup(name)
        if prev is not None:
            self.error(decl.pos, f"Variable {name}, on line {decl.pos.line}, was already "
                                 f"defined on line {prev.decl.pos.line}")
        sym = Symbol(name, t, decl, kind, scope.owner, mapping=mapping)
        if prev is None:
            scope.vars[name] = sym
        self.node_symbols[decl] = sym
        self.node_types[decl] = t
        self.symbols.append(sym)
        self._decl_loops[sym] = self._loops
        self._decl_depth[sym] = len(self._kinds)
        return sym

    def _predeclare(self, stmts: tuple[ast.Stmt, ...], scope: _Scope) -> None:
        """Declare the variables a block declares, before checking its statements."""
        for st in stmts:
            if isinstance(st, ast.VarDecl):
                if st.is_global and not scope.is_root:
                    self.error(st.pos, f"Global {st.declarators[0].name} can only be "
                                       "declared in the root scope of a program")
                target = self.globals if (st.is_global and scope.is_root) else scope
                kind = "global" if st.is_global else "var"
                for d in st.declarators:
                    t = self.resolve(st.type, d.dims)
                    self.declare(target, d.name, t, d, kind, d.mapping)
            elif isinstance(st, ast.MultiAssign):
                for rt in st.targets:
                    if rt.declared_type is not None:
                        t = self.resolve(rt.declared_type)
                        assert isinstance(rt.target, ast.Name)
                        self.declare(scope, rt.target.name, t, rt, "var")
                        self.node_symbols[rt.target] = self.node_symbols[rt]

    # ================================================================== writes
    def _root_symbol(self, target: ast.Expr) -> tuple[Symbol | None, str, tuple]:
        """(symbol, write kind, member path) of an lvalue."""
        node = target
        path: list[str] = []
        kind = "whole"
        while not isinstance(node, ast.Name):
            if isinstance(node, ast.Member):
                path.append(node.field)
                if kind == "whole":
                    kind = "member"
                node = node.base
            elif isinstance(node, (ast.Index, ast.StarIndex)):
                kind = "element"
                path = []
                node = node.base
            else:
                return None, kind, ()
        path.reverse()
        return self.node_symbols.get(node), kind, tuple(path)

    def record_write(self, target: ast.Expr, stmt: ast.Node, kind: str | None = None) -> None:
        sym, lkind, path = self._root_symbol(target)
        if sym is None:
            return
        if sym.kind == "input":
            self.error(target.pos, f"Cannot assign to input parameter {sym.name} of "
                                   f"procedure {sym.owner.name if sym.owner else '?'}")
            return
        if sym.kind in ("foreach_value", "foreach_key", "iterate") and not (
                lkind == "whole" and self._is_output_slot(sym)):
            self.error(target.pos, f"Cannot assign to loop variable {sym.name}")
            return
        if sym.kind == "global" and self._procedure is not None:
            # VariableScope.isVariableWriteable: a procedure body sees the globals but
            # writes only its own variables and outputs
            self.error(target.pos, f"variable {sym.name} is not writeable in this scope "
                                   f"(procedure {self._procedure.name} reads the global "
                                   f"{sym.name} but cannot assign it; return the value as "
                                   "an output)")
            return
        if lkind == "whole" and kind != "append":  # appends are partial writes
            self._check_writeable(sym, target)
        w = Write(sym, stmt, kind or lkind, target)
        sym.writers.append(w)
        depth = self._decl_depth.get(sym, 0)
        stack = self._stmt_stack
        for i in range(depth, len(stack)):
            # the i-th enclosing statement opened scope depth i + 1: symbols declared
            # at that depth or deeper are its own locals
            enclosing = stack[i]
            if enclosing is not sym.decl:
                self.writes_in.setdefault(enclosing, set()).add(sym)
        if self._current is not None:
            self.writes_in.setdefault(self._current, set()).add(sym)
        if w.kind in ("whole", "member", "output") and lkind != "element":
            self._whole_writes.setdefault((sym,), []).append((w, self._branch, self._loops,
                                                               path))

    def _is_output_slot(self, sym: Symbol) -> bool:
        """True when ``sym`` is the value variable of a foreach over a *mapped* array of
        files (``file outs[] <array_mapper; ...>; foreach f in outs { f = app(); }``):
        the element is a file slot the mapper already named, and assigning the loop
        variable writes that element (Swift's IO/q7 test; the engine aliases the write
        to the array).  Key and iterate variables, and elements that are values
        (primitives, structs) or come from an unmapped array, stay read-only."""
        if sym.kind != "foreach_value" or not sym.type.is_mapped:
            return False
        # follow nested loops (foreach row in grid { foreach f in row ... }) to the array
        while sym.kind == "foreach_value" and isinstance(sym.decl, ast.Foreach):
            root, _, _ = self._root_symbol(sym.decl.iterable)
            if root is None or root is sym:
                return False
            sym = root
        return sym.mapping is not None or sym.kind == "output"

    def _check_writeable(self, sym: Symbol, target: ast.Expr) -> None:
        """Swift 0.96 (VariableScope.isVariableWriteable): a loop body may not assign a
        whole variable declared outside the loop (every iteration would); inside an
        if/switch arm the write counts as partial, with a warning when a loop lies
        between the arm and the declaration."""
        depth = self._decl_depth.get(sym)
        if depth is None:
            return
        kinds = self._kinds[depth:]
        for i in range(len(kinds) - 1, -1, -1):
            k = kinds[i]
            if k == "L":
                self.error(target.pos, f"variable {sym.name} is not writeable in this scope "
                                       "(a loop body can only assign parts of a variable "
                                       f"declared outside it, e.g. {sym.name}[i])")
                return
            if k == "C":
                if "L" in kinds[:i]:
                    self.warn(f"Variable {sym.name}, defined on line {sym.line}, might "
                              "have multiple conflicting writers")
                return

    def _leaf_is_array(self, sym: Symbol, path: tuple) -> bool:
        t = sym.type
        for f in path:
            if not isinstance(t, T.StructType):
                return False
            t = t.fields.get(f, T.ANY)
        return t.is_array

    def _check_single_assignment(self) -> None:
        for (sym,), all_writes in self._whole_writes.items():
            # writes to array-typed parts are partial (arrays are monotonic)
            writes = [w for w in all_writes if not self._leaf_is_array(sym, w[3])]
            reported = False
            by_path: dict[tuple, list] = {}
            for w in writes:
                by_path.setdefault(w[3], []).append(w)
            for path, group in by_path.items():
                # the same member written twice, or a member and one of its ancestors
                others = [w for k in range(len(path)) for w in by_path.get(path[:k], ())]
                candidates = group + others
                for i in range(len(group)):
                    a = group[i]
                    for b in candidates[i + 1:]:
                        if _exclusive(a[1], b[1]):
                            continue
                        wa, wb = (a[0], b[0]) if a[0].line <= b[0].line else (b[0], a[0])
                        self.error(wb.stmt.pos,
                                   f"Variable {sym.name} is written to in two different "
                                   f"locations: 1. {_describe(wa.kind)}, line {wa.line}; "
                                   f"2. {_describe(wb.kind)}, line {wb.line}")
                        reported = True
                        break
                    if reported:
                        break
                if reported:
                    break

    # ================================================================== program
    def check(self) -> CheckedProgram:
        self._declare_types()
        self._declare_procedures()
        self._predeclare(self.program.statements, self.root)
        for sigs in self.overloads.values():
            for sig in sigs:
                self._check_procedure(sig)
        for st in self.program.statements:
            self.stmt(st, self.root)
        self._check_single_assignment()
        self._check_uninitialised()
        if self.errors:
            raise self.compile_error()
        return CheckedProgram(
            self.program, files=list(self.sources) or [self.program.filename],
            sources=self.sources, types=self.types, procedures=self.procs,
            builtins_used=self.builtins_used,
            globals_=dict(self.globals.vars), symbols=self.symbols,
            top_level={**self.globals.vars, **self.root.vars},
            node_types=self.node_types, node_symbols=self.node_symbols,
            loop_syms=self.loop_syms, bindings=self.bindings, outputs=self.outputs,
            writes_in={k: frozenset(v) for k, v in self.writes_in.items()},
            warnings=self.warnings)

    def compile_error(self) -> CompileError:
        diags = []
        seen = set()
        for pos, msg in sorted(self.errors, key=lambda e: (e[0].file, e[0].line, e[0].column)):
            key = (pos.file, pos.line, pos.column, msg)
            if key in seen:
                continue
            seen.add(key)
            text = self.sources.get(pos.file, "")
            diags.append(Diagnostic(pos.file, pos.line, pos.column, msg,
                                    source_line(text, pos.line) if text else ""))
        return CompileError(diags)

    def _check_uninitialised(self) -> None:
        for sym in self.symbols:
            if (sym.kind in ("var", "global") and sym.reads and not sym.writers
                    and sym.type.is_primitive and sym.mapping is None
                    and sym.decl not in self.given):
                self.error(sym.decl.pos, f"Uninitalized variable: {sym.name}")

    # ================================================================== procedures
    def _check_procedure(self, sig: Signature) -> None:
        proc = sig.decl
        assert proc is not None
        scope = _Scope(self.globals, owner=proc)
        for p in sig.outputs:
            assert p.decl is not None  # a user procedure's parameters are its Formals
            self.declare(scope, p.name, p.type, p.decl, "output")
        for p in sig.inputs:
            assert p.decl is not None
            self.declare(scope, p.name, p.type, p.decl, "input")
            if p.default is not None and not _constant(p.default):
                # the grammar's `formal := type ID ["=" constant]` (reference 1.7.1)
                self.error(p.default.pos, "default values must be constants (a literal, or "
                                          "literals joined by + or signed)")
            elif p.default is not None:
                dt = self.expr(p.default, self.globals)
                if not T.assignable(p.type, dt):
                    self.error(p.default.pos, f"You cannot assign value of type {dt} to a "
                                              f"variable of type {p.type}")
        if isinstance(proc, ast.AppProcedure):
            self._check_app(proc, sig, scope)
        else:
            assert isinstance(proc, ast.CompoundProcedure)
            self._procedure = proc
            try:
                with self._nested(proc.body):  # writes_in(body): the outputs it writes
                    self._predeclare(proc.body.statements, scope)
                    for st in proc.body.statements:
                        self.stmt(st, scope)
            finally:
                self._procedure = None

    def _check_app(self, proc: ast.AppProcedure, sig: Signature, scope: _Scope) -> None:
        for p in sig.outputs:
            t = p.type
            leaf = t.leaf()
            if not (leaf.is_mapped or leaf.is_external or leaf.is_any
                    or (isinstance(leaf, T.StructType) and leaf.has_files())):
                self.error(p.decl.pos if p.decl else proc.pos,
                           f"Output {p.name} of app procedure {proc.name} has type {t}: "
                           "app outputs must be mapped (file) types or external")
        if not proc.commands:
            self.error(proc.pos, f"App procedure {proc.name} has no command line")
        for prof in proc.profiles:
            self.expr(prof.key, scope)
            self.expr(prof.value, scope)
        for cmd in proc.commands:
            for a in cmd.args:
                t = self.expr(a, scope)
                leaf = t.leaf()
                if not (leaf.is_primitive or leaf.is_any or leaf == T.AUTO):
                    hint = (f" (use @{_lv_text(a)} for its file name)" if leaf.is_mapped
                            else "")
                    self.error(a.pos, f"Cannot pass type '{t}' as a parameter to application "
                                      f"'{cmd.executable}'{hint}")
            for stream, e in (("stdin", cmd.stdin), ("stdout", cmd.stdout),
                              ("stderr", cmd.stderr)):
                if e is not None:
                    t = self.expr(e, scope)
                    # a bare file variable stands for its file name (Swift/K did so)
                    if not (t == T.STRING or t.is_any or t.is_mapped):
                        self.error(e.pos, f"{stream} must be a string or a file (e.g. o "
                                          f"or @filename(o)), not {t}")

    # ================================================================== statements
    def stmt(self, st: ast.Stmt, scope: _Scope) -> None:
        m = getattr(self, "st_" + type(st).__name__, None)
        if m is None:  # pragma: no cover
            self.error(st.pos, f"unsupported statement {type(st).__name__}")
            return
        saved = self._current
        self._current = st
        m(st, scope)
        self._current = saved

    def _block(self, block: ast.Block, scope: _Scope) -> None:
        inner = _Scope(scope, scope.owner)
        self._predeclare(block.statements, inner)
        for st in block.statements:
            self.stmt(st, inner)

    def _nested(self, node: ast.Node, branch: tuple | None = None):
        return _Nested(self, node, branch)

    def st_VarDecl(self, st: ast.VarDecl, scope: _Scope) -> None:
        for d in st.declarators:
            sym = self.node_symbols.get(d)
            if sym is None:
                continue
            t = sym.type
            if d.mapping is not None:
                self._check_mapping(d.mapping, t, scope)
            if d.init is not None:
                vt = self.value(d.init, scope, t)
                if not T.assignable(t, vt):
                    self.error(d.init.pos, f"You cannot assign value of type {vt} to a "
                                           f"variable of type {t}")
                name = ast.Name(d.pos, d.name)
                self.node_symbols[name] = sym
                kind = "output" if self._is_proc_call(d.init) else "whole"
                self.record_write(name, d, kind)

    def _check_mapping(self, m: ast.Mapping, t: T.SwiftType, scope: _Scope) -> None:
        if m.mapper is None:
            assert m.source is not None
            st = self.expr(m.source, scope)
            if not (st == T.STRING or st.is_any or (st.is_array and (
                    st.leaf() == T.STRING or st.leaf().is_mapped))):
                self.error(m.source.pos, f"cannot use expression of type {st} as mapping "
                                         "expression")
            return
        found = M.lookup(m.mapper)
        seen: set[str] = set()
        for p in m.params:
            self.expr(p.value, scope)
            if p.name in seen:
                self.error(p.pos, f"Duplicate mapper parameter '{p.name}'")
            seen.add(p.name)
        # Swift instantiated mappers when the run started: `swift -typecheck` accepted
        # unknown mappers and parameters, so these are warnings here (the run fails).
        if found is None:
            self.warn(f"{m.pos}: unknown mapper type: '{m.mapper}'")
            return
        canonical, params, required = found
        if params is not None:
            for p in m.params:
                if p.name not in params:
                    self.warn(f"{p.pos}: {m.mapper} does not support a '{p.name}' parameter")
        for r in required:
            if r not in seen and params is not None:
                self.warn(f"{m.pos}: {m.mapper} requires a '{r}' parameter")

    def _is_proc_call(self, e: ast.Expr) -> bool:
        """A call of a user procedure (not of the builtin an overloaded name resolved to)."""
        if not isinstance(e, ast.Call) or e.name not in self.procs:
            return False
        b = self.bindings.get(e)
        return b is None or b.signature.kind != "builtin"

    def st_Assign(self, st: ast.Assign, scope: _Scope) -> None:
        tt = self.lvalue(st.target, scope)
        vt = self.value(st.value, scope, tt)
        if not T.assignable(tt, vt):
            self.error(st.value.pos, f"You cannot assign value of type {vt} to a variable "
                                     f"of type {tt}")
        self.record_write(st.target, st, "output" if self._is_proc_call(st.value) and
                          isinstance(st.target, ast.Name) else None)

    def st_Append(self, st: ast.Append, scope: _Scope) -> None:
        tt = self.expr(st.target, scope)
        vt = self.value(st.value, scope,
                        tt.element if isinstance(tt, T.ArrayType) else T.ANY)
        if isinstance(tt, T.ArrayType):
            if tt.key != T.AUTO:
                self.error(st.pos, "You can only append to an array with 'auto' index type. "
                                   f"Current index type: {tt.key}")
            elif not T.assignable(tt.element, vt):
                self.error(st.value.pos, f"You cannot append value of type {vt} to an "
                                         f"array of type {tt}")
        elif not tt.is_any:
            self.error(st.pos, "You can only append to an array with 'auto' index type. "
                               f"{_lv_text(st.target)} is not an array (type {tt})")
        self.record_write(st.target, st, "append")

    def st_CallStatement(self, st: ast.CallStatement, scope: _Scope) -> None:
        self.call(st.call, scope, statement=True)

    def st_MultiAssign(self, st: ast.MultiAssign, scope: _Scope) -> None:
        sig = self.call(st.call, scope, statement=True, multi=True)
        pairs: list[tuple[Param, ast.ReturnTarget]] = []
        if sig is None:
            for rt in st.targets:
                if rt.declared_type is None:
                    self.lvalue(rt.target, scope)
            self.outputs[st] = pairs
            return
        outs = sig.outputs
        by_name = {p.name: p for p in outs}
        used: set[str] = set()
        for i, rt in enumerate(st.targets):
            if rt.formal is not None:
                p = by_name.get(rt.formal)
                if p is None:
                    self.error(rt.pos, f"Procedure {sig.name} has no output parameter named "
                                       f"'{rt.formal}'")
                    continue
            elif i < len(outs):
                p = outs[i]
            else:
                self.error(rt.pos, f"Wrong number of procedure output arguments: specified "
                                   f"{len(st.targets)} and should be {len(outs)}")
                break
            if p.name in used:
                self.error(rt.pos, f"Duplicate parameter: '{p.name}'")
            used.add(p.name)
            tt = self.lvalue(rt.target, scope) if rt.declared_type is None \
                else self.node_types[rt]
            if not T.assignable(tt, p.type):
                self.error(rt.pos, f"You cannot assign value of type {p.type} to a variable "
                                   f"of type {tt}")
            self.node_types.setdefault(rt, tt)
            pairs.append((p, rt))
            self.record_write(rt.target, st, "output")
        self.outputs[st] = pairs

    def st_Block(self, st: ast.Block, scope: _Scope) -> None:
        with self._nested(st):
            self._block(st, scope)

    def st_If(self, st: ast.If, scope: _Scope) -> None:
        t = self.expr(st.cond, scope)
        if t != T.BOOLEAN and not t.is_any:
            self.error(st.cond.pos, "Condition in if statement has to be of boolean type.")
        with self._nested(st, (st, 0)):
            self._block(st.then, scope)
        if st.orelse is not None:
            with self._nested(st, (st, 1)):
                self._block(st.orelse, scope)

    def st_Switch(self, st: ast.Switch, scope: _Scope) -> None:
        t = self.expr(st.selector, scope)
        if not (t.is_numeric or t.is_any):
            self.error(st.selector.pos, "Condition in switch statements has to be of "
                                        "numeric type.")
        defaults = 0
        for i, case in enumerate(st.cases):
            if case.value is None:
                defaults += 1
                if defaults == 2:
                    self.error(case.pos, "switch has more than one default case")
            else:
                ct = self.expr(case.value, scope)
                if not (ct.is_numeric or ct.is_any):
                    self.error(case.value.pos, f"Case value has to be of numeric type, not {ct}")
            with self._nested(st, (st, i)):
                self._block(case.body, scope)

    def st_Foreach(self, st: ast.Foreach, scope: _Scope) -> None:
        it = self.expr(st.iterable, scope)
        if isinstance(it, T.ArrayType):
            vt, kt = it.element, it.key
        elif it.is_any:
            vt, kt = T.ANY, T.ANY
        else:
            self.error(st.iterable.pos, "You can iterate through an array structure only "
                                        f"(not {it})")
            vt, kt = T.ANY, T.ANY
        inner = _Scope(scope, scope.owner)
        vs = self.declare(inner, st.var, vt, st, "foreach_value")
        self._decl_depth[vs] = len(self._kinds) + 1  # a local of the loop body
        ks = None
        if st.index is not None:
            prev = inner.lookup(st.index)
            if prev is not None:
                self.error(st.pos, f"Variable {st.index}, on line {st.pos.line}, was already "
                                   f"defined on line {prev.line}")
            else:
                ks = Symbol(st.index, kt, st, "foreach_key", scope.owner)
                inner.vars[st.index] = ks
                self.symbols.append(ks)
        self.node_symbols[st] = vs
        self.loop_syms[st] = (vs, ks)
        self._loops += 1
        with self._nested(st):
            self._predeclare(st.body.statements, inner)
            for s in st.body.statements:
                self.stmt(s, inner)
        self._loops -= 1

    def st_Iterate(self, st: ast.Iterate, scope: _Scope) -> None:
        inner = _Scope(scope, scope.owner)
        vs = self.declare(inner, st.var, T.INT, st, "iterate")
        self.loop_syms[st] = (vs, None)
        self._loops += 1
        with self._nested(st):
            self._predeclare(st.body.statements, inner)
            for s in st.body.statements:
                self.stmt(s, inner)
            t = self.expr(st.until, inner)
        self._loops -= 1
        if t != T.BOOLEAN and not t.is_any:
            self.error(st.until.pos, "Condition in iterate statement has to be of boolean "
                                     "type.")

    # ================================================================== expressions
    def value(self, e: ast.Expr, scope: _Scope, expected: T.SwiftType) -> T.SwiftType:
        """Type of an expression in a context expecting ``expected`` (``[]`` and
        ``readData`` take the context's type; ``{...}`` initializers and the items of
        ``[...]`` are typed by it)."""
        if type(e) is ast.StructLiteral:
            t = self._struct_literal(e, scope, expected)
            self.node_types[e] = t
            return t
        if type(e) is ast.MapLiteral:
            t = self._map_literal(e, scope, expected)
            self.node_types[e] = t
            return t
        if type(e) is ast.ArrayLiteral and e.items and isinstance(expected, T.ArrayType):
            t = self._array_literal(e, scope, expected.element)
            self.node_types[e] = t
            return t
        t = self.expr(e, scope)
        if t.is_any and not expected.is_any and isinstance(e, (ast.Call, ast.ArrayLiteral)):
            self.node_types[e] = expected
            return expected
        if isinstance(e, ast.ArrayLiteral) and not e.items and expected.is_array:
            self.node_types[e] = expected
            return expected
        return t

    def lvalue(self, e: ast.Expr, scope: _Scope) -> T.SwiftType:
        if isinstance(e, ast.StarIndex) or (isinstance(e, ast.Member) and e.field == "*"):
            self.error(e.pos, "cannot assign to a slice")
        t = self.expr(e, scope, reading=False)
        return t

    def expr(self, e: ast.Expr, scope: _Scope, reading: bool = True) -> T.SwiftType:
        t = self._expr(e, scope, reading)
        self.node_types[e] = t
        return t

    def _expr(self, e: ast.Expr, scope: _Scope, reading: bool) -> T.SwiftType:
        cls = type(e)
        if type(e) is ast.Name:
            sym = scope.lookup(e.name)
            if sym is None:
                if self.stdlib_v2 and e.name in B.V2_CONSTANTS and reading:
                    return _SPEC_TYPES[B.V2_CONSTANTS[e.name]]
                self.error(e.pos, f"Variable {e.name} was not declared in this scope.")
                return T.ANY
            self.node_symbols[e] = sym
            if reading:
                sym.reads += 1
            return sym.type
        if type(e) is ast.IntLiteral:
            if e.value > 2147483647:
                self.error(e.pos, f"integer literal {e.value} is too large (int is 32-bit)")
            return T.INT
        if type(e) is ast.StringLiteral:
            return T.STRING
        if type(e) is ast.FloatLiteral:
            return T.FLOAT
        if type(e) is ast.BoolLiteral:
            return T.BOOLEAN
        if type(e) is ast.BinaryOp:
            return self._binop(e, scope)
        if type(e) is ast.Call:
            return self._call_expr(e, scope)
        if type(e) is ast.Index:
            bt = self.expr(e.base, scope, reading)
            it = self.expr(e.index, scope)
            if isinstance(bt, T.ArrayType):
                self._check_key(bt, it, e)
                return bt.element
            if not bt.is_any:
                self.error(e.pos, f"{_lv_text(e.base)} is not an array (type {bt}); it "
                                  "cannot be indexed")
            return T.ANY
        if type(e) is ast.Member:
            bt = self.expr(e.base, scope, reading)
            return self._member(bt, e)
        if type(e) is ast.StarIndex:
            bt = self.expr(e.base, scope, reading)
            if not (bt.is_array or bt.is_any):
                self.error(e.pos, f"{_lv_text(e.base)} is not an array; [*] needs an array")
                return T.ANY
            return bt
        if type(e) is ast.UnaryOp:
            t = self.expr(e.operand, scope)
            if e.op == "!":
                if t != T.BOOLEAN and not t.is_any:
                    self.error(e.pos, "Not operation can only be applied to parameter of "
                                      "type boolean.")
                return T.BOOLEAN
            if t == T.AUTO:
                return T.INT
            if not (t.is_numeric or t.is_any):
                self.error(e.pos, "Negation operation can only be applied to parameter of "
                                  "numeric types.")
                return T.ANY
            return t
        if type(e) is ast.FilenameOf:
            self.expr(e.target, scope)
            return T.STRING
        if type(e) is ast.ArrayLiteral:
            return self._array_literal(e, scope)
        if type(e) is ast.Range:
            return self._range(e, scope)
        if type(e) is ast.StructLiteral:
            return self._struct_literal(e, scope, T.ANY)
        if type(e) is ast.MapLiteral:
            return self._map_literal(e, scope, T.ANY)
        self.error(e.pos, f"unsupported expression {cls.__name__}")  # pragma: no cover
        return T.ANY

    def _range(self, e: ast.Range, scope: _Scope) -> T.SwiftType:
        """Swift 0.96 rules: from and to of one type; the step may be left out only for
        int ranges; float ranges need a float step."""
        ft = self.expr(e.start, scope)
        tt = self.expr(e.stop, scope)
        st = self.expr(e.step, scope) if e.step is not None else None
        ft = T.INT if ft == T.AUTO else ft
        tt = T.INT if tt == T.AUTO else tt
        if ft.is_any or tt.is_any or (st is not None and st.is_any):
            return T.ArrayType(tt if tt.is_numeric else ft if ft.is_numeric else T.ANY)
        if ft != tt:
            self.error(e.pos, "To and from range values must have the same type "
                              f"({ft} and {tt})")
            return T.ArrayType(T.ANY)
        if st is not None and e.step is not None and st != ft:
            self.error(e.step.pos, f"Step ({st}) must be of the same type as from and to "
                                   f"({tt})")
            return T.ArrayType(T.ANY)
        if st is None and ft != T.INT:
            if ft == T.FLOAT:
                self.error(e.pos, "Step in range specification can be omitted only when "
                                  "from and to types are int")
            else:
                self.error(e.pos, "Range can only be specified with numeric types")
            return T.ArrayType(T.ANY)
        if ft not in (T.INT, T.FLOAT):
            self.error(e.pos, "Range can only be specified with numeric types")
            return T.ArrayType(T.ANY)
        return T.ArrayType(ft)

    def _check_key(self, at: T.ArrayType, it: T.SwiftType, e: ast.Index) -> None:
        if it.is_any:
            return
        key = at.key
        if key == T.AUTO:
            # Guide 2.3: an auto array is indexed only by keys of (another) auto array
            if it != T.AUTO:
                self.error(e.index.pos, f"Supplied array index type ({it}) does not match "
                                        "the declared index type (auto)")
            return
        if it == T.AUTO:
            it = T.INT
        if it != key:
            self.error(e.index.pos, f"Supplied array index type ({it}) does not match the "
                                    f"declared index type ({key})")

    def _member(self, bt: T.SwiftType, e: ast.Member) -> T.SwiftType:
        if bt.is_any or e.field == "*":
            return T.ANY if e.field == "*" and not bt.is_any else bt
        if isinstance(bt, T.StructType):
            ft = bt.fields.get(e.field)
            if ft is None:
                self.error(e.pos, f"No member {e.field} in type {bt}")
                return T.ANY
            return ft
        if isinstance(bt, T.ArrayType):  # slice: a.f over an array of structs
            inner = self._member(bt.element, e)
            return T.ArrayType(inner, bt.key) if not inner.is_any else T.ANY
        self.error(e.pos, f"Type {bt} is not a structure ({_lv_text(e.base)}.{e.field})")
        return T.ANY

    def _array_literal(self, e: ast.ArrayLiteral, scope: _Scope,
                       element: T.SwiftType = T.ANY) -> T.SwiftType:
        if not e.items:
            return T.ArrayType(T.ANY)
        ts = [self.value(x, scope, element) for x in e.items]
        elem = ts[0]
        for x, t in zip(e.items[1:], ts[1:]):
            if T.same_type(t, elem) or t.is_any:
                continue
            if elem.is_any:
                elem = t
            else:
                self.error(x.pos, f"Wrong array element type. (item of type {t} in an "
                                  f"array of {elem})")
                break
        return T.ArrayType(elem)

    def _struct_literal(self, e: ast.StructLiteral, scope: _Scope,
                        expected: T.SwiftType) -> T.SwiftType:
        """Trunk's ``{field: value, ...}``: the struct type is the context's, and every
        field of it is given exactly once."""
        if not isinstance(expected, T.StructType):
            if expected.is_any:
                self.error(e.pos, "cannot infer the type of this structure initializer: "
                                  "use it where a struct type is expected (assigned or "
                                  "appended to a struct variable or element, as a field of "
                                  "a struct, or as a parameter of a procedure)")
            else:
                self.error(e.pos, f"cannot assign a structure to a non-structure (a value "
                                  f"of type {expected} is expected here)")
            for fi in e.fields:
                self.expr(fi.value, scope)
            return T.ANY
        seen: set[str] = set()
        for fi in e.fields:
            ft = expected.fields.get(fi.name)
            if fi.name in seen:
                self.error(fi.pos, f"duplicate field: '{fi.name}'")
            seen.add(fi.name)
            if ft is None:
                self.error(fi.pos, f"invalid field '{fi.name}' for type '{expected}' (its "
                                   f"fields: {', '.join(expected.fields)})")
                self.expr(fi.value, scope)
                continue
            vt = self.value(fi.value, scope, ft)
            if not (T.assignable(ft, vt) or (vt == T.AUTO and ft == T.INT)):
                self.error(fi.value.pos, f"Wrong type for field '{fi.name}' of type "
                                         f"'{expected}': expected {ft}, got {vt}")
        missing = [n for n in expected.fields if n not in seen]
        if missing:
            self.error(e.pos, f"missing fields in structure initializer: "
                              f"[{', '.join(missing)}] (type '{expected}')")
        return expected

    def _map_literal(self, e: ast.MapLiteral, scope: _Scope,
                     expected: T.SwiftType) -> T.SwiftType:
        """Trunk's ``{key: value, ...}``: a sparse array; typed by its context, or else
        by its first entry (``{}`` alone is an empty array of any type, like ``[]``)."""
        if not expected.is_any and not isinstance(expected, T.ArrayType):
            self.error(e.pos, f"cannot assign an array to a non-array (a value of type "
                              f"{expected} is expected here)")
            expected = T.ANY
        if isinstance(expected, T.ArrayType):
            if expected.key == T.AUTO and e.entries:
                self.error(e.pos, f"an array with 'auto' keys ({expected}) takes its keys "
                                  "from '<<'; an initializer cannot give them")
            key, element = expected.key, expected.element
        elif e.entries:
            key = self.expr(e.entries[0][0], scope)
            key = T.INT if key == T.AUTO else key
            element = self.expr(e.entries[0][1], scope)
            if not (key.is_any or key in (T.INT, T.STRING, T.FLOAT, T.BOOLEAN)):
                self.error(e.entries[0][0].pos, f"an array key must be int, string, float "
                                                f"or boolean, not {key}")
                key = T.ANY
        else:
            return T.ArrayType(T.ANY)
        for k, v in e.entries:
            kt = self.value(k, scope, key)
            if not (T.assignable(key, kt) or key == T.AUTO or (kt == T.AUTO and key == T.INT)):
                self.error(k.pos, f"Wrong key type in array initializer: expected {key}, "
                                  f"got {kt}")
            vt = self.value(v, scope, element)
            if not (T.assignable(element, vt) or (vt == T.AUTO and element == T.INT)):
                self.error(v.pos, f"Wrong type in array initializer: expected {element}, "
                                  f"got {vt}")
        return expected if isinstance(expected, T.ArrayType) else T.ArrayType(element, key)

    def _binop(self, e: ast.BinaryOp, scope: _Scope) -> T.SwiftType:
        lt = self.expr(e.left, scope)
        rt = self.expr(e.right, scope)
        if lt == T.AUTO:
            lt = T.INT
        if rt == T.AUTO:
            rt = T.INT
        op = e.op
        if lt.is_any or rt.is_any:
            if op in ("&&", "||", "==", "!=", "<", ">", "<=", ">="):
                return T.BOOLEAN
            if op == "/":
                return T.FLOAT
            if op in ("%/", "%%"):
                return T.INT
            other = rt if lt.is_any else lt
            if op == "+" and other == T.STRING:
                return T.STRING
            return other if other.is_numeric else T.ANY
        if op == "+":
            # 0.96 (Karajan.checkTypesInArithmExpr): a string on either side makes it a
            # concatenation.  0.96 accepted any other operand there; we take the
            # primitives (string, int, float, boolean) and reject arrays, structs and
            # files, whose text 0.96 never defined.
            if lt == T.STRING or rt == T.STRING:
                other = rt if lt == T.STRING else lt
                if other in (T.STRING, T.INT, T.FLOAT, T.BOOLEAN):
                    return T.STRING
            elif lt.is_numeric and rt.is_numeric:
                return T.numeric_result(lt, rt)
            self.error(e.pos, f"Operator '+' cannot be applied to '{lt}' and '{rt}'")
            return T.STRING if T.STRING in (lt, rt) else T.ANY
        if op in ("-", "*"):
            if lt.is_numeric and rt.is_numeric:
                return T.numeric_result(lt, rt)
            self.error(e.pos, f"Operator '{op}' cannot be applied to '{lt}' and '{rt}'")
            return T.ANY
        if op == "/":
            if lt.is_numeric and rt.is_numeric:
                return T.FLOAT
            self.error(e.pos, f"Operator '/' cannot be applied to '{lt}' and '{rt}'")
            return T.FLOAT
        if op in ("%/", "%%"):
            if lt == T.INT and rt == T.INT:
                return T.INT
            self.error(e.pos, f"Operator '{op}' can only be applied to 'int' and 'int'")
            return T.INT
        if op in ("==", "!=", "<", ">", "<=", ">="):
            # int and float compare with each other (widening); otherwise same types
            if not (T.same_type(lt, rt) or (lt.is_numeric and rt.is_numeric)):
                self.error(e.pos, "Conditional operator can only be applied to parameters of "
                                  f"same type. ('{lt}' {op} '{rt}')")
            elif op in ("==", "!=") and not lt.is_primitive:
                self.error(e.pos, f"Conditional operator {op} can only be applied to "
                                  "parameters of type int, float, string and boolean.")
            elif op not in ("==", "!=") and not (lt.is_numeric or lt == T.STRING):
                self.error(e.pos, f"Conditional operator {op} can only be applied to "
                                  "parameters of type int, float and string.")
            return T.BOOLEAN
        if op in ("&&", "||"):
            if lt == T.BOOLEAN and rt == T.BOOLEAN:
                return T.BOOLEAN
            what = "And" if op == "&&" else "Or"
            self.error(e.pos, f"{what} operation can only be applied to parameters of type "
                              "boolean.")
            return T.BOOLEAN
        self.error(e.pos, f"unknown operator {op}")  # pragma: no cover
        return T.ANY

    # ================================================================== calls
    def _call_expr(self, e: ast.Call, scope: _Scope) -> T.SwiftType:
        sig = self.call(e, scope, statement=False)
        if sig is None:
            return T.ANY
        if sig.kind == "builtin":
            if sig.builtin_kind == "procedure" or not sig.outputs:
                self.error(e.pos, f"Procedure {e.name} has no return value and cannot be used "
                                  "in an expression")
                return T.ANY
            spec = sig.returns_spec
            if spec == "numeric":
                ts = [self.node_types.get(a.value, T.ANY) for a in e.args]
                return T.FLOAT if any(t == T.FLOAT for t in ts) else (
                    T.INT if ts and all(t == T.INT for t in ts) else T.FLOAT)
            if spec == "element":
                ts = [self.node_types.get(a.value, T.ANY) for a in e.args]
                if ts and isinstance(ts[0], T.ArrayType) and ts[0].element.is_numeric:
                    return ts[0].element
                return T.FLOAT
            return sig.outputs[0].type
        if len(sig.outputs) != 1:
            self.error(e.pos, f"Procedure {e.name} must have exactly one return value to be "
                              "used in an expression.")
            return T.ANY
        return sig.outputs[0].type

    def call(self, e: ast.Call, scope: _Scope, statement: bool,
             multi: bool = False) -> Signature | None:
        users = self.overloads.get(e.name, [])
        arg_types = self._arg_types(e, scope, users)
        found = self.builtin_signature(e.name)
        sig = self._choose(e, users, found, arg_types) if users else None
        if users and sig is None:
            return None  # reported: ambiguous, or no candidate fits
        canonical = e.name
        if sig is None or sig.kind == "builtin":
            if found is None:
                self.error(e.pos, f"No function or procedure '{e.name}' found.")
                return None
            canonical, sig = found
            self.builtins_used[canonical] = sig
            dep = B.deprecation_warning(e.name)
            if dep:
                self.warn(dep)
            if multi:
                self.error(e.pos, f"{e.name} is a builtin function with one value; it cannot "
                                  "be used in a multiple assignment")
        if e.at_syntax:
            self.warn(B.AT_SYNTAX_WARNING)
        self._bind(e, sig, arg_types, canonical)
        if sig.kind == "builtin" and canonical in ("read", "write"):
            self._check_format(e, canonical)
        return sig

    def _check_format(self, e: ast.Call, canonical: str) -> None:
        """A constant ``format`` of trunk's read/write names a format that exists (the
        run would fail on it, after the apps before it had run)."""
        for formal, actual in self.bindings[e].inputs:
            if formal.name != "format" or type(actual) is not ast.StringLiteral:
                continue
            if actual.value not in B.SERIALIZATION_FORMATS:
                what = "de-serialization" if canonical == "read" else "serialization"
                self.error(actual.pos, f"Unsupported {what} format: '{actual.value}' "
                                       f"(accepted: {', '.join(B.SERIALIZATION_FORMATS)})")

    def _arg_types(self, e: ast.Call, scope: _Scope,
                   users: list[Signature]) -> list[T.SwiftType]:
        """The arguments' types; an initializer (``{...}``, ``[...]``) is typed by its
        formal parameter where the name has a single user declaration."""
        formals = users[0].inputs if len(users) == 1 else ()
        by_name = {f.name: f for f in formals}
        types = []
        positional = 0
        for a in e.args:
            expected: T.SwiftType = T.ANY
            if a.name is None:
                if positional < len(formals):
                    expected = formals[positional].type
                positional += 1
            elif a.name in by_name:
                expected = by_name[a.name].type
            if type(a.value) in _INITIALIZERS:
                types.append(self.value(a.value, scope, expected))
            else:
                types.append(self.expr(a.value, scope))
        return types

    # ------------------------------------------------------------------ overloading
    def _choose(self, e: ast.Call, users: list[Signature],
                builtin: tuple[str, Signature] | None,
                arg_types: list[T.SwiftType]) -> Signature | None:
        """The signature a call of an overloaded name resolves to (trunk's rule, made
        deterministic): a user signature whose input types match exactly, else the one
        that matches with int -> float widening (two of them: ambiguous), else the
        builtin of that name if the arguments fit it.  A single user signature with no
        builtin is taken as is (its argument errors are reported by the binding)."""
        if len(users) == 1 and builtin is None:
            return users[0]
        exact = [u for u in users if self._fits(e, u, arg_types, exact=True)]
        if exact:
            return exact[0]
        widened = [u for u in users if self._fits(e, u, arg_types, exact=False)]
        if len(widened) == 1:
            return widened[0]
        if widened:
            self.error(e.pos, f"Ambiguous call {e.name}({_arg_text(e, arg_types)}): it "
                              "matches, with int widened to float, each of:\n\t"
                              + "\n\t".join(w.describe() for w in widened))
            return None
        if builtin is not None and self._builtin_fits(e, builtin, arg_types):
            return builtin[1]
        if len(users) == 1:
            return users[0]  # Swift 0.96: the user's procedure hides the builtin
        cands = users + ([builtin[1]] if builtin is not None else [])
        self.error(e.pos, f"No function or procedure {e.name} matches the argument types "
                          f"{e.name}({_arg_text(e, arg_types)}). Candidates:\n\t"
                          + "\n\t".join(c.describe() for c in cands))
        return None

    def _fits(self, e: ast.Call, sig: Signature, arg_types: list[T.SwiftType],
              exact: bool) -> bool:
        """Whether a call's arguments fit a user signature: count, keywords, types."""
        formals = list(sig.inputs)
        by_name = {f.name: f for f in formals}
        free = [f for f in formals if not f.optional] + [f for f in formals if f.optional]
        given: dict[str, T.SwiftType] = {}
        positional = [t for a, t in zip(e.args, arg_types) if a.name is None]
        for a, t in zip(e.args, arg_types):
            if a.name is not None:
                if a.name not in by_name or a.name in given:
                    return False
                given[a.name] = t
        free = [f for f in free if f.name not in given]
        if len(positional) > len(free):
            return False
        for f, t in zip(free, positional):
            given[f.name] = t
        if any(not f.optional and f.name not in given for f in formals):
            return False
        for name, t in given.items():
            ft = by_name[name].type
            if t.is_any or ft.is_any or (t == T.AUTO and ft == T.INT):
                continue
            if not (T.same_type(ft, t) if exact else T.assignable(ft, t)):
                return False
        return True

    def _builtin_fits(self, e: ast.Call, builtin: tuple[str, Signature],
                      arg_types: list[T.SwiftType]) -> bool:
        """Whether a call binds to the builtin without an error (tried silently)."""
        saved, self.errors = self.errors, []
        try:
            self._bind(e, builtin[1], arg_types, builtin[0])
            return not self.errors
        finally:
            self.errors = saved

    def _bind(self, e: ast.Call, sig: Signature, arg_types: list[T.SwiftType],
              canonical: str) -> None:
        formals = sig.inputs
        actual: dict[str, ast.Expr] = {}
        index: dict[str, int] = {}  # formal name -> position of a positional actual
        extra: list[ast.Expr] = []
        seen_kw = False
        positional = 0
        ok = True
        for a, _at in zip(e.args, arg_types):
            if a.name is None:
                if seen_kw:
                    self.error(a.pos, "positional argument after keyword arguments in call to "
                                      f"{e.name}")
                    ok = False
                    continue
                if positional < len(formals) and not (
                        sig.variadic and positional == len(formals) - 1):
                    actual[formals[positional].name] = a.value
                    index[formals[positional].name] = positional
                elif sig.variadic:
                    extra.append(a.value)
                positional += 1
            else:
                seen_kw = True
                if sig.kind == "builtin" and not any(f.keyword and f.name == a.name
                                                     for f in formals):
                    named = [f.name for f in formals if f.keyword]
                    takes = (f"takes {', '.join(named)} by keyword" if named
                             else "takes positional arguments")
                    self.error(a.pos, f"Illegal keyword argument: '{a.name}' (builtin "
                                      f"{e.name} {takes})")
                    ok = False
                    continue
                if a.name in actual:
                    self.error(a.pos, f"Duplicate parameter: '{a.name}'")
                    ok = False
                    continue
                if not any(f.name == a.name for f in formals):
                    self.error(a.pos, f"Formal argument {a.name} doesn't exist (procedure "
                                      f"{e.name})")
                    ok = False
                    continue
                actual[a.name] = a.value
        nfixed = len(formals) - (1 if sig.variadic else 0)
        given = len(e.args)
        missing = [f for f in formals[:nfixed] if f.name not in actual and not f.optional]
        too_many = positional > len(formals) and not sig.variadic
        if ok and (missing or too_many):
            what = ("function" if sig.kind == "builtin" and sig.builtin_kind == "function"
                    else "procedure")
            hint = ""
            if missing and sig.kind != "builtin":
                hint = f" (missing {', '.join(f.name for f in missing)})"
            self.error(e.pos, f"Wrong number of {what} input arguments: specified {given} "
                              f"and should be {nfixed}{hint}")
            ok = False
        # types
        if ok:
            for f in formals:
                av = actual.get(f.name)
                if av is None:
                    continue
                self._check_arg(e, f, av, sig, index.get(f.name))
            if sig.variadic:
                for av in extra:
                    self._check_arg(e, formals[-1], av, sig, None)
            if sig.kind == "builtin":
                self._check_alike(e, sig, actual)
        pairs = []
        for i, f in enumerate(formals):
            if sig.variadic and i == len(formals) - 1:
                v = actual.get(f.name)
                if v is not None:
                    extra.insert(0, v)
                break
            pairs.append((f, actual.get(f.name)))
        self.bindings[e] = Binding(sig, tuple(pairs), tuple(extra), canonical)

    def _check_arg(self, e: ast.Call, f: Param, a: ast.Expr, sig: Signature,
                   position: int | None) -> None:
        at = self.node_types.get(a, T.ANY)
        if at.is_any:
            return
        if sig.kind == "builtin":
            spec = f.spec
            ok = True
            if spec == "numeric":
                ok = at.is_numeric or at == T.AUTO
            elif spec == "any[]":
                ok = at.is_array
            elif spec == "string|file":
                ok = at == T.STRING or at.is_mapped
            elif spec == "boolean|int" and self.stdlib_v2 and sig.name == "assert":
                ok = at == T.BOOLEAN  # trunk's v2 assert
                spec = "boolean (the assert of stdlib.v2)"
            elif spec == "boolean|int":
                ok = at in (T.BOOLEAN, T.INT)
            elif spec == "scalar":
                ok = at in (T.INT, T.FLOAT, T.STRING, T.BOOLEAN)
            elif spec == "ordered":
                ok = at.is_numeric
            elif spec in _SPEC_TYPES and spec != "any":
                ok = T.assignable(_SPEC_TYPES[spec], at) or (at == T.AUTO and spec == "int")
            if not ok:
                n = sig.inputs.index(f) if position is None else position
                self.error(a.pos, f"Wrong type for parameter {n} of {e.name}; expected "
                                  f"{spec.replace('|', ' or ')}, got {at}")
            return
        if at == T.AUTO and f.type == T.INT:
            return
        if not T.assignable(f.type, at):
            where = (f"parameter number {position}" if position is not None
                     else f"parameter {f.name}")
            self.error(a.pos, f"Wrong type for {where}, expected {f.type}, got {at} "
                              f"(in call to {e.name})")


    def _check_alike(self, e: ast.Call, sig: Signature, actual: dict[str, ast.Expr]) -> None:
        """The ``scalar``/``ordered`` arguments of one builtin call are of one type (int
        widening to float): trunk declares ``assertEqual(int, int)``,
        ``assertEqual(float, float)``... and no mixed pair but int with float."""
        seen: list[tuple[int, T.SwiftType]] = []
        for n, f in enumerate(sig.inputs):
            a = actual.get(f.name)
            if f.spec not in ("scalar", "ordered") or a is None:
                continue
            at = self.node_types.get(a, T.ANY)
            if at.is_any:
                continue
            for m, other in seen:
                if not (T.same_type(at, other) or (at.is_numeric and other.is_numeric)):
                    self.error(a.pos, f"Wrong type for parameter {n} of {e.name}; expected "
                                      f"{other} like parameter {m}, got {at}")
                    return
            seen.append((n, at))


_INITIALIZERS = (ast.StructLiteral, ast.MapLiteral, ast.ArrayLiteral)
_LITERALS = (ast.IntLiteral, ast.FloatLiteral, ast.StringLiteral, ast.BoolLiteral)


def _constant(e: ast.Expr) -> bool:
    """What the engine can evaluate as a parameter's default, before any dataflow."""
    if isinstance(e, _LITERALS):
        return True
    if isinstance(e, ast.UnaryOp):
        return e.op in ("-", "+") and _constant(e.operand)
    if isinstance(e, ast.BinaryOp):
        return e.op == "+" and _constant(e.left) and _constant(e.right)
    return False


def _positional_types(sig: Signature) -> tuple[str, ...]:
    """The types of a signature's mandatory inputs: two declarations of one name with
    the same ones are a redefinition (trunk's FunctionsMap.checkAmbiguous)."""
    return tuple(str(p.type) for p in sig.inputs if not p.optional)


def _arg_text(e: ast.Call, arg_types: list[T.SwiftType]) -> str:
    return ", ".join((f"{a.name}=" if a.name else "") + str(t)
                     for a, t in zip(e.args, arg_types))


class _Nested:
    """Context manager: enter a compound statement (for writes_in) and maybe a branch."""

    __slots__ = ("c", "node", "branch", "saved")

    def __init__(self, c: Checker, node: ast.Node, branch: tuple | None) -> None:
        self.c = c
        self.node = node
        self.branch = branch

    def __enter__(self) -> None:
        self.c._stmt_stack.append(self.node)
        node = self.node
        self.c._kinds.append("C" if isinstance(node, (ast.If, ast.Switch)) else
                             "L" if isinstance(node, (ast.Foreach, ast.Iterate)) else "A")
        self.saved = self.c._branch
        if self.branch is not None:
            node, index = self.branch
            outer = self.c._branch
            self.c._branch = _Arm(node, index, outer, 1 if outer is None else outer.depth + 1)

    def __exit__(self, *exc: object) -> None:
        self.c._stmt_stack.pop()
        self.c._kinds.pop()
        self.c._branch = self.saved


def _type_text(te: ast.TypeExpr | None) -> str:
    if te is None:
        return ""
    return te.name + "".join(f"[{k.name if k else ''}]" for k in te.dims)


def _containment_cycle(start: T.StructType) -> list[tuple[T.StructType, str]] | None:
    """The fields leading from ``start`` back to it through structures (not arrays), or
    None.  Iterative: a chain of thousands of types must not exhaust the stack."""
    stack: list[tuple[T.StructType, list[tuple[T.StructType, str]]]] = [(start, [])]
    seen: set[int] = set()
    while stack:
        owner, path = stack.pop()
        for name, ft in owner.fields.items():
            if not isinstance(ft, T.StructType):
                continue
            step = path + [(owner, name)]
            if ft is start:
                return step
            if id(ft) not in seen:
                seen.add(id(ft))
                stack.append((ft, step))
    return None


def _same_type_decl(a: ast.TypeDecl, b: ast.TypeDecl) -> bool:
    """Identical re-declarations are harmless (the same ``type file;`` in two modules)."""
    mapped = ("mapped", "struct")
    if a.kind in mapped and b.kind in mapped and not a.fields and not b.fields:
        return True
    if a.kind != b.kind:
        return False
    if a.kind == "alias":
        return _type_text(a.alias_of) == _type_text(b.alias_of)
    fa = [(f.name, _type_text(f.type), len(f.dims)) for f in a.fields]
    fb = [(f.name, _type_text(f.type), len(f.dims)) for f in b.fields]
    return fa == fb


class _Arm(NamedTuple):
    """One if/switch arm around a statement, linked to the arms around it: nested arms
    share their outer part, so a statement 50,000 ``if``s deep costs one link, not a
    path of 50,000."""

    node: ast.Node
    index: int  # type: ignore[assignment]  # a field named as tuple.index; read by name
    outer: _Arm | None
    depth: int


def _exclusive(a: _Arm | None, b: _Arm | None) -> bool:
    """Are two statements in different arms of the same if/switch?  (Where their paths
    from the outermost arm first differ, they are two arms of one statement.)"""
    while a is not None and b is not None and a.depth > b.depth:
        a = a.outer
    while a is not None and b is not None and b.depth > a.depth:
        b = b.outer
    first: tuple[_Arm, _Arm] | None = None
    while a is not None and b is not None and a is not b:
        first = (a, b)
        a, b = a.outer, b.outer
    if first is None:
        return False
    x, y = first
    return x.node is y.node and x.index != y.index


def _lv_text(e: ast.Node) -> str:
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.Member):
        return f"{_lv_text(e.base)}.{e.field}"
    if isinstance(e, ast.Index):
        return f"{_lv_text(e.base)}[...]"
    if isinstance(e, ast.StarIndex):
        return f"{_lv_text(e.base)}[*]"
    if isinstance(e, ast.FilenameOf):
        return f"@{_lv_text(e.target)}"
    return "expression"


def check(program: ast.Program, sources: dict[str, str] | None = None,
          given: Iterable[ast.Node] = ()) -> CheckedProgram:
    """Check a (merged) program; raise :class:`CompileError` with every error found.
    ``given``: Declarator nodes of variables whose values come from outside (seeded)."""
    was_enabled = gc.isenabled()
    gc.disable()  # checking allocates tables that live as long as the program
    try:
        return run_deep(lambda: Checker(program, sources, given).check())
    except TooDeep:
        raise CompileError(Diagnostic(program.filename, 1, 1, TOO_DEEP)) from None
    finally:
        if was_enabled:
            gc.enable()


#: Said when a program nests deeper than the deep stack allows (about 30,000 levels).
TOO_DEEP = ("the program nests too deeply to be compiled (an expression or block nested "
            "tens of thousands of levels deep)")
