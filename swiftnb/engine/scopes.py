"""The compile-time side of the executable tree: variables (``Sym``: a type, a slot in
a frame) and block scopes (``Scope``: one frame at run time), and the error of a checked
program that cannot be lowered.  The statements that run over those frames are in
:mod:`swiftnb.engine.interp`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from swiftnb.engine.values import TypeInfo
from swiftnb.errors import SwiftnbError
from swiftnb.lang import ast as A
from swiftnb.lang import types as T

if TYPE_CHECKING:
    from swiftnb.engine.interp import Exec

__all__ = ["LoweringError", "Sym", "Scope"]


class LoweringError(SwiftnbError):
    """A checked program that cannot be lowered to the executable tree: the checker
    should have refused it (its own kind, so it is not taken for ``lang.CompileError``)."""

    def __init__(self, message: str, pos: A.Pos | None = None) -> None:
        super().__init__(f"{pos}: {message}" if pos else message)
        self.message = message
        self.pos = pos


class Sym:
    """A variable: its type, its slot in its scope's frame, how it is written."""

    __slots__ = ("name", "ltype", "tinfo", "pos", "slot", "scope", "is_global", "mapping",
                 "nwriters", "formal", "kind", "alias")

    def __init__(self, name: str, ltype: T.SwiftType, tinfo: TypeInfo, pos: A.Pos,
                 kind: str = "var") -> None:
        self.name = name
        self.ltype = ltype
        self.tinfo = tinfo
        self.pos = pos
        self.slot = -1
        self.scope: Scope | None = None
        self.is_global = False
        self.mapping: A.Mapping | None = None
        self.nwriters = 0
        self.formal = False
        self.kind = kind  # "var", "loop" (foreach value/key), "iter" (iterate counter)
        #: for a foreach value variable: the variable it iterates (writing an element
        #: through the loop variable writes that array)
        self.alias: Sym | None = None

    @property
    def composite(self) -> bool:
        return self.tinfo.kind in ("array", "struct")

    def __repr__(self) -> str:
        return f"Sym({self.name})"


class Scope:
    """A compile-time block scope: one frame at run time."""

    def __init__(self, parent: Scope | None, proc: bool = False) -> None:
        self.parent = parent
        self.proc = proc
        self.syms: dict[str, Sym] = {}
        self.nslots = 1
        self.decls: list[Sym] = []
        self.hidden: list[Exec] = []

    def declare(self, sym: Sym) -> Sym:
        sym.slot = self.nslots
        self.nslots += 1
        sym.scope = self
        self.syms[sym.name] = sym
        return sym

    def temp(self, ltype: T.SwiftType, tinfo: TypeInfo, pos: A.Pos) -> Sym:
        sym = Sym("?", ltype, tinfo, pos, kind="temp")
        sym.slot = self.nslots
        self.nslots += 1
        sym.scope = self
        self.decls.append(sym)
        return sym
