"""The abstract syntax tree of a Swift/K 0.9x script.

Every node is a frozen dataclass with ``slots=True`` and ``eq=False``: nodes are immutable,
small, and hash by identity, so the checker and the engine can key dictionaries by node
(``checked.type_of(node)``, per-node dataflow state) without paying for structural
hashing.  Every node carries ``pos`` (file, line, column; 1-based) as its first field.

Stability contract: this module is shared with the engine.  Changes are additive only
(new node classes, new fields *with defaults* at the end); nothing is renamed or removed.

Conventions
-----------
* Tuples, never lists, for child sequences.
* Type spellings are kept as written (:class:`TypeExpr`); the checker resolves them to
  :mod:`swiftnb.lang.types` objects (``checked.type_of(decl_or_expr)``).
* Array dimensions are a tuple of key types, outermost first; ``None`` means the default
  key type (``int``), a :class:`TypeExpr` names the key type (``string``, ``auto`` ...).
  For ``T[K1] a[K2]`` the declarator's dimensions come first (``a[k2][k1]``).
* ``else if`` is represented as an ``orelse`` :class:`Block` holding a single :class:`If`.
* The legacy compound form ``(file o) p(...) { app { cmd ...; } }`` is parsed into an
  :class:`AppProcedure` with ``legacy=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class Pos(NamedTuple):
    """A source position: file name as given to the parser, 1-based line and column.

    (A NamedTuple rather than a dataclass: one is made per node, and tuples are made
    several times faster.)"""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


NOWHERE = Pos("<builtin>", 0, 0)


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """Base of every node; only carries the position."""

    pos: Pos


# --------------------------------------------------------------------------- types


@dataclass(frozen=True, slots=True, eq=False)
class TypeExpr(Node):
    """A type as written: ``file``, ``int[]``, ``float[string]``, ``int[auto]``, ``T[][]``.

    ``name`` is the base type name; ``dims`` the array dimensions (outermost first), each
    ``None`` (default key, int) or a key :class:`TypeExpr` (``int``, ``string``, ``float``,
    ``boolean``, ``auto``; the checker rejects others).
    """

    name: str
    dims: tuple[TypeExpr | None, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class Field(Node):
    """A struct field: ``T name[]...;`` (several fields sharing a type are split)."""

    type: TypeExpr
    name: str
    dims: tuple[TypeExpr | None, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class TypeDecl(Node):
    """``type name;`` (kind "mapped"), ``type name other;`` (kind "alias", ``alias_of``),
    ``type name { fields }`` (kind "struct"; ``type name {}`` is a struct with no fields,
    which the checker treats as a mapped type, as Swift did)."""

    name: str
    kind: str  # "mapped" | "alias" | "struct"
    alias_of: TypeExpr | None = None
    fields: tuple[Field, ...] = ()


# --------------------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True, eq=False)
class Expr(Node):
    """Base of expressions."""


@dataclass(frozen=True, slots=True, eq=False)
class IntLiteral(Expr):
    value: int


@dataclass(frozen=True, slots=True, eq=False)
class FloatLiteral(Expr):
    value: float
    text: str = ""  # the spelling in the source (for faithful messages)


@dataclass(frozen=True, slots=True, eq=False)
class StringLiteral(Expr):
    """A string literal with escapes already interpreted."""

    value: str


@dataclass(frozen=True, slots=True, eq=False)
class BoolLiteral(Expr):
    value: bool


@dataclass(frozen=True, slots=True, eq=False)
class Name(Expr):
    """A variable reference."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Index(Expr):
    """``base[index]``."""

    base: Expr
    index: Expr


@dataclass(frozen=True, slots=True, eq=False)
class StarIndex(Expr):
    """``base[*]``: the whole array, used in slices such as ``a[*].f``."""

    base: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Member(Expr):
    """``base.field``.  When ``base`` is an array of structs (``a.f`` or ``a[*].f``), the
    checker types it as a slice: an array of the field's type with the same keys
    (``checked.is_slice(node)``).  ``field == "*"`` is ``base.*`` (all fields)."""

    base: Expr
    field: str


