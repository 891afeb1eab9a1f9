"""The plain data that built-in functions and mappers take and return.

Built-ins are written against ordinary Python values so that they can be tested without
the dataflow engine, and so that the engine (which owns futures, closing and waiting)
converts a *closed* value into this form once, right before the call:

========================  ==========================================================
Swift value               plain data
========================  ==========================================================
``int``                   ``int``
``float``                 ``float``
``string``                ``str``
``boolean``               ``bool``
array ``T[K]``            ``dict`` key -> element (any insertion order; use
                          :func:`sorted_keys` / :func:`sorted_items` for Swift order)
struct                    :class:`StructValue` (type name, variable path name, fields)
mapped file / external    :class:`FileValue` (variable path name, type name, path)
========================  ==========================================================

The *name* of a struct or file is its variable path (``s``, ``a[0].f``) because ``trace``
prints it (``s:S - Closed``, ``g:file = <FILE> - Closed``, Swift reference section 2.1).

Mappers address parts of a variable by a :data:`Path`, a tuple of :class:`Index` and
:class:`Field` steps, e.g. ``a[0].f`` is ``(Index(0), Field("f"))``.

Types that built-ins need at run time (``readData`` reads into the declared type of the
variable it is assigned to) are described by the small :data:`SwiftType` classes here,
which the engine builds from the checked program's types.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, overload, runtime_checkable

from swiftnb.errors import SwiftnbError

if TYPE_CHECKING:  # the checked program's types (engine may import lang; DESIGN.md)
    from swiftnb.lang import types as lt

__all__ = [
    "Key",
    "Value",
    "StructValue",
    "FileValue",
    "Index",
    "Field",
    "Step",
    "Path",
    "path_str",
    "parse_path",
    "sorted_keys",
    "sorted_items",
    "key_order",
    "PrimType",
    "ArrayType",
    "StructType",
    "MappedType",
    "SwiftType",
    "INT",
    "FLOAT",
    "STRING",
    "BOOLEAN",
    "type_str",
    "BuiltinError",
    "BuiltinContext",
    "leaf_files",
    "as_data_type",
    "SimpleContext",
    "AssertionFailed",
    "url_path",
    "local_path",
]

# --------------------------------------------------------------------------- values

Key = int | float | str | bool


@dataclass(slots=True)
class StructValue:
    """A closed struct: its type name, the variable path it lives at, and its fields.

    ``fields`` maps field name to plain data; a field that was never assigned is absent.
    """

    type_name: str
    name: str = "?"
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class FileValue:
    """A mapped value (file, or a ``type x;`` / ``external`` value).

    ``path`` is the mapped file name as the mapper produced it (relative to the run's
    base directory unless absolute); ``None`` for ``external`` values, which have no file.
    """

    name: str
    type_name: str = "file"
    path: str | None = None


Value = int | float | str | bool | dict | StructValue | FileValue | None


# --------------------------------------------------------------------------- paths


@dataclass(frozen=True, slots=True)
class Index:
    """An array subscript step ``[key]`` of a :data:`Path`."""

    key: Key

    def __str__(self) -> str:
        k = self.key
        if isinstance(k, bool):
            return f"[{'true' if k else 'false'}]"
        if isinstance(k, str):
            return f'["{k}"]'
        return f"[{k}]"


@dataclass(frozen=True, slots=True)
class Field:
    """A struct member step ``.name`` of a :data:`Path`."""

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


Step = Index | Field
Path = tuple  # tuple[Step, ...]; () is the variable itself (Swift writes it as "$")


def path_str(name: str, path: Iterable[Step]) -> str:
    """The Swift spelling of a variable path: ``path_str("a", (Index(0), Field("f")))``
    is ``a[0].f``.  String keys are quoted as Swift source would write them."""
    return name + "".join(str(s) for s in path)


def parse_path(text: str) -> tuple:
    """Parse an ext-mapper / readStructured path (``$``, ``[0]``, ``[0].f``, ``fld``,
    ``derde.links``, ``[0][0].c[0]``, ``["key"]``) into a tuple of steps.

    Integer subscripts become ``int`` keys; quoted ones ``str``; anything else in brackets
    is kept as a string key.  Raises ``ValueError`` on malformed text.
    """
    t = text.strip()
    if t in ("$", ""):
        return ()
    if t.startswith("$"):
        t = t[1:]
    steps: list[Step] = []
    i = 0
    n = len(t)
    expect_field = not t.startswith("[") and not t.startswith(".")
    while i < n:
        c = t[i]
        if c == "[":
            j = t.find("]", i)
            if j < 0:
                raise ValueError(f"unclosed '[' in path {text!r}")
            raw = t[i + 1 : j].strip()
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
                steps.append(Index(raw[1:-1]))
            else:
                try:
                    steps.append(Index(int(raw)))
                except ValueError:
                    try:
                        steps.append(Index(float(raw)))
                    except ValueError:
                        steps.append(Index(raw))
            i = j + 1
            expect_field = False
        elif c == "." or expect_field:
            if c == ".":
                i += 1
            j = i
            while j < n and (t[j].isalnum() or t[j] == "_"):
                j += 1
            if j == i:
                raise ValueError(f"expected a field name at {i} in path {text!r}")
            steps.append(Field(t[i:j]))
            i = j
            expect_field = False
        else:
            raise ValueError(f"unexpected {c!r} at {i} in path {text!r}")
    return tuple(steps)


# --------------------------------------------------------------------------- key order


def key_order(key: Key) -> tuple:
    """Sort key giving Swift's array order: numbers numerically (ints and floats mixed,
    negatives first), ``false`` before ``true``, strings lexically (by UTF-16 code unit,
    as Java's ``String.compareTo``)."""
    if isinstance(key, bool):
        return (0, int(key), "")
    if isinstance(key, (int, float)):
        return (1, key, "")
    return (2, 0, key)


def sorted_keys(array: dict) -> list:
    """The keys of ``array`` in Swift's iteration and printing order."""
    return sorted(array, key=key_order)


def sorted_items(array: dict) -> list[tuple[Any, Any]]:
    """``(key, value)`` pairs of ``array`` in Swift's order."""
    return [(k, array[k]) for k in sorted(array, key=key_order)]


def leaf_files(value: Any) -> Iterator[FileValue]:
    """Every :class:`FileValue` inside ``value`` (arrays in key order, struct fields in
    field order), which is what ``filename``/``filenames`` of a composite list."""
    stack = [value]  # a stack of its own: values may nest thousands deep
    while stack:
        x = stack.pop()
        if isinstance(x, FileValue):
            yield x
        elif isinstance(x, dict):
            stack.extend(v for _, v in reversed(sorted_items(x)))
        elif isinstance(x, StructValue):
            stack.extend(reversed(list(x.fields.values())))


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True)
class PrimType:
    """``int``, ``float``, ``string`` or ``boolean``."""

    name: str


