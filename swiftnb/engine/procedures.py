"""Procedure calls: compound procedures (a body run on the caller's nodes) and app
procedures (a command line run by the executor as a :class:`~swiftnb.engine.task.Task`).

A compound call binds its formal inputs to the caller's nodes without waiting for them
and its formal outputs to the caller's target nodes, so outputs become available to the
caller as soon as the body assigns them (Guide 2.5).  An app call waits for every input
to be closed (deeply), evaluates its command line, and hands the task to the executor in
an asyncio task: that is a real wait.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.appplan import AppPlan, CommandPlan, Word, constant_word, jobid_prefix
from swiftnb.engine.runtime import Runtime
from swiftnb.engine.interp import (CALL, MAX_CALL_DEPTH, BlockExec, Exec, _tag, call_depth,
                                   frame_thread, nested, temp_tag)
from swiftnb.engine.scopes import LoweringError, Scope, Sym
from swiftnb.engine.values import (CLOSED, FAILED, ArrayNode, Cell, Composite, Failed,
                                   FileNode, Node, NotReady, StructNode, SwiftError)
from swiftnb.lang import ast as A

if TYPE_CHECKING:
    from swiftnb.engine.compiler import Compiler


def const_value(e: A.Expr) -> Any:
    """The value of a default parameter (a constant expression)."""
    if isinstance(e, (A.IntLiteral, A.FloatLiteral, A.StringLiteral, A.BoolLiteral)):
        return e.value
    if isinstance(e, A.UnaryOp) and e.op == "-":
        return -const_value(e.operand)
    if isinstance(e, A.UnaryOp) and e.op == "+":
        return const_value(e.operand)
    if isinstance(e, A.BinaryOp) and e.op == "+":
        return const_value(e.left) + const_value(e.right)
    raise LoweringError("default values must be constants", e.pos)


class ProcInfo:
    """A procedure compiled lazily (so that recursion works)."""

    def __init__(self, compiler: Compiler, proc: A.Procedure) -> None:
        self.c = compiler
        self.proc = proc
        self.name = proc.name
        self.is_app = isinstance(proc, A.AppProcedure)
        #: compiled (``ensure``): procedures are compiled at their first call
        self.ready = False
        self.scope: Scope | None = None
        self.body: BlockExec | None = None
        self.in_slots: list[int] = []
        self.out_slots: list[int] = []
        self.out_syms: list[Sym] = []
        self.in_syms: list[Sym] = []
        #: an app's command lines, what of them every call shares worked out once
        self.plan: AppPlan | None = None
        self.profiles: list[Any] = []
        #: a compound procedure whose body may end with an output (not an array or a
        #: struct) unassigned, e.g. an ``if`` without ``else``: its calls note that
        self.may_leave_open = False

    def ensure(self) -> None:
        if self.ready:
            return
        self.ready = True
        c = self.c
        p = self.proc
        scope = Scope(None, proc=True)
        for formals, syms, slots in ((p.inputs, self.in_syms, self.in_slots),
                                     (p.outputs, self.out_syms, self.out_slots)):
            for fm in formals:
                sym = c.new_sym(fm.name, c.ltype_of(fm.type, fm.dims), fm.pos)
                sym.formal = True
                scope.declare(sym)
                syms.append(sym)
                slots.append(sym.slot)
        self.scope = scope
        if isinstance(p, A.AppProcedure):
            c.may_split = False  # an app's arguments have no block for hidden statements
            try:
                self._compile_commands(p, scope)
            finally:
                c.may_split = True
            if scope.hidden:
                raise LoweringError("procedure calls are not allowed in app command lines", p.pos)
        else:
            assert isinstance(p, A.CompoundProcedure)
            self.body = c.block(p.body.statements, scope, p.body.pos)
            self.may_leave_open = any(
                sym.tinfo.kind not in ("array", "struct")
                and not _assigns(p.body.statements, sym.name) for sym in self.out_syms)

    def _compile_commands(self, p: A.AppProcedure, scope: Scope) -> None:
        c = self.c

        def word(e: A.Expr) -> Word:
            constant = constant_word(e)
            return constant if constant is not None else c.expr(e, scope)

        commands = []
        for cmd in p.commands:
            stdin, stdout, stderr = (None if r is None else word(r)
                                     for r in (cmd.stdin, cmd.stdout, cmd.stderr))
            # the command's place as failure messages name it (script.swift:12:5)
            source = f"{os.path.basename(cmd.pos.file)}:{cmd.pos.line}:{cmd.pos.column}"
            commands.append(CommandPlan(cmd.executable, tuple(word(a) for a in cmd.args),
                                        (stdin, stdout, stderr), source))
        self.plan = AppPlan(tuple(commands),
                            jobid_prefix(commands[0].tr) if commands else "")
        self.profiles = [(c.expr(pr.key, scope), c.expr(pr.value, scope)) for pr in p.profiles]

    def make_frame(self) -> list:
        assert self.scope is not None
        return [None] * self.scope.nslots


class CallExec(Exec):
    """A call of a user procedure, as a statement."""

    __slots__ = ("info", "outs", "ins")

    def __init__(self, rt: Runtime, pos: A.Pos, info: ProcInfo, outs: list, ins: list) -> None:
        Exec.__init__(self, rt, pos)
        self.info = info
        self.outs = outs
        self.ins = ins

    self_release = True

    def run(self, f: list, done: Callable[[], None]) -> None:
        info = self.info
        if not info.ready:
            info.ensure()
        try:
            outs = []
            for i, lv in enumerate(self.outs):
                if lv is None:
                    sym = info.out_syms[i]
                    node = sym.tinfo.make("?")
                    if sym.tinfo.mapped:
                        _tag(node, temp_tag(f, f"{info.name}.{sym.name}", self.pos))
                    outs.append(node)
                else:
                    outs.append(lv(f))
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed:
            self.release(f)
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            self.release(f)
            done()
            return
        depth = call_depth(f) + 1
        if depth > MAX_CALL_DEPTH:
            self.rt.runtime_error(SwiftError(
                f"Recursion too deep: {depth - 1} nested procedure calls, the last of "
                f"{info.name} (declared on line {info.proc.pos.line}); a recursion "
                f"without end?", fatal=True), self.pos)
            self.release(f)
            done()
            return
        frame = info.make_frame()
        frame[0] = (CALL, self.pos, f, depth)  # stable temporary names; the call depth
        for slot, b in zip(info.in_slots, self.ins):
            kind = b[0]
            if kind == "const":
                frame[slot] = b[1]
            elif kind == "node":  # the caller's node, or a cell that receives it later
                get = b[1]
                try:
                    frame[slot] = get(f)
                except (NotReady, Failed) as exc:
                    frame[slot] = _later(self.rt, get, f, _forward, exc)
            else:
                frame[slot] = _bind_value(self.rt, b[1], f, b[2])
        for slot, node in zip(info.out_slots, outs):
            frame[slot] = node
        if info.is_app:
            AppCall(self, info, frame, outs, f, done).step()
        else:
            body = info.body
            assert body is not None
            ended = (_noting_open_outputs(self.rt, info, outs, self.pos, done)
                     if info.may_leave_open else done)
            if self.rt.unit_events:
                thread = frame_thread(f)
                emit = self.rt.bus.emit
                emit("STARTCOMPOUND", {"thread": thread, "name": info.name})

                def body_done() -> None:
                    emit("ENDCOMPOUND", {"thread": thread, "name": info.name})
                    ended()

                body.enter(frame, body_done)
            else:
                body.enter(frame, ended)
            self.release(f)  # the body's statements hold the outputs they write


def _assigns(stmts: tuple[A.Stmt, ...], name: str, depth: int = 0) -> bool:
    """Whether these statements assign the variable ``name`` on every path (an
    assignment or a multiple assignment to it, or an ``if``/``switch`` whose every branch
    does).  Conservative: past 100 nested branches, or for loops, it says no."""
    if depth > 100:
        return False
    for st in stmts:
        if isinstance(st, A.Assign) and isinstance(st.target, A.Name):
            if st.target.name == name:
                return True
        elif isinstance(st, A.MultiAssign):
            if any(isinstance(t.target, A.Name) and t.target.name == name for t in st.targets):
                return True
        elif isinstance(st, A.Block):
            if _assigns(st.statements, name, depth + 1):
                return True
        elif isinstance(st, A.If):
            if (st.orelse is not None and _assigns(st.then.statements, name, depth + 1)
                    and _assigns(st.orelse.statements, name, depth + 1)):
                return True
        elif isinstance(st, A.Switch):
            if (any(case.value is None for case in st.cases)
                    and all(_assigns(case.body.statements, name, depth + 1)
                            for case in st.cases)):
                return True
    return False


def _noting_open_outputs(rt: Runtime, info: ProcInfo, outs: list, pos: A.Pos,
                         done: Callable[[], None]) -> Callable[[], None]:
    """``done``, once the run has noted the outputs the body left unassigned (``if``
    without ``else``): nothing will write them, and if the run hangs on one, the hang
    report names it instead of "an open value"."""
    def ended() -> None:
        for sym, node in zip(info.out_syms, outs):
            if node.state == V.OPEN and (node.__class__ is Cell or node.__class__ is FileNode):
                rt.left_open(f"{sym.name}, the output of {info.name} (declared on line "
                             f"{info.proc.pos.line}), which ended without assigning it "
                             f"(called on line {pos.line})")
        nested(done)  # the caller's completion: a recursion ends as deep as it went
    return ended


def _now_or_later(rt: Runtime, compute: Callable, f: list, settle: Callable) -> Any:
    """``compute(f)`` now; if it is not ready yet, a cell that ``settle(value, cell)``
    fills once it is.  A failed input becomes a failed cell, so the callee's use of that
    input fails rather than the call itself."""
    try:
        return compute(f)
    except (NotReady, Failed) as exc:
        return _later(rt, compute, f, settle, exc)


def _later(rt: Runtime, compute: Callable, f: list, settle: Callable,
           exc: NotReady | Failed) -> Cell:
    """What :func:`_now_or_later` gives when ``compute(f)`` raised ``exc``: a cell that
    ``settle`` fills once the value is ready, or a failed one."""
    if isinstance(exc, NotReady):
        nr = exc
        holder = Cell("?")

        def retry() -> None:
            try:
                v = compute(f)
            except NotReady as nr2:
                nr2.wait(retry)
                return
            except Failed as e:
                holder.fail(e.error)
                return
            except SwiftError as e:
                rt.runtime_error(e, None)
                holder.fail(SwiftError(e.message, dependency=True))
                return
            settle(v, holder)

        nr.wait(retry)
        return holder
    c = Cell("?")
    c.fail(exc.error)
    return c


def _forward(src: Node, holder: Cell) -> None:
    def fin() -> None:
        if src.state == FAILED:
            holder.fail(src.error)  # type: ignore[arg-type]  # FAILED: its error is set
        else:
            holder.set(src if not isinstance(src, Cell) else src.value)
    src.when_closed(fin)


def _settle_value(v: Any, holder: Cell) -> None:
    if isinstance(v, Node):
        _forward(v, holder)
    else:
        holder.set(v)


def _bind_value(rt: Runtime, ev: Callable, f: list, to_float: bool) -> Any:
    """An expression argument: its value now, or a cell filled when it is ready."""
    def widened(f: list) -> Any:
        v = ev(f)
        return float(v) if v.__class__ is int else v

    try:
        return _now_or_later(rt, widened if to_float else ev, f, _settle_value)
    except SwiftError as e:
        rt.runtime_error(e, None)
        c = Cell("?")
        c.fail(SwiftError(e.message, dependency=True))
        return c


def _deref(v: Any) -> Any:
    """A cell holding a forwarded node/value -> that node/value."""
    while v.__class__ is Cell and v.state == CLOSED and isinstance(v.value, Node):
        v = v.value
    return v


class AppCall:
    """One app invocation: wait for inputs, build the task, submit, set outputs."""

    # slots, and no closure for its end: one is held by every call of a large run
    # that waits for a slot
    __slots__ = ("stmt", "info", "frame", "outs", "caller", "done")

    def __init__(self, stmt: CallExec, info: ProcInfo, frame: list, outs: list[Node],
                 caller: list, done: Callable[[], None]) -> None:
        self.stmt = stmt
        self.info = info
        self.frame = frame
        self.outs = outs
        #: the calling statement's frame, and what it does once this call has ended
        self.caller = caller
        self.done = done

    def _ended(self) -> None:
        """The call is over: the calling statement lets go of what it writes, and goes on."""
        self.stmt.release(self.caller)
        self.done()

    def _fail_outputs(self, err: SwiftError) -> None:
        for o in self.outs:
            o.fail(err)

    def step(self) -> None:
        stmt = self.stmt
        rt = stmt.rt
        info = self.info
        frame = self.frame
        try:
            for slot in info.in_slots:
                v = _deref(frame[slot])
                frame[slot] = v
                if isinstance(v, Node) and v.state != CLOSED:
                    V.deep_ready(v)
            task = rt.build_task(info, frame, self.outs, stmt.pos)
        except NotReady as nr:
            nr.wait(self.step)
            return
        except Failed as e:
            plan = info.plan
            tr = plan.commands[0].tr if plan is not None and plan.commands else info.name
            rt.dependency_error(tr, stmt.pos)
            self._fail_outputs(SwiftError(e.error.message, dependency=True))
            self._ended()
            return
        except SwiftError as e:
            rt.runtime_error(e, stmt.pos)
            self._fail_outputs(SwiftError(e.message, dependency=True))
            self._ended()
            return
        rt.submit(self, task)

    def finish(self, ok: bool, message: str = "") -> None:
        if ok:
            outs = self.outs
            try:
                for o in outs:
                    if o.__class__ is not FileNode and isinstance(o, Composite) and not o.closed:
                        _collect_dynamic(o, self.info.name)
            except SwiftError as e:  # the call failed after all: its outputs fail with it
                self.stmt.rt.runtime_error(e, self.stmt.pos)
                self._fail_outputs(SwiftError(e.message, dependency=True))
                self._ended()
                V.drain()
                return
            for o in outs:
                if o.__class__ is FileNode:  # the usual output: one file
                    if not o.state:
                        o.set()
                else:
                    _close_output(o)
        else:
            self._fail_outputs(SwiftError(message, dependency=True))
        self._ended()
        V.drain()


def _collect_dynamic(node: Composite, app: str) -> None:
    """Output arrays whose mapper finds files after the run (filesys_mapper, simple_mapper
    with a pattern): the files the app produced become the elements ("dynamic output").
    A mapper that cannot list them (a link loop, no permission) fails the call: the
    array must not close as if the app had made nothing."""
    m = node.mapper
    if m is None or m.__class__ is Cell:
        return
    try:
        leaves = m.existing()  # type: ignore[union-attr]  # its class is checked above
    except NotReady:
        return  # a live source: elements are named as they arrive
    except D.BuiltinError as e:
        raise SwiftError(f"Cannot collect the output {node.name} of {app}: {e.message}") from None
    except OSError as e:
        raise SwiftError(f"Cannot collect the output {node.name} of {app}: "
                         f"{e.filename or ''}: {e.strerror or e}") from None
    for steps, fname in leaves:
        target: Any = node
        try:
            for st in steps:
                if isinstance(st, D.Field):
                    target = target.fields[st.name]
                else:
                    target = target.element(st.key)
        except (SwiftError, KeyError, AttributeError):
            continue
        if isinstance(target, FileNode) and not target.state:
            target.path = target.path or fname


def _close_output(node: Node) -> None:
    if node.__class__ is FileNode:  # the usual output: one file
        if not node.state:
            node.set()
        return
    if not isinstance(node, Node) or node.state:
        return
    if isinstance(node, (FileNode, Cell)):
        if isinstance(node, Cell):
            node.set(None)
        else:
            node.set()
    elif isinstance(node, ArrayNode):
        for n in list(node.items.values()):
            _close_output(n)
        node.close()
    elif isinstance(node, StructNode):
        for n in node.fields.values():
            _close_output(n)
        node.close()
