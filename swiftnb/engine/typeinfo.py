"""Static Swift types (from the AST) -> run-time node factories and built-in data types.

The engine resolves type spellings itself from the program's ``type`` declarations so
that it can run an unchecked AST in tests; a checked program gives the same answers.
"""

from __future__ import annotations

from swiftnb.engine.values import TypeInfo
from swiftnb.lang import ast as A
from swiftnb.lang import types as T


class TypeTable:
    """Resolves ``TypeExpr`` spellings to :mod:`swiftnb.lang.types` and to TypeInfo."""

    def __init__(self, program: A.Program) -> None:
        self.decls: dict[str, A.TypeDecl] = {td.name: td for td in program.types}
        self._named: dict[str, T.SwiftType] = {}
        self._infos: dict[int, TypeInfo] = {}
        self._keep: list[T.SwiftType] = []

    # -- lang types
    def named(self, name: str) -> T.SwiftType:
        t = self._named.get(name)
        if t is not None:
            return t
        if name in T.BUILTIN_TYPES:
            t = T.BUILTIN_TYPES[name]
        elif name in self.decls:
            td = self.decls[name]
            if td.kind == "alias" and td.alias_of is not None:
                t = self.resolve(td.alias_of)
            elif td.kind == "struct" and td.fields:
                st = T.StructType(name, {}, td.pos)
                self._named[name] = st
                for f in td.fields:
                    st.fields[f.name] = self.resolve(f.type, f.dims)
                return st
            else:
                t = T.MappedType(name)
        else:
            t = T.MappedType(name)
        self._named[name] = t
        return t

    def resolve(self, texpr: A.TypeExpr, extra_dims: tuple = ()) -> T.SwiftType:
        base = self.named(texpr.name)
        dims = tuple(extra_dims) + tuple(texpr.dims)
        if not dims:
            return base
        keys = [T.INT if d is None else T.KEY_TYPES.get(d.name, T.INT) for d in dims]
        return T.array_of(base, *keys)

    # -- node factories
    def info(self, t: T.SwiftType) -> TypeInfo:
        key = id(t)
        ti = self._infos.get(key)
        if ti is not None:
            return ti
        self._keep.append(t)
        if isinstance(t, T.ArrayType):
            keyname = "auto" if t.is_auto else str(t.key)
            ti = TypeInfo(str(t), "array", elem=self.info(t.element), keytype=keyname)
        elif isinstance(t, T.StructType):
            ti = TypeInfo(t.name, "struct", fields={})
            self._infos[key] = ti
            for fname, ft in t.fields.items():
                ti.fields[fname] = self.info(ft)
            ti.mapped = any(f.mapped for f in ti.fields.values())
            return ti
        elif t.is_mapped:
            ti = TypeInfo(t.name, "file")
        elif t.is_external:
            ti = TypeInfo("external", "external")
        else:
            ti = TypeInfo(t.name, "prim")
        self._infos[key] = ti
        return ti
