"""A foreach whose body is one ``a[k] = expr`` of a pure expression, run many iterations
at a time (docs/running.md, "Large arrays").

Why: a two-million-element ``foreach i in [0:n] { a[i] = i * 2; }`` spent most of its
time starting iterations (a frame, a statement, a closure per operator) that each end at
once.  When the compiler can tell that an iteration does nothing but compute a value from
the loop variables, literals and closed variables outside the loop and store it in an
element of an array keyed by a loop variable, the loop computes a chunk of iterations'
values in one comprehension (:mod:`swiftnb.engine.bulkexpr`) and stores them in one step.

Why it is the same program:

* the values are those of the closures (bulkexpr's translation), the elements are stored
  in the order the iterations would have stored them, and a reader waiting on the array
  (a foreach over it, a reader of one key, ``length`` once it closes) is told as
  ``set_value`` tells it;
* the loop still holds the array until every iteration has started, as before;
* anything that is not known to be the same falls back: the remaining iterations (from
  the chunk where something raised or did not fit) run through the ordinary drive, which
  gives their values, errors and exit code as always.  Only a range of ints, or an array
  that is already closed with its elements by position, is read in bulk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from swiftnb.engine import values as V
from swiftnb.engine.bulkexpr import PLAIN, NotBulk, make_evaluator, translate
from swiftnb.engine.denseitems import DenseItems
from swiftnb.engine.interp import BlockExec, IndexAssignExec
from swiftnb.engine.scopes import LoweringError
from swiftnb.engine.values import ArrayNode, Failed, NotReady, SwiftError
from swiftnb.lang import ast as A

if TYPE_CHECKING:
    from swiftnb.engine.compiler import Compiler

__all__ = ["BulkBody", "BulkFeed", "CHUNK", "body_names", "plan_bulk"]

#: iterations computed by one comprehension (bounds the temporary lists)
CHUNK = 1 << 16

#: the Python names of the loop's two variables in a translated expression
KEY, VALUE = "k", "v"


def body_names(e: A.Expr) -> set[str] | None:
    """The variables ``e`` reads, or None if it is more than literals, names, elements
    of a named array and operators (a call, a member: never run in bulk)."""
    if isinstance(e, (A.IntLiteral, A.FloatLiteral, A.StringLiteral, A.BoolLiteral)):
        return set()
    if isinstance(e, A.Name):
        return {e.name}
    if isinstance(e, A.Index) and isinstance(e.base, A.Name):
        inner = body_names(e.index)
        return None if inner is None else inner | {e.base.name}
    if isinstance(e, A.UnaryOp):
        return body_names(e.operand)
    if isinstance(e, A.BinaryOp):
        left = body_names(e.left)
        right = body_names(e.right)
        if left is None or right is None:
            return None
        return left | right
    return None


class BulkBody:
    """What the compiler proved of a foreach body (its one statement ``a[K] = value``):
    the statement, its value expression, which loop variable is the key, and the
    variables outside the loop it reads (their evaluators, run in an iteration frame):
    primitives, and arrays whose elements it reads (only once they are closed)."""

    __slots__ = ("assign", "value", "nslots", "key_is_value", "vname", "kname", "uses_v",
                 "uses_k", "outer", "arrays", "factories")

    def __init__(self, assign: IndexAssignExec, value: A.Expr, body: BlockExec,
                 key_is_value: bool, vname: str, kname: str | None,
                 outer: dict[str, Callable[[list], Any]],
                 arrays: dict[str, Callable[[list], Any]], used: set[str]) -> None:
        self.assign = assign
        self.value = value
        self.nslots = body.scope.nslots
        #: the element's key is the loop's value variable (``foreach i in [0:n]
        #: { a[i] = ...; }``), else its key variable (``foreach v, i in x { b[i] = ...; }``)
        self.key_is_value = key_is_value
        self.vname = vname
        self.kname = kname
        self.uses_v = vname in used
        self.uses_k = kname is not None and kname in used
        self.outer = outer
        self.arrays = arrays
        #: translated evaluators by the classes of the key, value and outer variables
        #: (None: not translatable with those types)
        self.factories: dict[tuple[type, ...], tuple[Callable[..., Callable], bool] | None] = {}

    def feed(self, f: list, src: range | ArrayNode) -> BulkFeed | None:
        """A bulk run of this loop over ``src`` (a range of ints, or a closed array kept
        by position) in frame ``f``, or None where the loop runs as before."""
        fr: list[Any] = [None] * (self.nslots + 1)
        fr[0] = f
        consts: list[Any] = []
        classes: list[type] = []
        try:
            for ev in self.outer.values():
                c = ev(fr)
                if c.__class__ not in PLAIN:
                    return None
                consts.append(c)
                classes.append(c.__class__)
            for get in self.arrays.values():
                read = get(fr)
                cls = _read_in_bulk(read)
                if cls is None:
                    return None
                consts += (read.items.vals, read.items.first)
                classes.append(cls)
            target = self.assign.arr(fr)
        except (NotReady, Failed, SwiftError):
            return None
        if target.__class__ is not ArrayNode or target is src or target.closed:
            return None
        return BulkFeed(self, target, src, tuple(consts), tuple(classes))

    def evaluator(self, kcls: type, vcls: type, consts: tuple[Any, ...],
                  classes: tuple[type, ...]) -> tuple[Callable, bool] | None:
        """``(keys, vals) -> values`` for loop variables of these classes and variables
        outside the loop of ``classes`` (and whether the values are all ints), or None
        if the body is not translated for them."""
        sig = (kcls, vcls, *classes)
        try:
            made = self.factories[sig]
        except KeyError:
            made = self.factories[sig] = self._translate(sig)
        if made is None:
            return None
        factory, ints = made
        return factory(*consts), ints

    def _translate(self, sig: tuple[type, ...]) -> tuple[Callable[..., Callable], bool] | None:
        kcls, vcls = sig[0], sig[1]
        names: dict[str, tuple[str, type]] = {}
        arrays: dict[str, tuple[str, type]] = {}
        consts: list[str] = []
        classes = iter(sig[2:])
        for i, name in enumerate(self.outer):
            names[name] = (f"o{i}", next(classes))
            consts.append(f"o{i}")
        for i, name in enumerate(self.arrays):
            arrays[name] = (f"a{i}", next(classes))
            consts += (f"a{i}", f"a{i}_first")
        names[self.vname] = (VALUE, vcls)
        if self.kname is not None:
            names[self.kname] = (KEY, kcls)
        try:
            text, cls = translate(self.value, names, self.assign.to_float, arrays)
        except NotBulk:
            return None
        loop_names = (KEY if self.uses_k else "_", VALUE if self.uses_v else "_")
        if loop_names == ("_", "_"):
            loop_names = (KEY, "_")  # a constant: one per key all the same
        return make_evaluator(text, loop_names, tuple(consts)), cls is int


def _read_in_bulk(node: Any) -> type | None:
    """The class of every element of ``node`` if a bulk run may read them by position
    (a closed array kept by position, its elements plain values of one class), else
    None."""
    if node.__class__ is not ArrayNode or not node.closed:
        return None
    items = node.items
    if not isinstance(items, DenseItems) or not items:
        return None
    if items.all_plain():
        return int
    classes = set(map(type, items.vals))
    cls = classes.pop()
    return cls if not classes and cls in PLAIN else None


class BulkFeed:
    """One foreach's bulk run: its source, read from position ``pos``."""

    __slots__ = ("body", "target", "src", "consts", "classes", "pos")

    def __init__(self, body: BulkBody, target: ArrayNode, src: range | ArrayNode,
                 consts: tuple[Any, ...], classes: tuple[type, ...]) -> None:
        self.body = body
        self.target = target
        self.src = src
        self.consts = consts
        self.classes = classes
        self.pos = 0

    def run(self) -> Iterator[tuple[Any, Any]] | None:
        """Run every iteration it can; the (key, value) pairs of those left for the
        ordinary drive, or None if none is left."""
        src = self.src
        if isinstance(src, range):
            rng = src
            n = len(rng)
            while self.pos < n:
                hi = min(self.pos + CHUNK, n)
                if not self._chunk(range(self.pos, hi), rng[self.pos:hi], int, int):
                    return enumerate(rng[self.pos:], self.pos)
            return None
        items = src.items
        assert isinstance(items, DenseItems)  # checked by the caller
        vals = items.vals
        first = items.first
        n = len(vals)
        ints = items.all_plain()
        while self.pos < n:
            hi = min(self.pos + CHUNK, n)
            part = vals[self.pos:hi]
            if ints:
                vcls: type = int
            else:
                classes = set(map(type, part))
                vcls = classes.pop() if len(classes) == 1 else object
            if vcls not in PLAIN or not self._chunk(
                    range(first + self.pos, first + hi), part, int, vcls):
                return zip(range(first + self.pos, first + n), vals[self.pos:])
        return None

    def _chunk(self, keys: range, vals: Sequence[Any], kcls: type, vcls: type) -> bool:
        """Run the iterations of ``keys``/``vals``; False if none of them could be
        (then ``pos`` is where the ordinary drive goes on)."""
        made = self.body.evaluator(kcls, vcls, self.consts, self.classes)
        if made is None:
            return False
        fn, ints = made
        try:
            out = fn(keys, vals)
        except Exception:  # noqa: BLE001 - the ordinary drive says what it is
            return False
        tkeys = vals if self.body.key_is_value else keys
        done = store_in_order(self.target, tkeys, out, ints)
        self.pos += done
        return done == len(out)


