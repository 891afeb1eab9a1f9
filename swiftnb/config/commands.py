"""``swiftnb convert-config`` and ``swiftnb check-config``.

``convert-config`` is Swift 0.96's ``swift-convert-config``: it reads the legacy
``sites.xml``, ``tc.data`` and ``swift.properties`` and writes the equivalent
swift.conf.  ``check-config`` loads a configuration the way a run would and prints the
files it read and the merged tree with origins (``-listconfig full``), or the
problems, one per line, exiting 1.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO
from collections.abc import Sequence

from swiftnb.config.cli_options import (CONFIG_OPTIONS, CommandLine, CommandLineError,
                                        load_from_args, parse_command_line, sitelist)
from swiftnb.config.loader import load_config
from swiftnb.config.model import Config, ConfigError

CONVERT_USAGE = """\
usage: swiftnb convert-config [-sites.file sites.xml] [-tc.file tc.data]
                              [-config swift.properties] [-out swift.conf]"""


def convert_config(argv: Sequence[str], out: TextIO | None = None,
                   err: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out  # the streams of the moment, not of import
    err = sys.stderr if err is None else err
    options: dict[str, str] = {}
    args = list(argv)
    while args:
        name = args.pop(0)
        if name not in ("-sites.file", "-tc.file", "-config", "-out"):
            print(f"swiftnb convert-config: unexpected argument {name!r}", file=err)
            print(CONVERT_USAGE, file=err)
            return 1
        if not args or args[0].startswith("-"):
            print(f"swiftnb convert-config: {name} needs a file name", file=err)
            print(CONVERT_USAGE, file=err)
            return 1
        options[name] = args.pop(0)
    if not any(k in options for k in ("-sites.file", "-tc.file", "-config")):
        print(CONVERT_USAGE, file=err)
        return 1
    try:
        config = load_config(sites_file=options.get("-sites.file"),
                             tc_file=options.get("-tc.file"),
                             properties_file=options.get("-config"), env={})
    except ConfigError as exc:
        print(exc, file=err)
        return 1
    for warning in config.warnings:
        print(f"Warning: {warning}", file=err)
    text = config.to_swift_conf()
    if "-out" in options:
        return _write_output(options, text, err)
    out.write(text)
    return 0


def _write_output(options: dict[str, str], text: str, err: TextIO) -> int:
    """Write ``-out`` whole or not at all, and never over one of the files read."""
    import os

    from swiftnb.atomicfile import write_atomically

    target = options["-out"]
    for name in ("-sites.file", "-tc.file", "-config"):
        source = options.get(name)
        if source is not None and os.path.exists(target) and os.path.samefile(source, target):
            print(f"swiftnb convert-config: -out {target} is the {name} being converted; "
                  "choose another name", file=err)
            return 1
    try:
        write_atomically(target, text.encode("utf-8"))
    except OSError as exc:
        print(f"swiftnb convert-config: cannot write {target}: {exc.strerror or exc}", file=err)
        return 1
    return 0


def check_config(argv: Sequence[str], out: TextIO | None = None,
                 err: TextIO | None = None,
                 check_sites: Callable[[Config], list[str]] | None = None) -> int:
    """Load the configuration a ``swiftnb run`` with these options would use (the same
    parser and loader) and print it, or its problems with exit 1.

    ``check_sites(config)`` is the providers' own check of each site's execution type and
    options (``swiftnb.scheduling.build.check_sites``, handed in by the command line: the
    providers sit above the configuration)."""
    out = sys.stdout if out is None else out  # the streams of the moment, not of import
    err = sys.stderr if err is None else err
    try:
        args = parse_command_line(argv)
        _refuse_run_only(args)
        config = load_from_args(args)
    except CommandLineError as exc:
        print(f"swiftnb check-config: {exc}", file=err)
        return 1
    except ConfigError as exc:
        print(exc, file=err)
        return 1
    # what a run would refuse (and what it would ignore, a warning), after the
    # configuration it would have read
    problems = check_sites(config) if check_sites is not None else []
    for warning in config.warnings:
        print(f"Warning: {warning}", file=err)
    if args.sitelist:
        out.write(sitelist(config))
    else:
        out.write(config.listconfig(full=args.listconfig != "files"))
    for problem in problems:
        print(problem, file=err)
    return 1 if problems else 0


#: what check-config reads besides configuration options and properties
_CHECK_FLAGS = frozenset({"-listconfig", "-sitelist"})


def _refuse_run_only(args: CommandLine) -> None:
    """A script, or an option only a run uses, has no place in check-config: refusing
    it says so instead of leaving the user to wonder whether it was checked."""
    if args.script is not None:
        raise CommandLineError(f"unexpected argument {args.script!r}")
    run_only = sorted(set(args.flags) - _CHECK_FLAGS)
    run_only += sorted(option for option in args.values
                       if option not in CONFIG_OPTIONS and option not in _CHECK_FLAGS)
    if run_only:
        raise CommandLineError(f"{run_only[0]} is an option of swiftnb run, "
                               "not of check-config")
