"""Mapper names and parameters, as plain data for the checker (reference section 1.8.3).

The implementations live in ``swiftnb.engine.mappers`` under the same names.  Each mapper
has a CamelCase name and a deprecated snake_case alias; both are accepted silently (0.96
did).  ``params`` is the set of accepted parameter names, ``None`` for "any parameter"
(``Ext`` passes every other parameter to its script); ``required`` the ones that must be
given.  ``<"path">`` is the shorthand for ``<SingleFileMapper; file="path">``.
"""

from __future__ import annotations

# canonical name: (snake_case alias, accepted params or None for any, required params)
MAPPERS: dict[str, tuple[str, frozenset[str] | None, tuple[str, ...]]] = {
    "SingleFileMapper": ("single_file_mapper", frozenset({"file"}), ("file",)),
    "SimpleMapper": ("simple_mapper", frozenset(
        {"location", "prefix", "suffix", "pattern", "padding", "separator"}), ()),
    "ConcurrentMapper": ("concurrent_mapper", frozenset(
        {"location", "prefix", "suffix", "pattern"}), ()),
    "FilesysMapper": ("filesys_mapper", frozenset({"location", "prefix", "suffix", "pattern"}),
                      ()),
    "FixedArrayMapper": ("fixed_array_mapper", frozenset({"files"}), ("files",)),
    "ArrayMapper": ("array_mapper", frozenset({"files"}), ("files",)),
    "RegexpMapper": ("regexp_mapper", frozenset({"source", "match", "transform"}),
                     ("source", "match")),
    "StructuredRegexpMapper": ("structured_regexp_mapper",
                               frozenset({"source", "match", "transform"}),
                               ("source", "match")),
    "CSVMapper": ("csv_mapper", frozenset({"file", "header", "skip", "hdelim", "delim"}),
                  ("file",)),
    "Ext": ("ext", None, ("exec",)),
    "TestMapper": ("test_mapper", frozenset({"file", "temp", "remappable", "static"}), ()),
}

#: every accepted spelling -> canonical name
NAMES: dict[str, str] = {}
for _name, (_alias, _params, _required) in MAPPERS.items():
    NAMES[_name] = _name
    NAMES[_alias] = _name


def lookup(name: str) -> tuple[str, frozenset[str] | None, tuple[str, ...]] | None:
    """(canonical name, params or None, required) for a mapper spelling; None if unknown."""
    canonical = NAMES.get(name)
    if canonical is None:
        return None
    _alias, params, required = MAPPERS[canonical]
    return canonical, params, required


__all__ = ["MAPPERS", "NAMES", "lookup"]
