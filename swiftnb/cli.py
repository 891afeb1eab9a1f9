"""The ``swiftnb`` command, compatible with the ``swift`` command.

``swiftnb run [options] script.swift [-name=value ...]`` takes the options and gives the
return codes of the Swift User Guide (section 4.1): 0 success, 1 command-line error,
2 execution error, 3 compile error, 4 script file missing.  ``swiftnb script.swift`` and
``swiftnb -typecheck script.swift`` work too, as with ``swift``.  Other sub-commands:
``typecheck``, ``timings``, ``plot-log``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

EXIT_OK = 0
EXIT_USAGE = 1
EXIT_EXECUTION = 2
EXIT_COMPILE = 3
EXIT_MISSING_SCRIPT = 4

USAGE = """\
usage: swiftnb run [options] script.swift [-name=value ...]
       swiftnb typecheck script.swift
       swiftnb timings run.log [--format aimes|csv|json|table]
       swiftnb plot-log run.log [-o report.html]
       swiftnb version

Run 'swiftnb run -help' for the options of a run."""


def _usage_error(message: str) -> int:
    print(f"swiftnb: {message}", file=sys.stderr)
    print(USAGE, file=sys.stderr)
    return EXIT_USAGE


def typecheck_file(path: str, *, out=sys.stdout, err=sys.stderr) -> int:
    """Parse and check one script; print the summary or the diagnostics; exit code."""
    import os

    from swiftnb import lang

    if not os.path.isfile(path):
        print(f"SwiftScript program does not exist: {path}", file=err)
        return EXIT_MISSING_SCRIPT
    try:
        program = lang.load(path)
    except lang.CompileError as exc:
        print(exc.render(), file=err)
        return EXIT_COMPILE
    for warning in program.warnings:
        print(f"Warning: {warning}", file=err)
    print(program.summary(), file=out)
    return EXIT_OK


def _cmd_typecheck(argv: Sequence[str]) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        return _usage_error("typecheck takes exactly one script file")
    return typecheck_file(argv[0])


def _cmd_run(argv: Sequence[str]) -> int:
    # Until the engine lands, a run can only typecheck (`swift -typecheck script.swift`).
    args = list(argv)
    if "-typecheck" not in args:
        return _usage_error("this build can only typecheck: use -typecheck")
    args.remove("-typecheck")
    scripts = [a for a in args if a.endswith(".swift")]
    if len(scripts) != 1:
        return _usage_error("expected one script file")
    return typecheck_file(scripts[0])


def _cmd_version(argv: Sequence[str]) -> int:
    from swiftnb import __version__

    print(f"swiftnb {__version__}")
    return EXIT_OK


COMMANDS: dict[str, Callable[[Sequence[str]], int]] = {
    "run": _cmd_run,
    "typecheck": _cmd_typecheck,
    "version": _cmd_version,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "-help", "--help", "help"):
        print(USAGE)
        return EXIT_OK if args else EXIT_USAGE
    command = COMMANDS.get(args[0])
    if command is not None:
        return command(args[1:])
    if args[0].startswith("-") or args[0].endswith(".swift"):
        return _cmd_run(args)  # the `swift` spelling: options and script, no sub-command
    return _usage_error(f"unknown command {args[0]!r}")


if __name__ == "__main__":
    sys.exit(main())
