"""What of an app's command lines is known before any of its calls: the program, the
words that are literals, the job id's prefix, where each command is in the script.

An app is called thousands of times with the same command template; working out once
what does not change keeps a call's building to what does (its arguments' values and
files).  ``ProcInfo`` makes one plan per app when it compiles the app
(engine/procedures.py); ``TaskBuilding.build_task`` fills it in per call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from swiftnb.engine.formatting import java_str
from swiftnb.lang import ast as A

__all__ = ["AppPlan", "CommandPlan", "Evaluator", "Word", "constant_word", "jobid_prefix"]

#: a compiled expression: the frame of the call -> its value
Evaluator = Callable[[list], Any]
#: one word of a command line: a literal's text, or the expression making it
Word = str | Evaluator


@dataclass(frozen=True, slots=True)
class CommandPlan:
    """One command of an app body: its program, its words and its redirections
    (stdin, stdout, stderr; None: not redirected), each a literal's text or an
    evaluator, and its place as messages name it (``script.swift:12:5``)."""

    tr: str
    words: tuple[Word, ...]
    redirections: tuple[Word | None, Word | None, Word | None]
    source: str


@dataclass(frozen=True, slots=True)
class AppPlan:
    """An app's commands (the first is the job's) and its job ids' prefix."""

    commands: tuple[CommandPlan, ...]
    jobid_prefix: str


def constant_word(e: A.Expr) -> str | None:
    """The command-line word of a literal, as every call would make it (Java's
    ``String.valueOf``); None for any other expression."""
    if isinstance(e, (A.StringLiteral, A.IntLiteral, A.FloatLiteral, A.BoolLiteral)):
        return java_str(e.value)
    return None


def jobid_prefix(tr: str) -> str:
    """``echo-``: the app's name as its job ids start."""
    return "".join(ch if ch.isalnum() or ch in "_-" else "_"
                   for ch in os.path.basename(tr)) + "-"
