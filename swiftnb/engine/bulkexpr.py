"""A pure expression of a loop body as one Python expression over the loop variables,
so that a foreach can compute many iterations' values in one list comprehension
(:mod:`swiftnb.engine.bulkloop`).

Why text and not the closures: a closure call per operator per element is most of an
element's cost; one comprehension over a range costs some 50 ns an element.

What it must keep: the values the closures of :mod:`swiftnb.engine.compiler` give,
exactly.  Swift's ints are Java's 32-bit ints; ``+``, ``-``, ``*`` and unary ``-`` on
ints are ring operations, so wrapping once after a chain of them gives what wrapping
after each gives, and a chain is wrapped where its value leaves the ring (another
operator, a mix with a float, the element stored).  Whatever may fail or differ (a
division by zero, a type the closures would refuse) raises in the comprehension, and
the loop then runs those iterations through the closures, which say it as always.
What the translation cannot prove the same it refuses (:class:`NotBulk`), and the loop
never takes this path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from swiftnb.engine.formatting import strcat_str
from swiftnb.engine.interp import INT_MAX, INT_MIN, wrap32
from swiftnb.engine.intops import java_idiv, java_rem
from swiftnb.errors import SwiftnbError
from swiftnb.lang import ast as A

__all__ = ["NotBulk", "ValueCode", "translate", "make_evaluator"]

#: the element types a translated expression handles (a bool is not an int here)
PLAIN = (int, float, str, bool)


class NotBulk(SwiftnbError):
    """The expression, with these operand types, is not translated (the loop runs as
    before)."""


@dataclass(frozen=True)
class ValueCode:
    """A translated expression: its Python text, the class of its value, and whether it
    is an int still to be wrapped to 32 bits (the result of a ring chain)."""

    text: str
    cls: type
    unwrapped: bool = False


class _Translator:
    """One expression's translation; ``names`` maps a variable of the body to the
    Python name it has in the comprehension and the class of its values, ``arrays`` a
    closed array it reads to the name of its elements by position (and ``NAME_first``,
    the key of the first) and their class."""

    def __init__(self, names: dict[str, tuple[str, type]],
                 arrays: dict[str, tuple[str, type]]) -> None:
        self.names = names
        self.arrays = arrays
        self.temps = 0

    def exact(self, c: ValueCode) -> str:
        """``c``'s text as the closures' value: a ring chain wrapped to 32 bits."""
        if not c.unwrapped:
            return c.text
        t = f"_t{self.temps}"
        self.temps += 1
        return (f"({t} if {INT_MIN} <= ({t} := {c.text}) <= {INT_MAX} "
                f"else _wrap32({t}))")

    def code(self, e: A.Expr) -> ValueCode:
        if isinstance(e, (A.IntLiteral, A.FloatLiteral, A.StringLiteral, A.BoolLiteral)):
            v = e.value
            if v.__class__ not in PLAIN or (v.__class__ is float and v != v):
                raise NotBulk("literal")
            return ValueCode(repr(v), v.__class__)
        if isinstance(e, A.Name):
            found = self.names.get(e.name)
            if found is None:
                raise NotBulk(e.name)
            return ValueCode(found[0], found[1])
        if isinstance(e, A.UnaryOp):
            o = self.code(e.operand)
            if e.op == "-":
                if o.cls is int:
                    return ValueCode(f"(-{o.text})", int, True)
                if o.cls is float:
                    return ValueCode(f"(-{o.text})", float)
                raise NotBulk("unary minus")
            if e.op == "!":
                return ValueCode(f"(not {self.exact(o)})", bool)
            if e.op == "+":
                return o
            raise NotBulk(e.op)
        if isinstance(e, A.BinaryOp):
            return self.binary(e.op, self.code(e.left), self.code(e.right))
        if isinstance(e, A.Index) and isinstance(e.base, A.Name):
            found = self.arrays.get(e.base.name)
            key = self.code(e.index)
            if found is None or key.cls is not int:
                raise NotBulk("index")
            name, cls = found
            return ValueCode(f"_element({name}, {name}_first, {self.exact(key)})", cls)
        raise NotBulk(type(e).__name__)

    def binary(self, op: str, l: ValueCode, r: ValueCode) -> ValueCode:
        nums = (int, float)
        if op in ("+", "-", "*"):
            if l.cls is int and r.cls is int:
                return ValueCode(f"({l.text} {op} {r.text})", int, True)
            if op == "+" and (l.cls is str or r.cls is str):
                return ValueCode(f"({self.as_text(l)} + {self.as_text(r)})", str)
            if l.cls in nums and r.cls in nums:
                return ValueCode(f"({self.exact(l)} {op} {self.exact(r)})", float)
            raise NotBulk(op)
        if op == "/":
            if l.cls in nums and r.cls in nums:
                # a zero divisor raises here: the closures give NaN or an infinity
                return ValueCode(f"({self.exact(l)} / {self.exact(r)})", float)
            raise NotBulk(op)
        if op == "%/":
            if l.cls is int and r.cls is int:
                return ValueCode(f"_idiv({self.exact(l)}, {self.exact(r)})", int)
            raise NotBulk(op)
        if op == "%%":
            if l.cls in nums and r.cls in nums:
                cls = int if l.cls is int and r.cls is int else float
                return ValueCode(f"_rem({self.exact(l)}, {self.exact(r)})", cls)
            raise NotBulk(op)
        if op in ("==", "!=", "<", ">", "<=", ">="):
            same = l.cls is r.cls or (l.cls in nums and r.cls in nums)
            if not same:
                raise NotBulk(op)
            return ValueCode(f"({self.exact(l)} {op} {self.exact(r)})", bool)
        if op in ("&&", "||"):
            # both sides evaluated, as the closures do (no short cut)
            fn = "_and" if op == "&&" else "_or"
            return ValueCode(f"{fn}({self.exact(l)}, {self.exact(r)})", bool)
        raise NotBulk(op)

    def as_text(self, c: ValueCode) -> str:
        """A ``+`` operand beside a string: Karajan's toString (``strcat_str``)."""
        if c.cls is str:
            return c.text
        return f"_cat({self.exact(c)})"