def store_in_order(arr: ArrayNode, keys: Sequence[Any], out: list[Any], ints: bool) -> int:
    """Store ``out[j]`` at ``keys[j]``, in order, as ``set_value`` would one by one; how
    many were stored (fewer if one raised SwiftError, which ``set_value`` raises before
    storing anything: a closed array, a key written twice)."""
    n = len(out)
    i = 0
    if n and isinstance(keys, range) and keys.step == 1:
        items = arr.items
        if isinstance(items, DenseItems) and not items and keys[0] != items.next_key():
            # the first key is not 0: set_value makes the items keyed from it
            try:
                arr.set_value(keys[0], out[0])
            except SwiftError:
                return 0
            i = 1
            items = arr.items
        if (i < n and isinstance(items, DenseItems) and not arr.closed
                and keys[i] == items.next_key()):
            rest = out[i:] if i else out
            items.extend(rest, ints)
            _tell_readers(arr, keys[i:] if i else keys, rest)
            return n
    set_value = arr.set_value
    for j in range(i, n):
        try:
            set_value(keys[j], out[j])
        except SwiftError:
            return j
    return n


def _tell_readers(arr: ArrayNode, keys: range, out: list[Any]) -> None:
    """What ``set_value`` does for each new key after storing it: its subscribers (the
    foreach loops over the array) in key order, then the readers of those keys."""
    subs = arr.subscribers
    if subs:
        subs = list(subs)  # a subscriber that arrives now has seen every key already
        for k, x in zip(keys, out):
            for sub in subs:
                sub(k, x)
    missing = arr.missing
    if missing:
        lo, hi = keys.start, keys.stop
        due = [k for k in missing if _in_range(k, lo, hi)]
        for k in due:
            for cb in missing.pop(k):
                V.schedule(cb)


