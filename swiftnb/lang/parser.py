"""Text -> AST: the lark LALR parser with an inline transformer, and syntax errors in words.

The grammar (``swift.lark``) is compiled once per process.  The transformer runs inside
the LALR parser (``Lark(..., transformer=...)``), so no parse tree is ever built: each
reduction directly makes the frozen AST node.  That is the fastest way to use lark, and
the one that keeps peak memory at the size of the AST.

Lark gives an inline transformer no positions, so positions come from the first kept
token of a rule (keywords and ``(``/``[``/``{`` that start a node are named terminals in
the grammar) or from the first child node.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from swiftnb.errors import SwiftnbError
from swiftnb.lang import ast
from swiftnb.lang.lalr import accepts, parse_items
from swiftnb.lang.recovery import MAX_SYNTAX_ERRORS as MAX_SYNTAX_ERRORS  # re-exported
from swiftnb.lang.recovery import later_errors, offset_of
from swiftnb.lang.errors import CompileError, Diagnostic, source_line

KEYWORDS = frozenset(
    "app case default else false foreach global if import in iterate namespace profile "
    "stdin stdout stderr switch true type until".split()
)

_PRECEDENCE = {"OR": 1, "AND": 2, "EQ": 3, "NE": 3, "LT": 4, "LE": 4, "GT": 4, "GE": 4,
               "PLUS": 5, "MINUS": 5, "STAR": 6, "SLASH": 6, "IDIV": 6, "MOD": 6}

_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "\\": "\\"}


class _Problem(SwiftnbError):
    """A syntax error found by the transformer (position + message)."""

    def __init__(self, pos: ast.Pos, message: str) -> None:
        super().__init__(message)
        self.pos = pos
        self.message = message


# Private intermediate values of the transformer; none of them reaches the AST.


@dataclass(frozen=True, slots=True, eq=False)
class _EmptyIndex(ast.Expr):
    """``a[]``: only valid where the lvalue turns out to be a type."""

    base: ast.Expr


@dataclass(frozen=True, slots=True, eq=False)
class _LegacyApp(ast.Stmt):
    """``app { ... }`` inside a procedure body (the pre-``app`` keyword form)."""

    profiles: tuple
    commands: tuple


@dataclass(frozen=True, slots=True)
class _Dim:
    key: ast.TypeExpr | None


@dataclass(frozen=True, slots=True)
class _Redirect:
    stream: str
    value: ast.Expr


@dataclass(frozen=True, slots=True)
class _ParenItem:
    lv: ast.Expr
    name: Token | None
    dims: tuple
    value: ast.Expr | None


class _Outputs(tuple):
    """The output formal list of an app (distinguished from the input list)."""


# the valid prefix of a string body (the STRING token guarantees that a backslash is
# followed by a character): where it stops, an invalid escape starts
_VALID_BODY_RE = re.compile(r'(?:[^\\]++|\\[nrtbf"\\])*+')
_SIMPLE_ESCAPES = tuple((f"\\{e}", v) for e, v in _ESCAPES.items() if e != "\\")


def _unescape(raw: str, pos: ast.Pos) -> str:
    """The value of a string literal token (quotes included), computed with str methods
    (C loops), not a Python step per character or per escape."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    prefix = _VALID_BODY_RE.match(body)  # matches at least the empty string
    valid = prefix.end() if prefix else 0
    if valid < len(body):
        e = body[valid + 1]
        raise _Problem(ast.Pos(pos.file, pos.line, pos.column + valid + 1),
                       f"invalid escape sequence '\\{e}' in string "
                       "(valid: \\n \\r \\t \\b \\f \\\" \\\\)")
    # Scanning left to right, the first pair of backslashes always starts an escape (an
    # escaped backslash before it would have been found first): splitting at these
    # pairs leaves parts whose backslashes each start one of the other escapes.
    parts = body.split("\\\\")
    for i, part in enumerate(parts):
        if "\\" in part:
            for escape, value in _SIMPLE_ESCAPES:
                part = part.replace(escape, value)
            parts[i] = part
    return "\\".join(parts)


