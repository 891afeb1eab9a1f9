"""``swiftnb convert-config`` and ``swiftnb check-config``.

``convert-config`` is Swift 0.96's ``swift-convert-config``: it reads the legacy
``sites.xml``, ``tc.data`` and ``swift.properties`` and writes the equivalent
swift.conf.  ``check-config`` loads a configuration the way a run would and prints the
files it read and the merged tree with origins (``-listconfig full``), or the
problems, one per line, exiting 1.
"""

from __future__ import annotations

import sys
from typing import Sequence, TextIO

from swiftnb.config.cli_options import sitelist, split_config_args, load_from_args
from swiftnb.config.loader import load_config
from swiftnb.config.model import ConfigError

CONVERT_USAGE = """\
usage: swiftnb convert-config [-sites.file sites.xml] [-tc.file tc.data]
                              [-config swift.properties] [-out swift.conf]"""


def convert_config(argv: Sequence[str], out: TextIO = sys.stdout,
                   err: TextIO = sys.stderr) -> int:
    options: dict[str, str] = {}
    args = list(argv)
    while args:
        name = args.pop(0)
        if name not in ("-sites.file", "-tc.file", "-config", "-out") or not args:
            print(f"swiftnb convert-config: unexpected argument {name!r}", file=err)
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
        with open(options["-out"], "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        out.write(text)
    return 0


def check_config(argv: Sequence[str], out: TextIO = sys.stdout,
                 err: TextIO = sys.stderr) -> int:
    try:
        args = split_config_args(argv)
        if args.rest:
            print(f"swiftnb check-config: unexpected argument {args.rest[0]!r}", file=err)
            return 1
        config = load_from_args(args)
    except ConfigError as exc:
        print(exc, file=err)
        return 1
    for warning in config.warnings:
        print(f"Warning: {warning}", file=err)
    if args.sitelist:
        out.write(sitelist(config))
    else:
        out.write(config.listconfig(full=args.listconfig != "files"))
    return 0
