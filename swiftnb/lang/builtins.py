"""Signatures of the builtin functions and procedures, as plain data for the checker.

The implementations live in ``swiftnb.engine.builtins`` under the same names; this table
only says how a call is typed.  One row per name:

``name: (kind, returns, params)``

* ``kind``: ``"function"`` (an expression; one value) or ``"procedure"`` (a statement;
  ``trace``, ``tracef``, ``printf``, ``fprintf``, ``assert`` have no value).
* ``returns``: a type spelling (``"int"``, ``"string[]"``, ``"string[string]"``), ``None``
  for no value, ``"any"`` when the call takes the type of its context (``readData``:
  the variable it is assigned to), ``"numeric"`` for the widened type of the numeric
  arguments (``min``, ``max``, ``abs``), ``"element"`` for the element type of the array
  argument (``sum``).
* ``params``: a tuple of parameter spellings; a trailing ``"?"`` makes it optional, a
  leading ``"..."`` makes the last one variadic (zero or more); a leading ``"name:"``
  names it, so that calls may pass it by keyword (``read(f, format="CSV")``).  Parameter
  types: a type spelling, ``"any"``, ``"any[]"`` (any array), ``"numeric"`` (int or
  float), ``"string|file"`` (a string or a mapped value), ``"boolean|int"``,
  ``"scalar"`` (int, float, string or boolean; every ``"scalar"`` of one call must agree,
  int widening to float: trunk's ``assertEqual`` overloads), ``"ordered"`` (the same for
  int or float: ``assertLT``).

Trunk's library v2 (reference 1.8.2) is always available; ``import "stdlib.v2";`` adds
the constants :data:`V2_CONSTANTS` (``PI``, ``E``) and switches the names whose meaning
changes (:data:`V2_CHANGES`).

Deprecated lowercase aliases (reference 1.7.3) are in :data:`DEPRECATED_ALIASES`; using
one gives the 0.96 warning ``Function toint is deprecated`` / ``Procedure readdata is
deprecated`` (:func:`deprecation_warning`).
"""

from __future__ import annotations

# (kind, returns, params)
Signature = tuple[str, "str | None", tuple[str, ...]]

F = "function"
P = "procedure"

BUILTINS: dict[str, Signature] = {
    # --- output
    "trace": (P, None, ("...any",)),
    "tracef": (P, None, ("string", "...any")),
    "printf": (P, None, ("string", "...any")),
    "fprintf": (P, None, ("string", "string", "...any")),
    "assert": (P, None, ("boolean|int", "msg:string?")),
    # --- assertions (trunk library v2; messages as trunk's Assertions.java)
    "assertEqual": (P, None, ("scalar", "scalar", "msg:string?")),
    "assertAlmostEqual": (P, None, ("numeric", "numeric", "numeric", "msg:string?")),
    "assertLT": (P, None, ("ordered", "ordered", "msg:string?")),
    "assertLTE": (P, None, ("ordered", "ordered", "msg:string?")),
    "assertGT": (P, None, ("ordered", "ordered", "msg:string?")),
    "assertGTE": (P, None, ("ordered", "ordered", "msg:string?")),
    # --- trunk's serialization: read(f, format, options) / write(v, format, options)
    "read": (F, "any", ("string|file", "format:string?", "options:any[]?")),
    "write": (F, "any", ("any", "format:string?", "options:any[]?")),
    # --- data files
    "readData": (F, "any", ("string|file",)),
    "readData2": (F, "any", ("string|file",)),
    "readStructured": (F, "any", ("string|file",)),
    "writeData": (F, "any", ("any",)),
    "extractInt": (F, "int", ("string|file",)),
    "extractFloat": (F, "float", ("string|file",)),
    # --- command line and environment
    "arg": (F, "string", ("string", "string?")),
    "args": (F, "string[string]", ("string",)),
    "getEnv": (F, "string", ("string",)),
    "system": (F, "string[]", ("string",)),
    "java": (F, "any", ("string", "string", "...any")),
    # --- files
    "filename": (F, "string", ("any",)),
    "filenames": (F, "string[]", ("any",)),
    "dirname": (F, "string", ("any",)),
    "exists": (F, "boolean", ("string|file",)),
    # --- arrays
    "length": (F, "int", ("any",)),
    "sum": (F, "element", ("any[]",)),
    "avg": (F, "float", ("any[]",)),
    "moment": (F, "float", ("any[]", "int", "float")),
    # --- conversion
    "toInt": (F, "int", ("any",)),
    "toFloat": (F, "float", ("any",)),
    "toString": (F, "string", ("any",)),
    "parseInt": (F, "int", ("string", "base:int?")),
    "parseFloat": (F, "float", ("string",)),
    # --- strings (v1)
    "strcat": (F, "string", ("...any",)),
    "strcut": (F, "string", ("string", "string")),
    "strstr": (F, "int", ("string", "string")),
    "strsplit": (F, "string[]", ("string", "string")),
    "strjoin": (F, "string", ("any[]", "string")),
    "regexp": (F, "string", ("string", "string", "string")),
    "sprintf": (F, "string", ("string", "...any")),
    "format": (F, "string", ("string", "...any")),
    "pad": (F, "string", ("int", "int")),
    # --- strings (Swift master stdlib v2, accepted always)
    "substring": (F, "string", ("string", "int", "int?")),
    "indexOf": (F, "int", ("string", "string", "int?", "int?")),
    "lastIndexOf": (F, "int", ("string", "string", "int?", "int?")),
    "toUpper": (F, "string", ("string",)),
    "toLower": (F, "string", ("string",)),
    "trim": (F, "string", ("string",)),
    "split": (F, "string[]", ("string", "string", "int?")),
    "splitRe": (F, "string[]", ("string", "string", "int?")),
    "join": (F, "string", ("any[]", "string")),
    "replaceAll": (F, "string", ("string", "string", "string", "int?", "int?")),
    "replaceAllRe": (F, "string", ("string", "string", "string", "int?", "int?")),
    "matches": (F, "boolean", ("string", "string")),
    "findAllRe": (F, "string[]", ("string", "string")),
    # --- math (v2)
    **{n: (F, "float", ("numeric",)) for n in (
        "sin", "cos", "tan", "asin", "acos", "atan", "exp", "ln", "log10", "sqrt", "cbrt",
        "ceil", "floor", "round")},
    "log": (F, "float", ("numeric", "numeric")),
    "atan2": (F, "float", ("numeric", "numeric")),
    "pow": (F, "float", ("numeric", "numeric")),
    "min": (F, "numeric", ("numeric", "numeric")),
    "max": (F, "numeric", ("numeric", "numeric")),
    "abs": (F, "numeric", ("numeric",)),
    "isNaN": (F, "boolean", ("numeric",)),
    "randomInt": (F, "int", ("int", "int", "int", "int")),
    "randomFloat": (F, "float", ("int", "int", "numeric", "numeric")),
    "randomGaussian": (F, "float", ("int", "int")),
}

