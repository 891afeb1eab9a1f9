"""Reading ``jobOptions`` values and writing them into job scripts, for the adapters of
PBS, LSF, HTCondor and Cobalt.

Options arrive as strings (HOCON ``true`` is ``"true"`` by then, see
``coasters.cluster._job_options``) or, from code, as Python values; each adapter checks
the ones it reads with these functions, so that every batch system says "must be a whole
number" and "true or false" in the same words.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

__all__ = ["whole_number_problem", "truth", "truth_problem", "quoted", "plain_name",
           "line_breaking", "gone_only", "flag_words", "given_flags", "prefixed_flags"]

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


def whole_number_problem(options: Mapping[str, object], key: str, where: str) -> str | None:
    """A message when ``options[key]`` is present and not a whole number >= 1."""
    if key not in options:
        return None
    value = options[key]
    if isinstance(value, bool) or not str(value).strip().isdigit() or int(str(value)) < 1:
        return f"{where}.{key} must be a whole number of at least 1 (got {value!r})"
    return None


def truth(value: object) -> bool | None:
    """``true``/``false`` (any case, or a bool); None for anything else."""
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    return True if word == "true" else False if word == "false" else None


def truth_problem(options: Mapping[str, object], key: str, where: str) -> str | None:
    """A message when ``options[key]`` is present and neither true nor false."""
    if key in options and truth(options[key]) is None:
        return f"{where}.{key} must be true or false (got {options[key]!r})"
    return None


def quoted(value: object) -> str:
    """A directive's value, in double quotes when it holds blanks."""
    text = str(value)
    return f'"{text}"' if any(c.isspace() for c in text) else text


def flag_words(option: str, value: object, *, sep: str = " ",
               write: Callable[[object], str] = quoted) -> str | None:
    """A directive's words for a key under an adapter's prefix (``slurm.mem: 4G``): the
    bare ``option`` for true or an empty value, ``option SEP value`` otherwise, None for
    false (the option left out)."""
    flag = truth(value)   # HOCON's true/false arrive as words
    if flag is True or value == "":
        return option
    if flag is False:
        return None
    return f"{option}{sep}{write(value)}"


def given_flags(pairs: Iterable[tuple[str, object]],
                write: Callable[[object], str] = quoted) -> list[str]:
    """``flag + write(value)`` for each ``(flag, value)`` whose value is given: a job's
    queue, project and paths, each written only when the site names one (``("-q ",
    queue)``, ``("--partition=", queue)``)."""
    return [flag + write(value) for flag, value in pairs if value]


def prefixed_flags(options: Mapping[str, object], prefix: str, dash: str = "-", *,
                   sep: str = " ", write: Callable[[object], str] = quoted) -> list[str]:
    """The directives of the keys under ``prefix``, each the option its name gives
    (``lsf.R: "x"`` -> ``-R x``, see :func:`flag_words`)."""
    return [words for key, value in options.items() if key.startswith(prefix)
            if (words := flag_words(f"{dash}{key[len(prefix):]}", value, sep=sep, write=write))]


def plain_name(name: str, limit: int | None = None) -> str:
    """A job name every batch system takes: letters, digits, ``._-`` (others become
    ``_``), starting with a letter, at most ``limit`` characters."""
    text = _UNSAFE_NAME.sub("_", name) or "swiftnb"
    if not text[0].isalpha():
        text = "j" + text
    return text[:limit] if limit else text


def line_breaking(values: Iterable[object]) -> str | None:
    """The first value holding a quote or a line break (which no directive carries)."""
    for value in values:
        if value is not None and any(c in str(value) for c in '"\n\r'):
            return str(value)
    return None


def gone_only(text: str, words: Iterable[str]) -> bool:
    """Whether every non-blank line of a command's error output says one of ``words``
    (the batch system's "no such job" / "already finished"), so that the command's
    failure only means that the jobs had ended."""
    lowered = [w.lower() for w in words]
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(any(w in line.lower() for w in lowered) for line in lines)
