"""What the checker hands to the engine: the checked program and its lookup tables.

The engine should not re-derive anything the checker already knows, so a
:class:`CheckedProgram` answers, by AST node (nodes hash by identity):

* ``type_of(node)`` — the resolved :mod:`swiftnb.lang.types` type of every expression,
  :class:`~swiftnb.lang.ast.Declarator`, :class:`~swiftnb.lang.ast.Formal`, typed
  :class:`~swiftnb.lang.ast.ReturnTarget`, struct :class:`~swiftnb.lang.ast.Field`;
* ``symbol_of(node)`` — the :class:`Symbol` (one per variable) a :class:`~ast.Name`
  refers to, or that a declaration node declares;
* ``loop_symbols(foreach_or_iterate)`` — (value symbol, key symbol or None);
* ``binding(call)`` — the resolved :class:`Binding` of a call: its :class:`Signature`
  and, for each input formal in order, the actual expression (``None`` -> default);
* ``output_targets(multi_assign)`` — ``[(Param, ReturnTarget), ...]`` in output order;
* ``writers(symbol)`` / ``symbol.writers`` — every :class:`Write` (whole, element,
  member, append, output) of a variable, in source order;
* ``writes_in(stmt)`` — the symbols a statement writes, itself or anywhere inside it
  (loops and branches included), except those declared inside it; a ``VarDecl`` with
  an initialiser writes what it declares.  ``writing_statements(symbol, statements)``
  picks, from one block's statements, those that write a symbol: the writers the
  engine counts to close an array;
* ``procedures`` (user signatures by name), ``builtins_used``, ``globals``,
  ``top_level`` (root-scope variables by name, globals included), ``types``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swiftnb.lang import ast
from swiftnb.lang import types as T


@dataclass(slots=True, eq=False)
class Write:
    """One statement that writes (part of) a variable.

    ``kind``: "whole" (``a = e``, ``T a = e``), "element" (``a[i] = e``), "member"
    (``a.f = e``), "append" (``a << e``), "output" (bound to a procedure output, in
    ``a = p(..)`` when p is a procedure, or in ``(a, b) = p(..)``).
    ``stmt`` is the writing statement (Assign, Append, MultiAssign, or the Declarator of
    an initialised declaration); ``target`` the lvalue expression written.
    """

    symbol: Symbol
    stmt: ast.Node
    kind: str
    target: ast.Node | None = None

    @property
    def line(self) -> int:
        return self.stmt.pos.line

    @property
    def partial(self) -> bool:
        """True when only a part is written (``a[i]``, ``a.f``, ``a << v``)."""
        return self.kind == "append" or not isinstance(self.target, ast.Name)


@dataclass(slots=True, eq=False)
class Symbol:
    """A variable.  ``kind``: "global", "var" (top level or local), "input", "output"
    (procedure formals), "foreach_value", "foreach_key", "iterate".  ``decl`` is the
    declaring node (Declarator, Formal, ReturnTarget, Foreach, Iterate); ``owner`` the
    Procedure it belongs to (None at top level)."""

    name: str
    type: T.SwiftType
    decl: ast.Node
    kind: str
    owner: ast.Procedure | None = None
    writers: list[Write] = field(default_factory=list)
    mapping: ast.Mapping | None = None
    reads: int = 0

    @property
    def line(self) -> int:
        return self.decl.pos.line

    def __repr__(self) -> str:
        return f"Symbol({self.name}: {self.type}, {self.kind}, line {self.line})"


@dataclass(slots=True, eq=False)
class Param:
    """A formal parameter of a signature; ``default`` is an expression (user procedures)
    or None; ``optional`` is True when it may be left out."""

    name: str
    type: T.SwiftType
    default: ast.Expr | None = None
    optional: bool = False
    decl: ast.Formal | None = None
    #: builtins: the parameter spelling of the table (``"numeric"``, ``"string|file"``...)
    spec: str = ""
    #: builtins: whether a call may pass it by keyword (``format="CSV"``)
    keyword: bool = False


@dataclass(slots=True, eq=False)
class Signature:
    """A callable: ``kind`` is "app", "compound" or "builtin".  For builtins ``variadic``
    is True when the last input repeats, ``builtin_kind`` "function"/"procedure", and
    ``returns_spec`` the table's return spelling (see :mod:`swiftnb.lang.builtins`)."""

    name: str
    kind: str
    outputs: tuple[Param, ...]
    inputs: tuple[Param, ...]
    decl: ast.Procedure | None = None
    variadic: bool = False
    builtin_kind: str = ""
    returns_spec: str | None = None

    @property
    def is_app(self) -> bool:
        return self.kind == "app"

    def describe(self) -> str:
        """``(int r) f(int x, float y = ...)`` with its file:line, for error messages."""
        def one(p: Param) -> str:
            t = p.spec.replace("|", " or ") if self.kind == "builtin" else str(p.type)
            return f"{t} {p.name}" + (" = ..." if p.optional else "")
        outs = ", ".join(f"{p.type} {p.name}" for p in self.outputs)
        text = f"({outs}) {self.name}({', '.join(one(p) for p in self.inputs)})"
        if self.kind == "builtin":
            return text + " (builtin)"
        if self.decl is not None:
            text += f" at {self.decl.pos.file}:{self.decl.pos.line}"
        return text