@dataclass(frozen=True, slots=True)
class ArrayType:
    """``elem[key]``; ``key`` is a primitive type name or ``"auto"``."""

    elem: SwiftType
    key: str = "int"


@dataclass(frozen=True, slots=True)
class StructType:
    """A struct type with its fields in declaration order (a tuple of pairs, hashable)."""

    name: str
    fields: tuple = ()  # tuple[tuple[str, SwiftType], ...]

    def field_dict(self) -> dict[str, SwiftType]:
        return dict(self.fields)


@dataclass(frozen=True, slots=True)
class MappedType:
    """A file-valued type (``type file;``, ``type image {}``, ``external``)."""

    name: str


SwiftType = PrimType | ArrayType | StructType | MappedType

if TYPE_CHECKING:
    #: a type of this module or of the checked program (:func:`as_data_type` takes both)
    TypeLike = SwiftType | lt.SwiftType
INT = PrimType("int")
FLOAT = PrimType("float")
STRING = PrimType("string")
BOOLEAN = PrimType("boolean")


def type_str(t: SwiftType) -> str:
    """Swift spelling of a type, as messages and ``%p``/trace descriptors print it."""
    if isinstance(t, ArrayType):
        return f"{type_str(t.elem)}[{'' if t.key == 'int' else t.key}]"
    return t.name


# --------------------------------------------------------------------------- errors