def translate(e: A.Expr, names: dict[str, tuple[str, type]], to_float: bool,
              arrays: dict[str, tuple[str, type]] | None = None) -> tuple[str, type]:
    """The Python text of ``e``'s value as the element it is stored as (``to_float``:
    a float array's element, where the closures make an int a float), and its class."""
    tr = _Translator(names, arrays or {})
    c = tr.code(e)
    text = tr.exact(c)
    if to_float and c.cls is int:
        return f"float({text})", float
    return text, c.cls


class _NoElement(SwiftnbError):
    """A key a bulk run does not find by position (the ordinary drive reads it)."""


def _element(vals: Sequence[Any], first: int, key: int) -> Any:
    """The element at ``key`` of a closed array kept by position from ``first``; a key
    it does not hold raises (the ordinary drive then says ``Invalid index``)."""
    i = key - first
    if 0 <= i < len(vals):
        return vals[i]
    raise _NoElement(key)


def _and(a: Any, b: Any) -> bool:
    return bool(a and b)


def _or(a: Any, b: Any) -> bool:
    return bool(a or b)


#: what a translated expression may call, and nothing else
_HELPERS: dict[str, Any] = {"_wrap32": wrap32, "_idiv": java_idiv, "_rem": java_rem,
                            "_cat": strcat_str, "_and": _and, "_or": _or,
                            "_element": _element}


def make_evaluator(text: str, loop_names: tuple[str, ...],
                   consts: tuple[str, ...]) -> Callable[..., Callable]:
    """A factory: given the values of ``consts`` (variables outside the loop, closed),
    a function ``(keys, vals) -> [value, ...]`` over the iterations' loop variables
    (``loop_names``: the names bound to a key and a value of each iteration, "_" for
    one the expression does not use)."""
    k, v = loop_names
    if k == "_":
        head = f"{v} in vals"
    elif v == "_":
        head = f"{k} in keys"
    else:
        head = f"{k}, {v} in zip(keys, vals)"
    params = ", ".join(consts)
    src = (f"def factory({params}):\n"
           f"    def values(keys, vals):\n"
           f"        return [{text} for {head}]\n"
           f"    return values\n")
    ns: dict[str, Any] = dict(_HELPERS)
    exec(compile(src, "<foreach body>", "exec"), ns)  # noqa: S102 - our own translation
    factory: Callable[..., Callable] = ns["factory"]
    return factory
