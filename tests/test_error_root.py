"""One root for swiftnb's exceptions (issue 27, item 5).

Why walk the package: a new exception class that forgets the root, or a second class
under a name another module already uses, is found here rather than by a user whose
``except SwiftnbError`` missed it or who imported the wrong ``CompileError``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import defaultdict

import swiftnb
from swiftnb.errors import SwiftnbError

#: what runs with a bare Python on other machines (swiftnb.remote, the relay) or describes
#: data for it (cdm) imports nothing of swiftnb, so its exceptions cannot derive from the root
STANDALONE = {"swiftnb.coasters.relay", "swiftnb.execution.cdm"}

#: public classes (not exceptions) that mirror one another across the parser's tree and
#: the engine's values; known, not to grow
KNOWN_TWINS = {"Block", "Checker", "Index", "Field", "ArrayType", "StructType", "MappedType",
               "Node", "Job",
               "FileNode"}  # store.explain's, new with issue 26: to be renamed there


def _classes() -> list[type]:
    found: list[type] = []
    for info in pkgutil.walk_packages(swiftnb.__path__, "swiftnb."):
        module = importlib.import_module(info.name)
        found.extend(obj for obj in vars(module).values()
                     if inspect.isclass(obj) and obj.__module__ == module.__name__)
    return found


CLASSES = _classes()


def _standalone(cls: type) -> bool:
    return cls.__module__ in STANDALONE or cls.__module__.startswith("swiftnb.remote")


def test_every_exception_derives_from_the_root() -> None:
    strays = [f"{c.__module__}.{c.__qualname__}" for c in CLASSES
              if issubclass(c, Exception) and not issubclass(c, SwiftnbError) and not _standalone(c)]
    assert strays == []


def test_no_two_public_classes_share_a_name() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for cls in CLASSES:
        if not cls.__name__.startswith("_"):
            homes[cls.__name__].append(cls.__module__)
    shared = {name: mods for name, mods in homes.items() if len(mods) > 1}
    assert set(shared) <= KNOWN_TWINS, {n: m for n, m in shared.items() if n not in KNOWN_TWINS}


def test_the_old_bases_still_catch() -> None:
    from swiftnb.coasters.listener import ListenError
    from swiftnb.coasters.service import CoasterStartError
    from swiftnb.config.model import ConfigError
    from swiftnb.logs.reader import LogFormatError
    from swiftnb.rundir import RunDirError

    assert issubclass(ListenError, OSError) and issubclass(RunDirError, OSError)
    assert issubclass(LogFormatError, ValueError)
    assert issubclass(CoasterStartError, RuntimeError)
    assert issubclass(ConfigError, SwiftnbError)
    error = RunDirError(13, "Permission denied", "/x")
    assert error.errno == 13 and error.filename == "/x"