@dataclass(frozen=True, slots=True, eq=False)
class BinaryOp(Expr):
    """``left op right``; op is the source spelling: ``+ - * / %/ %% == != < > <= >= && ||``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True, eq=False)
class UnaryOp(Expr):
    """``op operand``; op is ``-``, ``+`` or ``!``."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Arg(Node):
    """One actual argument: positional (``name is None``) or keyword ``name=value``."""

    value: Expr
    name: str | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Call(Expr):
    """``name(args)`` or, with ``at_syntax``, ``@name(args)``.  Used as an expression and,
    wrapped in :class:`CallStatement`, as a statement."""

    name: str
    args: tuple[Arg, ...] = ()
    at_syntax: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class FilenameOf(Expr):
    """``@v`` / ``@v.f`` / ``@(v)``: the same as ``filename(v)``."""

    target: Expr


@dataclass(frozen=True, slots=True, eq=False)
class ArrayLiteral(Expr):
    """``[e1, e2, ...]``; keys 0..n-1."""

    items: tuple[Expr, ...]


@dataclass(frozen=True, slots=True, eq=False)
class FieldInit(Node):
    """``name: value`` in a struct initializer; ``pos`` is the name's."""

    name: str
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class StructLiteral(Expr):
    """``{a: "x", b: 1}`` (trunk): a struct value; its type is the context's (the
    variable assigned, the array element, the struct field, the parameter)."""

    fields: tuple[FieldInit, ...]


@dataclass(frozen=True, slots=True, eq=False)
class MapLiteral(Expr):
    """``{"k": v, 10: w}`` and ``{}`` (trunk): a sparse array with these keys."""

    entries: tuple[tuple[Expr, Expr], ...]


@dataclass(frozen=True, slots=True, eq=False)
class Range(Expr):
    """``[start:stop]`` or ``[start:stop:step]``, inclusive upper bound."""

    start: Expr
    stop: Expr
    step: Expr | None = None


# --------------------------------------------------------------------------- declarations


@dataclass(frozen=True, slots=True, eq=False)
class MapperParam(Node):
    """``name = value`` inside a mapping."""

    name: str
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Mapping(Node):
    """``<"path">`` (``mapper is None``, ``source`` is the expression, normally a string
    literal: SingleFileMapper shorthand) or ``<mapper_name; k=v, ...>``."""

    mapper: str | None
    params: tuple[MapperParam, ...] = ()
    source: Expr | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Declarator(Node):
    """One declared name inside a :class:`VarDecl`: ``name[dims] <mapping> = init``.

    The declarator is the *declaration node* of the variable: the checker gives its type
    (``checked.type_of(declarator)``) and its symbol."""

    name: str
    dims: tuple[TypeExpr | None, ...] = ()
    mapping: Mapping | None = None
    init: Expr | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Stmt(Node):
    """Base of statements."""


