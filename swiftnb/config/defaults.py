"""The built-in ``etc/swift.conf`` ([D]): where its keys are set, its layer, its values.

Every configuration starts from this file.  Its origins come from the scanner (no
pyhocon); its unresolved layer (for merging with files) from pyhocon; and, since it has
no substitutions, its resolved values are the same in every environment, so they are
kept on disk (``$XDG_CACHE_HOME/swiftnb``, with the file's text and the code that
read it, and used only while both are the same) and a run without configuration files of its own never imports pyhocon.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import pickle
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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
    key = _cache_key(text)
    path = _cache_path(key) if key is not None else None
    if path is not None:
        try:
            with open(path, "rb") as fh:
                kept_key, kept = pickle.load(fh)
            if kept_key == key and isinstance(kept, dict):
                return kept
        except Exception:  # noqa: BLE001 - missing, unreadable or stale: resolve instead
            pass
    from swiftnb.config.hocon import merge_and_resolve

    values = merge_and_resolve([layer({})], {})
    if path is not None and key is not None:  # (a path is made only with a key)
        _keep(path, (key, values))
    return values


def _cache_key(text: str) -> tuple[str, ...] | None:
    """What the kept values depend on: the text, and the code that read it."""
    readers = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "hocon.py")]
    spec = importlib.util.find_spec("pyhocon")
    if spec is not None and spec.origin:
        readers.append(spec.origin)
    key = [text]
    for reader in readers:
        try:
            st = os.stat(reader)
        except OSError:
            return None
        key.append(f"{reader}:{st.st_mtime_ns}:{st.st_size}")
    return tuple(key)


def _cache_path(key: tuple[str, ...]) -> str | None:
    """Where the resolved defaults are kept (``SWIFTNB_NO_CACHE``: nowhere); named by a
    checksum of ``key`` so that installations sharing a home keep one each (the file
    holds the whole key, which is compared: the checksum only names it)."""
    if os.environ.get("SWIFTNB_NO_CACHE"):
        return None
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    name = f"resolved-{zlib.crc32(chr(0).join(key).encode('utf-8', 'surrogatepass')):08x}"
    return os.path.join(root, "swiftnb", "defaults", f"{name}.pickle")


def _keep(path: str, kept: tuple[tuple[str, ...], dict[str, Any]]) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as fh:
            pickle.dump(kept, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:  # a read-only home: resolve again next time
        try:
            os.unlink(tmp)
        except OSError:
            pass


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
