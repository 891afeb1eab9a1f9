"""Reading HOCON layers with pyhocon, merging them in order, resolving substitutions.

A layer is one source of configuration (a file, or the command line).  Layers are
parsed unresolved, merged (later ones win, objects merge, ``null`` deletes) and then
resolved once, so ``${env.X}`` and references into earlier files work as in Swift.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

import pyparsing
from pyhocon import ConfigFactory, ConfigTree
from pyhocon.config_parser import ConfigParser
from pyhocon.config_tree import ConfigSubstitution, ConfigValues, NoneValue
from pyhocon.exceptions import ConfigException

from swiftnb import diskcache
from swiftnb.config.locate import (
    Origin, Origins, Scanner, ScanError, expander, system_properties, text_problem,
)
from swiftnb.config.model import ConfigError, split_path

# Includes are checked here (a missing one is an error with file and line); pyhocon's
# own "Cannot include file" warnings would only be noise on the console.
logging.getLogger("pyhocon.config_parser").setLevel(logging.ERROR)

@dataclass
class Layer:
    tag: str
    display: str  # as shown in the dump's file list
    tree: ConfigTree
    text: str = ""  # the file's text, for locating substitution errors
    path: str | None = None
    sources: list[tuple[str, str]] = field(default_factory=list)  # (path, text) incl. includes
    nulls: list[tuple[str, ...]] = field(default_factory=list)  # `key: null` in this layer


def parse_hocon_file(path: str, display: str, tag: str, origins: Origins,
                     env: Mapping[str, str]) -> Layer:
    """Parse one swift.conf unresolved, and record where each key is set."""
    text, problem = text_problem(path)
    if text is None:
        raise ConfigError(f"{display}: cannot read configuration file: {problem}")
    return parse_hocon_text(text, path, display, tag, origins, env)


def parse_hocon_text(text: str, path: str, display: str, tag: str, origins: Origins,
                     env: Mapping[str, str]) -> Layer:
    """Like ``parse_hocon_file`` for text; ``path`` places relative includes."""
    scanner = Scanner(origins, tag, expander(env))
    try:
        includes = scanner.scan_file(display, text, real_path=path)
    except ScanError as exc:
        raise ConfigError(str(exc)) from None
    # Swift expands ${...} in include paths itself; pyhocon does not, so hand it the
    # resolved absolute paths (same line count, so its positions stay right).
    rewritten = text
    for inc in sorted(includes, key=lambda i: i.start, reverse=True):
        rewritten = rewritten[:inc.start] + '"' + inc.path.replace("\\", "\\\\").replace(
            '"', '\\"') + '"' + rewritten[inc.end:]
    try:
        with _pyhocon_stack():
            tree = _parse_cached(rewritten, os.path.dirname(os.path.abspath(path)),
                                 [inc.path for inc in includes])
    except pyparsing.ParseBaseException as exc:
        raise ConfigError(f"{display}:{exc.lineno}:{exc.col}: syntax error: "
                          f"{_clean_parse_message(exc)}") from None
    except ConfigException as exc:
        raise ConfigError(f"{display}: {exc}") from None
    except (AttributeError, TypeError, ValueError, KeyError, RecursionError) as exc:
        # pyhocon trips over some malformed input (e.g. `a += b` on nothing)
        raise ConfigError(f"{display}: cannot read this configuration "
                          f"({type(exc).__name__}: {exc}); check the syntax") from None
    if not isinstance(tree, ConfigTree):
        raise ConfigError(f"{display}: a configuration must be an object of keys, "
                          "not a list")
    sources = [(display, text)] + [(inc.path, _read(inc.path)) for inc in includes]
    return Layer(tag, display, tree, text, path, sources, list(scanner.nulls))


@contextmanager
def _pyhocon_stack() -> Iterator[None]:
    """Room for pyhocon's recursion (pyparsing takes some 25 Python frames per level of
    nesting, more per include), for the nesting the scanner lets through (locate's
    MAX_NESTING, MAX_INCLUDE_DEPTH) even when called from deep in a notebook kernel."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10000))
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


