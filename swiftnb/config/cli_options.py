"""The configuration options of the ``swift`` command line, for ``swiftnb run``.

``split_config_args(argv)`` takes out what concerns configuration -- ``-config FILE``,
``-configpath a:b``, ``-sites a,b``, ``-lazyErrors``, ``-sites.file``, ``-tc.file``,
``-listconfig``, ``-sitelist`` and every other global swift.conf key as ``-key value``
(also the 0.95 property names such as ``-execution.retries 2``) -- and leaves the rest
(the script, its ``-name=value`` arguments, -resume, -runid, ...) in order.  Options are
only read before the script name, as Swift did.  ``load_from_args`` then calls
``load_config`` with them.

Boolean options may stand alone (``-lazyErrors``) or take ``true``/``false``.  A
``-config`` file ending in ``.properties`` is read as a 0.95 swift.properties.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from swiftnb.config import schema
from swiftnb.config.loader import load_config
from swiftnb.config.model import Config, ConfigError
from swiftnb.config.types import ValueType
from swiftnb.config.validate import PROPERTY_NAMES


# Other swift options that take a value (kept in ``rest`` with it).
OTHER_OPTIONS_WITH_VALUE = {"resume", "runid", "logfile", "ui", "cdmfile"}


@dataclass
class ConfigArgs:
    config: str | None = None
    configpath: list[str] | None = None
    properties: dict[str, str] = field(default_factory=dict)
    sites_file: str | None = None
    tc_file: str | None = None
    properties_file: str | None = None
    listconfig: str | None = None  # "files" or "full"
    sitelist: bool = False
    rest: list[str] = field(default_factory=list)


def _is_bool(key: str) -> bool:
    node = schema.GLOBAL.get(key)
    return isinstance(node, ValueType) and node.kind == "bool"


def split_config_args(argv: Sequence[str]) -> ConfigArgs:
    """Separate the configuration options from the rest of a swift command line."""
    result = ConfigArgs()
    args = list(argv)
    i = 0
    script_seen = False

    def value_of(option: str) -> str:
        nonlocal i
        if i + 1 >= len(args):
            raise ConfigError(f"<Command Line>: -{option}: missing value")
        i += 1
        return args[i]

    while i < len(args):
        arg = args[i]
        if script_seen or not arg.startswith("-") or arg == "-" or "=" in arg:
            if not arg.startswith("-"):
                script_seen = True
            result.rest.append(arg)
            i += 1
            continue
        name = arg.lstrip("-")
        if name == "config":
            path = value_of(name)
            if path.endswith(".properties"):
                result.properties_file = path
            else:
                result.config = path
        elif name == "configpath":
            result.configpath = [p for p in value_of(name).split(os.pathsep) if p]
        elif name == "sites.file":
            result.sites_file = value_of(name)
        elif name == "tc.file":
            result.tc_file = value_of(name)
        elif name == "listconfig":
            nxt = args[i + 1] if i + 1 < len(args) else ""
            result.listconfig = "files"
            if nxt in ("files", "full"):
                result.listconfig = nxt
                i += 1
        elif name == "sitelist":
            result.sitelist = True
        elif name in schema.GLOBAL and name not in ("site", "app") or name in PROPERTY_NAMES:
            key = PROPERTY_NAMES.get(name, name)
            nxt = args[i + 1] if i + 1 < len(args) else None
            if _is_bool(key) and (nxt is None or nxt.lower() not in ("true", "false")):
                result.properties[key] = "true"
            else:
                result.properties[key] = value_of(name)
        else:
            result.rest.append(arg)
            if name in OTHER_OPTIONS_WITH_VALUE and i + 1 < len(args):
                i += 1
                result.rest.append(args[i])
        i += 1
    return result


def load_from_args(args: ConfigArgs, *, env: Mapping[str, str] = os.environ,
                   cwd: str | os.PathLike = ".") -> Config:
    return load_config(args.config, properties=args.properties, sites_file=args.sites_file,
                       tc_file=args.tc_file, properties_file=args.properties_file, env=env,
                       cwd=cwd, configpath=args.configpath)


def sitelist(config: Config) -> str:
    """``-sitelist``: the defined sites, one per line, enabled ones marked."""
    lines = ["Defined sites:"]
    for name, site in sorted(config.sites.items()):
        mark = " (enabled)" if name in config.selected_sites else ""
        lines.append(f"  {name}: {site.execution.type}{mark}")
    return "\n".join(lines) + "\n"


__all__ = ["ConfigArgs", "split_config_args", "load_from_args", "sitelist"]
