"""Collective data management (User Guide 20) as the wrapper sees it: the spec's ``cdm``
directives checked, and BROADCAST's once-per-node copy."""

from __future__ import annotations

import os
import shutil
from typing import Any

from .files import _temp_beside, _unlink

# output a non-DEFAULT rule matches, ``[POLICY, *args]`` into the spec's ``cdm`` field.  This
# package gets that plain data only: it does not import cdm.py.

#: policies that change how an input is staged in
_CDM_INPUT = frozenset({"DIRECT", "LOCAL", "BROADCAST"})
#: policies that change how an output is staged out
_CDM_OUTPUT = frozenset({"DIRECT", "GATHER"})
#: LOCAL's copy programs
_CDM_TOOLS = ("cp", "dd")


def _bad_cdm_entry(entry: Any) -> str | None:
    """What is wrong with one ``[POLICY, *args]`` directive, or None."""
    if not isinstance(entry, (list, tuple)) or not entry:
        return "not a list [POLICY, args...]"
    policy, args = entry[0], list(entry[1:])
    if policy in ("DIRECT", "BROADCAST", "GATHER"):
        return None if args and args[0] else f"{policy} needs a directory"
    if policy == "LOCAL":
        if len(args) < 2 or not args[1]:
            return "LOCAL needs a tool and a directory"
        return None if args[0] in _CDM_TOOLS else f"LOCAL copies with cp or dd, not {args[0]}"
    if policy == "DEFAULT":
        return None
    return f"unknown policy {policy}"


def _bad_cdm_directive(cdm: dict[str, Any]) -> str | None:
    """The stage-in failure cause for the first malformed directive of a spec, or None
    (a hand-made spec may carry one; cdm.py never makes one)."""
    for path, entry in cdm.items():
        problem = _bad_cdm_entry(entry)
        if problem is not None:
            return f"Bad CDM directive for {path}: {entry!r}: {problem}"
    return None


def _broadcast_copy(source: str, target: str) -> bool:
    """BROADCAST: put a copy of ``source`` at the node-wide ``target`` unless one with
    the same size and modification time is there already (an app that wrote to it
    changed its time); True when it copied.  The copy goes to
    a temporary name first, so a job on the same node never links a half-written file.
    A directory is copied when absent and used as it is when present."""
    try:
        have, want = os.stat(target), os.stat(source)
        if os.path.isdir(target) or (have.st_size == want.st_size
                                     and have.st_mtime_ns == want.st_mtime_ns):
            return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = _temp_beside(target)
    try:
        if os.path.isdir(source):
            shutil.copytree(source, tmp, symlinks=False, ignore_dangling_symlinks=True)
        else:
            shutil.copy2(source, tmp)  # keeps the mtime the next job compares
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True) if os.path.isdir(tmp) else _unlink(tmp)
        if os.path.isdir(source) and os.path.isdir(target):
            return False  # another job on the node copied it first
        raise
    return True
