"""The built-in ``etc/swift.conf`` ([D]): where its keys are set, its layer, its values.

Every configuration starts from this file.  Its origins come from the scanner (no
pyhocon); its unresolved layer (for merging with files) from pyhocon; and, since it has
no substitutions, its resolved values are the same in every environment, so they are
kept on disk (``swiftnb.diskcache``, ``defaults/``, with the file's text and the code
that read it) and a run without configuration files of its own never imports pyhocon.
"""

from __future__ import annotations

import copy
import importlib.util
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from swiftnb import diskcache
from swiftnb.config.locate import Origins, Scanner, text_problem

if TYPE_CHECKING:
    from swiftnb.config.hocon import Layer

DEFAULTS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "etc", "swift.conf")

#: what was read of the file, by its (mtime, size)
_origins: dict[tuple[int, int], Origins] = {}
_layers: dict[tuple[int, int], Layer] = {}
_resolved: dict[tuple[int, int], dict[str, Any] | None] = {}


def _stamp() -> tuple[int, int]:
    st = os.stat(DEFAULTS_FILE)
    return st.st_mtime_ns, st.st_size


def _text() -> str:
    text, problem = text_problem(DEFAULTS_FILE)
    if text is None:  # an installation problem, not the user's
        raise OSError(f"{DEFAULTS_FILE}: cannot read the built-in configuration: {problem}")
    return text


def origins() -> Origins:
    """Where each built-in key is set (the returned map is shared: copy, do not change)."""
    key = _stamp()
    if key not in _origins:
        found = Origins()
        Scanner(found, "[D]", lambda path: path).scan_file(DEFAULTS_FILE, _text())
        _origins.clear()
        _origins[key] = found
    return _origins[key]


def layer(env: Mapping[str, str]) -> Layer:
    """The built-in file as a pyhocon layer (a copy: merging changes trees)."""
    from swiftnb.config.hocon import Layer, parse_hocon_file

    key = _stamp()
    if key not in _layers:
        _layers.clear()
        _layers[key] = parse_hocon_file(DEFAULTS_FILE, DEFAULTS_FILE, "[D]", Origins(), env)
    kept = _layers[key]
    return Layer(kept.tag, kept.display, copy.deepcopy(kept.tree), kept.text, kept.path,
                 kept.sources)


def resolved() -> dict[str, Any] | None:
    """The built-in values, resolved, as plain data; None when the file holds a
    substitution (its values would then depend on the environment)."""
    key = _stamp()
    if key not in _resolved:
        _resolved.clear()
        _resolved[key] = _load_resolved()
    return _resolved[key]


def _load_resolved() -> dict[str, Any] | None:
    text = _text()
    if "${" in text:
        return None
    spec = importlib.util.find_spec("pyhocon")
    code = diskcache.code_state(
        [os.path.join(os.path.dirname(os.path.abspath(__file__)), "hocon.py")]
        + ([spec.origin] if spec is not None and spec.origin else []))
    key = None if code is None else (text, *code)
    path = None if key is None else diskcache.place("defaults", key)
    if path is not None and key is not None:
        kept = diskcache.load(path, key)
        if isinstance(kept, dict):
            return kept
    from swiftnb.config.hocon import merge_and_resolve

    values = merge_and_resolve([layer({})], {})
    if path is not None and key is not None:
        diskcache.store(path, key, values)
    return values


def merge_plain(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base`` by HOCON's rules, as new plain data: objects merge,
    anything else replaces, ``None`` (``null``) deletes."""
    merged = copy.deepcopy(dict(base))
    _merge_into(merged, over)
    return merged


def _merge_into(target: dict[str, Any], over: Mapping[str, Any]) -> None:
    for key, value in over.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge_into(target[key], value)
        else:
            target[key] = _plain_copy(value)


def _plain_copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain_copy(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain_copy(v) for v in value]
    return value
