"""AST -> executable closures (see :mod:`swiftnb.engine.interp` for the execution model).

Name resolution, type spellings, writer counting for array closing and hoisting of
procedure calls out of expressions happen here, once per program.
"""

from __future__ import annotations

import math

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.runtime import Runtime
from swiftnb.engine.formatting import java_str, strcat_str
from swiftnb.engine.intops import int_const_op, java_idiv, java_rem
from swiftnb.engine.interp import (
    GLOBAL,
    AppendExec,
    AssignExec,
    AsyncBuiltinStmt,
    BlockExec,
    Exec,
    ExprStmt,
    IfExec,
    IndexAssignExec,
    MapExec,
    SwitchExec,
    INT_MAX,
    INT_MIN,
    wrap32,
    from_plain,
)
from swiftnb.engine.bulkloop import plan_bulk
from swiftnb.engine.loops import ForeachExec, IterateExec
from swiftnb.engine.scopes import LoweringError, Scope, Sym
from swiftnb.engine.typeinfo import TypeTable
from swiftnb.engine.values import (CLOSED, ArrayNode, Cell, Failed, Node, NotReady,
                                   StructNode, SwiftError, TypeInfo)
from swiftnb.lang import ast as A
from swiftnb.lang import types as T
from swiftnb.lang.checked import CheckedProgram
from swiftnb.lang.checker import TOO_DEEP
from swiftnb.lang.deepstack import TooDeep, run_deep

if TYPE_CHECKING:
    from swiftnb.engine.builtins.registry import Builtin

#: Nesting levels of one expression evaluated by one closure chain (see Compiler.expr).
SPLIT_DEPTH = 64


#: the values of trunk's library v2 constants (``import "stdlib.v2";``)
V2_CONSTANT_VALUES: dict[str, float] = {"PI": math.pi, "E": math.e}
_NO_KWARGS: dict[str, Any] = {}


def _builtin_lookup(name: str):
    try:
        from swiftnb.engine import builtins as _b  # noqa: F401  (registers the library)
        from swiftnb.engine.builtins.registry import lookup
    except ImportError:  # pragma: no cover - library not installed
        return None
    return lookup(name)


def root_name(e: A.Expr) -> str | None:
    while isinstance(e, (A.Index, A.Member, A.StarIndex)):
        e = e.base
    return e.name if isinstance(e, A.Name) else None


def slot_value(slot: int) -> Callable[[list], Any]:
    """The evaluator of a frame slot: its value once closed (the hot path of every name)."""

    def ev(f: list) -> Any:
        n = f[slot]
        if n.__class__ is Cell:
            if n.state == CLOSED:
                return n.value
            if n.state:
                raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
            raise NotReady(n)
        return n

    return ev