_PARSED: OrderedDict[tuple, ConfigTree] = OrderedDict()


def _parse_cached(text: str, basedir: str, included: list[str]) -> ConfigTree:
    """pyhocon's parse (slow: pyparsing), remembered for the same text and includes.

    Notebooks and tests load the same files again and again; the key holds the text,
    its directory and the state of every included file, and callers get a copy.
    """
    try:
        stamps = tuple((p, os.stat(p).st_mtime_ns, os.stat(p).st_size) for p in included)
    except OSError:
        stamps = None
    key = (text, basedir, stamps)
    if stamps is not None and key in _PARSED:
        _PARSED.move_to_end(key)
        return deepcopy(_PARSED[key])
    tree = _from_disk(text) if not included else None
    if tree is None:
        tree = ConfigFactory.parse_string(text, basedir=basedir, resolve=False)
        if not included and isinstance(tree, ConfigTree):
            _to_disk(text, tree)
    if stamps is not None and isinstance(tree, ConfigTree):
        _PARSED[key] = deepcopy(tree)
        while len(_PARSED) > 64:
            _PARSED.popitem(last=False)
    return tree


#: parses of configuration files kept on disk at most (the oldest half go beyond it)
MAX_KEPT = 256


def _disk_key(text: str) -> tuple[tuple[str, str], str | None]:
    """(key, cache file) of the parse of a configuration without includes, kept between
    processes (``swiftnb.diskcache``, ``hocon/``): pyparsing takes 0.1 s for a file a
    pickle loads in a tenth of a millisecond.  Keyed by the text and pyhocon's version."""
    import pyhocon

    key = (text, str(getattr(pyhocon, "__version__", "")))
    return key, diskcache.place("hocon", key)


def _from_disk(text: str) -> ConfigTree | None:
    key, path = _disk_key(text)
    tree = None if path is None else diskcache.load(path, key)
    return tree if isinstance(tree, ConfigTree) else None


def _to_disk(text: str, tree: ConfigTree) -> None:
    key, path = _disk_key(text)
    if path is not None:
        diskcache.store(path, key, tree)
        diskcache.prune(os.path.dirname(path), MAX_KEPT)


def _read(path: str) -> str:
    return text_problem(path)[0] or ""


def _clean_parse_message(exc: pyparsing.ParseBaseException) -> str:
    msg = exc.msg or "unexpected text"
    if len(msg) > 60 or "Suppress" in msg:  # pyparsing printed its whole grammar
        msg = "cannot read this"
    found = ""
    if exc.loc < len(exc.pstr):
        found = exc.pstr[exc.loc:exc.loc + 20].split("\n")[0]
    if msg.startswith("Expected end of text"):
        msg = "unexpected text"
    return f"{msg}, found {found!r}" if found else f"{msg}, found end of file"


_PLAIN_KEY = re.compile(r"[A-Za-z0-9_*-]+")


def _tree_key(key: str) -> str:
    """A key as pyhocon stores it: quoted when it is not a plain word (``"a.b"``)."""
    return key if _PLAIN_KEY.fullmatch(key) else json.dumps(key)


def _plain_key(key: str) -> str:
    if len(key) >= 2 and key[0] == '"' and key[-1] == '"':
        try:
            return json.loads(key)
        except ValueError:
            return key[1:-1]
    return key


def tree_from_dict(data: Mapping[str, Any]) -> ConfigTree:
    """A ConfigTree from nested dicts, keys taken literally (dots kept in keys)."""
    tree = ConfigTree()
    for key, value in data.items():
        key = _tree_key(key)
        if isinstance(value, Mapping):
            value = tree_from_dict(value)
        elif isinstance(value, list):
            value = [tree_from_dict(v) if isinstance(v, Mapping) else v for v in value]
        OrderedDict.__setitem__(tree, key, value)
    return tree


