"""The files a run writes besides its outputs (``-logfile``, ``-pgraph``): refused before
the run when they would overwrite a file the user gave it (the script, a configuration
file, the restart log to resume from, an output the script maps to a literal name) or
cannot be written.  One check for the command line and for ``prepare_run``."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from swiftnb.lang.checked import CheckedProgram

__all__ = ["written_files_problem", "pgraph_problem", "literal_mapped_names", "same_file"]


def written_files_problem(written: Sequence[tuple[str, str | None]],
                          read: Sequence[tuple[str, str | None]], base_dir: str,
                          program: CheckedProgram) -> str | None:
    """Why a file the run writes (``written``: option, path) would overwrite a file it
    reads (``read``: what, path, plus the files the script maps to literal names), or
    why ``-pgraph`` cannot be written; None when all is well.  Compared as files
    (``os.path.samefile``), so a symbolic or hard link to the script is found too.
    ``true``/``false`` (``-pgraph true``: a name made from the run's) are not paths."""
    written = [(o, p) for o, p in written if p not in (None, "true", "false")]
    if not written:
        return None
    read = [*read, *(("a file the script maps", name) for name in literal_mapped_names(program))]
    for option, path in written:
        assert path is not None
        full = os.path.join(base_dir, path)
        for what, given in read:
            if given is not None and same_file(full, os.path.join(base_dir, given)):
                return f"{option} {path} is {what} ({given}): the run would overwrite it"
    for option, path in written:
        if option == "-pgraph" and path is not None:
            return pgraph_problem(path, base_dir)
    return None


def literal_mapped_names(program: CheckedProgram) -> list[str]:
    """The file names a script maps its single files to with literals, known before it
    runs: ``file f <"out.txt">``, ``<single_file_mapper; file="out.txt">`` and a
    ``<simple_mapper; location=, prefix=, suffix=>`` of one file.  Names computed at run
    time (an expression, an array's members, other mappers) cannot be known here."""
    import dataclasses

    from swiftnb.lang import ast as A

    names: list[str] = []
    pending: list[object] = [program.program]
    while pending:
        node = pending.pop()
        if isinstance(node, (tuple, list)):
            pending.extend(node)
            continue
        if not isinstance(node, A.Node):
            continue
        if isinstance(node, A.Declarator) and node.mapping is not None and not node.dims:
            name = _literal_name(node.mapping)
            if name and program.type_of(node).is_mapped:
                names.append(name)
        pending.extend(getattr(node, f.name) for f in dataclasses.fields(node))
    return names


def _literal_name(mapping: object) -> str | None:
    """The one file name a mapping gives with literal parameters, or None."""
    from swiftnb.lang import ast as A

    assert isinstance(mapping, A.Mapping)
    if mapping.mapper is None:
        source = mapping.source
        return source.value if isinstance(source, A.StringLiteral) else None
    params = {p.name: p.value for p in mapping.params}
    if not all(isinstance(v, A.StringLiteral) for v in params.values()):
        return None
    text = {k: v.value for k, v in params.items()}  # type: ignore[attr-defined]  # all StringLiterals (checked above)
    if mapping.mapper in ("single_file_mapper", "SingleFileMapper"):
        return text.get("file")
    if mapping.mapper in ("simple_mapper", "SimpleMapper") and set(text) <= {
            "location", "prefix", "suffix"}:
        location = text.get("location", "")
        if location and not location.endswith("/"):
            location += "/"
        return location + text.get("prefix", "") + text.get("suffix", "") or None
    return None


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist: then it is not the other
        return os.path.realpath(a) == os.path.realpath(b)


def pgraph_problem(pgraph: str, base_dir: str) -> str | None:
    """Why the ``-pgraph`` file cannot be written at the end of the run (its directory
    missing, the name a directory), said before the run instead of never."""
    full = os.path.join(base_dir, pgraph)
    parent = os.path.dirname(full) or base_dir
    if os.path.isdir(full):
        return f"-pgraph {pgraph}: is a directory, not a file"
    if not os.path.isdir(parent):
        return f"-pgraph {pgraph}: the directory {os.path.dirname(pgraph)} does not exist"
    if not os.access(parent, os.W_OK):
        return f"-pgraph {pgraph}: the directory {os.path.dirname(pgraph) or '.'} is not writable"
    return None
