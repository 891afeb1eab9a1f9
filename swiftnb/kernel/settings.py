"""``%swift_config``: the configuration later runs of a kernel or a Python session use.

Shared by the Swift kernel and the ``%%swift`` magic.  ``%swift_config`` alone shows the
effective configuration (``-listconfig``); ``%swift_config FILE`` loads a swift.conf as
the default; ``-sites a,b`` selects sites; ``-PROPERTY VALUE`` sets a property (as on the
command line); ``--reset`` forgets all of it; ``--no-dashboard``/``--dashboard`` turn
the panels under each cell off/on.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import Any

from swiftnb.errors import SwiftnbError

__all__ = ["SwiftSettings", "SettingsError"]


class SettingsError(SwiftnbError, ValueError):
    pass


@dataclass
class SwiftSettings:
    config_file: str | None = None
    sites: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    #: the panels under each cell; $SWIFTNB_DASHBOARD=0 turns them off by default
    dashboard: bool = field(default_factory=lambda: os.environ.get(
        "SWIFTNB_DASHBOARD", "1").strip().lower() not in ("0", "false", "no", "off"))

    def run_kwargs(self) -> dict[str, Any]:
        """prepare_run's keywords; memoization on unless the configuration (a file, or
        ``-memoize false`` here or on the %%swift line) says otherwise: re-running a
        cell then runs only what changed (docs/memoization.md)."""
        return {"config_file": self.config_file, "sites": self.sites,
                "properties": dict(self.properties), "memoize_default": True}

    def load(self, base_dir: str = ".") -> Any:
        from swiftnb.runner import load_run_config

        return load_run_config(self.config_file, properties=self.properties, sites=self.sites,
                               base_dir=base_dir)

    def apply(self, line: str, base_dir: str = ".") -> str:
        """Apply a ``%swift_config`` line; returns what to show.  Raises SettingsError
        or runner.RunSetupError (a bad file or key)."""
        from swiftnb.cli import parse_run_args

        words = shlex.split(line)
        changed = False
        if "--reset" in words:
            words.remove("--reset")
            self.config_file, self.sites, self.properties = None, None, {}
            changed = True
        for flag, value in (("--no-dashboard", False), ("--dashboard", True)):
            if flag in words:
                words.remove(flag)
                self.dashboard = value
                changed = True
        if words and not words[0].startswith("-"):
            path = words.pop(0)
            if not os.path.isfile(os.path.join(base_dir, path)):
                raise SettingsError(f"%swift_config: {path}: no such file")
            self.config_file = path
            changed = True
        if words:
            try:
                opts = parse_run_args(words)
            except Exception as exc:  # noqa: BLE001  the CLI's usage error: a message
                raise SettingsError(f"%swift_config: {exc}") from None
            if opts.script is not None or opts.script_args:
                raise SettingsError(f"%swift_config: unexpected {opts.script or opts.script_args[0]}")
            if "-config" in opts.values:
                self.config_file = opts.values["-config"]
            conf = dict(opts.conf)
            if "sites" in conf:
                self.sites = str(conf.pop("sites"))
            self.properties.update(conf)
            changed = True
        config = self.load(base_dir)
        text = config.listconfig(full=True)
        if changed:
            head = [f"config file: {self.config_file or '(default search)'}",
                    f"sites: {', '.join(config.selected_sites) or 'local'}"]
            if self.properties:
                head.append("properties: " + ", ".join(f"{k}={v}" for k, v in
                                                       self.properties.items()))
            return "\n".join(head)
        return text