def merge_and_resolve(layers: list[Layer], env: Mapping[str, str],
                      origins: Origins | None = None) -> dict[str, Any]:
    """Merge layers in order and resolve substitutions; a plain nested dict."""
    props = system_properties(env)
    injected = {"env": dict(env)}
    for name, value in props.items():
        head, tail = name.split(".", 1)
        injected.setdefault(head, {})[tail] = value
    merged = tree_from_dict(injected)
    for layer in layers:
        # A null in a file cuts off what earlier files said there, even when the same
        # file then defines the key again (typesafe-config; swift-convert-config relied
        # on it with `site.local: null`).  pyhocon keeps only the final value, so cut here.
        for null_path in layer.nulls:
            _delete(merged, null_path)
        merged = ConfigTree.merge_configs(merged, layer.tree)
    found = list(_substitutions(merged, ()))
    if len(found) > MAX_SUBSTITUTIONS:
        where = origins.get(found[MAX_SUBSTITUTIONS][0]) if origins is not None else None
        raise ConfigError(f"{where.location() if where else '<configuration>'}: more than "
                          f"{MAX_SUBSTITUTIONS} substitutions ${{...}} in the configuration "
                          "(pyhocon resolves them in quadratic time)")
    cycle = _substitution_cycle(found)
    if cycle:
        raise ConfigError(_cycle_error(cycle, origins))
    try:
        with _pyhocon_stack():
            ConfigParser.resolve_substitutions(merged)
    except ConfigException as exc:
        raise ConfigError(_substitution_error(str(exc), layers, origins)) from None
    except (AttributeError, TypeError, ValueError, KeyError, RecursionError) as exc:
        # pyhocon tripped (``+=`` onto a value that is no list, say): name the first
        # line that appends or substitutes, where such a problem starts
        raise ConfigError(f"{_first_line_with(layers, ('+=', '${'))}: cannot resolve "
                          f"the configuration ({type(exc).__name__}: {exc}): += appends "
                          "to a list, ${...} needs a defined key") from None
    plain = _plain(merged)
    plain.pop("env", None)
    for name in props:
        head, tail = name.split(".", 1)
        sub = plain.get(head)
        if isinstance(sub, dict):
            sub.pop(tail, None)
            if not sub:
                plain.pop(head)
    return plain


def _delete(tree: ConfigTree, path: tuple[str, ...]) -> None:
    node: Any = tree
    for part in path[:-1]:
        part = part if part in node else _tree_key(part) if isinstance(node, dict) else part
        if not isinstance(node, dict) or part not in node:
            return
        node = node[part]
    last = path[-1] if isinstance(node, dict) and path[-1] in node else _tree_key(path[-1])
    if isinstance(node, dict) and last in node:
        del node[last]


def _plain(value: Any) -> Any:
    if isinstance(value, ConfigTree) or isinstance(value, dict):
        result = {}
        for key, sub in value.items():
            sub = _plain(sub)
            if sub is None:
                continue  # `key: null` deletes
            result[_plain_key(key)] = sub  # pyhocon keeps the quotes of "a.b"
        return result
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, NoneValue):
        return None
    return value


Path = tuple[str, ...]

#: substitutions a configuration may hold (all its files): pyhocon resolves one per pass
#: over all of them, 40 s for 900; Swift configurations use a handful of ${env.X}
MAX_SUBSTITUTIONS = 200


def _first_line_with(layers: list[Layer], needles: tuple[str, ...]) -> str:
    """``file:line`` of the first line (of the files given, not the built-in defaults)
    holding one of ``needles``; the files' names when none does."""
    for layer in layers:
        if layer.tag == "[D]":
            continue
        for path, text in layer.sources:
            for number, line in enumerate(text.splitlines(), 1):
                if any(needle in line for needle in needles):
                    return f"{path}:{number}"
    names = ", ".join(layer.display for layer in layers if layer.tag != "[D]")
    return names or "<configuration>"