class Compiler:
    """Compiles one program for one run (closures refer to the run: ``rt``)."""

    def __init__(self, program: A.Program, rt: Runtime) -> None:
        self.program = program
        self.rt = rt
        self.types = TypeTable(program)
        self.procs: dict[str, A.Procedure] = {}
        for p in program.procedures:
            self.procs.setdefault(p.name, p)
        #: ``import "stdlib.v2";``: trunk's library v2 (constants, v2 assert)
        self.stdlib_v2 = any(i.path == "stdlib.v2" for i in program.imports)
        #: compiled procedures by declaration (overloads share a name)
        self.compiled_procs: dict[A.Procedure, Any] = {}
        self.top = Scope(None)
        self.top_frame: list = []
        self.warned: set[str] = set()
        #: expressions being compiled, outermost first (their nesting, for splitting)
        self.nesting = 0
        #: whether a deep expression may become hidden statements here (not where the
        #: block's hidden statements are already collected: mapper parameters)
        self.may_split = True
        #: warnings said while compiling on the deep-stack thread, said after it
        self._held: list[str] | None = None
        #: evaluators that read one slot of their own frame (a name at depth 0) -> that
        #: slot, so that the hot statements and operators read it without the call
        self.slot_of: dict[Callable, int] = {}
        #: node getters of a name one frame up (a loop body writing an array declared
        #: outside it) -> that slot
        self.outer_slot_of: dict[Callable, int] = {}

    # ------------------------------------------------------------------ entry

    def compile_program(self) -> BlockExec:
        """The program's top block, and every compound procedure's body.

        Compiled on a deep stack (:mod:`swiftnb.lang.deepstack`): the walk recurses with
        the program's nesting.  Procedures are compiled here, not at their first call,
        so that a deep body never compiles on the event loop's stack."""
        self._held = []
        was_enabled = gc.isenabled()
        gc.disable()  # compiling allocates closures that live as long as the run
        try:
            block = run_deep(self._compile_all)
        except TooDeep:
            raise LoweringError(TOO_DEEP, self.program.pos) from None
        finally:
            if was_enabled:
                gc.enable()
            held, self._held = self._held, None
            for msg in held:
                self.warn(msg)
        return block

    def _compile_all(self) -> BlockExec:
        block = self.block(self.program.statements, self.top, self.program.pos)
        try:
            for proc in self.program.procedures:
                if isinstance(proc, A.CompoundProcedure):
                    self.proc_info(proc).ensure()
        except LoweringError:
            # a procedure that does not compile fails at its first call, as before:
            # start again from procedures compiled lazily (none is half-made then)
            self.compiled_procs.clear()
            block = self.block(self.program.statements, Scope(None), self.program.pos)
            self.top = block.scope
        return block

    # ------------------------------------------------------------------ helpers

    def warn(self, msg: str) -> None:
        if self._held is not None:
            self._held.append(msg)
            return
        if msg not in self.warned:
            self.warned.add(msg)
            self.rt.warn(msg)

    def user_proc(self, call: A.Call) -> A.Procedure | None:
        """The user procedure a call runs: the checker's choice among overloads (a call
        may also resolve to the builtin of that name); None for a builtin."""
        proc = self.procs.get(call.name)
        if proc is None:
            return None
        checked = self.rt.checked
        if not isinstance(checked, CheckedProgram):
            return proc
        try:
            sig = checked.binding(call).signature
        except KeyError:  # a call the checker did not see (none today)
            return proc
        return sig.decl if sig.kind != "builtin" else None

    def lookup(self, scope: Scope, name: str, pos: A.Pos) -> tuple[Sym, int]:
        depth = 0
        s: Scope | None = scope
        while s is not None:
            sym = s.syms.get(name)
            if sym is not None:
                return sym, depth
            if s.proc:
                break
            s = s.parent
            depth += 1
        sym = self.top.syms.get(name)
        if sym is not None and sym.is_global:
            return sym, GLOBAL
        raise LoweringError(f"Variable {name} was not declared in this scope.", pos)

    def getter(self, depth: int, slot: int) -> Callable[[list], Any]:
        if depth == 0:
            return lambda f: f[slot]
        if depth == 1:
            return lambda f: f[0][slot]
        if depth == 2:
            return lambda f: f[0][0][slot]
        if depth == GLOBAL:
            top = self.top_frame
            return lambda f: top[slot]

        def get(f: list) -> Any:
            for _ in range(depth):
                f = f[0]
            return f[slot]

        return get

    def ltype_of(self, texpr: A.TypeExpr, dims: tuple = ()) -> T.SwiftType:
        return self.types.resolve(texpr, dims)

    def new_sym(self, name: str, ltype: T.SwiftType, pos: A.Pos, kind: str = "var") -> Sym:
        return Sym(name, ltype, self.types.info(ltype), pos, kind)

    # ------------------------------------------------------------------ blocks

    def block(self, stmts: tuple[A.Stmt, ...], scope: Scope, pos: A.Pos,
              post: Callable[[Scope], None] | None = None) -> BlockExec:
        # declarations first: dataflow order does not follow text order
        for st in stmts:
            if isinstance(st, A.VarDecl):
                for d in st.declarators:
                    if d.name in scope.syms:
                        raise LoweringError(f"Variable {d.name} was already defined", d.pos)
                    sym = self.new_sym(d.name, self.ltype_of(st.type, d.dims), d.pos)
                    sym.is_global = st.is_global
                    sym.mapping = d.mapping
                    scope.declare(sym)
                    scope.decls.append(sym)
            elif isinstance(st, A.MultiAssign):
                for t in st.targets:
                    if t.declared_type is not None and isinstance(t.target, A.Name):
                        sym = self.new_sym(t.target.name, self.ltype_of(t.declared_type), t.pos)
                        scope.declare(sym)
                        scope.decls.append(sym)
        execs: list[Exec] = []
        saved = scope.hidden
        scope.hidden = []
        for st in stmts:
            execs.extend(self.stmt(st, scope))
        if post is not None:
            post(scope)  # e.g. iterate's condition, which sees the body's variables
        execs = scope.hidden + execs
        scope.hidden = saved
        # mappings of declared variables: first, so that paths are known early
        maps = []
        for sym in list(scope.decls):
            if sym.mapping is not None:
                writers = sum(1 for e in execs if sym in e.writes)
                is_input = writers == 0
                maps.append(self.mapping(sym, scope, is_input))
        execs = maps + execs
        # writer counts for composites declared here
        for sym in scope.decls:
            if sym.composite:
                sym.nwriters = sum(1 for e in execs if sym in e.writes)
        # every statement holds the composites it may write (declared here or outside)
        # while it may still write them; compound statements hand their hold on to the
        # statements of the block they run, so an array closes as soon as its last
        # possible writer is done (not when the enclosing foreach/if has finished)
        decls = set(scope.decls)
        for e in execs:
            getters = []
            for sym in sorted(e.writes, key=lambda x: x.slot):
                if not sym.composite or sym.kind in ("loop", "iter"):
                    continue
                if sym in decls:
                    getters.append(self.getter(0, sym.slot))
                    continue
                try:
                    found, depth = self.lookup(scope, sym.name, pos)
                except LoweringError:
                    continue
                if found is sym:
                    getters.append(self.getter(depth, sym.slot))
            e.holds = tuple(getters)
        block = BlockExec(self.rt, pos, scope, execs)
        block.writes = set()
        for e in execs:
            block.writes |= e.writes
        block.writes -= set(scope.decls)
        return block

    def sub_block(self, b: A.Block, parent: Scope, pre: list[Sym] | None = None) -> BlockExec:
        scope = Scope(parent)
        for sym in pre or ():
            scope.declare(sym)
        return self.block(b.statements, scope, b.pos)

    def mapping(self, sym: Sym, scope: Scope, is_input: bool) -> Exec:
        m = sym.mapping
        assert m is not None
        self.may_split = False  # the block's hidden statements are collected already
        try:
            if m.mapper is None:
                name = "single_file_mapper"
                params = [("file", self.expr(m.source, scope))] if m.source is not None else []
            else:
                name = m.mapper
                params = [(p.name, self.expr(p.value, scope)) for p in m.params]
        finally:
            self.may_split = True
        ex = MapExec(self.rt, m.pos, sym, name, params, is_input)
        if sym.composite:
            # the mapping makes the keys of an input, and those of an output that its
            # mapper fixes: the array must not close before the mapping is bound, even
            # when every other writer (a foreach over it) has already let go
            ex.writes = {sym}
        return ex

    # ------------------------------------------------------------------ statements

    def stmt(self, st: A.Stmt, scope: Scope) -> list[Exec]:
        out = self._stmt(st, scope)
        if isinstance(st, (A.If, A.Switch, A.Foreach, A.Iterate)):
            for ex in out:
                fails = []
                for sym in ex.writes:
                    try:
                        found, depth = self.lookup(scope, sym.name, st.pos)
                    except LoweringError:
                        continue
                    if found is sym:
                        fails.append(self.getter(depth, sym.slot))
                ex.fails = tuple(fails)
        return out

    def _stmt(self, st: A.Stmt, scope: Scope) -> list[Exec]:
        if isinstance(st, A.VarDecl):
            out: list[Exec] = []
            for d in st.declarators:
                if d.init is not None:
                    out.append(self.assign(A.Name(d.pos, d.name), d.init, scope, d.pos))
            return out
        if isinstance(st, A.Assign):
            return [self.assign(st.target, st.value, scope, st.pos)]
        if isinstance(st, A.Append):
            # an append creates the sub-array it reaches through an index (`a[1] << v`)
            arr = self.node_expr(st.target, scope, create=True)
            ev = self.expr(st.value, scope)
            lt = self.static_type(st.target, scope)
            to_float = isinstance(lt, T.ArrayType) and lt.element == T.FLOAT
            ex: Exec = AppendExec(self.rt, st.pos, arr, ev, to_float)
            ex.writes = self.writes_of(st.target, scope)
            return [ex]
        if isinstance(st, A.CallStatement):
            return [self.call_stmt(st.call, [], scope, st.pos)]
        if isinstance(st, A.MultiAssign):
            return [self.multi(st, scope)]
        if isinstance(st, A.If):
            cond = self.expr(st.cond, scope)
            then = self.sub_block(st.then, scope)
            orelse = self.sub_block(st.orelse, scope) if st.orelse is not None else None
            ex = IfExec(self.rt, st.pos, cond, then, orelse)
            ex.writes = then.writes | (orelse.writes if orelse else set())
            return [ex]
        if isinstance(st, A.Switch):
            sel = self.expr(st.selector, scope)
            cases = []
            default = None
            writes: set[Sym] = set()
            for c in st.cases:
                blk = self.sub_block(c.body, scope)
                writes |= blk.writes
                if c.value is None:
                    default = blk
                else:
                    cases.append((self.expr(c.value, scope), blk))
            ex = SwitchExec(self.rt, st.pos, sel, cases, default)
            ex.writes = writes
            return [ex]
        if isinstance(st, A.Foreach):
            return [self.foreach(st, scope)]
        if isinstance(st, A.Iterate):
            vsym = self.new_sym(st.var, T.INT, st.pos, kind="iter")
            holder: list[Callable] = []
            bscope = Scope(scope)
            bscope.declare(vsym)
            body = self.block(st.body.statements, bscope, st.body.pos,
                              post=lambda sc: holder.append(self.expr(st.until, sc)))
            until = holder[0]
            ex = IterateExec(self.rt, st.pos, body, until, vsym.slot)
            ex.writes = set(body.writes)
            return [ex]
        if isinstance(st, A.Block):
            blk = self.sub_block(st, scope)
            ex = IfExec(self.rt, st.pos, lambda f: True, blk, None)
            ex.writes = set(blk.writes)
            return [ex]
        raise LoweringError(f"unsupported statement {type(st).__name__}", st.pos)

    def foreach(self, st: A.Foreach, scope: Scope) -> Exec:
        it = st.iterable
        rng = None
        iterable = None
        if isinstance(it, A.Range):
            start = self.expr(it.start, scope)
            stop = self.expr(it.stop, scope)
            step = self.expr(it.step, scope) if it.step is not None else None
            rng = (start, stop, step)
            lt = self.static_type(it.start, scope)
            vtype: T.SwiftType = T.FLOAT if lt == T.FLOAT else T.INT
            ktype: T.SwiftType = T.INT
        else:
            iterable = self.expr(it, scope)
            at = self.static_type(it, scope)
            if isinstance(at, T.ArrayType):
                vtype, ktype = at.element, at.index_type
            else:
                vtype, ktype = T.ANY, T.INT
        vsym = self.new_sym(st.var, vtype, st.pos, kind="loop")
        if not isinstance(it, A.Range) and root_name(it) is not None:
            try:
                vsym.alias, _ = self.lookup(scope, root_name(it), it.pos)  # type: ignore[arg-type]  # root_name(it) checked above
            except LoweringError:
                pass
        pre = [vsym]
        ksym = None
        if st.index is not None:
            ksym = self.new_sym(st.index, ktype, st.pos, kind="loop")
            pre.append(ksym)
        body = self.sub_block(st.body, scope, pre)
        ex = ForeachExec(self.rt, st.pos, body, vsym.slot, ksym.slot if ksym else 0,
                         iterable, rng)
        ex.writes = set(body.writes)
        rn = root_name(it) if not isinstance(it, A.Range) else None
        if rn is not None:
            try:
                sym, _ = self.lookup(scope, rn, it.pos)
                if sym in ex.writes:
                    ex.self_ref = True
            except LoweringError:
                pass
        ex.bulk = plan_bulk(self, st, body, ex.self_ref)
        return ex

    def writes_of(self, target: A.Expr, scope: Scope) -> set[Sym]:
        rn = root_name(target)
        if rn is None:
            return set()
        sym, _ = self.lookup(scope, rn, target.pos)
        while sym.alias is not None:
            sym = sym.alias
        return {sym}

    def assign(self, target: A.Expr, value: A.Expr, scope: Scope, pos: A.Pos) -> Exec:
        if isinstance(value, A.Call) and self.user_proc(value) is not None:
            return self.call_stmt(value, [(target, None)], scope, pos)
        tt = self.static_type(target, scope)
        writes = self.writes_of(target, scope)
        if isinstance(value, A.Call):
            b = _builtin_lookup(value.name)
            if b is not None and b.is_async:
                # its own statement, straight into the target (self.expr would add a
                # hidden one: the builtin, e.g. system's command, would run twice)
                ex: Exec = self.async_builtin(value, scope, b,
                                        self.node_expr(target, scope, create=True),
                                        return_type=tt)
                ex.writes = writes
                return ex
        ev = self.expr(value, scope, return_type=tt)
        lv = self.node_expr(target, scope, create=True)
        if (isinstance(target, A.Index) and isinstance(tt, T.PrimitiveType)
                and not isinstance(value, A.Call)):
            arr = self.node_expr(target.base, scope, create=True)
            key = self.expr(target.index, scope)
            ex = IndexAssignExec(self.rt, pos, arr, key, ev, tt == T.FLOAT, lv,
                                 key_slot=self.slot_of.get(key, 0),
                                 arr_outer_slot=self.outer_slot_of.get(arr, 0))
        else:
            # builtins that need the target (readData's type, writeData's file)
            if isinstance(value, A.Call) and self.user_proc(value) is None:
                b = _builtin_lookup(value.name)
                if b is not None and b.needs_return_file:
                    ev = self.builtin_call(value, scope, b, return_type=tt, target=lv)
            ex = AssignExec(self.rt, pos, lv, ev, tt == T.FLOAT)
        ex.writes = writes
        return ex

    def multi(self, st: A.MultiAssign, scope: Scope) -> Exec:
        proc = self.user_proc(st.call)
        if proc is None:
            raise LoweringError(f"No function or procedure '{st.call.name}' found.", st.pos)
        outs: list[tuple[A.Expr, str | None]] = []
        for t in st.targets:
            outs.append((t.target, t.formal))
        return self.call_stmt(st.call, outs, scope, st.pos)

    def call_stmt(self, call: A.Call, outs: list[tuple[A.Expr, str | None]], scope: Scope,
                  pos: A.Pos) -> Exec:
        proc = self.user_proc(call)
        if proc is not None:
            from swiftnb.engine.procedures import CallExec

            info = self.proc_info(proc)
            # outputs: by position, or by formal name
            out_lvs: list[Callable | None] = [None] * len(proc.outputs)
            writes: set[Sym] = set()
            pos_i = 0
            for target, formal in outs:
                if formal is not None:
                    idx = next((i for i, f in enumerate(proc.outputs) if f.name == formal), None)
                    if idx is None:
                        raise LoweringError(f"procedure {proc.name} has no output {formal}", pos)
                else:
                    idx = pos_i
                    pos_i += 1
                if idx >= len(proc.outputs):
                    raise LoweringError(
                        f"Wrong number of procedure output arguments for {proc.name}", pos)
                out_lvs[idx] = self.node_expr(target, scope, create=True)
                writes |= self.writes_of(target, scope)
            ins = self.bind_inputs(proc, call, scope, pos)
            if call.at_syntax:
                self.warn("The @ syntax for function invocation is deprecated")
            ex = CallExec(self.rt, pos, info, out_lvs, ins)
            ex.writes = writes
            return ex
        b = _builtin_lookup(call.name)
        if b is None:
            raise LoweringError(f"No function or procedure '{call.name}' found.", pos)
        if b.is_async:
            return self.async_builtin(call, scope, b, None)
        ev = self.builtin_call(call, scope, b)
        stmt = ExprStmt(self.rt, pos, ev)
        if call.name == "trace":
            stmt.on_failed = self._trace_failed
        return stmt

    def _trace_failed(self, err: SwiftError) -> None:
        """Swift 0.96: a trace with an argument in an error state prints the exception
        instead of the values (reference 2.1); we print it on one line: the error's first
        line and, for an app failure, its ``Caused by:`` reason."""
        lines = (err.message or "").split("\n")
        text = lines[0]
        cause = next((ln for ln in lines[1:] if ln.startswith("Caused by: ")), None)
        if cause is not None:
            text = f"{text} {cause[len('Caused by: '):]}"
        line = f"SwiftScript trace: {text}"
        ctx = self.rt.ctx
        ctx.write_stdout(line + "\n")
        ctx.emit("TRACE", None, line)

    def bind_inputs(self, proc: A.Procedure, call: A.Call, scope: Scope,
                    pos: A.Pos) -> list[Any]:
        """One entry per input formal: ("node", fn) passing a node without waiting,
        ("value", fn) an expression, ("const", v) a default."""
        from swiftnb.engine.procedures import const_value

        slots: list[Any] = [None] * len(proc.inputs)
        names = {f.name: i for i, f in enumerate(proc.inputs)}
        positional = [a for a in call.args if a.name is None]
        keyword = [a for a in call.args if a.name is not None]
        # positional args fill the mandatory formals first (0.96 allowed an optional
        # formal before a mandatory one, bound by keyword)
        mandatory = [i for i, f in enumerate(proc.inputs) if f.default is None]
        order = mandatory + [i for i, f in enumerate(proc.inputs) if f.default is not None]
        if len(positional) > len(proc.inputs):
            raise LoweringError(
                f"Wrong number of procedure input arguments: specified {len(call.args)} "
                f"and should be {len(proc.inputs)}", pos)
        kw_used = {a.name for a in keyword}
        free = [i for i in order if proc.inputs[i].name not in kw_used]
        for a, i in zip(positional, free):
            slots[i] = self.arg_binding(a.value, proc.inputs[i], scope)
        for a in keyword:
            ki = names.get(a.name or "")  # (keyword arguments have a name)
            if ki is None:
                raise LoweringError(f"Illegal keyword argument: '{a.name}'", a.pos)
            slots[ki] = self.arg_binding(a.value, proc.inputs[ki], scope)
        for i, f in enumerate(proc.inputs):
            if slots[i] is None:
                if f.default is None:
                    raise LoweringError(
                        f"Wrong number of procedure input arguments: specified "
                        f"{len(call.args)} and should be {len(proc.inputs)}", pos)
                ft = self.ltype_of(f.type, f.dims)
                v = const_value(f.default)
                if ft == T.FLOAT and isinstance(v, int):
                    v = float(v)
                slots[i] = ("const", v)
        return slots

    def arg_binding(self, e: A.Expr, formal: A.Formal, scope: Scope) -> Any:
        ft = self.ltype_of(formal.type, formal.dims)
        if isinstance(e, (A.Name, A.Index, A.Member)) and not (
            ft == T.FLOAT and self.static_type(e, scope) == T.INT
        ):
            return ("node", self.node_expr(e, scope))
        ev = self.expr(e, scope)
        return ("value", ev, ft == T.FLOAT)

    def proc_info(self, proc: A.Procedure) -> Any:
        info = self.compiled_procs.get(proc)
        if info is None:
            from swiftnb.engine.procedures import ProcInfo

            info = ProcInfo(self, proc)
            self.compiled_procs[proc] = info
        return info

    # ------------------------------------------------------------------ types

    def static_type(self, e: A.Expr, scope: Scope) -> T.SwiftType:
        """A light static type (the checker's job; good enough to pick fast paths)."""
        try:
            if isinstance(e, A.Name):
                sym, _ = self.lookup(scope, e.name, e.pos)
                return sym.ltype
            if isinstance(e, A.Index):
                bt = self.static_type(e.base, scope)
                return bt.element if isinstance(bt, T.ArrayType) else T.ANY
            if isinstance(e, A.Member):
                bt = self.static_type(e.base, scope)
                if isinstance(bt, T.StructType):
                    return bt.fields.get(e.field, T.ANY)
                if isinstance(bt, T.ArrayType) and isinstance(bt.element, T.StructType):
                    return T.ArrayType(bt.element.fields.get(e.field, T.ANY), bt.key)
                return T.ANY
            if isinstance(e, A.IntLiteral):
                return T.INT
            if isinstance(e, A.FloatLiteral):
                return T.FLOAT
            if isinstance(e, A.StringLiteral):
                return T.STRING
            if isinstance(e, A.BoolLiteral):
                return T.BOOLEAN
            if isinstance(e, A.BinaryOp):
                if e.op in ("==", "!=", "<", ">", "<=", ">=", "&&", "||"):
                    return T.BOOLEAN
                if e.op == "/":
                    return T.FLOAT
                lt = self.static_type(e.left, scope)
                rt = self.static_type(e.right, scope)
                if e.op == "+" and (lt == T.STRING or rt == T.STRING):
                    return T.STRING
                if lt == T.INT and rt == T.INT:
                    return T.INT
                if lt in (T.INT, T.FLOAT) and rt in (T.INT, T.FLOAT):
                    return T.FLOAT
                return T.ANY
            if isinstance(e, A.UnaryOp):
                return T.BOOLEAN if e.op == "!" else self.static_type(e.operand, scope)
            p = self.user_proc(e) if isinstance(e, A.Call) else None
            if p is not None:
                if p.outputs:
                    return self.ltype_of(p.outputs[0].type, p.outputs[0].dims)
        except LoweringError:
            pass
        return T.ANY

    # ------------------------------------------------------------------ expressions

    def expr(self, e: A.Expr, scope: Scope, return_type: T.SwiftType | None = None) -> Callable:
        """The evaluator of ``e``.  Every SPLIT_DEPTH levels of nesting, a sub-expression
        of primitive type becomes a hidden statement writing a temporary, so evaluating
        any expression recurses at most SPLIT_DEPTH closures deep at run time (a
        generated 5,000-term sum evaluates as about 80 chained assignments)."""
        self.nesting += 1
        try:
            if self.nesting % SPLIT_DEPTH == 0 and self.may_split:
                t = self._split_type(e)
                if t is not None:
                    return self._split(e, scope, t, return_type)
            return self._expr(e, scope, return_type)
        finally:
            self.nesting -= 1

    def _split_type(self, e: A.Expr) -> T.SwiftType | None:
        """The type of ``e`` if it may be evaluated by a statement of its own: an
        operation (not a leaf) with a primitive result the checker has recorded."""
        if not isinstance(e, (A.BinaryOp, A.UnaryOp, A.Call, A.Index)):
            return None
        if isinstance(e, A.Call) and self.user_proc(e) is not None:
            return None  # hoisted anyway
        checked = self.rt.checked
        if not isinstance(checked, CheckedProgram):
            return None
        try:
            t = checked.type_of(e)
        except KeyError:
            return None
        return t if t in (T.INT, T.FLOAT, T.STRING, T.BOOLEAN) else None

    def _split(self, e: A.Expr, scope: Scope, t: T.SwiftType,
               return_type: T.SwiftType | None) -> Callable:
        tmp = scope.temp(t, self.types.info(t), e.pos)
        ev = self._expr(e, scope, return_type)
        ex = AssignExec(self.rt, e.pos, lambda f, _s=tmp.slot: f[_s], ev, t == T.FLOAT)
        ex.writes = {tmp}
        scope.hidden.append(ex)
        return slot_value(tmp.slot)

    def _expr(self, e: A.Expr, scope: Scope, return_type: T.SwiftType | None) -> Callable:
        m = getattr(self, "x_" + type(e).__name__, None)
        if m is None:
            raise LoweringError(f"unsupported expression {type(e).__name__}", e.pos)
        if isinstance(e, A.Call):
            return self.x_Call(e, scope, return_type)
        return m(e, scope)

    def x_IntLiteral(self, e: A.IntLiteral, scope: Scope) -> Callable:
        v = e.value
        return lambda f: v

    x_FloatLiteral = x_IntLiteral
    x_StringLiteral = x_IntLiteral
    x_BoolLiteral = x_IntLiteral

    def x_Name(self, e: A.Name, scope: Scope) -> Callable:
        if self.stdlib_v2 and e.name in V2_CONSTANT_VALUES:
            try:
                self.lookup(scope, e.name, e.pos)
            except LoweringError:  # not a variable of the script: trunk's constant
                value = V2_CONSTANT_VALUES[e.name]
                return lambda f: value
        sym, depth = self.lookup(scope, e.name, e.pos)
        slot = sym.slot
        if depth == 0:
            ev = slot_value(slot)
            self.slot_of[ev] = slot
            return ev
        get = self.getter(depth, slot)

        def ev2(f: list) -> Any:
            n = get(f)
            if n.__class__ is Cell:
                if n.state == CLOSED:
                    return n.value
                if n.state:
                    raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
                raise NotReady(n)
            return n

        return ev2

    def x_Index(self, e: A.Index, scope: Scope) -> Callable:
        base = self.node_expr(e.base, scope)
        idx = self.expr(e.index, scope)

        def ev(f: list) -> Any:
            a = base(f)
            k = idx(f)
            if a.__class__ is ArrayNode:
                n = a.lookup(k)
            elif isinstance(a, dict):
                if k not in a:
                    raise SwiftError(f"Invalid index [{k}]")
                return a[k]
            else:
                if isinstance(a, Node) and a.state == V.FAILED:
                    raise Failed(a.error)  # type: ignore[arg-type]  # FAILED: its error is set
                raise SwiftError("indexing a value that is not an array")
            if n.__class__ is Cell:
                if n.state == CLOSED:
                    return n.value
                if n.state:
                    raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
                raise NotReady(n)
            return n

        return ev

    def x_Member(self, e: A.Member, scope: Scope) -> Callable:
        node = self.node_expr(e, scope)

        def ev(f: list) -> Any:
            n = node(f)
            if n.__class__ is Cell:
                if n.state == CLOSED:
                    return n.value
                if n.state:
                    raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
                raise NotReady(n)
            return n

        return ev

    x_StarIndex = x_Member

    def node_expr(self, e: A.Expr, scope: Scope, create: bool = False) -> Callable:
        """An lvalue-like expression as a function returning its *node* (no waiting
        for the node to close; waits only for indices and keys)."""
        if isinstance(e, A.Name):
            sym, depth = self.lookup(scope, e.name, e.pos)
            get = self.getter(depth, sym.slot)
            if sym.kind in ("loop", "iter"):
                def ev(f: list) -> Any:
                    v = get(f)
                    return v if isinstance(v, Node) else V.closed_cell(v)
                return ev
            if sym.formal and sym.tinfo.kind in ("array", "struct", "file"):
                def evf(f: list) -> Any:
                    n = get(f)
                    if n.__class__ is Cell:
                        # an argument that was not ready at the call (``f(a[i])`` before
                        # a[i] exists): the cell that receives it; wait for it
                        if n.state == CLOSED:
                            return n.value
                        if n.state:
                            raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
                        raise NotReady(n)
                    return n
                return evf
            if depth == 1:
                self.outer_slot_of[get] = sym.slot
            return get
        if isinstance(e, A.Index):
            base = self.node_expr(e.base, scope, create)
            idx = self.expr(e.index, scope)
            if create:
                def evc(f: list) -> Any:
                    a = base(f)
                    k = idx(f)
                    if a.__class__ is not ArrayNode:
                        if isinstance(a, Node) and a.state == V.FAILED:
                            raise Failed(a.error)  # type: ignore[arg-type]  # FAILED: its error is set
                        raise SwiftError("indexing a value that is not an array")
                    n = a.items.get(k)
                    return n if n.__class__ is not int and isinstance(n, Node) else a.element(k)
                return evc

            def evr(f: list) -> Any:
                a = base(f)
                k = idx(f)
                if isinstance(a, dict):
                    a = from_plain(a)
                if a.__class__ is not ArrayNode:
                    if isinstance(a, Node) and a.state == V.FAILED:
                        raise Failed(a.error)  # type: ignore[arg-type]  # FAILED: its error is set
                    raise SwiftError("indexing a value that is not an array")
                n = a.lookup(k)
                return n if isinstance(n, Node) else V.closed_cell(n)
            return evr
        if isinstance(e, (A.Member, A.StarIndex)):
            base = self.node_expr(e.base, scope, create)
            if isinstance(e, A.StarIndex):
                return base
            field = e.field

            def evm(f: list) -> Any:
                b = base(f)
                if b.__class__ is StructNode:
                    n = b.fields.get(field)
                    if n is None:
                        raise SwiftError(f"{b.name} has no member {field}")
                    return n
                if b.__class__ is ArrayNode:
                    return _slice(b, field)
                if isinstance(b, D.StructValue):
                    return from_plain(b.fields.get(field))
                if isinstance(b, Node) and b.state == V.FAILED:
                    raise Failed(b.error)  # type: ignore[arg-type]  # FAILED: its error is set
                raise SwiftError(f"no member {field}")
            return evm
        # any other expression: its value, as a node
        ev = self.expr(e, scope)

        def evx(f: list) -> Any:
            v = ev(f)
            if isinstance(v, Node):
                return v
            if isinstance(v, (dict, D.StructValue, D.FileValue)):
                return from_plain(v)
            return V.closed_cell(v)
        return evx

    def x_BinaryOp(self, e: A.BinaryOp, scope: Scope) -> Callable:
        l = self.expr(e.left, scope)
        r = self.expr(e.right, scope)
        op = e.op
        if isinstance(e.right, A.IntLiteral) and op in ("+", "-", "*", "%%"):
            fast = int_const_op(op, l, e.right.value, self.slot_of.get(l, 0))
            if fast is not None:
                return fast
        if op == "+":
            def add(f: list) -> Any:
                a = l(f)
                b = r(f)
                if a.__class__ is str or b.__class__ is str:
                    return strcat_str(_prim(a)) + strcat_str(_prim(b))
                x = a + b
                if x.__class__ is int and (x > INT_MAX or x < INT_MIN):
                    return wrap32(x)
                return x
            return add
        if op == "-":
            def sub(f: list) -> Any:
                x = l(f) - r(f)
                if x.__class__ is int and (x > INT_MAX or x < INT_MIN):
                    return wrap32(x)
                return x
            return sub
        if op == "*":
            def mul(f: list) -> Any:
                x = l(f) * r(f)
                if x.__class__ is int and (x > INT_MAX or x < INT_MIN):
                    return wrap32(x)
                return x
            return mul
        if op == "/":
            def div(f: list) -> Any:
                a = l(f)
                b = r(f)
                if b == 0:
                    a = float(a)
                    if a != a or a == 0:
                        return float("nan")
                    return float("inf") if (a > 0) == (str(float(b))[0] != "-") else float("-inf")
                return a / b
            return div
        if op == "%/":
            return lambda f: java_idiv(l(f), r(f))
        if op == "%%":
            return lambda f: java_rem(l(f), r(f))
        import operator
        fn = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, ">": operator.gt,
              "<=": operator.le, ">=": operator.ge}.get(op)
        if fn is not None:
            return lambda f: fn(l(f), r(f))
        if op == "&&":
            def land(f: list) -> Any:
                a = l(f)
                b = r(f)
                return bool(a and b)
            return land
        if op == "||":
            def lor(f: list) -> Any:
                a = l(f)
                b = r(f)
                return bool(a or b)
            return lor
        raise LoweringError(f"unknown operator {op}", e.pos)

    def x_UnaryOp(self, e: A.UnaryOp, scope: Scope) -> Callable:
        o = self.expr(e.operand, scope)
        if e.op == "-":
            def neg(f: list) -> Any:
                x = -o(f)
                if x.__class__ is int and x > INT_MAX:
                    return wrap32(x)
                return x
            return neg
        if e.op == "!":
            return lambda f: not o(f)
        return o

    def x_FilenameOf(self, e: A.FilenameOf, scope: Scope) -> Callable:
        node = self.node_expr(e.target, scope)
        rt = self.rt
        return lambda f: rt.filename_of(node(f))

    def x_ArrayLiteral(self, e: A.ArrayLiteral, scope: Scope) -> Callable:
        items = [self.expr(x, scope) for x in e.items]

        def ev(f: list) -> Any:
            vals = [it(f) for it in items]
            arr = ArrayNode(_LIT_ARRAY)
            for i, v in enumerate(vals):
                if isinstance(v, Node):
                    arr.put(i, v)
                elif isinstance(v, (dict, D.StructValue, D.FileValue)):
                    arr.put(i, from_plain(v))
                else:
                    arr.set_value(i, v)
            arr.close()
            return arr

        return ev

    def literal_type(self, e: A.Expr) -> T.SwiftType:
        """The type the checker gave an initializer (from its context)."""
        checked = self.rt.checked
        if not isinstance(checked, CheckedProgram):
            raise LoweringError("an initializer needs a checked program", e.pos)
        return checked.type_of(e)

    def arg_types(self, e: A.Call) -> list[D.SwiftType | None]:
        """The checker's types of a builtin call's positional arguments, as data types
        (None where it has none)."""
        checked = self.rt.checked
        out: list[D.SwiftType | None] = []
        for a in e.args:
            if a.name is not None:
                continue
            t = checked.type_of(a.value) if isinstance(checked, CheckedProgram) else T.ANY
            out.append(None if t.is_any else D.as_data_type(t))
        return out

    def x_StructLiteral(self, e: A.StructLiteral, scope: Scope) -> Callable:
        st = self.literal_type(e)
        if not isinstance(st, T.StructType):
            raise LoweringError("cannot infer the type of this structure initializer", e.pos)
        tinfo = self.types.info(st)
        fields = [(fi.name, self.expr(fi.value, scope), st.fields[fi.name] == T.FLOAT)
                  for fi in e.fields]

        def ev(f: list) -> Any:
            vals = [(name, it(f), to_float) for name, it, to_float in fields]
            node = StructNode(tinfo)
            for name, v, to_float in vals:
                if isinstance(v, Node):
                    node.put(name, v)
                elif isinstance(v, (dict, D.StructValue, D.FileValue)):
                    node.put(name, from_plain(v))
                else:
                    node.fields[name].set(  # type: ignore[attr-defined]  # a primitive field: a Cell
                        float(v) if to_float and v.__class__ is int else v)
            node.close()
            return node

        return ev

    def x_MapLiteral(self, e: A.MapLiteral, scope: Scope) -> Callable:
        at = self.literal_type(e)
        to_float = isinstance(at, T.ArrayType) and at.element == T.FLOAT
        float_keys = isinstance(at, T.ArrayType) and at.key == T.FLOAT
        entries = [(self.expr(k, scope), self.expr(v, scope)) for k, v in e.entries]

        def ev(f: list) -> Any:
            vals = [(k(f), v(f)) for k, v in entries]
            arr = ArrayNode(_LIT_ARRAY)
            for k, v in vals:
                if float_keys and k.__class__ is int:
                    k = float(k)
                if k in arr.items:
                    raise SwiftError(f"the array initializer gives the key {java_str(k)} "
                                     "twice")
                if isinstance(v, Node):
                    arr.put(k, v)
                elif isinstance(v, (dict, D.StructValue, D.FileValue)):
                    arr.put(k, from_plain(v))
                else:
                    arr.set_value(k, float(v) if to_float and v.__class__ is int else v)
            arr.close()
            return arr

        return ev

    def x_Range(self, e: A.Range, scope: Scope) -> Callable:
        from swiftnb.engine.loops import range_items

        start = self.expr(e.start, scope)
        stop = self.expr(e.stop, scope)
        step = self.expr(e.step, scope) if e.step is not None else None

        def ev(f: list) -> Any:
            items = range_items(start(f), stop(f), step(f) if step else None)
            arr = ArrayNode(_LIT_ARRAY)
            for k, v in items:
                arr.set_value(k, v)
            arr.close()
            return arr

        return ev

    def x_Call(self, e: A.Call, scope: Scope, return_type: T.SwiftType | None = None) -> Callable:
        proc = self.user_proc(e)
        if proc is not None:
            # hoist: tmp = p(args); the expression reads tmp
            if len(proc.outputs) != 1:
                raise LoweringError(
                    f"procedure '{e.name}' must have exactly one return value to be used "
                    f"in an expression.", e.pos)
            ot = self.ltype_of(proc.outputs[0].type, proc.outputs[0].dims)
            tmp = scope.temp(ot, self.types.info(ot), e.pos)
            ex = self.call_stmt(e, [], scope, e.pos)
            # patch the output binding to the temp
            ex.outs[0] = lambda f, _s=tmp.slot: f[_s]  # type: ignore[attr-defined]  # a call statement: a CallExec
            ex.writes = {tmp}
            scope.hidden.append(ex)
            return slot_value(tmp.slot)
        b = _builtin_lookup(e.name)
        if b is None:
            raise LoweringError(f"No function or procedure '{e.name}' found.", e.pos)
        if b.is_async:
            tmp = scope.temp(return_type or T.STRING, self.types.info(return_type or T.STRING), e.pos)
            ex = self.async_builtin(e, scope, b, lambda f, _s=tmp.slot: f[_s],
                                    return_type=return_type)
            ex.writes = {tmp}
            scope.hidden.append(ex)
            return slot_value(tmp.slot)
        return self.builtin_call(e, scope, b, return_type=return_type)

    def return_dtype(self, e: A.Call, b: Builtin,
                     return_type: T.SwiftType | None) -> D.SwiftType | None:
        """The data type a builtin registered with ``needs_return_type`` (readData)
        produces: the target's type, else the checker's, else string."""
        if not b.needs_return_type:
            return None
        rtype = return_type
        if rtype is None or rtype.is_any:
            checked = self.rt.checked
            try:
                rtype = checked.type_of(e) if isinstance(checked, CheckedProgram) else None
            except KeyError:  # the checker recorded no type for it
                rtype = None
        if rtype is None or rtype.is_any:
            rtype = T.STRING  # our choice: an untyped readData reads the text
        return D.as_data_type(rtype)

    def async_builtin(self, e: A.Call, scope: Scope, b: Builtin, target: Callable | None,
                      return_type: T.SwiftType | None = None) -> AsyncBuiltinStmt:
        """A builtin that waits (``system``; readData and the other file readers, which
        must not block the loop) as a statement of its own, warned about and typed as
        a direct call is."""
        if e.at_syntax:
            self.warn("The @ syntax for function invocation is deprecated")
        if b.deprecated:
            self.warn(b.deprecated)
        import os

        args = [self.expr(a.value, scope) for a in e.args]
        where = f"{b.name} @ {os.path.basename(e.pos.file)}, line: {e.pos.line}"
        return AsyncBuiltinStmt(self.rt, e.pos, b, args, target,
                                self.return_dtype(e, b, return_type), where)

    def builtin_call(self, e: A.Call, scope: Scope, b: Builtin,
                     return_type: T.SwiftType | None = None, target: Callable | None = None) -> Callable:
        if e.at_syntax:
            self.warn("The @ syntax for function invocation is deprecated")
        if b.deprecated:
            self.warn(b.deprecated)
        rt = self.rt
        fn = b.fn
        name = b.alias_of or b.name
        import os as _os

        where = f"{b.name} @ {_os.path.basename(e.pos.file)}, line: {e.pos.line}"
        if name == "length" and len(e.args) == 1:
            node = self.node_expr(e.args[0].value, scope)

            def length(f: list) -> Any:
                a = node(f)
                if a.__class__ is ArrayNode:
                    if not a.closed:
                        if a.state == V.FAILED:
                            raise Failed(a.error)  # type: ignore[arg-type]  # FAILED: its error is set
                        raise NotReady(a, keys=True)
                    return len(a.items)
                if a.__class__ is Cell:
                    return fn(rt.ctx, a.get())
                return fn(rt.ctx, rt.plain(a))
            return length
        if b.waits == "mapping" and e.args:
            first = self.node_expr(e.args[0].value, scope)
            rest = [self.expr(a.value, scope) for a in e.args[1:]]

            def mapped_call(f: list) -> Any:
                n = first(f)
                args = [rt.mapping_data(n)] + [rt.plain(a(f)) for a in rest]
                try:
                    return fn(rt.ctx, *args)
                except D.BuiltinError as err:
                    raise SwiftError(err.message, where=where) from None
            return mapped_call
        if name == "assert" and self.stdlib_v2:
            from swiftnb.engine.builtins.v2 import assert_v2 as fn
        args = [self.expr(a.value, scope) for a in e.args if a.name is None]
        kwargs = {a.name: self.expr(a.value, scope) for a in e.args if a.name is not None}
        dtype = self.return_dtype(e, b, return_type)
        arg_names = [a.value.name if isinstance(a.value, A.Name) else None for a in e.args]
        arg_types = self.arg_types(e) if b.needs_arg_types else None
        plain = rt.plain
        ctx = rt.ctx
        line = e.pos.line

        def call(f: list) -> Any:
            vals = [plain(a(f)) for a in args]
            kw = {k: plain(a(f)) for k, a in kwargs.items()} if kwargs else _NO_KWARGS
            ctx.return_type = dtype
            if arg_types is not None:
                ctx.arg_types = arg_types
            ctx.arg_names = arg_names
            ctx.line = line
            if target is not None:
                ctx.return_file = rt.mapping_data(target(f))
            try:
                return fn(ctx, *vals, **kw)
            except D.BuiltinError as err:
                raise SwiftError(err.message, where=where,
                                 fatal=isinstance(err, D.AssertionFailed)) from None

        return call


def _prim(v: Any) -> Any:
    if isinstance(v, Node):
        raise SwiftError("cannot use a composite value here")
    return v


def _slice(arr: ArrayNode, field: str) -> ArrayNode:
    """``a.f`` for an array of structs: the array of the members, with the same keys."""
    if not arr.closed:
        if arr.state == V.FAILED:
            raise Failed(arr.error)  # type: ignore[arg-type]  # FAILED: its error is set
        raise NotReady(arr, keys=True)
    elem = arr.tinfo.elem
    fti = elem.fields.get(field) if elem is not None and elem.kind == "struct" else None
    out = ArrayNode(TypeInfo("slice", "array", elem=fti or _LIT_ARRAY.elem))
    for k in arr.sorted_keys():
        s = arr.items[k]
        if isinstance(s, StructNode) and field in s.fields:
            out.put(k, s.fields[field])
    out.close()
    return out


_LIT_ARRAY = TypeInfo("any[]", "array", elem=TypeInfo("any", "prim"))