@dataclass(slots=True, eq=False)
class Binding:
    """A resolved call.  ``inputs`` pairs every input formal (in declaration order) with
    the actual expression, or None when the default applies; ``extra`` holds the
    arguments of a variadic builtin beyond its fixed formals (``args`` is every actual in
    call order, for builtins)."""

    signature: Signature
    inputs: tuple[tuple[Param, ast.Expr | None], ...]
    extra: tuple[ast.Expr, ...] = ()
    canonical_name: str = ""

    @property
    def args(self) -> tuple[ast.Expr, ...]:
        return tuple(e for _, e in self.inputs if e is not None) + self.extra


class CheckedProgram:
    """The merged, checked program.  See the module docstring for the lookups."""

    def __init__(self, program: ast.Program, *, files: list[str], sources: dict[str, str],
                 types: dict[str, T.SwiftType], procedures: dict[str, Signature],
                 builtins_used: dict[str, Signature], globals_: dict[str, Symbol],
                 symbols: list[Symbol], node_types: dict, node_symbols: dict,
                 loop_syms: dict, bindings: dict, outputs: dict, writes_in: dict,
                 warnings: list[str], top_level: dict | None = None) -> None:
        self.program = program
        self.files = files
        self.sources = sources
        self.types = types
        self.procedures = procedures
        self.builtins_used = builtins_used
        self.globals = globals_
        self.symbols = symbols
        self._types = node_types
        self._symbols = node_symbols
        self._loops = loop_syms
        self._bindings = bindings
        self._outputs = outputs
        self._writes_in = writes_in
        self.warnings = warnings
        #: the variables of the program's root scope (globals included), by name
        self.top_level: dict[str, Symbol] = dict(top_level or {})

    # ---------------------------------------------------------------- lookups
    def type_of(self, node: ast.Node) -> T.SwiftType:
        return self._types[node]

    def symbol_of(self, node: ast.Node) -> Symbol:
        return self._symbols[node]

    def loop_symbols(self, node: ast.Foreach | ast.Iterate) -> tuple[Symbol, Symbol | None]:
        return self._loops[node]

    def binding(self, call: ast.Call) -> Binding:
        return self._bindings[call]

    def output_targets(self, stmt: ast.MultiAssign) -> list[tuple[Param, ast.ReturnTarget]]:
        return self._outputs[stmt]

    def writers(self, symbol: Symbol) -> list[Write]:
        return symbol.writers

    def writes_in(self, stmt: ast.Node) -> frozenset[Symbol]:
        return self._writes_in.get(stmt, frozenset())

    def writing_statements(self, symbol: Symbol,
                           statements: tuple[ast.Stmt, ...]) -> list[ast.Stmt]:
        """The statements of one block that write ``symbol`` (directly or inside)."""
        get = self._writes_in.get
        return [st for st in statements if symbol in get(st, ())]

    # ---------------------------------------------------------------- text
    def summary(self) -> str:
        p = self.program
        # declarations, not names: overloads of one name count one each
        nprocs = len(p.procedures)
        apps = sum(1 for d in p.procedures if isinstance(d, ast.AppProcedure))
        comps = nprocs - apps
        user_types = [n for n, t in self.types.items() if n not in T.BUILTIN_TYPES]
        nvars = sum(1 for s in self.symbols if s.kind in ("var", "global"))
        parts = [
            f"{self.files[0] if self.files else p.filename}: program is valid.",
            f"{len(user_types)} type{'s' if len(user_types) != 1 else ''}"
            + (f" ({', '.join(user_types)})" if user_types else ""),
            f"{nprocs} procedure{'s' if nprocs != 1 else ''} "
            f"({apps} app, {comps} compound)",
            f"{len(p.statements)} top-level statement{'s' if len(p.statements) != 1 else ''}",
            f"{nvars} variable{'s' if nvars != 1 else ''}",
        ]
        text = parts[0] + " " + ", ".join(parts[1:]) + "."
        if self.builtins_used:
            text += " Builtins used: " + ", ".join(sorted(self.builtins_used)) + "."
        if len(self.files) > 1:
            text += " Imported: " + ", ".join(self.files[1:]) + "."
        return text

    def __repr__(self) -> str:
        return f"<CheckedProgram {self.program.filename}>"


__all__ = ["Write", "Symbol", "Param", "Signature", "Binding", "CheckedProgram"]
