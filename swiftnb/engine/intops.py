"""``x op C`` with an int literal C (``i * 2``, ``v + 1``, ``k %% 10``): the arithmetic
of loop bodies, compiled to one closure that wraps to Swift's 32-bit ints as the general
operators do (:mod:`swiftnb.engine.compiler` falls back to those for anything else)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from swiftnb.engine.interp import INT_MAX, INT_MIN, wrap32
from swiftnb.engine.values import SwiftError

__all__ = ["int_const_op", "java_idiv", "java_rem"]


def java_idiv(a: Any, b: Any) -> Any:
    """Swift's ``%/``: Java's int division, truncated toward zero, wrapped."""
    if b == 0:
        raise SwiftError("/ by zero")
    q = abs(a) // abs(b)
    return wrap32(q if (a >= 0) == (b >= 0) else -q)


def java_rem(a: Any, b: Any) -> Any:
    """Swift's ``%%``: Java's remainder (the sign of the dividend)."""
    if b == 0:
        raise SwiftError("/ by zero")
    if isinstance(a, float) or isinstance(b, float):
        return math.fmod(a, b)
    q = abs(a) // abs(b)
    q = q if (a >= 0) == (b >= 0) else -q
    return a - b * q


def int_const_op(op: str, l: Callable, c: int, slot: int = 0) -> Callable | None:
    """``x op C`` with an int literal C: the common loop arithmetic, one call cheaper;
    two cheaper when x is a name of the frame's own (``slot``): a loop variable over a
    range or a closed element holds its plain value there, read without ``l``."""
    if op == "+":
        if slot:
            def addcs(f: list) -> Any:
                a = f[slot]
                if a.__class__ is int:
                    x = a + c
                    return x if INT_MIN <= x <= INT_MAX else wrap32(x)
                a = l(f)
                if a.__class__ is int:
                    x = a + c
                    return x if INT_MIN <= x <= INT_MAX else wrap32(x)
                if a.__class__ is str:
                    return a + str(c)
                return a + c
            return addcs

        def addc(f: list) -> Any:
            a = l(f)
            if a.__class__ is int:
                x = a + c
                return x if INT_MIN <= x <= INT_MAX else wrap32(x)
            if a.__class__ is str:
                return a + str(c)
            return a + c
        return addc
    if op == "-":
        def subc(f: list) -> Any:
            x = l(f) - c
            return x if x.__class__ is not int or INT_MIN <= x <= INT_MAX else wrap32(x)
        return subc
    if op == "*":
        if slot:
            def mulcs(f: list) -> Any:
                a = f[slot]
                x = (a if a.__class__ is int else l(f)) * c
                return x if x.__class__ is not int or INT_MIN <= x <= INT_MAX else wrap32(x)
            return mulcs

        def mulc(f: list) -> Any:
            x = l(f) * c
            return x if x.__class__ is not int or INT_MIN <= x <= INT_MAX else wrap32(x)
        return mulc
    if op == "%%" and c > 0:
        def modc(f: list) -> Any:
            a = l(f)
            if a.__class__ is int:
                return a % c if a >= 0 else -((-a) % c)
            return math.fmod(a, c)
        return modc
    return None
