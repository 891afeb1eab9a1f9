"""The Swift type model shared by the checker and the engine.

Swift has four primitive types (``int``, ``float``, ``string``, ``boolean``), *mapped*
types whose values are files (``type file;`` — ``file`` is not built in, every script
declares it — and any other ``type x;``), ``external`` (a mapped type with no file, used
for pure dependencies), structs with ordered fields, arrays keyed by ``int``, ``string``,
``float``, ``boolean`` or ``auto`` (append-only, int keys chosen by the runtime), and
``any`` (only in builtin signatures).

Primitive, mapped, external, any and array types are values (compare with ``==``).
Struct types are compared by identity: the checker makes exactly one :class:`StructType`
per ``type`` declaration and fills its ``fields`` after reading all declarations (fields
may refer to types declared later).  ``str(t)`` is the Swift spelling used in messages.

Stability contract: shared with the engine; additive changes only.
"""

from __future__ import annotations

from dataclasses import dataclass


class SwiftType:
    """Base class.  Subclasses answer the classification questions below."""

    __slots__ = ()

    @property
    def name(self) -> str:  # overridden
        raise NotImplementedError

    is_primitive = False
    is_numeric = False
    is_mapped = False  # a file-valued leaf (mapped types, not external)
    is_external = False
    is_struct = False
    is_array = False
    is_any = False

    def has_files(self) -> bool:
        """True when a value of this type contains mapped (file) leaves."""
        return self.is_mapped

    def leaf(self) -> SwiftType:
        """The innermost element type of (nested) arrays; the type itself otherwise."""
        return self

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class PrimitiveType(SwiftType):
    type_name: str

    @property
    def name(self) -> str:
        return self.type_name

    @property
    def is_primitive(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    @property
    def is_numeric(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return self.type_name in ("int", "float")

    def __str__(self) -> str:
        return self.type_name


INT = PrimitiveType("int")
FLOAT = PrimitiveType("float")
STRING = PrimitiveType("string")
BOOLEAN = PrimitiveType("boolean")
PRIMITIVES: dict[str, PrimitiveType] = {t.type_name: t for t in (INT, FLOAT, STRING, BOOLEAN)}


@dataclass(frozen=True, slots=True)
class MappedType(SwiftType):
    """A file-valued type: ``file``, ``type messagefile;``, ``type image {}``."""

    type_name: str

    @property
    def name(self) -> str:
        return self.type_name

    @property
    def is_mapped(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    def __str__(self) -> str:
        return self.type_name


@dataclass(frozen=True, slots=True)
class ExternalType(SwiftType):
    """``external``: a value that only signals completion (no file, no data)."""

    @property
    def name(self) -> str:
        return "external"

    @property
    def is_external(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    def __str__(self) -> str:
        return "external"


@dataclass(frozen=True, slots=True)
class AnyType(SwiftType):
    """``any``: accepted by builtin signatures for every argument type."""

    @property
    def name(self) -> str:
        return "any"

    @property
    def is_any(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    def __str__(self) -> str:
        return "any"


@dataclass(frozen=True, slots=True)
class AutoKeyType(SwiftType):
    """``auto``: key type of append-only arrays (``int[auto] a; a << v;``); keys are ints."""

    @property
    def name(self) -> str:
        return "auto"

    def __str__(self) -> str:
        return "auto"


EXTERNAL = ExternalType()
ANY = AnyType()
AUTO = AutoKeyType()

#: names resolved without a ``type`` declaration
BUILTIN_TYPES: dict[str, SwiftType] = {**PRIMITIVES, "external": EXTERNAL, "any": ANY}
#: valid array key types
KEY_TYPES: dict[str, SwiftType] = {"int": INT, "string": STRING, "float": FLOAT,
                                   "boolean": BOOLEAN, "auto": AUTO}


class StructType(SwiftType):
    """``type T { int a; file f; }``: ordered named fields.  Identity equality."""

    __slots__ = ("type_name", "fields", "pos")

    def __init__(self, type_name: str, fields: dict[str, SwiftType] | None = None,
                 pos: object = None) -> None:
        self.type_name = type_name
        self.fields: dict[str, SwiftType] = dict(fields or {})
        self.pos = pos  # the TypeDecl's Pos, for messages

    @property
    def name(self) -> str:
        return self.type_name

    @property
    def is_struct(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    def has_files(self, _seen: frozenset = frozenset()) -> bool:
        if self in _seen:
            return False
        seen = _seen | {self}
        for t in self.fields.values():
            if isinstance(t, StructType):
                if t.has_files(seen):
                    return True
            elif t.has_files():
                return True
        return False

    def __repr__(self) -> str:
        return f"StructType({self.type_name!r}, {list(self.fields)})"

    def __str__(self) -> str:
        return self.type_name


@dataclass(frozen=True, slots=True)
class ArrayType(SwiftType):
    """``element[key]``; ``key`` is INT, STRING, FLOAT, BOOLEAN or AUTO."""

    element: SwiftType
    key: SwiftType = INT

    @property
    def name(self) -> str:
        return str(self)

    @property
    def is_array(self) -> bool:  # type: ignore[override]  # a property for the base's constant
        return True

    @property
    def is_auto(self) -> bool:
        return self.key is AUTO or self.key == AUTO

    def has_files(self) -> bool:
        return self.element.has_files()

    def leaf(self) -> SwiftType:
        t: SwiftType = self
        while isinstance(t, ArrayType):
            t = t.element
        return t

    @property
    def index_type(self) -> SwiftType:
        """The type of keys as values (``auto`` keys are ints)."""
        return INT if self.key == AUTO else self.key

    def __str__(self) -> str:
        dims = []
        t: SwiftType = self
        while isinstance(t, ArrayType):
            dims.append("[]" if t.key == INT else f"[{t.key}]")
            t = t.element
        return str(t) + "".join(dims)


def array_of(element: SwiftType, *keys: SwiftType) -> SwiftType:
    """``array_of(T, K1, K2)`` is the type of ``a`` in ``T a[K1][K2]`` (``a[k1][k2]: T``)."""
    t = element
    for key in reversed(keys):
        t = ArrayType(t, key)
    return t


def same_type(a: SwiftType, b: SwiftType) -> bool:
    """Equality that treats ``auto`` and ``int`` keys as the same shape."""
    if a is b or a == b:
        return True
    if isinstance(a, ArrayType) and isinstance(b, ArrayType):
        ka = INT if a.key == AUTO else a.key
        kb = INT if b.key == AUTO else b.key
        return ka == kb and same_type(a.element, b.element)
    return False


def assignable(target: SwiftType, source: SwiftType) -> bool:
    """May a value of type ``source`` be assigned to (or passed as) ``target``?

    Identity, ``any`` on either side, and ``int`` -> ``float`` widening of scalars.
    Arrays must have the same key type (``auto`` counts as ``int``) and the same element
    type (no widening inside arrays).  Different mapped types are not interchangeable
    (Swift 0.96 compared type names).
    """
    if target.is_any or source.is_any:
        return True
    if same_type(target, source):
        return True
    if target == FLOAT and source == INT:
        return True
    if isinstance(target, ArrayType) and isinstance(source, ArrayType):
        kt = INT if target.key == AUTO else target.key
        ks = INT if source.key == AUTO else source.key
        return kt == ks and (source.element.is_any or target.element.is_any
                             or same_type(target.element, source.element))
    return False


def numeric_result(a: SwiftType, b: SwiftType) -> SwiftType:
    """Result type of arithmetic on two numeric types (int op int -> int, else float)."""
    return INT if a == INT and b == INT else FLOAT


__all__ = [
    "SwiftType", "PrimitiveType", "MappedType", "ExternalType", "AnyType", "AutoKeyType",
    "StructType", "ArrayType", "INT", "FLOAT", "STRING", "BOOLEAN", "EXTERNAL", "ANY",
    "AUTO", "PRIMITIVES", "BUILTIN_TYPES", "KEY_TYPES", "array_of", "same_type",
    "assignable", "numeric_result",
]