def _in_range(key: Any, lo: int, hi: int) -> bool:
    """Whether ``key`` equals (as a dict key does) an int in ``[lo, hi)``."""
    try:
        return key == int(key) and lo <= key < hi
    except (TypeError, ValueError, OverflowError):
        return False


def plan_bulk(compiler: Compiler, st: A.Foreach, body: BlockExec,
              self_ref: bool) -> BulkBody | None:
    """The bulk form of ``st``'s body if it is one ``a[K] = value`` that the proof above
    covers: K a loop variable, ``a`` not the array iterated, ``value`` literals,
    operators and variables (the loop's, or primitives outside it); else None."""
    if self_ref or not body.single or len(st.body.statements) != 1:
        return None
    assign = body.stmts[0]
    stmt = st.body.statements[0]
    if assign.__class__ is not IndexAssignExec or not isinstance(stmt, A.Assign):
        return None
    target = stmt.target
    if not (isinstance(target, A.Index) and isinstance(target.base, A.Name)
            and isinstance(target.index, A.Name)):
        return None
    loop_vars = {st.var, st.index}
    key = target.index.name
    if key not in loop_vars or target.base.name in loop_vars:
        return None
    used = body_names(stmt.value)
    if used is None:
        return None
    scope = body.scope
    outer: dict[str, Callable[[list], Any]] = {}
    arrays: dict[str, Callable[[list], Any]] = {}
    for name in sorted(used - loop_vars):
        try:
            sym, depth = compiler.lookup(scope, name, stmt.pos)
        except LoweringError:
            return None
        if depth == 0:
            return None
        if sym.tinfo.kind == "prim":
            outer[name] = compiler.expr(A.Name(stmt.pos, name), scope)
        elif sym.tinfo.kind == "array" and name != target.base.name:
            arrays[name] = compiler.node_expr(A.Name(stmt.pos, name), scope)
        else:
            return None
    return BulkBody(assign, stmt.value, body, key == st.var,
                    st.var, st.index, outer, arrays, used)