def _describe_lv(lv: ast.Expr) -> str:
    """``a.b[...].c`` for a message; a loop, since an lvalue may be nested arbitrarily."""
    parts: list[str] = []
    node = lv
    while not isinstance(node, ast.Name):
        if isinstance(node, ast.Member):
            parts.append(f".{node.field}")
        elif isinstance(node, (ast.Index, _EmptyIndex, ast.StarIndex)):
            parts.append("[...]")
        else:
            return "expression"
        node = node.base
    if len(parts) > 8:  # a message names the shape, not a megabyte of it
        parts = parts[:4] + ["..."] + parts[-4:]
    return node.name + "".join(reversed(parts))


class _Builder(Transformer):
    """Callbacks named after the grammar's rules and aliases."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.file = "<string>"
        self.legacy: dict[int, _LegacyApp] = {}

    # ---------------------------------------------------------------- helpers
    def _pos(self, item: Any) -> ast.Pos:
        if isinstance(item, Token):
            return ast.Pos(self.file, item.line, item.column)  # type: ignore[arg-type]  # lark's tokens from the parser have positions
        return item.pos

    def _type(self, lv: ast.Expr) -> ast.TypeExpr:
        """Convert an lvalue-shaped type (``float[string]``, ``file[][]``) to a TypeExpr."""
        dims: list[ast.TypeExpr | None] = []
        node = lv
        while True:
            if isinstance(node, ast.Name):
                dims.reverse()
                return ast.TypeExpr(node.pos, node.name, tuple(dims))
            if isinstance(node, _EmptyIndex):
                dims.append(None)
                node = node.base
            elif isinstance(node, ast.Index) and isinstance(node.index, ast.Name):
                dims.append(ast.TypeExpr(node.index.pos, node.index.name))
                node = node.base
            else:
                raise _Problem(node.pos, f"expected a type, found '{_describe_lv(lv)}'")

    def _value(self, lv: ast.Expr) -> ast.Expr:
        node = lv
        while not isinstance(node, ast.Name):
            if isinstance(node, _EmptyIndex):
                raise _Problem(node.pos, "expected an index expression between '[' and ']'")
            node = node.base  # type: ignore[attr-defined]  # an index or member: has base
        return lv

    # ---------------------------------------------------------------- program
    def start(self, items: list) -> list:
        return items

    def import_decl(self, c: list) -> ast.Import:
        path = _unescape(c[1], self._pos(c[1]))
        if path.endswith(".swift"):
            path = path[: -len(".swift")]
        return ast.Import(self._pos(c[0]), path)

    def namespace_decl(self, c: list) -> None:
        return None

    # ---------------------------------------------------------------- types
    def type_mapped(self, c: list) -> ast.TypeDecl:
        return ast.TypeDecl(self._pos(c[0]), str(c[1]), "mapped")

    def type_alias(self, c: list) -> ast.TypeDecl:
        return ast.TypeDecl(self._pos(c[0]), str(c[1]), "alias", alias_of=self._type(c[2]))

    def type_struct(self, c: list) -> ast.TypeDecl:
        fields = []
        for group in c[2:]:
            fields.extend(group)
        return ast.TypeDecl(self._pos(c[0]), str(c[1]), "struct", fields=tuple(fields))

    def field_group(self, c: list) -> list:
        t = self._type(c[0])
        return [ast.Field(pos, t, name, dims) for (pos, name, dims) in c[1:]]

    def field_name(self, c: list) -> tuple:
        return (self._pos(c[0]), str(c[0]), tuple(d.key for d in c[1:]))

    def dim(self, c: list) -> _Dim:
        if len(c) == 1:
            return _Dim(None)
        return _Dim(ast.TypeExpr(self._pos(c[1]), str(c[1])))

    # ---------------------------------------------------------------- procedures
    def formal_list(self, c: list) -> tuple:
        return tuple(c)

    def outputs(self, c: list) -> _Outputs:
        return _Outputs(c[0] if c else ())

    def formal(self, c: list) -> ast.Formal:
        t = self._type(c[0])
        name = c[1]
        dims = tuple(d.key for d in c[2:] if isinstance(d, _Dim))
        default = c[-1] if len(c) > 2 and not isinstance(c[-1], _Dim) else None
        return ast.Formal(self._pos(c[0]), t, str(name), dims, default)

    def profile(self, c: list) -> ast.Profile:
        return ast.Profile(self._pos(c[0]), c[1], c[2])

    def _command(self, c: list, executable: str) -> ast.AppCommand:
        args = []
        redir: dict[str, ast.Expr] = {}
        for a in c[1:]:
            if isinstance(a, _Redirect):
                if a.stream in redir:
                    raise _Problem(a.value.pos, f"{a.stream} is redirected twice")
                redir[a.stream] = a.value
            else:
                args.append(a)
        return ast.AppCommand(self._pos(c[0]), executable, tuple(args), redir.get("stdin"),
                              redir.get("stdout"), redir.get("stderr"))

    def command_id(self, c: list) -> ast.AppCommand:
        return self._command(c, str(c[0]))

    def command_str(self, c: list) -> ast.AppCommand:
        return self._command(c, _unescape(c[0], self._pos(c[0])))

    def app_arg(self, c: list) -> ast.Expr:
        return c[0]

    def redirect(self, c: list) -> _Redirect:
        return _Redirect(str(c[0]), c[1])

    @staticmethod
    def _split_app_items(items: list) -> tuple[tuple, tuple]:
        # several commands run one after another in the job directory (Swift/K trunk)
        commands = tuple(i for i in items if isinstance(i, ast.AppCommand))
        return (tuple(i for i in items if isinstance(i, ast.Profile)), commands)

    def app_decl(self, c: list) -> ast.AppProcedure:
        pos = self._pos(c[0])
        i = 1
        outputs: tuple = ()
        if isinstance(c[i], _Outputs):
            outputs = tuple(c[i])
            i += 1
        name = str(c[i])
        i += 1
        inputs: tuple = ()
        if i < len(c) and isinstance(c[i], tuple) and not isinstance(c[i], _Outputs):
            inputs = c[i]
            i += 1
        profiles, commands = self._split_app_items(c[i:])
        return ast.AppProcedure(pos, name, outputs, inputs, profiles, commands)

    def legacy_app(self, c: list) -> _LegacyApp:
        profiles, commands = self._split_app_items(c[1:])
        node = _LegacyApp(self._pos(c[0]), profiles, commands)
        self.legacy[id(node)] = node
        return node

    def _procedure(self, pos: ast.Pos, outputs: tuple, name: str, rest: list) -> ast.Procedure:
        inputs: tuple = rest[0] if len(rest) == 2 else ()
        body: ast.Block = rest[-1]
        legacy = [s for s in body.statements if isinstance(s, _LegacyApp)]
        if legacy:
            app = legacy[0]
            if len(body.statements) != 1:
                raise _Problem(app.pos, "an 'app { ... }' block must be the only statement "
                                        "of its procedure")
            self.legacy.pop(id(app), None)
            return ast.AppProcedure(pos, name, outputs, inputs, app.profiles, app.commands,
                                    legacy=True)
        return ast.CompoundProcedure(pos, name, outputs, inputs, body)

    def proc_with_outputs(self, c: list) -> ast.Procedure:
        items = [x for x in c[1:] if isinstance(x, _ParenItem)]
        rest = c[1 + len(items):]
        outputs = []
        for it in items:
            if it.name is None:
                raise _Problem(it.lv.pos, "expected a type and a name for each output "
                                          f"parameter of procedure {rest[0]}")
            if it.value is not None:
                raise _Problem(it.value.pos, "output parameters cannot have default values")
            outputs.append(ast.Formal(it.lv.pos, self._type(it.lv), str(it.name), it.dims))
        return self._procedure(self._pos(c[0]), tuple(outputs), str(rest[0]), rest[1:])

    def proc_no_outputs(self, c: list) -> ast.Procedure:
        return self._procedure(self._pos(c[0]), (), str(c[0]), c[1:])

    def paren_item(self, c: list) -> _ParenItem:
        lv = c[0]
        name = None
        dims: list = []
        value = None
        for x in c[1:]:
            if isinstance(x, Token):
                name = x
            elif isinstance(x, _Dim):
                dims.append(x.key)
            else:
                value = x
        return _ParenItem(lv, name, tuple(dims), value)

    # ---------------------------------------------------------------- statements
    def var_decl(self, c: list) -> ast.VarDecl:
        is_global = isinstance(c[0], Token)
        i = 1 if is_global else 0
        t = self._type(c[i])
        return ast.VarDecl(self._pos(c[0]), t, tuple(c[i + 1:]), is_global)

    def declarator(self, c: list) -> ast.Declarator:
        dims = []
        mapping = None
        init = None
        for x in c[1:]:
            if isinstance(x, _Dim):
                dims.append(x.key)
            elif isinstance(x, ast.Mapping):
                mapping = x
            else:
                init = x
        return ast.Declarator(self._pos(c[0]), str(c[0]), tuple(dims), mapping, init)

    def mapping_mapper(self, c: list) -> ast.Mapping:
        return ast.Mapping(self._pos(c[0]), str(c[1]), tuple(c[2:]))

    def mapping_expr(self, c: list) -> ast.Mapping:
        return ast.Mapping(self._pos(c[0]), None, (), c[1])

    def map_param(self, c: list) -> ast.MapperParam:
        return ast.MapperParam(self._pos(c[0]), str(c[0]), c[1])

    def assign(self, c: list) -> ast.Assign:
        target = self._value(c[0])
        return ast.Assign(target.pos, target, c[1])

    def append(self, c: list) -> ast.Append:
        target = self._value(c[0])
        return ast.Append(target.pos, target, c[1])

    def call_stmt(self, c: list) -> ast.CallStatement:
        return ast.CallStatement(c[0].pos, c[0])

    def multi_assign(self, c: list) -> ast.MultiAssign:
        targets = []
        for it in c[1:-1]:
            formal = None
            if it.value is not None:
                if not isinstance(it.value, ast.Name):
                    raise _Problem(it.value.pos, "expected the name of an output parameter "
                                                 "after '='")
                formal = it.value.name
            if it.name is None:
                targets.append(ast.ReturnTarget(it.lv.pos, self._value(it.lv), formal))
            else:
                t = self._type(it.lv)
                if it.dims:
                    t = ast.TypeExpr(t.pos, t.name, tuple(it.dims) + t.dims)
                target = ast.Name(self._pos(it.name), str(it.name))
                targets.append(ast.ReturnTarget(it.lv.pos, target, formal, t))
        return ast.MultiAssign(self._pos(c[0]), tuple(targets), c[-1])

    def block(self, c: list) -> ast.Block:
        return ast.Block(self._pos(c[0]), tuple(c[1:]))

    def if_stmt(self, c: list) -> ast.If:
        orelse = None
        if len(c) > 3:
            other = c[4]
            orelse = other if isinstance(other, ast.Block) else ast.Block(other.pos, (other,))
        return ast.If(self._pos(c[0]), c[1], c[2], orelse)

    def case(self, c: list) -> ast.Case:
        pos = self._pos(c[0])
        return ast.Case(pos, c[1], ast.Block(pos, tuple(c[2:])))

    def default_case(self, c: list) -> ast.Case:
        pos = self._pos(c[0])
        return ast.Case(pos, None, ast.Block(pos, tuple(c[1:])))

    def switch_stmt(self, c: list) -> ast.Switch:
        return ast.Switch(self._pos(c[0]), c[1], tuple(c[2:]))

    def foreach_stmt(self, c: list) -> ast.Foreach:
        index = str(c[2]) if c[2].type == "ID" else None
        return ast.Foreach(self._pos(c[0]), str(c[1]), index, c[-2], c[-1])

    def iterate_stmt(self, c: list) -> ast.Iterate:
        return ast.Iterate(self._pos(c[0]), str(c[1]), c[2], c[4])

    # ---------------------------------------------------------------- expressions
    def binexpr(self, c: list) -> ast.Expr:
        """Order ``operand (op operand)+`` by precedence (all left-associative;
        comparisons non-associative: at most one relational and one equality operator
        per level, reference 1.6)."""
        if len(c) == 3:
            return ast.BinaryOp(c[0].pos, str(c[1]), c[0], c[2])
        operands = [c[0]]
        ops: list[Token] = []
        for i in range(1, len(c), 2):
            op = c[i]
            prec = _PRECEDENCE[op.type]
            while ops and _PRECEDENCE[ops[-1].type] >= prec:
                top = ops.pop()
                if prec == _PRECEDENCE[top.type] and prec in (3, 4):
                    raise _Problem(self._pos(op), f"unexpected '{op}': comparisons cannot "
                                                  "be chained (use parentheses, or '&&')")
                right = operands.pop()
                left = operands.pop()
                operands.append(ast.BinaryOp(left.pos, str(top), left, right))
            ops.append(op)
            operands.append(c[i + 1])
        while ops:
            top = ops.pop()
            right = operands.pop()
            left = operands.pop()
            operands.append(ast.BinaryOp(left.pos, str(top), left, right))
        return operands[0]

    def unop(self, c: list) -> ast.UnaryOp:
        return ast.UnaryOp(self._pos(c[0]), str(c[0]), c[1])

    def int_lit(self, c: list) -> ast.IntLiteral:
        digits = c[0].lstrip("0") or "0"
        if len(digits) > 19:
            # beyond any machine integer; the checker reports the smaller ones.  (Python
            # refuses to convert more than 4300 digits, and a message need not show them)
            shown = f"{c[0][:12]}... ({len(c[0])} digits)"
            raise _Problem(self._pos(c[0]), f"integer literal {shown} is too large "
                                            "(int is 32-bit)")
        return ast.IntLiteral(self._pos(c[0]), int(digits))

    def float_lit(self, c: list) -> ast.FloatLiteral:
        return ast.FloatLiteral(self._pos(c[0]), float(c[0]), str(c[0]))

    def string_lit(self, c: list) -> ast.StringLiteral:
        pos = self._pos(c[0])
        return ast.StringLiteral(pos, _unescape(c[0], pos))

    def bool_lit(self, c: list) -> ast.BoolLiteral:
        return ast.BoolLiteral(self._pos(c[0]), c[0] == "true")

    def lv_expr(self, c: list) -> ast.Expr:
        return self._value(c[0])

    def array_lit(self, c: list) -> ast.ArrayLiteral:
        return ast.ArrayLiteral(self._pos(c[0]), tuple(c[1:]))

    def field_init(self, c: list) -> tuple[ast.Expr, ast.Expr]:
        return (c[0], c[1])

    def brace_lit(self, c: list) -> ast.Expr:
        """Trunk's rule: a bare name as the first key makes a struct initializer (every
        key must then be a field name), anything else a sparse array initializer."""
        pos = self._pos(c[0])
        pairs: list[tuple[ast.Expr, ast.Expr]] = c[1:]
        if not pairs or type(pairs[0][0]) is not ast.Name:
            return ast.MapLiteral(pos, tuple(pairs))
        fields = []
        for key, value in pairs:
            if type(key) is not ast.Name:
                raise _Problem(key.pos, "invalid field name in structure initializer: a "
                                        "field is named by an identifier (the first key "
                                        "made this a structure, not an array)")
            fields.append(ast.FieldInit(key.pos, key.name, value))
        return ast.StructLiteral(pos, tuple(fields))

    def range(self, c: list) -> ast.Range:
        return ast.Range(self._pos(c[0]), c[1], c[2], c[3] if len(c) > 3 else None)

    def filename_of(self, c: list) -> ast.FilenameOf:
        target = c[1]
        if not isinstance(target, (ast.Name, ast.Index, ast.Member, ast.StarIndex, _EmptyIndex)):
            # @(expr): the parentheses hold a variable, not any expression
            raise _Problem(target.pos, "expected a variable after '@', found an expression "
                                       "(@ gives the file name of a variable: @f, @(a[i]))")
        return ast.FilenameOf(self._pos(c[0]), self._value(target))

    def call(self, c: list) -> ast.Call:
        return ast.Call(self._pos(c[0]), str(c[0]), c[1] if len(c) > 1 else ())

    def at_call(self, c: list) -> ast.Call:
        return ast.Call(self._pos(c[0]), str(c[1]), c[2] if len(c) > 2 else (), True)

    def arg_list(self, c: list) -> tuple:
        return tuple(c)

    def pos_arg(self, c: list) -> ast.Arg:
        return ast.Arg(c[0].pos, c[0])

    def kw_arg(self, c: list) -> ast.Arg:
        return ast.Arg(self._pos(c[0]), c[1], str(c[0]))

    def name(self, c: list) -> ast.Name:
        return ast.Name(self._pos(c[0]), str(c[0]))

    def index(self, c: list) -> ast.Index:
        return ast.Index(c[0].pos, c[0], c[1])

    def empty_index(self, c: list) -> _EmptyIndex:
        return _EmptyIndex(c[0].pos, c[0])

    def star_index(self, c: list) -> ast.StarIndex:
        return ast.StarIndex(c[0].pos, c[0])

    def member(self, c: list) -> ast.Member:
        return ast.Member(c[0].pos, c[0], str(c[1]))

    def member_star(self, c: list) -> ast.Member:
        return ast.Member(c[0].pos, c[0], "*")


# ---------------------------------------------------------------------------- errors

_WORDS = {
    "SEMICOLON": "';'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "LBRACE": "'{'",
    "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'", "COLON": "':'", "EQUAL": "'='",
    "DOT": "'.'", "ID": "a name", "INT": "a number", "FLOAT": "a number",
    "STRING": "a string", "AT": "'@'", "GT": "'>'", "LT": "'<'", "OR": "'||'",
    "AND": "'&&'", "EQ": "'=='", "NE": "'!='", "LE": "'<='", "GE": "'>='", "PLUS": "'+'",
    "MINUS": "'-'", "STAR": "'*'", "SLASH": "'/'", "IDIV": "'%/'", "MOD": "'%%'",
    "NOT": "'!'", "$END": "end of file",
}
_EXPR_START = {"ID", "INT", "FLOAT", "STRING", "TRUE", "FALSE", "LPAR", "LSQB", "AT",
               "MINUS", "NOT", "LBRACE"}
_STMT_START = {"IF", "FOREACH", "ITERATE", "SWITCH", "LBRACE"}
_OPERATORS = {"PLUS", "MINUS", "STAR", "SLASH", "IDIV", "MOD", "LT", "GT", "LE", "GE", "EQ",
              "NE", "AND", "OR"}


def _word(terminal: str) -> str:
    if terminal in _WORDS:
        return _WORDS[terminal]
    if terminal.isupper() and terminal.lower() in KEYWORDS:
        return f"'{terminal.lower()}'"
    if terminal.startswith("__ANON"):
        return "'<<'"
    return terminal.lower()


def _found(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "ID":
        return f"'{token}'"
    if token.type == "STRING":
        return f"string {token}"
    return f"'{token}'"


def _expected_words(expected: set[str]) -> str:
    exp = set(expected)
    parts: list[str] = []
    if _STMT_START <= exp:
        parts.append("a statement")
        exp -= _STMT_START | _EXPR_START | {"GLOBAL", "TYPE", "APP", "IMPORT", "NAMESPACE",
                                            "$END", "CASE", "DEFAULT"}
    elif len(exp & _EXPR_START) >= 5:
        parts.append("an expression")
        exp -= _EXPR_START | {"PLUS"}
    if len(exp & _OPERATORS) >= 6:
        parts.append("an operator")
        closing_gt = "GT" in exp and "EQ" not in exp  # '>' closes a mapping here
        exp -= _OPERATORS
        if closing_gt:
            exp.add("GT")
    for t in ("SEMICOLON", "RPAR", "RSQB", "RBRACE", "COMMA"):
        if t in exp:
            parts.append(_word(t))
            exp.discard(t)
    parts.extend(sorted(_word(t) for t in exp))
    parts = list(dict.fromkeys(parts))
    if not parts:
        return "something else"
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _prev_end(text: str, offset: int) -> tuple[int, int] | None:
    """(line, column) just after the last significant character before ``offset``
    (skipping blanks and // or # comments); None at the start of the text."""
    i = offset - 1
    while i >= 0:
        line_start = text.rfind("\n", 0, i + 1) + 1
        segment = text[line_start:i + 1]
        cut = len(segment)
        for marker in ("//", "#"):
            k = segment.find(marker)
            if k >= 0 and segment.count('"', 0, k) % 2 == 0:
                cut = min(cut, k)
        stripped = segment[:cut].rstrip()
        if stripped:
            end = line_start + len(stripped)
            line = text.count("\n", 0, end) + 1
            return line, end - line_start + 1
        i = line_start - 2
    return None


_COMPARISONS = {"LT", "GT", "LE", "GE", "EQ", "NE"}


def _token_error(e: UnexpectedToken, expected: set[str], filename: str,
                 text: str) -> Diagnostic:
    """The message for an unexpected token; ``expected``: the terminals that the parser
    would have shifted there (:meth:`_Fast.accepts`)."""
    tok = e.token
    if not expected:
        expected = set(e.expected or ())
    at_end = tok.type == "$END"
    offset = len(text) if at_end else tok.start_pos
    prev = _prev_end(text, offset)
    if at_end:
        line, col = prev if prev else (1, 1)
    else:
        line, col = tok.line, tok.column
    if "SEMICOLON" in expected and prev is not None and (
            at_end or tok.line > prev[0] or tok.type in KEYWORD_TYPES
            or tok.type in ("ID", "STRING", "INT", "FLOAT", "RBRACE")):
        others = expected - {"SEMICOLON"} - _OPERATORS - {"DOT", "LSQB", "LPAR"}
        msg = "expected ';' after statement"
        if others:
            msg += f" (or {_expected_words(others)})"
        if not at_end:
            msg += f", found {_found(tok)}"
        return Diagnostic(filename, prev[0], prev[1], msg, source_line(text, prev[0]))
    if tok.type in _COMPARISONS and tok.type not in expected and (
            "AND" in expected or "OR" in expected):
        msg = (f"unexpected {_found(tok)}: comparisons cannot be chained "
               "(use parentheses, or '&&')")
    elif tok.type == "RBRACE" and "RBRACE" not in expected:
        msg = "unexpected '}': there is no open block to close here"
    elif tok.type == "SEMICOLON" and expected == {"LBRACE"}:
        msg = ("unexpected ';'; expected '{' (this reads as a procedure declaration: "
               "are arguments missing a ','?)")
    elif tok.type == "SLASH" and text.startswith("/*", tok.start_pos):
        msg = "unterminated comment: '/*' without '*/'"
    elif tok.type == "STAR" and text.startswith("/*", tok.start_pos - 1) and \
            not text.startswith("%/*", tok.start_pos - 2):
        # after an operand, '/' was taken for a division: the comment starts there
        msg = "unterminated comment: '/*' without '*/'"
        col -= 1
    elif at_end:
        msg = f"unexpected end of file; expected {_expected_words(expected)}"
    elif tok.type == "ID" and str(tok) in KEYWORDS:
        msg = f"'{tok}' is a reserved word; expected {_expected_words(expected)}"
    else:
        msg = f"unexpected {_found(tok)}; expected {_expected_words(expected)}"
        if tok.type == "EQUAL" and "EQUAL" not in expected and (
                "EQ" in expected or "RPAR" in expected):
            msg += " (use '==' to compare)"
    return Diagnostic(filename, line, col, msg, source_line(text, line))


KEYWORD_TYPES = {k.upper() for k in KEYWORDS}
_STATEMENT_KEYWORDS = {"if", "foreach", "iterate", "switch", "type", "app", "global",
                       "import"}


def _missing_semicolon(text: str, filename: str, p: _Problem) -> Diagnostic | None:
    """A statement keyword that the lexer had to read as a name, at the start of a line
    after a complete-looking line (``int a = 1`` / ``foreach ...``): the ';' is missing,
    which says more than "'foreach' is a reserved word"."""
    m = re.match(r"'(\w+)' is a reserved word", p.message)
    if m is None or m.group(1) not in _STATEMENT_KEYWORDS:
        return None
    offset = offset_of(text, p.pos.line, p.pos.column)
    prev = _prev_end(text, offset)
    if prev is None or prev[0] >= p.pos.line:
        return None
    last = text[offset_of(text, prev[0], prev[1]) - 1]
    if not (last.isalnum() or last in "_\")]"):
        return None
    return Diagnostic(filename, prev[0], prev[1],
                      f"expected ';' after statement, found '{m.group(1)}'",
                      source_line(text, prev[0]))


def _char_error(e: UnexpectedCharacters, filename: str, text: str) -> Diagnostic:
    ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""  # type: ignore[index,operator]  # lark sets it for a lexer error
    if ch == '"':
        msg = "unterminated string (a string must end on the line where it starts)"
    elif ch == "/" and text.startswith("/*", e.pos_in_stream):
        msg = "unterminated comment: '/*' without '*/'"
    elif ch == "'":
        msg = "unexpected character \"'\": strings are written in double quotes"
    else:
        allowed = set(e.allowed or ())
        msg = f"unexpected character {ch!r}"
        if allowed:
            msg += f"; expected {_expected_words(allowed)}"
    return Diagnostic(filename, e.line, e.column, msg, source_line(text, e.line))


# ---------------------------------------------------------------------------- entry


_GRAMMAR = Path(__file__).with_name("swift.lark")
_lock = threading.Lock()
_parser: Lark | None = None
_builder: _Builder | None = None


def _reserved_check(tok: Token) -> Token:
    if tok.value in KEYWORDS:
        raise _Problem(ast.Pos("", tok.line, tok.column),  # type: ignore[arg-type]  # lark's tokens from the parser have positions
                       f"'{tok.value}' is a reserved word and cannot be used as a name")
    return tok


def _cache_path() -> str | bool:
    """Where lark may cache the analysed grammar (loading it is several times faster
    than building the LALR table); lark keys the file by grammar and options."""
    import os
    import tempfile

    folder = os.environ.get("SWIFTNB_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"swiftnb-{os.getuid() if hasattr(os, 'getuid') else 'u'}")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return False
    import hashlib

    digest = hashlib.sha256(_GRAMMAR.read_bytes()).hexdigest()[:16]
    return os.path.join(folder, f"swift-grammar-{digest}.lark.cache")


def _get_parser() -> tuple[Lark, _Builder]:
    global _parser, _builder
    if _parser is None:
        _builder = _Builder()
        _parser = Lark(_GRAMMAR.read_text(), parser="lalr", lexer="contextual",
                       transformer=_builder, maybe_placeholders=False,
                       lexer_callbacks={"ID": _reserved_check}, cache=_cache_path())
    assert _builder is not None
    return _parser, _builder


# ---------------------------------------------------------------------------- fast path
#
# Lark's own LALR loop and contextual lexer are general; for valid scripts we drive lark's
# parse table and the same transformer callbacks from a tighter loop and a single-regex
# lexer (about 3x faster on large scripts).  Whenever the fast path meets anything it
# does not expect (a syntax error, a reserved word, a token that only the contextual
# lexer splits), the text is parsed again by the real lark parser, which gives the
# diagnostic or the result: the fast path never decides an error.

def parse(text: str, filename: str = "<string>") -> ast.Program:
    """Parse one source text into an :class:`ast.Program`; raise :class:`CompileError`
    with the first syntax error and any later ones found by :func:`later_errors`."""
    try:
        return _parse_one(text, filename)
    except CompileError as exc:
        first = exc.diagnostics[0]
    raise CompileError([first, *later_errors(text, filename, first, _parse_one)])


def _parse_one(text: str, filename: str) -> ast.Program:
    """Parse, stopping at the first syntax error."""
    with _lock:
        parser, builder = _get_parser()
        builder.file = filename
        builder.legacy = {}
        try:
            items = parse_items(text, builder, parser, KEYWORDS)
            if builder.legacy:
                raise _Problem(next(iter(builder.legacy.values())).pos,
                               "'app { ... }' is only allowed as the body of a procedure")
        except _Problem as p:
            line, col = p.pos.line, p.pos.column
            raise CompileError(_missing_semicolon(text, filename, p) or Diagnostic(
                filename, line, col, p.message, source_line(text, line))) from None
        except UnexpectedToken as e:
            expected = accepts(e.interactive_parser.parser_state.state_stack)
            raise CompileError(_token_error(e, expected, filename, text)) from None
        except UnexpectedCharacters as e:
            raise CompileError(_char_error(e, filename, text)) from None
        except UnexpectedInput as e:  # pragma: no cover - other lark input errors
            # lark declares line and column on UnexpectedInput; UnexpectedEOF sets -1
            line, col = max(e.line, 1), max(e.column, 1)
            raise CompileError(Diagnostic(filename, line, col, "syntax error",
                                          source_line(text, line))) from None
        finally:
            builder.legacy = {}
    imports, types, procs, stmts = [], [], [], []
    for item in items:
        if item is None:
            continue
        if isinstance(item, ast.Import):
            imports.append(item)
        elif isinstance(item, ast.TypeDecl):
            types.append(item)
        elif isinstance(item, ast.Procedure):
            procs.append(item)
        else:
            stmts.append(item)
    return ast.Program(ast.Pos(filename, 1, 1), tuple(imports), tuple(types), tuple(procs),
                       tuple(stmts), filename)