#: deprecated lowercase spelling -> canonical name
DEPRECATED_ALIASES: dict[str, str] = {
    "readdata": "readData",
    "readdata2": "readStructured",
    "readstructured": "readStructured",
    "writedata": "writeData",
    "extractint": "extractInt",
    "extractfloat": "extractFloat",
    "toint": "toInt",
    "tofloat": "toFloat",
    "tostring": "toString",
}

#: 0.96 declared these as procedures in its library, hence "Procedure readdata is deprecated"
_PROCEDURE_LIKE = frozenset({"readData", "readData2", "readStructured", "writeData"})

#: functions whose first argument only needs its *mapping*, not its value
MAPPING_ONLY = frozenset({"filename", "filenames", "dirname"})

#: globals ``import "stdlib.v2";`` declares (trunk's StandardLibrary.New constants)
V2_CONSTANTS: dict[str, str] = {"PI": "float", "E": "float"}

#: trunk's ``read``/``write`` format names (IO.READERS/WRITERS), each to its canonical
#: name; a constant ``format=`` argument is checked against them before the run
SERIALIZATION_FORMATS: dict[str, str] = {"None": "None", "FieldAndValue": "FieldAndValue",
                                         "FV": "FieldAndValue", "CSV": "CSV"}

#: builtins whose meaning differs under ``import "stdlib.v2";`` (name -> what changes)
V2_CHANGES: dict[str, str] = {
    "assert": "takes a boolean only; default message 'assertion failed'; fails the run "
              "without the 'swift: assert failed:' line",
}

AT_SYNTAX_WARNING = "The @ syntax for function invocation is deprecated"


def lookup(name: str) -> tuple[str, Signature] | None:
    """(canonical name, signature) of a builtin or deprecated alias; None if unknown."""
    canonical = DEPRECATED_ALIASES.get(name, name)
    sig = BUILTINS.get(canonical)
    return None if sig is None else (canonical, sig)


def deprecation_warning(name: str) -> str | None:
    """The 0.96 warning for a deprecated alias (``Function toint is deprecated``)."""
    canonical = DEPRECATED_ALIASES.get(name)
    if canonical is None:
        return None
    what = "Procedure" if canonical in _PROCEDURE_LIKE else "Function"
    return f"{what} {name} is deprecated"


__all__ = ["BUILTINS", "DEPRECATED_ALIASES", "MAPPING_ONLY", "AT_SYNTAX_WARNING", "lookup",
           "V2_CONSTANTS", "V2_CHANGES", "SERIALIZATION_FORMATS",
           "deprecation_warning", "Signature"]
