"""The interpreter: Swift AST -> closures over frames, run on dataflow values.

Compilation turns every expression into a plain function ``ev(frame)`` that returns the
value (a Python primitive, or a node for files and composites) or raises
:class:`~swiftnb.engine.values.NotReady` naming the open node it met.  A statement runs
its expressions synchronously; when one raises NotReady, the statement registers itself
on that node and runs again when it closes.  So the common case (inputs already there)
costs a few function calls and no allocation, and waiting costs one callback: no asyncio
task per expression (tasks are only for app calls and other real waits).

Calls to user procedures inside expressions are hoisted into hidden statements writing a
temporary, so that re-running an expression never starts a call twice.

Frames are Python lists: slot 0 is the enclosing frame, the other slots hold the nodes
(or, for loop variables over ranges, the plain values) of the block's variables.

Array closing: each block counts, for each composite variable it declares, the statements
of the block that may write it (transitively, including calls that take it as an
output); the variable closes when they have all finished (reference section 1.5).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.runtime import Runtime
from swiftnb.engine.values import (CLOSED, FAILED, ArrayNode, Cell, Composite, Failed,
                                   FileNode, Node, NotReady, StructNode, SwiftError,
                                   TypeInfo)
from swiftnb.engine.scopes import Scope, Sym
from swiftnb.lang import ast as A

if TYPE_CHECKING:
    from swiftnb.engine.builtins.registry import Builtin
    from swiftnb.engine.mappers.base import Mapper

GLOBAL = -1
#: marks the extra last slot of a foreach/iterate iteration frame: (ITER, key)
ITER = object()
#: slot 0 of a procedure body frame: (CALL, call position, caller frame, call depth)
CALL = object()
#: Swift ints are Java ints: arithmetic wraps at 32 bits
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1

Done = Callable[[], None]


def wrap32(x: int) -> int:
    """``x`` wrapped to a 32-bit two's-complement int, as Java's int arithmetic does."""
    return ((x - INT_MIN) & 0xFFFFFFFF) + INT_MIN


# ============================================================================ statements


class Exec:
    """A compiled statement.  ``run(frame, done)`` calls ``done`` exactly once, when the
    statement and everything it started have finished."""

    __slots__ = ("pos", "writes", "holds", "rt", "fails")

    def __init__(self, rt: Runtime, pos: A.Pos) -> None:
        self.rt = rt
        self.pos = pos
        self.writes: set[Sym] = set()
        #: getters of the composites this statement may write; the enclosing block
        #: counts them as writers while the statement may still write them
        self.holds: tuple = ()
        #: (getter) of the variables a skipped block would have written (lazy errors)
        self.fails: tuple = ()

    #: compound statements release their holds themselves, once the statements they
    #: start have taken over (see BlockExec.run_in); others when they are done
    self_release = False

    def release(self, f: list) -> None:
        for get in self.holds:
            get(f).remove_writer()

    def attempt(self, f: list, done: Done) -> bool:
        """:meth:`run_unheld`, except that a statement that finished at once may return
        True instead of calling ``done`` (one call less per loop iteration); False:
        ``done`` is called, now or later."""
        self.run_unheld(f, done)
        return False

    def run_unheld(self, f: list, done: Done) -> None:
        """Run as the one statement of a block, which has not counted it as a writer of
        what it holds: while the block starts, its own starter holds all of that, so a
        statement that finishes at once need not count itself (the hot path of a loop
        body ``a[i] = expr``); this one counts itself first, as the block would have."""
        holds = self.holds
        if holds:
            for get in holds:
                get(f).add_writer()
            if not self.self_release:
                done = _releaser(f, holds, done)
        self.run(f, done)

    def fail_writes(self, f: list, err: SwiftError) -> None:
        """The statement will not run (its inputs failed): its outputs fail too, so that
        their readers are skipped instead of waiting forever."""
        err = SwiftError(err.message, dependency=True)
        err.skipped = True
        for get in self.fails:
            try:
                node = get(f)
            except Exception:  # noqa: BLE001
                continue
            if isinstance(node, Node) and node.state == V.OPEN:
                node.fail(err)

    def run(self, f: list, done: Done) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


def _adopt_hidden(hidden: list[Exec]) -> list[Exec]:
    """Writer counts and holds for hidden statements that write a temporary array of
    the block (a procedure returning ``string[]``), as the block's own statements get
    them, so that the array stays open until they are done."""
    for ex in hidden:
        arrays = [sym for sym in ex.writes if sym.composite]
        for sym in arrays:
            sym.nwriters += 1
        ex.holds = tuple(_slot_reader(sym.slot) for sym in arrays)
    return hidden


def _slot_reader(slot: int) -> Callable[[list], Any]:
    return lambda f: f[slot]


def _noop() -> None:
    pass


class BlockExec(Exec):
    """A block: creates the declared nodes, then starts every statement at once."""

    __slots__ = ("scope", "stmts", "decls", "maps", "single", "cleanups", "defer_gc")

    def __init__(self, rt: Runtime, pos: A.Pos, scope: Scope, stmts: list[Exec]) -> None:
        Exec.__init__(self, rt, pos)
        self.scope = scope
        if scope.hidden:
            # hoisted out of the mapping parameters of this scope's declarations
            # (``<array_mapper; files=system("find ...")>``), which are compiled after
            # the block's statements: they run with the block, feeding the mapping
            stmts = _adopt_hidden(scope.hidden) + stmts
            scope.hidden = []
        self.stmts = stmts
        self.decls: list[Sym] = list(scope.decls)
        #: one statement and nothing declared: the statement runs without the set-up
        self.single = len(stmts) == 1 and not self.decls
        #: slots of the variables holding files that this scope cleans up when it ends
        #: (Swift's cleanDataset: temporary files nothing else refers to are deleted)
        self.cleanups: tuple[int, ...] = tuple(
            sym.slot for sym in self.decls if sym.tinfo.mapped and not sym.is_global)
        #: the statement running this block cleans up itself (iterate: its condition
        #: may still read the iteration's files after the body has finished)
        self.defer_gc = False

    def starter(self) -> Callable[[list, Done], bool]:
        """What starts this block in a frame made by the caller (a loop iteration), as
        :meth:`Exec.attempt`: for one statement and nothing declared that statement
        itself, else ``run_in``."""
        return self.stmts[0].attempt if self.single else self._attempt_in

    def _attempt_in(self, f: list, done: Done) -> bool:
        self.run_in(f, done)
        return False

    def run(self, parent: list, done: Done) -> None:
        """Run as a statement (a nested block, an if/switch branch): one level deeper."""
        f: list[Any] = [None] * self.scope.nslots
        f[0] = parent
        self.enter(f, done)

    def enter(self, f: list, done: Done) -> None:
        """Run in frame ``f`` one level deeper (a branch, a procedure body).

        Once the stack is deep, only the statements' starts wait for the trampoline: the
        block's variables and its statements' writer holds are set up before this
        returns, so the caller may release its own holds at once (a procedure's outputs,
        the struct an ``if`` writes) without the value closing in between."""
        global _nesting
        if _nesting >= MAX_NESTING:
            self.run_in(f, done, deferred=True)
            return
        _nesting += 1
        try:
            self.run_in(f, done)
        finally:
            _nesting -= 1

    def run_in(self, f: list, done: Done, deferred: bool = False) -> None:
        """Run in a frame made by the caller (loop iterations, procedure bodies: those
        statements count their own nesting, once, not once per iteration).
        ``deferred``: set up now, start the statements from the trampoline."""
        if self.single:
            st = self.stmts[0]
            if not deferred:
                st.run_unheld(f, done)
                return
            holds = st.holds
            if holds:  # set up now: the caller may release its holds when this returns
                for get in holds:
                    get(f).add_writer()
                if not st.self_release:
                    done = _releaser(f, holds, done)
            then = done
            V.schedule(lambda: st.run(f, then))
            return
        if self.cleanups and self.rt.file_gc and not self.defer_gc:
            done = _cleaner(self.rt, f, self.cleanups, done)
        for sym in self.decls:
            ti = sym.tinfo
            node = ti.make(sym.name)
            f[sym.slot] = node
            if ti.mapped and sym.mapping is None:
                _tag(node, temp_tag(f, sym.name, sym.pos))
            if sym.mapping is not None:
                # paths wait for the mapping, which MapExec evaluates
                _set_binding(node, Cell(sym.name))
        # writers: every statement that may write a composite counts, before any runs
        for st in self.stmts:
            for get in st.holds:
                get(f).add_writer()
        # composites nobody writes (and no mapper fills) are complete as they are
        for sym in self.decls:
            if sym.nwriters == 0 and sym.mapping is None:
                node = f[sym.slot]
                if isinstance(node, Composite):
                    node.close()
        n = len(self.stmts)
        if n == 0:
            if deferred:
                V.schedule(done)
            else:
                done()
            return
        if deferred:
            V.schedule(lambda: self._start(f, done))
        else:
            self._start(f, done)

    def _start(self, f: list, done: Done) -> None:
        """Start every statement (set up by ``run_in``); ``done`` after the last ends."""
        state = [len(self.stmts)]

        def one_done() -> None:
            global _nesting
            state[0] -= 1
            if state[0] == 0:
                if _nesting >= MAX_NESTING:
                    V.schedule(done)
                    return
                _nesting += 1
                try:
                    done()
                finally:
                    _nesting -= 1

        for st in self.stmts:
            if st.holds and not st.self_release:
                st.run(f, _releaser(f, st.holds, one_done))
            else:
                st.run(f, one_done)


#: Blocks started, or finished, inside one another on the Python stack right now.
_nesting = 0
#: Past this nesting the next start or completion goes through the trampoline, which runs
#: it once the stack has unwound: 5,000 nested blocks or ``if``s, or a recursion
#: 100,000 calls deep, never use more Python stack than this many levels.
MAX_NESTING = 60


def nested(step: Done) -> None:
    """Run ``step`` (a statement's start or completion) one level deeper, or from the
    trampoline once the stack is deep."""
    global _nesting
    if _nesting >= MAX_NESTING:
        V.schedule(step)
        return
    _nesting += 1
    try:
        step()
    finally:
        _nesting -= 1


#: Nested calls of compound procedures a run allows: far beyond any recursion that
#: ends (100,000 levels of a simple recursion take about 120 MB), and an unbounded recursion stops with a
#: Swift error naming the procedure and the call's line, before memory runs out.
MAX_CALL_DEPTH = 500_000


def call_depth(f: list) -> int:
    """How many compound procedure calls lead to code running in frame ``f``."""
    fr = f
    while fr is not None:
        head = fr[0]
        if head.__class__ is tuple and head and head[0] is CALL:
            return head[3]
        fr = head
    return 0


def frame_thread(f: list) -> str:
    """Swift's thread name for code running in frame ``f``: ``R`` at the top, and
    ``PARENT-L-N`` for the N-th iteration (from 0) of the foreach on line L (the names
    appear in the unit events of the log: FOREACH_IT_START line=5 thread=R-5-3)."""
    fr = f
    while fr is not None:
        last = fr[-1]
        if last.__class__ is tuple and len(last) > 2 and last[0] is ITER:
            return last[2]
        head = fr[0]
        if head.__class__ is tuple and head and head[0] is CALL:
            fr = head[2]
        else:
            fr = head
    return "R"


def _cleaner(rt: Runtime, f: list, slots: tuple[int, ...], then: Done) -> Done:
    def clean() -> None:
        rt.clean_scope(f, slots)
        then()

    return clean


def temp_tag(f: list, name: str, pos: A.Pos) -> str:
    """A name stem for an unmapped file variable that is the same in every run of the
    script (so that ``-resume`` finds it): name, declaration line, and the iteration keys
    and call sites leading to this frame, as Swift's ``VAR-LINE-THREAD``."""
    parts: list[str] = []
    fr: Any = f
    while fr is not None:
        last = fr[-1]
        if last.__class__ is tuple and last and last[0] is ITER:
            parts.append(str(last[1]))
        head = fr[0]
        if head.__class__ is tuple and head and head[0] is CALL:
            parts.append(f"c{head[1].line}.{head[1].column}")
            fr = head[2]
        else:
            fr = head
    parts.reverse()
    chain = "-".join(parts)
    if len(chain) > 80:
        import hashlib

        chain = hashlib.sha1(chain.encode()).hexdigest()[:16]
    stem = f"{name}-{pos.line}" if name != "?" else f"tmp-{pos.line}.{pos.column}"
    text = stem + (f"-{chain}" if chain else "")
    return "".join(ch if ch.isalnum() or ch in "-_.=" else "_" for ch in text)


def _tag(node: Node, tag: str) -> None:
    if isinstance(node, FileNode):
        node.temporary = tag
    elif isinstance(node, Composite):
        node.tag = tag


def _releaser(f: list, holds: tuple, then: Done) -> Done:
    def release() -> None:
        for get in holds:
            get(f).remove_writer()
        then()

    return release


class ExprStmt(Exec):
    """Evaluate an expression for its effect (a builtin procedure such as trace)."""

    __slots__ = ("ev", "on_failed")

    def __init__(self, rt: Runtime, pos: A.Pos, ev: Callable) -> None:
        Exec.__init__(self, rt, pos)
        self.ev = ev
        #: what to do when an argument failed (``trace`` prints the error), else skip
        self.on_failed: Callable[[SwiftError], None] | None = None

    def run(self, f: list, done: Done) -> None:
        try:
            self.ev(f)
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            if self.on_failed is not None and not e.error.skipped:
                self.on_failed(e.error)
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
        done()


class AsyncBuiltinStmt(Exec):
    """A builtin that really waits (``system``, the file readers): evaluated in an
    asyncio task.  ``return_type`` is put in the shared context just before the call;
    the builtin reads it before its first wait."""

    __slots__ = ("args", "builtin", "target", "return_type", "where")

    def __init__(self, rt: Runtime, pos: A.Pos, builtin: Builtin, args: list,
                 target: Callable[[list], Node] | None,
                 return_type: D.SwiftType | None = None, where: str | None = None) -> None:
        Exec.__init__(self, rt, pos)
        self.builtin = builtin
        self.args = args
        self.target = target
        self.return_type = return_type
        self.where = where

    def run(self, f: list, done: Done) -> None:
        try:
            args = [self.rt.plain(a(f)) for a in self.args]
            tgt = self.target(f) if self.target is not None else None
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            if self.target is not None:
                try:
                    self.target(f).fail(e.error)
                except Exception:
                    pass
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            done()
            return

        async def go() -> None:
            ctx = self.rt.ctx
            try:
                ctx.return_type = self.return_type
                result = await self.builtin.fn(ctx, *args)
            except D.BuiltinError as e:
                err = SwiftError(e.message, where=self.where)
                self.rt.runtime_error(err, self.pos)
                if tgt is not None:
                    tgt.fail(SwiftError(e.message, dependency=True))
                done()
                return
            if tgt is not None:
                store_plain(self.rt, tgt, result)
            done()
            V.drain()

        self.rt.spawn(go())


class AssignExec(Exec):
    """``target = expression`` (also declarations with an initial value)."""

    __slots__ = ("lv", "ev", "to_float")

    def __init__(self, rt: Runtime, pos: A.Pos, lv: Callable, ev: Callable, to_float: bool) -> None:
        Exec.__init__(self, rt, pos)
        self.lv = lv
        self.ev = ev
        self.to_float = to_float

    def run(self, f: list, done: Done) -> None:
        try:
            v = self.ev(f)
            tgt = self.lv(f)
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            _fail_lv(self.lv, f, e.error)
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            _fail_lv(self.lv, f, SwiftError(e.message, dependency=True))
            done()
            return
        if tgt.__class__ is Cell:
            if self.to_float and v.__class__ is int:
                v = float(v)
            try:
                tgt.set(v)
            except SwiftError as e:
                self.rt.runtime_error(e, self.pos)
            done()
            return
        store(self.rt, tgt, v, done)


class IndexAssignExec(Exec):
    """The hot path ``a[i] = expr`` for arrays of primitives."""

    __slots__ = ("arr", "key", "ev", "to_float", "lv", "key_slot", "arr_outer_slot")

    def __init__(self, rt: Runtime, pos: A.Pos, arr: Callable, key: Callable, ev: Callable,
                 to_float: bool, lv: Callable, key_slot: int = 0,
                 arr_outer_slot: int = 0) -> None:
        Exec.__init__(self, rt, pos)
        self.arr = arr
        self.key = key
        self.ev = ev
        self.to_float = to_float
        self.lv = lv
        #: the key is a name of the statement's own frame, in this slot (else 0): a loop
        #: variable's plain value is read from it without calling ``key``
        self.key_slot = key_slot
        #: the array is a variable of the enclosing frame, in this slot (else 0)
        self.arr_outer_slot = arr_outer_slot

    self_release = True  # the hot path: no release closure per run

    def run_unheld(self, f: list, done: Done) -> None:
        if self.attempt(f, done):
            done()

    def _store(self, f: list) -> None:
        """Evaluate the value, the array and the key, and set the element (NotReady,
        Failed or SwiftError say why not)."""
        v = self.ev(f)
        s = self.arr_outer_slot
        a = f[0][s] if s else self.arr(f)
        s = self.key_slot
        if s:
            k = f[s]
            if k.__class__ is not int:
                k = self.key(f)
        else:
            k = self.key(f)
        if self.to_float and v.__class__ is int:
            v = float(v)
        a.set_value(k, v)

    def attempt(self, f: list, done: Done) -> bool:
        """Assign at once if the value is there (no writer counting), else count this
        statement as a writer and wait as :meth:`run` does."""
        try:
            self._store(f)
        except NotReady as nr:
            for get in self.holds:
                get(f).add_writer()
            nr.wait(lambda: self.run(f, done))
            return False
        except Failed as e:
            _fail_lv(self.lv, f, e.error)
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            _fail_lv(self.lv, f, SwiftError(e.message, dependency=True))
        return True

    def run(self, f: list, done: Done) -> None:
        try:
            self._store(f)
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            _fail_lv(self.lv, f, e.error)
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            _fail_lv(self.lv, f, SwiftError(e.message, dependency=True))
        for get in self.holds:
            get(f).remove_writer()
        done()


def _fail_lv(lv: Callable, f: list, err: SwiftError) -> None:
    try:
        node = lv(f)
    except Exception:
        return
    if isinstance(node, Node):
        if not err.dependency:
            err = SwiftError(err.message, dependency=True)
        node.fail(err)


class AppendExec(Exec):
    """``a << expr`` on an auto-keyed array."""

    __slots__ = ("arr", "ev", "to_float")

    def __init__(self, rt: Runtime, pos: A.Pos, arr: Callable, ev: Callable, to_float: bool) -> None:
        Exec.__init__(self, rt, pos)
        self.arr = arr
        self.ev = ev
        self.to_float = to_float

    def run(self, f: list, done: Done) -> None:
        try:
            a = self.arr(f)
            v = self.ev(f)
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            try:
                self.arr(f).append(_failed_cell(e.error), is_node=True)
            except Exception:
                pass
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            done()
            return
        if isinstance(v, Node):
            if v.parent is not None and v.parent.__class__ is not str:
                a.append(v, is_node=True)
            else:
                node = a.tinfo.elem.make(a, a.next_auto)
                a.append(node, is_node=True)
                store(self.rt, node, v, done)
                return
        elif isinstance(v, (dict, D.StructValue, D.FileValue)):
            node = a.tinfo.elem.make(a, a.next_auto)
            a.append(node, is_node=True)
            store_plain(self.rt, node, v)
        else:
            if self.to_float and v.__class__ is int:
                v = float(v)
            a.append(v)
        done()


def _failed_cell(err: SwiftError) -> Cell:
    c = Cell()
    c.fail(err if err.dependency else SwiftError(err.message, dependency=True))
    return c


class IfExec(Exec):
    __slots__ = ("cond", "then", "orelse")

    def __init__(self, rt: Runtime, pos: A.Pos, cond: Callable, then: BlockExec,
                 orelse: BlockExec | None) -> None:
        Exec.__init__(self, rt, pos)
        self.cond = cond
        self.then = then
        self.orelse = orelse

    self_release = True

    def run(self, f: list, done: Done) -> None:
        try:
            c = self.cond(f)
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            self.rt.skip_block(self, f, e.error)
            self.release(f)
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            self.release(f)
            done()
            return
        if c:
            if self.rt.unit_events:
                self.rt.bus.emit("SCOPE", {"thread": frame_thread(f)}, level="DEBUG")
            self.then.run(f, done)
        elif self.orelse is not None:
            if self.rt.unit_events:
                self.rt.bus.emit("SCOPE", {"thread": frame_thread(f)}, level="DEBUG")
            self.orelse.run(f, done)
        else:
            self.release(f)
            done()
            return
        self.release(f)  # the branch's statements hold what they write now


class SwitchExec(Exec):
    __slots__ = ("sel", "cases", "default")

    self_release = True

    def __init__(self, rt: Runtime, pos: A.Pos, sel: Callable,
                 cases: list[tuple[Callable, BlockExec]], default: BlockExec | None) -> None:
        Exec.__init__(self, rt, pos)
        self.sel = sel
        self.cases = cases
        self.default = default

    def run(self, f: list, done: Done) -> None:
        try:
            s = self.sel(f)
            chosen = None
            for ev, block in self.cases:
                if ev(f) == s:
                    chosen = block
                    break
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            self.rt.skip_block(self, f, e.error)
            self.release(f)
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            self.release(f)
            done()
            return
        if chosen is None:
            chosen = self.default
        if chosen is None:
            self.release(f)
            done()
        else:
            chosen.run(f, done)
            self.release(f)


class MapExec(Exec):
    """Evaluates a declaration's mapping; for inputs, finds the files and closes."""

    __slots__ = ("sym", "params", "mapper_name", "is_input")

    def __init__(self, rt: Runtime, pos: A.Pos, sym: Sym, mapper_name: str,
                 params: list[tuple[str, Callable]], is_input: bool) -> None:
        Exec.__init__(self, rt, pos)
        self.sym = sym
        self.mapper_name = mapper_name
        self.params = params
        self.is_input = is_input

    def run(self, f: list, done: Done) -> None:
        node = f[self.sym.slot]
        pending = node.mapped_by if isinstance(node, FileNode) else node.mapper
        if pending.__class__ is not Cell or pending.state:
            pending = Cell(self.sym.name)
            _set_binding(node, pending)
        self._eval(f, node, pending, done)

    def _eval(self, f: list, node: Node, pending: Cell, done: Done) -> None:
        try:
            params = {name: self.rt.mapper_param(self.mapper_name, name, ev(f), self.is_input)
                      for name, ev in self.params}
        except NotReady as nr:
            nr.wait(lambda: self._eval(f, node, pending, done))
            return
        except (Failed, SwiftError) as e:
            err = e.error if isinstance(e, Failed) else e
            if isinstance(e, SwiftError):
                self.rt.runtime_error(e, self.pos)
            node.fail(SwiftError(err.message, dependency=True))
            pending.fail(err)
            done()
            return
        self.rt.bind_mapper(self, node, self.sym, self.mapper_name, params, pending, done)


def _set_binding(node: Node, binding: Mapper | Cell) -> None:
    if isinstance(node, FileNode):
        node.mapped_by = binding
    elif isinstance(node, Composite):
        node.mapper = binding


# ============================================================================ storing values


def store(rt: Runtime, tgt: Node, v: Any, done: Done) -> None:
    """Make ``tgt`` hold ``v`` (a primitive, plain data or another node); ``done`` when
    the key set (for arrays) or value is complete."""
    if tgt.__class__ is Cell:
        if isinstance(v, Node):
            copy_node(rt, tgt, v, done)
            return
        tgt.set(v)
        done()
        return
    if isinstance(v, Node):
        copy_node(rt, tgt, v, done)
        return
    if isinstance(v, (dict, D.StructValue, D.FileValue)):
        store_plain(rt, tgt, v)
        done()
        return
    if isinstance(tgt, FileNode) and isinstance(v, str):
        # a string assigned to a file: the file of that name
        tgt.path = tgt.path or v
        tgt.set()
        done()
        return
    raise SwiftError(f"cannot assign {v!r} to {tgt.name}")


def copy_node(rt: Runtime, tgt: Node, src: Node, done: Done) -> None:
    if not isinstance(src, Node):
        store(rt, tgt, src, done)
        return
    if src is tgt:
        done()
        return
    if isinstance(src, (Cell, FileNode)) or not isinstance(src, Composite):
        def finish() -> None:
            if src.state == FAILED:
                tgt.fail(src.error if src.error and src.error.dependency
                         else SwiftError(src.error.message if src.error else "error", dependency=True))
            elif tgt.__class__ is Cell:
                v = src.value  # type: ignore[attr-defined]  # its class is checked above
                tgt.set(v)
            elif isinstance(tgt, FileNode):
                sp = src.path  # type: ignore[attr-defined]  # its class is checked above
                if isinstance(src, FileNode) and (
                        (tgt.path is None and tgt.mapped_by is None) or _remaps(tgt)):
                    # an unmapped (or remappable) variable takes the file itself (Swift's
                    # remap): no copy, and the file lives as long as either refers to it
                    tgt.path = sp
                    V.gc_alias(tgt, src)
                    if tgt.mapped_by is not None:
                        rt.remapped(tgt, sp)
                else:
                    try:
                        tp = rt.path_of(tgt)
                    except NotReady as nr:
                        nr.wait(finish2)
                        return
                    if sp and tp and os.path.abspath(rt.local(sp)) != os.path.abspath(rt.local(tp)):
                        try:
                            d = os.path.dirname(rt.local(tp))
                            if d:
                                os.makedirs(d, exist_ok=True)
                            shutil.copyfile(rt.local(sp), rt.local(tp))
                        except OSError as e:
                            err = SwiftError(f"cannot copy {sp} to {tp}: {e.strerror}")
                            rt.runtime_error(err, None)
                            tgt.fail(SwiftError(err.message, dependency=True))
                            done()
                            return
                tgt.set()
            done()

        def finish2() -> None:
            finish()

        src.when_closed(finish)
        return
    if isinstance(src, ArrayNode) and isinstance(tgt, ArrayNode):
        pending = [1]
        mapped = tgt.tinfo.elem is not None and tgt.tinfo.elem.mapped and tgt.mapper is not None

        def sub_done() -> None:
            pending[0] -= 1
            if pending[0] == 0:
                nested(done)

        def on_key(k: Any, n: Node) -> None:
            if mapped or isinstance(n, Composite) and tgt.tinfo.elem is not None:
                pending[0] += 1
                try:
                    el = tgt.element(k)
                except SwiftError:
                    sub_done()
                    return
                # one level deeper (a value may nest thousands deep: see ``nested``)
                nested(lambda: copy_node(rt, el, n, sub_done))
            else:
                if k not in tgt.items:
                    tgt.put(k, n)

        src.subscribe(on_key)

        def keys_closed() -> None:
            if src.state == FAILED and not src.closed:
                tgt.fail(src.error)  # type: ignore[arg-type]  # FAILED: its error is set
            sub_done()

        src.when_keys_closed(keys_closed)
        return
    if isinstance(src, StructNode) and isinstance(tgt, StructNode):
        names = [n for n in tgt.fields if n in src.fields]
        pending = [len(names) + 1]

        def sub_done2() -> None:
            pending[0] -= 1
            if pending[0] == 0:
                nested(done)

        for n in names:
            nested(lambda t=tgt.fields[n], s=src.fields[n]: copy_node(rt, t, s, sub_done2))  # type: ignore[misc]  # a lambda with bound defaults
        sub_done2()
        return
    raise SwiftError(f"cannot assign {src.name} to {tgt.name}")


def _remaps(tgt: FileNode) -> bool:
    """Whether ``tgt``'s mapper lets an assigned file replace its mapping instead of
    being copied (concurrent_mapper, test_mapper with remappable="true")."""
    m = tgt.mapped_by
    if m is None:
        return False
    if m.__class__ is Cell:
        if m.state != CLOSED:
            return False
        m = m.value
    return m.remappable  # type: ignore[union-attr]  # its class is checked above


def store_plain(rt: Runtime, tgt: Node, v: Any) -> None:
    """Fill ``tgt`` from plain data (a builtin's result)."""
    if tgt.__class__ is Cell:
        tgt.set(v)
    elif isinstance(tgt, FileNode):
        if isinstance(v, D.FileValue):
            if tgt.path is None and tgt.mapped_by is None:
                tgt.path = v.path
        elif isinstance(v, str) and tgt.path is None:
            tgt.path = v
        tgt.set()
    elif isinstance(tgt, ArrayNode):
        if isinstance(v, dict):
            for k in D.sorted_keys(v):
                x = v[k]
                if isinstance(x, (dict, D.StructValue, D.FileValue)):
                    store_plain(rt, tgt.element(k), x)
                else:
                    if tgt.tinfo.elem is not None and tgt.tinfo.elem.name == "float" and isinstance(x, int):
                        x = float(x)
                    tgt.set_value(k, x)
    elif isinstance(tgt, StructNode):
        fields = v.fields if isinstance(v, D.StructValue) else (v if isinstance(v, dict) else {})
        for name, x in fields.items():
            if name in tgt.fields:
                store_plain(rt, tgt.fields[name], x)


_ANY_ARRAY = TypeInfo("any[]", "array", elem=TypeInfo("any", "prim"))


def from_plain(v: Any, parent: Any = None, key: Any = None) -> Any:
    """Plain data -> a closed node (primitives stay primitives)."""
    if isinstance(v, dict):
        arr = ArrayNode(_ANY_ARRAY, parent, key)
        for k in D.sorted_keys(v):
            x = v[k]
            if isinstance(x, (dict, D.StructValue, D.FileValue)):
                arr._add(k, from_plain(x, arr, k))
            else:
                arr.set_value(k, x)
        arr.close()
        return arr
    if isinstance(v, D.StructValue):
        ti = TypeInfo(v.type_name, "struct", fields={})
        st = StructNode(ti, parent, key)
        for name, x in v.fields.items():
            node = from_plain(x, st, name)
            if not isinstance(node, Node):
                node = V.closed_cell(node, st, name)
            st.fields[name] = node
        st.close()
        return st
    if isinstance(v, D.FileValue):
        fn = FileNode(parent, key, v.path)
        fn.state = CLOSED
        return fn
    return v
