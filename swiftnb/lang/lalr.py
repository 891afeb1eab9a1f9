"""The hand-run LALR loop: lark's parse table and the transformer's callbacks,
flattened into one tight loop (about three times lark's own speed on large scripts).

It reads lark's internals (``lark.parsers.lalr_parser``: the parse table, ``Shift``),
so pyproject.toml pins lark's version range.  Anything the loop does not handle (a
syntax error, a legacy form) raises ``_FastPathMiss`` and lark's own parser runs.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from lark import Lark, Token
from lark.grammar import Rule, Terminal
from lark.lexer import PatternStr

from swiftnb.errors import SwiftnbError

__all__ = ["parse_items", "accepts"]


_PUNCT_TYPES = {"||": "OR", "&&": "AND", "==": "EQ", "!=": "NE", "<=": "LE", ">=": "GE",
                "%/": "IDIV", "%%": "MOD", "-": "MINUS", "+": "PLUS", "*": "STAR",
                "/": "SLASH", "<": "LT", ">": "GT", "!": "NOT", "@": "AT", "(": "LPAR",
                "[": "LSQB", "{": "LBRACE", ")": "RPAR", "]": "RSQB", "}": "RBRACE",
                ";": "SEMICOLON", ",": "COMMA", ":": "COLON", "=": "EQUAL", ".": "DOT"}
# Blanks before a token are part of its match (one regex step per token, not two);
# a newline run is its own match so that lines can be counted.  Linear whatever the text:
# no repeat keeps backtracking state per character (possessive ``*+``, lazy single
# characters), and BAD matches any other character, so that ``finditer`` never searches
# ahead (a search from each position of a line of unterminated strings is quadratic).
_TOKEN_RE = re.compile(r"""
[ \t\r\f]*+
(?:
 (?P<NL>\n[ \t\r\n\f]*+)
|(?P<COMMENT>//[^\n]*+|\#[^\n]*+|/\*[\s\S]*?\*/)
|(?P<FLOAT>[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)
|(?P<INT>[0-9]++)
|(?P<ID>[A-Za-z_][A-Za-z0-9_]*+)
|(?P<STRING>"(?:[^"\\\r\n]++|\\.)*+")
|(?P<OP>\|\||&&|==|!=|<=|>=|<<|%/|%%|[-+*/<>!@()\[\]{};,:=.])
|(?P<BAD>[\s\S])
)?""", re.X)
# filtered punctuation carries no position: one shared token each
_SHARED = {";", ",", ")", "]", "}", ":", "=", ".", "<<"}


class _FastPathMiss(SwiftnbError):
    pass


# A rule's reduction: the popped values (tokens and the transformer's results, whatever
# the grammar's rules build) -> the rule's value.
_Reducer = Callable[[list[Any]], Any]
# One action of the table: (kind, shift's state or the rule's size, rule name, reduction);
# kind 0 shift, 1 pass-through reduction, 2 reduction.  A shift's unused slots hold "" and
# _pass_through so that one tuple type fits every action (the loop reads them by kind).
_Action = tuple[int, int, str, _Reducer]

_Legacy = TypeVar("_Legacy")


class ItemBuilder(Protocol, Generic[_Legacy]):
    """What the loop needs of the parser's transformer: its rule methods, looked up by
    name as lark does, and the legacy forms it met, forgotten when lark's parser reruns."""

    legacy: dict[int, _Legacy]


class _Fast:
    """Lark's LALR table and callbacks, flattened for a tight loop."""

    def __init__(self, lark: Lark, builder: ItemBuilder[_Legacy],
                 keywords: frozenset[str]) -> None:
        front = lark.parser.parser.parser  # lark.parsers.lalr_parser._Parser
        table = front.parse_table
        callbacks = {rule: _reducer(rule, builder) for rule in front.callbacks}
        names = {t.pattern.value: t.name for t in lark.terminals
                 if isinstance(t.pattern, PatternStr)}
        self.punct = {v: names.get(v, _PUNCT_TYPES.get(v, v)) for v in
                      list(_PUNCT_TYPES) + ["<<"]}
        self.shared = {v: Token(self.punct[v], v) for v in _SHARED}
        self.keywords = {k: k.upper() for k in keywords}
        from lark.parsers.lalr_analysis import Shift
        states: dict[int, dict[str, _Action]] = {}
        for st, acts in table.states.items():
            row: dict[str, _Action] = {}
            for ttype, (action, arg) in acts.items():
                # plain str keys: lark's rule names are Tokens, whose __eq__ is Python code
                if action is Shift:
                    row[str(ttype)] = (0, arg, "", _pass_through)
                elif callbacks[arg] is _pass_through:
                    # a one-symbol ?rule: the value stays, only the state changes
                    row[str(ttype)] = (1, 1, str(arg.origin.name), _pass_through)
                else:
                    row[str(ttype)] = (2, len(arg.expansion), str(arg.origin.name),
                                       callbacks[arg])
            states[st] = row
        self.states = [states.get(i, {}) for i in range(max(states) + 1)]
        # for accepts(): each state's terminals, and its reduction when it takes the
        # same one (size, rule name) on every terminal
        self.terminals = [{t for t in row if t.isupper()} for row in self.states]
        self.uniform: list[tuple[int, str] | None] = []
        for row in self.states:
            acts = {(act[1], act[2]) if act[0] else None
                    for t, act in row.items() if t.isupper()}
            self.uniform.append(acts.pop() if len(acts) == 1 else None)
        self.start = table.start_states["start"]
        self.end = table.end_states["start"]

    def accepts(self, state_stack: list[int]) -> set[str]:
        """The terminals that the parser would shift on top of ``state_stack``.

        Lark's ``InteractiveParser.accepts()`` answers the same but deep-copies the value
        stack once per terminal (quadratic, and recursive, in the nesting at the error).
        Here only the states are replayed, for all terminals at once: terminals that
        take the same reduction go on together, so a chain of a million pending
        reductions (``- - ... - 1)``) is replayed about once, not once per terminal."""
        states = self.states
        found: set[str] = set()
        first = {t for t in states[state_stack[-1]] if t.isupper()}  # terminals only
        # a job: the states pushed by the replay on top of state_stack[:base], and the
        # terminals still being followed
        jobs: list[tuple[list[int], int, set[str]]] = [([], len(state_stack), first)]
        while jobs:
            pushed, base, terms = jobs.pop()
            while terms:
                state = pushed[-1] if pushed else state_stack[base - 1]
                if state == self.end:  # the whole program reduced: the text may end here
                    found |= terms & {"$END"}
                    break
                uniform = self.uniform[state]
                if uniform is not None:  # one reduction whatever the terminal
                    terms &= self.terminals[state]
                    base = self._reduce(pushed, base, uniform, state_stack)
                    continue
                by_reduction: dict[tuple[int, str], set[str]] = {}
                for t in terms:
                    act = states[state].get(t)
                    if act is None:
                        continue
                    if act[0] == 0:
                        found.add(t)
                    else:
                        by_reduction.setdefault((act[1], act[2]), set()).add(t)
                if not by_reduction:
                    break
                reduction, terms = by_reduction.popitem()
                for other, other_terms in by_reduction.items():
                    copy = list(pushed)
                    jobs.append((copy, self._reduce(copy, base, other, state_stack),
                                 other_terms))
                base = self._reduce(pushed, base, reduction, state_stack)
        return found

    def _reduce(self, pushed: list[int], base: int, reduction: tuple[int, str],
                state_stack: list[int]) -> int:
        """Replay one reduction (size, rule name) on the stack state_stack[:base] +
        pushed, in place; return the new ``base``."""
        size, origin = reduction
        from_pushed = min(size, len(pushed))
        del pushed[len(pushed) - from_pushed:]
        base -= size - from_pushed
        below = pushed[-1] if pushed else state_stack[base - 1]
        pushed.append(self.states[below][origin][1])
        return base

    def tokens(self, text: str) -> Iterator[Token]:
        new = str.__new__
        punct = self.punct
        shared = self.shared
        keywords = self.keywords
        line = 1
        line_start = 0
        pos = 0
        for m in _TOKEN_RE.finditer(text):
            if m.start() != pos:
                raise _FastPathMiss
            pos = m.end()
            kind = m.lastgroup
            if kind is None:  # trailing blanks
                continue
            if kind == "BAD":  # an unterminated string or comment, a stray character
                raise _FastPathMiss
            value = m.group(kind)
            if kind == "NL" or kind == "COMMENT":
                nl = value.count("\n")
                if nl:
                    line += nl
                    line_start = m.start(kind) + value.rfind("\n") + 1
                continue
            if kind == "OP":
                tok = shared.get(value)
                if tok is not None:
                    yield tok
                    continue
                kind = punct[value]
            elif kind == "ID":
                kind = keywords.get(value, "ID")
            tok = new(Token, value)
            tok.type = kind
            tok.value = value
            tok.line = line
            tok.column = pos - len(value) - line_start + 1
            yield tok
        if pos != len(text):
            raise _FastPathMiss

    def parse(self, text: str) -> Any:
        gc_was_enabled = gc.isenabled()
        gc.disable()  # the parse only allocates; collections would just rescan the AST
        try:
            return self._parse(text)
        finally:
            if gc_was_enabled:
                gc.enable()

    def _parse(self, text: str) -> Any:
        states = self.states
        state = self.start
        state_stack = [state]
        value_stack: list[Any] = []
        push_state = state_stack.append
        push_value = value_stack.append
        for tok in self.tokens(text):
            ttype = tok.type
            while True:
                act = states[state].get(ttype)
                if act is None:
                    raise _FastPathMiss
                kind = act[0]
                if kind == 0:  # shift
                    state = act[1]
                    push_state(state)
                    push_value(tok)
                    break
                if kind == 1:  # pass-through reduction of a one-symbol ?rule
                    state = states[state_stack[-2]][act[2]][1]
                    state_stack[-1] = state
                    continue
                size = act[1]
                if size:
                    args = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    args = []
                value = act[3](args)
                state = states[state_stack[-1]][act[2]][1]
                push_state(state)
                push_value(value)
        end = self.end
        while True:
            act = states[state].get("$END")
            if act is None or act[0] == 0:
                raise _FastPathMiss
            if act[0] == 1:
                state = states[state_stack[-2]][act[2]][1]
                state_stack[-1] = state
            else:
                size = act[1]
                if size:
                    args = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    args = []
                value = act[3](args)
                state = states[state_stack[-1]][act[2]][1]
                push_state(state)
                push_value(value)
            if state == end:
                return value_stack[-1]


def _pass_through(args: list[Any]) -> Any:
    """The reduction of a one-symbol ``?rule``: its value stays (_Fast knows it by
    identity and only changes the state)."""
    return args[0]


def _reducer(rule: Rule, builder: ItemBuilder[_Legacy]) -> _Reducer:
    """The reduction callback of one rule, doing what lark's tree builder does for an
    inline transformer (drop filtered tokens, splice ``_rule`` children, ``?rule`` with
    one child passes it through, call the transformer method) without its layers."""
    keep_all = rule.options.keep_all_tokens
    keep: list[tuple[int, bool]] = []
    for i, sym in enumerate(rule.expansion):
        if isinstance(sym, Terminal):
            if sym.filter_out and not keep_all:
                continue
            keep.append((i, False))
        else:
            keep.append((i, str(sym.name).startswith("_")))
    inline = str(rule.origin.name).startswith("_")
    name = str(rule.alias or rule.origin.name)
    # the transformer's method of the rule, by name as lark's tree builder finds it
    method: _Reducer | None = None if inline else getattr(builder, name, None)
    expand1 = bool(rule.options.expand1) and not rule.alias
    size = len(rule.expansion)
    splice = any(sp for _, sp in keep)
    idx = [i for i, _ in keep]
    if not inline and method is None and not expand1:
        raise RuntimeError(f"no transformer method for rule {name}")

    if not splice:
        if len(idx) == size:
            def gather(args: list[Any]) -> list[Any]:
                return args
        elif len(idx) == 1:
            only = idx[0]

            def gather(args: list[Any]) -> list[Any]:
                return [args[only]]
        else:
            def gather(args: list[Any]) -> list[Any]:
                return [args[i] for i in idx]
    elif keep[0] == (0, True) and inline:
        rest = keep[1:]

        def gather(args: list[Any]) -> list[Any]:
            out = args[0]  # left-recursive helper: grow the list in place
            for i, sp in rest:
                if sp:
                    out.extend(args[i])
                else:
                    out.append(args[i])
            return out
    else:
        def gather(args: list[Any]) -> list[Any]:
            out: list[Any] = []
            for i, sp in keep:
                if sp:
                    out.extend(args[i])
                else:
                    out.append(args[i])
            return out

    if inline:
        return gather
    if expand1 and size == 1 and len(idx) == 1 and not splice:
        return _pass_through
    if expand1 and method is None:
        def reduce_expand(args: list[Any]) -> Any:
            children = gather(args)
            if len(children) == 1:
                return children[0]
            raise _FastPathMiss
        return reduce_expand
    assert method is not None  # inline and method-less rules returned above
    fn = method
    if expand1:
        def reduce_expand_fn(args: list[Any]) -> Any:
            children = gather(args)
            if len(children) == 1:
                return children[0]
            return fn(children)
        return reduce_expand_fn

    if not splice and len(idx) == size:
        return fn  # the children are exactly the popped values: call the method directly
    if not splice and len(idx) == 1:
        only = idx[0]

        def reduce_one(args: list[Any]) -> Any:
            return fn([args[only]])
        return reduce_one
    if not splice:
        def reduce_some(args: list[Any]) -> Any:
            return fn([args[i] for i in idx])
        return reduce_some

    def reduce_fn(args: list[Any]) -> Any:
        return fn(gather(args))
    return reduce_fn


_fast: _Fast | None = None


def parse_items(text: str, builder: ItemBuilder[_Legacy], parser: Lark,
                keywords: frozenset[str]) -> Any:
    """The items of a program: the flattened tables first; lark's own parser when the
    text needs what they leave to it (``_FastPathMiss``: an error, a legacy form)."""
    global _fast
    if _fast is None:
        _fast = _Fast(parser, builder, keywords)
    try:
        return _fast.parse(text)
    except _FastPathMiss:
        pass  # (lark runs outside the handler: the traceback would keep the stacks alive)
    builder.legacy = {}
    return parser.parse(text)


def accepts(state_stack: list[int]) -> set[str]:
    """The terminals the parse at ``state_stack`` would have shifted (for the syntax
    error's "expected ..."): see :meth:`_Fast.accepts`."""
    assert _fast is not None  # the fast path always runs first
    return _fast.accepts(state_stack)

