"""The SWIFT_CONFIGURATION block, rendered as Swift 0.96 wrote it into swift.log.

Layout (taken from real 0.96.2 logs): the list of files with their tags, then the
merged tree in braces; keys sorted (ASCII: upper case first), one tab per level; a
chain of single-key objects collapses into a dotted key (``app.ALL.executable``,
``execution.type``); every value is followed by spaces up to column 60 and
``# [R] line 27`` (``# [C]`` for command-line values and values built with
``${env.X}``).  Strings are quoted, lists print as ``[a, b]``.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from swiftnb.config.model import Config

COMMENT_COLUMN = 60


def render(config: Config) -> str:
    lines = [f"{tag} {path}" for tag, path in config.files]
    lines.append("{")
    _object(config, config.raw, (), 1, lines)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _object(config: Config, tree: dict[str, Any], path: tuple[str, ...], depth: int,
            lines: list[str]) -> None:
    for key in sorted(tree):
        label, sub_path, value = _collapse(key, tree[key], path + (key,))
        indent = "\t" * depth
        if isinstance(value, dict):
            lines.append(f"{indent}{label} {{")
            _object(config, value, sub_path, depth + 1, lines)
            lines.append(f"{indent}}}")
        else:
            text = f"{indent}{label}: {format_value(value)}"
            origin = config.origins.get(sub_path)
            note = origin.annotation() if origin else "[D]"
            lines.append(text + " " * max(1, COMMENT_COLUMN - len(text)) + "# " + note)


def _label(key: str) -> str:
    import re

    return key if re.fullmatch(r"[A-Za-z0-9_*-]+", key) else json.dumps(key)


def _collapse(key: str, value: Any, path: tuple[str, ...]):
    label = _label(key)
    while isinstance(value, dict) and len(value) == 1:
        (sub_key, sub_value), = value.items()
        if '"' in label or _label(sub_key) != sub_key:
            break  # a quoted part stays its own level (a."b.c" does not parse back)
        label += "." + sub_key
        path += (sub_key,)
        value = sub_value
    return label, path, value


def format_value(value: Any) -> str:
    """One value as typesafe-config/Java printed it."""
    if value is None or isinstance(value, (bool, int, float)):
        return _java_text(value)
    if isinstance(value, list):
        return "[" + ", ".join(_list_item(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def _list_item(value: Any) -> str:
    """A list element: plain words unquoted, as Swift printed ``[stampede]``; anything
    else quoted or written as an object, so the dump stays valid HOCON."""
    if isinstance(value, list):
        return format_value(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_label(k)}: {_list_item(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (bool, int, float)):
        return _java_text(value)
    import re

    text = str(value)
    # a word a HOCON reader would take for a boolean or null (in any case) is quoted
    plain = re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", text) and text.lower() not in (
        "true", "false", "null", "yes", "no", "on", "off") and not re.fullmatch(
        r"[0-9.eE+-]+", text)
    return text if plain else json.dumps(text, ensure_ascii=False)


def _java_text(value: bool | int | float | None) -> str:
    """Java's String.valueOf, as Swift 0.96 (a Java program) printed a value: the engine's,
    so a number reads the same in a dump as in a script's trace (1.0E7, 1.0E-5)."""
    from swiftnb.engine.formatting import java_str  # (the engine: only when a dump is made)

    return java_str(value)


def render_swift_conf(config: Config) -> str:
    """The configuration as swift.conf text, without what the built-in defaults set.

    This is what ``swift-convert-config`` produced from the legacy files; loading the
    text again gives the same configuration.
    """
    lines: list[str] = []
    site_tree = config.raw.get("site") or {}
    local = site_tree.get("local")
    if isinstance(local, dict) and not _has_tag(config, ("site", "local"), local, "[D]"):
        lines.append("site.local: null")  # the legacy files replaced the built-in site
    tree = _without_tag(config, config.raw, (), "[D]")
    _hocon_object(tree, 0, lines)
    return "\n".join(lines) + "\n"


def _has_tag(config: Config, path: tuple[str, ...], tree: Any, tag: str) -> bool:
    if isinstance(tree, dict):
        return any(_has_tag(config, path + (k,), v, tag) for k, v in tree.items())
    origin = config.origins.get(path)
    return origin is not None and origin.tag == tag


def _without_tag(config: Config, tree: dict[str, Any], path: tuple[str, ...],
                 tag: str) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in tree.items():
        sub = path + (key,)
        if isinstance(value, dict):
            kept = _without_tag(config, value, sub, tag)
            if kept:
                result[key] = kept
        else:
            origin = config.origins.get(sub)
            if origin is None or origin.tag != tag:
                result[key] = value
    return result


def _hocon_key(key: str) -> str:
    import re

    return key if re.fullmatch(r"[A-Za-z0-9_*-]+", key) else json.dumps(key)


def _hocon_value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_hocon_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_hocon_key(k)}: {_hocon_value(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return format_value(value)


def _hocon_object(tree: dict[str, Any], depth: int, lines: list[str]) -> None:
    indent = "    " * depth
    for key in tree:
        value = tree[key]
        label = _hocon_key(key)
        while isinstance(value, dict) and len(value) == 1:
            (sub_key, value), = value.items()
            label += "." + _hocon_key(sub_key)
        if isinstance(value, dict):
            lines.append(f"{indent}{label} {{")
            _hocon_object(value, depth + 1, lines)
            lines.append(f"{indent}}}")
        else:
            lines.append(f"{indent}{label}: {_hocon_value(value)}")