@dataclass(frozen=True, slots=True, eq=False)
class VarDecl(Stmt):
    """``[global] T a, b[] <m>, c = e;``."""

    type: TypeExpr
    declarators: tuple[Declarator, ...]
    is_global: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Block(Stmt):
    """``{ statements }`` (also every procedure / loop / branch body)."""

    statements: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Assign(Stmt):
    """``target = value;`` where target is an lvalue (Name, Index, Member)."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class Append(Stmt):
    """``target << value;`` (target must be an ``auto``-keyed array)."""

    target: Expr
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class CallStatement(Stmt):
    """A call used as a statement: ``p(args);`` (outputs, if any, are discarded)."""

    call: Call


@dataclass(frozen=True, slots=True, eq=False)
class ReturnTarget(Node):
    """One target of a multi-assignment ``(a, b[1], T c = out2) = p(...)``.

    ``target`` is an lvalue; ``formal`` the output parameter name when bound by name
    (``x = out2``), else ``None`` (positional); ``declared_type`` is set when the target
    declares a new variable (``T c``), in which case this node is that variable's
    declaration node."""

    target: Expr
    formal: str | None = None
    declared_type: TypeExpr | None = None


@dataclass(frozen=True, slots=True, eq=False)
class MultiAssign(Stmt):
    """``(t1, t2, ...) = p(args);``."""

    targets: tuple[ReturnTarget, ...]
    call: Call


@dataclass(frozen=True, slots=True, eq=False)
class If(Stmt):
    cond: Expr
    then: Block
    orelse: Block | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Case(Node):
    """``case value:`` (``value is None`` for ``default:``) followed by its statements."""

    value: Expr | None
    body: Block


@dataclass(frozen=True, slots=True, eq=False)
class Switch(Stmt):
    selector: Expr
    cases: tuple[Case, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Foreach(Stmt):
    """``foreach var[, index] in iterable { body }``.  The Foreach node is the declaration
    node of both loop variables (see the checker's symbols)."""

    var: str
    index: str | None
    iterable: Expr
    body: Block


@dataclass(frozen=True, slots=True, eq=False)
class Iterate(Stmt):
    """``iterate var { body } until (cond);``."""

    var: str
    body: Block
    until: Expr


# --------------------------------------------------------------------------- procedures


@dataclass(frozen=True, slots=True, eq=False)
class Formal(Node):
    """A formal parameter ``T name[] = default``; the declaration node of the parameter."""

    type: TypeExpr
    name: str
    dims: tuple[TypeExpr | None, ...] = ()
    default: Expr | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Profile(Node):
    """``profile key = value;`` inside an app body (key is usually a string literal)."""

    key: Expr
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class AppCommand(Node):
    """One command line of an app body: ``tr arg... stdin=e stdout=e stderr=e;``.

    ``executable`` is the transformation name as written (identifier or string literal
    contents); ``args`` the argument expressions in order; redirections are expressions
    or ``None``."""

    executable: str
    args: tuple[Expr, ...] = ()
    stdin: Expr | None = None
    stdout: Expr | None = None
    stderr: Expr | None = None


@dataclass(frozen=True, slots=True, eq=False)
class Procedure(Node):
    """Base of procedure declarations."""

    name: str
    outputs: tuple[Formal, ...]
    inputs: tuple[Formal, ...]


@dataclass(frozen=True, slots=True, eq=False)
class AppProcedure(Procedure):
    """``app (outputs) name(inputs) { profile...; command; }``.  Swift 0.96 allows exactly
    one command; we accept several (Swift master) and the engine runs them in order."""

    profiles: tuple[Profile, ...] = ()
    commands: tuple[AppCommand, ...] = ()
    legacy: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class CompoundProcedure(Procedure):
    """``(outputs) name(inputs) { statements }``."""

    body: Block


# --------------------------------------------------------------------------- program


@dataclass(frozen=True, slots=True, eq=False)
class Import(Node):
    """``import "path";`` (path as written, without ``.swift``)."""

    path: str


@dataclass(frozen=True, slots=True, eq=False)
class Program(Node):
    """One source file (or, after :func:`swiftnb.lang.load`, the merged program).

    ``statements`` are the top-level statements in source order, including
    :class:`VarDecl`; ``types`` and ``procedures`` are the declarations."""

    imports: tuple[Import, ...]
    types: tuple[TypeDecl, ...]
    procedures: tuple[Procedure, ...]
    statements: tuple[Stmt, ...]
    filename: str = "<string>"


LValue = Name | Index | Member | StarIndex

__all__ = [
    "Pos", "NOWHERE", "Node", "TypeExpr", "Field", "TypeDecl", "Expr", "IntLiteral",
    "FloatLiteral", "StringLiteral", "BoolLiteral", "Name", "Index", "StarIndex", "Member",
    "BinaryOp", "UnaryOp", "Arg", "Call", "FilenameOf", "ArrayLiteral", "Range",
    "FieldInit", "StructLiteral", "MapLiteral",
    "MapperParam", "Mapping", "Declarator", "Stmt", "VarDecl", "Block", "Assign", "Append",
    "CallStatement", "ReturnTarget", "MultiAssign", "If", "Case", "Switch", "Foreach",
    "Iterate", "Formal", "Profile", "AppCommand", "Procedure", "AppProcedure",
    "CompoundProcedure", "Import", "Program", "LValue",
]
