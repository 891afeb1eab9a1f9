"""The ``%%swift`` cell magic and ``%swift_config`` for IPython (``%load_ext swiftnb``).

``%%swift [-config f] [-sites a,b] [-runid r] [-o NAME] [--no-dashboard] [-PROP v]
[-- -name=value ...]`` compiles the cell and starts it as a background task on the
kernel's event loop; the cell's value is the :class:`~swiftnb.runner.RunHandle`, at once,
so widgets stay responsive.  ``await run`` (or, outside a running loop, ``run.wait()``)
waits for it.  Errors are shown as messages (``cell:line:col`` and the source line),
never as tracebacks; the handle under the cell shows the run's status live and, when
the run fails, its errors (:mod:`swiftnb.kernel.livestatus`).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from typing import Any

from IPython.core.interactiveshell import InteractiveShell
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class

from swiftnb.errors import SwiftnbError
from swiftnb.kernel.livestatus import show_dashboard
from swiftnb.kernel.session import CELL_FILE, located_warnings
from swiftnb.kernel.settings import SettingsError, SwiftSettings

__all__ = ["SwiftMagics", "load_ipython_extension", "parse_magic_line"]


class MagicUsageError(SwiftnbError, ValueError):
    pass


def parse_magic_line(line: str) -> dict[str, Any]:
    """``-config f -sites a,b -runid r -o NAME --no-dashboard -PROP v -- -n=1`` -> options."""
    from swiftnb.cli import parse_run_args

    words = shlex.split(line)
    script_args: list[str] = []
    if "--" in words:
        i = words.index("--")
        words, script_args = words[:i], words[i + 1:]
    out: dict[str, Any] = {"dashboard": True, "name": None, "args": script_args}
    rest: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--no-dashboard":
            out["dashboard"] = False
        elif w in ("-o", "--out"):
            if i + 1 >= len(words):
                raise MagicUsageError(f"{w} needs a variable name")
            out["name"] = words[i + 1]
            i += 1
        else:
            rest.append(w)
        i += 1
    try:
        opts = parse_run_args(rest)
    except Exception as exc:  # noqa: BLE001  the CLI's usage error (a message)
        raise MagicUsageError(str(exc)) from None
    if opts.script is not None:
        raise MagicUsageError(f"unexpected {opts.script!r} (script arguments go after --)")
    if "-e" in opts.values:
        raise MagicUsageError("-e: the cell is the script")
    out["config_file"] = opts.values.get("-config")
    out["runid"] = opts.values.get("-runid")
    conf = dict(opts.conf)
    out["sites"] = conf.pop("sites", None)
    out["properties"] = conf
    out["dryrun"] = opts.flag("-dryrun")
    return out


def _loop() -> asyncio.AbstractEventLoop:
    """The kernel's running loop; in a terminal IPython, the loop its autoawait uses."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        from IPython.core.async_helpers import get_asyncio_loop

        return get_asyncio_loop()


@magics_class
class SwiftMagics(Magics):
    """``%%swift`` and ``%swift_config``."""

    def __init__(self, shell: Any = None) -> None:
        super().__init__(shell)
        self.settings = SwiftSettings()
        self.runs: list[Any] = []

    @cell_magic("swift")  # type: ignore[arg-type]  # IPython types the decorated method as Never
    def swift(self, line: str, cell: str) -> Any:
        """Run the cell as a Swift program in the background; returns the run handle."""
        from swiftnb import lang
        from swiftnb.runner import RunSetupError, prepare_run

        try:
            opts = parse_magic_line(line)
        except MagicUsageError as exc:
            print(f"%%swift: {exc}", file=sys.stderr)
            return None
        base_dir = os.getcwd()
        try:
            # one empty line for the %%swift line: positions are lines of the cell as seen
            program = lang.compile_source("\n" + cell, CELL_FILE, base_dir)
        except lang.CompileError as exc:
            print(exc.render(), file=sys.stderr)
            return None
        located = located_warnings(program.warnings, program.program, "\n" + cell)
        for warning in program.warnings:
            print(located.get(warning, f"Warning: {warning}"), file=sys.stderr)
        kwargs = self.settings.run_kwargs()
        if opts["config_file"]:
            kwargs["config_file"] = opts["config_file"]
        if opts["sites"]:
            kwargs["sites"] = opts["sites"]
        kwargs["properties"] = {**kwargs["properties"], **opts["properties"]}
        try:
            run = prepare_run(program, runid=opts["runid"], args=opts["args"],
                              base_dir=base_dir, dryrun=opts["dryrun"], stdout=sys.stdout,
                              **kwargs)
        except RunSetupError as exc:
            print(f"Could not start execution:\n\t{exc}", file=sys.stderr)
            return None
        for warning in run.config.warnings:  # what the configuration says to no effect
            print(f"Warning: {warning}", file=sys.stderr)
        run.start(_loop())
        self.runs.append(run)
        if opts["name"] and self.shell is not None:  # (a registered Magics has one)
            self.shell.user_ns[opts["name"]] = run
        if opts["dashboard"] and self.settings.dashboard:
            show_dashboard(run)
        return run

    @line_magic("swift_config")  # type: ignore[arg-type]  # as cell_magic above
    def swift_config(self, line: str = "") -> None:
        """Show the effective configuration, or load/set it for later %%swift cells."""
        from swiftnb.runner import RunSetupError

        try:
            print(self.settings.apply(line, os.getcwd()))
        except (SettingsError, RunSetupError) as exc:
            print(str(exc), file=sys.stderr)


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """``%load_ext swiftnb``: the magics, and run handles shown live (their status, and
    a failed run's errors under the cell that started it: :mod:`.livestatus`)."""
    from swiftnb.kernel.livestatus import show_run
    from swiftnb.runner import RunHandle

    ipython.register_magics(SwiftMagics)
    formatter = ipython.display_formatter
    assert formatter is not None  # a running shell has its display formatter
    formatter.ipython_display_formatter.for_type(RunHandle, show_run)