class BuiltinError(SwiftnbError):
    """A run-time failure of a built-in or mapper, with the text the user should see
    (e.g. ``Missing command line argument: name``).  The engine reports it with the
    script position of the call and fails the run (exit 2)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class AssertionFailed(BuiltinError):
    """``assert`` failed; the engine prints ``swift: assert failed: MSG`` (already written
    through the context by the builtin) and fails the run with MSG."""


# --------------------------------------------------------------------------- context


@runtime_checkable
class BuiltinContext(Protocol):
    """What a built-in may use of the running program.

    ``script_args``: the ``-name=value`` arguments after the script name.
    ``script_argv``: those arguments as the raw words of the command line, or ``None``
    when they were given as a mapping (``args()`` parses the words itself; without them
    it rebuilds ``-name=value`` words).
    ``base_dir``: the directory relative paths are resolved against (Swift's CWD).
    ``run_dir``: the run directory (for temporary files).
    ``return_type``: the declared type the result is assigned to, when the engine knows
    it (``readData``/``readStructured`` need it); ``None`` otherwise.  Either a type of
    this module or a ``swiftnb.lang.types`` type (see :func:`as_data_type`).
    ``return_file``: for ``writeData``, the :class:`FileValue` (mapped path) of the file
    variable the result is assigned to; ``None`` otherwise.
    ``arg_names``: the variable names of the actual arguments (``None`` for
    expressions), used in messages such as ``%i requires an int! Variable "x" is a float``.
    ``arg_types``: for a builtin registered with ``needs_arg_types`` (writeData), the
    declared types of its positional arguments (``None`` where unknown).
    """

    script_args: dict[str, str]
    script_argv: list[str] | None
    base_dir: str
    run_dir: str
    return_type: SwiftType | None
    return_file: FileValue | None
    arg_names: list | None
    arg_types: list | None

    def write_stdout(self, text: str) -> None:
        """Write text to the run's console (stdout), atomically, without adding a newline."""

    def emit(self, kind: str, fields: dict | None = None, text: str | None = None) -> None:
        """Emit an event on the run's bus (e.g. TRACE with the trace line as text)."""

    def warn(self, message: str) -> None:
        """Report a warning once per distinct message (printed as ``Warning: MSG``)."""


@dataclass
class SimpleContext:
    """A ready-made :class:`BuiltinContext` for tests and tools: collects stdout, events
    and warnings in lists."""

    script_args: dict[str, str] = field(default_factory=dict)
    script_argv: list[str] | None = None
    base_dir: str = "."
    run_dir: str = "."
    return_type: SwiftType | None = None
    return_file: FileValue | None = None
    arg_names: list | None = None
    arg_types: list | None = None
    stdout: list[str] = field(default_factory=list)
    events: list[tuple] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def write_stdout(self, text: str) -> None:
        self.stdout.append(text)

    def emit(self, kind: str, fields: dict | None = None, text: str | None = None) -> None:
        self.events.append((kind, fields or {}, text))

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)

    @property
    def out(self) -> str:
        return "".join(self.stdout)


@overload
def as_data_type(t: None, _within: frozenset[str] = ...) -> None: ...
@overload
def as_data_type(t: SwiftType | lt.SwiftType, _within: frozenset[str] = ...) -> SwiftType: ...


def as_data_type(t: TypeLike | None, _within: frozenset[str] = frozenset()) -> SwiftType | None:
    """Accept either a type of this module or one of ``swiftnb.lang.types`` (what the
    checked program carries) and return the equivalent type of this module.

    A structure that holds arrays of itself (``type T { T[] next; }``) is described
    once: where it recurs, it is a ``StructType`` without fields.  Mappers and the data
    file readers look no deeper than one structure's fields."""
    if t is None or isinstance(t, (PrimType, ArrayType, StructType, MappedType)):
        return t
    from swiftnb.lang import types as lt  # engine may import lang (docs/design.md)

    if isinstance(t, lt.PrimitiveType):
        return PrimType(t.type_name)
    if isinstance(t, lt.ArrayType):
        key = "auto" if t.key == lt.AUTO else str(t.key)
        return ArrayType(as_data_type(t.element, _within), key)
    if isinstance(t, lt.StructType):
        if t.type_name in _within:
            return StructType(t.type_name)
        inner = _within | {t.type_name}
        return StructType(t.type_name,
                          tuple((n, as_data_type(ft, inner)) for n, ft in t.fields.items()))
    if isinstance(t, (lt.MappedType, lt.ExternalType)):
        return MappedType(t.name)
    if isinstance(t, lt.AnyType):
        return PrimType("string")
    raise TypeError(f"not a Swift type: {t!r}")


def url_path(name: str) -> str:
    """Swift file URLs name local files: ``file://localhost/x.out`` is the relative path
    ``x.out`` (as Swift's test scripts use it), ``file:///x`` the absolute ``/x``; other
    names are returned unchanged."""
    if name.startswith("file://"):
        rest = name[len("file://"):]
        if rest.startswith("localhost/"):
            return rest[len("localhost/"):]
        return rest
    return name


def local_path(base_dir: str, name: str) -> str:
    """The on-disk path of a mapped name: URLs unwrapped, relative names joined to
    ``base_dir``."""
    import os

    name = url_path(name)
    return name if os.path.isabs(name) else os.path.join(base_dir, name)