def _substitutions(value: Any, path: Path) -> Iterator[tuple[Path, Path]]:
    """(where, what) for every ``${what}`` in the unresolved ``value`` at ``path``
    (iterative: the tree may be as deep as the scanner allows)."""
    stack: list[tuple[Any, Path]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):  # pushed in reverse: yielded in the order written
            stack.extend((sub, where + (_plain_key(key),))
                         for key, sub in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((sub, where) for sub in reversed(node))
        elif isinstance(node, ConfigValues):
            for token in node.tokens:
                if isinstance(token, ConfigSubstitution):
                    yield where, tuple(split_path(token.variable))
                else:
                    stack.append((token, where))


def _substitution_cycle(found: list[tuple[Path, Path]]) -> list[Path]:
    """A cycle among the substitutions ``found`` (``(where, what)``, from
    :func:`_substitutions`): ``a: ${b}``, ``b: ${a}`` -> [a, b, a]; or [].

    ``a`` depends on ``b`` when ``a`` holds ``${X}`` and ``b`` is X, inside X or holds X
    (``${site.x}`` depends on ``site.x.workDirectory: ${w}``); a value inside the object
    it refers to (``a: {b: ${a}}``) is a cycle of its own.  A key referring to itself
    (``path: ${path}":/bin"``) is HOCON's reference to its earlier value, no cycle.
    """
    refs: dict[Path, set[Path]] = {}
    for where, what in found:
        if len(what) < len(where) and where[:len(what)] == what:
            return [where, what, where]  # a value inside what it refers to
        refs.setdefault(where, set()).add(what)
    if not refs:
        return []
    holders = list(refs)

    def inside(inner: Path, outer: Path) -> bool:
        return inner[:len(outer)] == outer

    edges = {where: sorted({h for what in whats for h in holders
                            if h != where and (inside(h, what) or inside(what, h))})
             for where, whats in refs.items()}
    state: dict[Path, int] = {}  # 1: on the current path, 2: done
    for start in holders:
        if start in state:
            continue
        trail = [start]
        state[start] = 1
        todo = [iter(edges[start])]
        while todo:
            nxt = next(todo[-1], None)
            if nxt is None:
                state[trail.pop()] = 2
                todo.pop()
            elif state.get(nxt) == 1:
                return trail[trail.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                trail.append(nxt)
                todo.append(iter(edges[nxt]))
    return []


def _cycle_error(cycle: list[Path], origins: Origins | None) -> str:
    """``swift.conf:1: a: substitution cycle a -> b -> a (a at swift.conf:1, b at
    swift.conf:2): a value cannot be built from itself``."""
    def origin(path: Path) -> Origin | None:
        return origins.get(path) if origins is not None else None

    def where(path: Path) -> str:
        found = origin(path)
        return found.location() if found is not None else "<configuration>"

    def place(path: Path) -> tuple[str, int]:
        found = origin(path)
        return (found.file or "", found.line or 0) if found is not None else ("~", 0)

    first = min(range(len(cycle) - 1), key=lambda i: place(cycle[i]))
    cycle = cycle[first:-1] + cycle[:first] + [cycle[first]]  # from the first written
    names = [".".join(path) for path in cycle]

    places = ", ".join(f"{name} at {where(path)}" for name, path in zip(names, cycle[:-1]))
    return (f"{where(cycle[0])}: {names[0]}: substitution cycle {' -> '.join(names)} "
            f"({places}): a value cannot be built from itself")


def _substitution_error(message: str, layers: list[Layer], origins: Origins | None) -> str:
    """pyhocon's "cannot resolve ${X}" as ``file:line: key: cannot resolve ${X}: why``."""
    match = re.search(r"\$\{\??([^}]*)\}", message)
    if not match:
        return message
    name = match.group(1).strip()
    for layer in reversed(layers):
        for path, text in layer.sources:
            found = re.search(r"\$\{\??" + re.escape(name) + r"\}", text)
            if found is None:
                continue
            line = text.count("\n", 0, found.start()) + 1
            key = next((key_path for key_path, origin in
                        (origins.leaves.items() if origins else ())
                        if origin.file == path and origin.line == line), None)
            if name.startswith("env."):
                hint = f"environment variable {name[4:]} is not set"
            elif key is not None and ".".join(key) == name:
                hint = (f"{name} refers to itself, and no earlier value of {name} is "
                        "defined to build on")
            else:
                hint = f"no key {name} is defined"
            shown = ".".join(key) + ": " if key is not None else ""
            return f"{path}:{line}: {shown}cannot resolve {found.group(0)}: {hint}"
    return message
