"""Collective Data Management (CDM): the policy file (``fs.data``) of User Guide 20.

A policy file says, per file name pattern, how the wrapper moves a file instead of
staging it through the site's shared directory::

    # Describe CDM for my job
    property GATHER_LIMIT 1
    rule .*input.txt DIRECT /gpfs/homes/wozniak/data
    rule .*xfile*.data BROADCAST /dev/shm
    rule .* DEFAULT

Lines are ``rule REGEX POLICY [args...]`` or ``property NAME VALUE``; ``#`` starts a
comment (at a word's start, so a pattern may hold one inside), blank lines are ignored.
Rules are tried in file order and the first whose regular expression matches the path
(``re.match``: anchored at the start, hence the Guide's leading ``.*``) decides; no match
is DEFAULT.  Policies and their arguments:

=========  =========================  ==================================================
DEFAULT    (none)                     the usual staging
DIRECT     ``DIR``                    inputs linked from DIR, outputs written into DIR
LOCAL      ``cp|dd DIR [tool args]``  inputs copied from DIR into the job directory
BROADCAST  ``DIR``                    inputs copied once per node into DIR and linked
GATHER     ``DIR``                    outputs moved into DIR on the site, not fetched
=========  =========================  ==================================================

Why this module is stdlib-only: it describes data the wrapper consumes on remote machines,
and keeping it importable without swiftnb lets a site tool check a policy file there.  The
wrapper itself never imports it: it gets :meth:`CdmPolicy.directives`' plain lists in the
job spec's ``cdm`` field.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "CdmPolicyKind",
    "CdmRule",
    "CdmPolicy",
    "CdmError",
    "load_policy",
    "parse_policy",
]


class CdmPolicyKind(enum.Enum):
    """A CDM policy name (the policy file's spelling is the value)."""

    DEFAULT = "DEFAULT"
    DIRECT = "DIRECT"
    LOCAL = "LOCAL"
    BROADCAST = "BROADCAST"
    GATHER = "GATHER"


#: policies that change an input's stage in / an output's stage out (the others of a
#: matching rule mean DEFAULT for that direction, so they are left out of the spec)
_FOR_INPUTS = frozenset({CdmPolicyKind.DIRECT, CdmPolicyKind.LOCAL, CdmPolicyKind.BROADCAST})
_FOR_OUTPUTS = frozenset({CdmPolicyKind.DIRECT, CdmPolicyKind.GATHER})

#: LOCAL's copy programs (the wrapper runs ``cp ARGS SRC DST`` or ``dd if= of= ARGS``)
LOCAL_TOOLS = ("cp", "dd")


class CdmError(Exception):
    """A policy file that cannot be used; the message starts with ``file:line:``."""


@dataclass(frozen=True)
class CdmRule:
    """One ``rule`` line: the pattern, the policy, its arguments, and where it was."""

    pattern: re.Pattern[str]
    kind: CdmPolicyKind
    args: tuple[str, ...]
    line: int

    def directive(self) -> list[str]:
        """The job spec's form: ``[POLICY, *args]``."""
        return [self.kind.value, *self.args]


@dataclass
class CdmPolicy:
    """A parsed policy file.

    ``properties`` keeps every ``property`` line (later lines win).  ``GATHER_LIMIT`` (the
    Guide's example) is parsed and kept but not used: GATHER here moves each output as
    its job ends, with no batching to limit.
    """

    rules: list[CdmRule] = field(default_factory=list)
    properties: dict[str, str] = field(default_factory=dict)

    def rule_for(self, path: str) -> CdmRule | None:
        """The first rule whose pattern matches ``path`` (as the script mapped it), or
        None: no rule matched, which means DEFAULT.  An explicit ``DEFAULT`` rule that
        matches first is returned (it shadows the rules after it)."""
        for rule in self.rules:
            if rule.pattern.match(path):
                return rule
        return None

    def found_on_site(self, path: str) -> bool:
        """Whether an input is taken from the rule's directory on the site (DIRECT,
        LOCAL) rather than staged from here: it need not exist here.  (BROADCAST copies
        the staged file to each node, so that one must exist.)"""
        rule = self.rule_for(path)
        return rule is not None and rule.kind in (CdmPolicyKind.DIRECT, CdmPolicyKind.LOCAL)

    def directives(self, inputs: Sequence[str], outputs: Sequence[str]) -> dict[str, list[str]]:
        """The job spec's ``cdm`` field: ``{path: [POLICY, *args]}`` for each input and
        output whose rule changes how it moves.  A rule whose policy means nothing in that
        direction (GATHER for an input, LOCAL or BROADCAST for an output) is DEFAULT there
        and left out, as are DEFAULT rules: an empty dict means no CDM at all."""
        found: dict[str, list[str]] = {}
        for paths, wanted in ((inputs, _FOR_INPUTS), (outputs, _FOR_OUTPUTS)):
            for path in paths:
                rule = self.rule_for(path)
                if rule is not None and rule.kind in wanted and path not in found:
                    found[path] = rule.directive()
        return found


def load_policy(path: str) -> CdmPolicy:
    """Read and parse a policy file; errors name ``path`` and the line."""
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise CdmError(f"{path}: cannot read the CDM policy file: {exc.strerror or exc}") from exc
    return parse_policy(text, filename=path)


def parse_policy(text: str, filename: str = "fs.data") -> CdmPolicy:
    """Parse the text of a policy file (``filename`` is for messages only)."""
    policy = CdmPolicy()
    for number, raw in enumerate(text.splitlines(), start=1):
        words = _words(raw)
        if not words:
            continue
        where = f"{filename}:{number}:"
        directive = words[0]
        if directive == "rule":
            policy.rules.append(_rule(words[1:], number, where))
        elif directive == "property":
            if len(words) < 3:
                raise CdmError(f"{where} a property needs a name and a value: "
                               "property NAME VALUE")
            policy.properties[words[1]] = " ".join(words[2:])
        else:
            raise CdmError(f"{where} unknown directive {directive!r} "
                           "(expected 'rule' or 'property')")
    return policy


def _words(line: str) -> list[str]:
    """The whitespace-separated words of a line, up to a word starting with ``#``."""
    words = line.split()
    for i, word in enumerate(words):
        if word.startswith("#"):
            return words[:i]
    return words


def _rule(words: list[str], number: int, where: str) -> CdmRule:
    """One ``rule REGEX POLICY [args...]`` line (``words`` without ``rule``)."""
    if len(words) < 2:
        raise CdmError(f"{where} a rule needs a pattern and a policy: rule REGEX POLICY [args...]")
    regex, name, args = words[0], words[1], tuple(words[2:])
    try:
        kind = CdmPolicyKind(name)
    except ValueError:
        raise CdmError(f"{where} unknown CDM policy {name!r} "
                       f"(did you mean {_nearest_policy(name)}?)") from None
    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise CdmError(f"{where} bad regular expression {regex!r}: {exc}") from None
    problem = _bad_args(kind, args)
    if problem:
        raise CdmError(f"{where} {problem}")
    return CdmRule(pattern, kind, args, number)


def _nearest_policy(name: str) -> str:
    """The policy name closest to a misspelt one (there always is one to suggest)."""
    names = [k.value for k in CdmPolicyKind]
    import difflib  # (not swiftnb.nearest: this module is stdlib-only, see above)

    close = difflib.get_close_matches(name.upper(), names, n=1, cutoff=0.0)
    return close[0] if close else CdmPolicyKind.DEFAULT.value


def _bad_args(kind: CdmPolicyKind, args: tuple[str, ...]) -> str | None:
    """What is wrong with a policy's arguments, or None (the usage line of Guide 20.4)."""
    if kind is CdmPolicyKind.DEFAULT:
        return None if not args else f"DEFAULT takes no arguments, got {' '.join(args)}"
    if kind is CdmPolicyKind.LOCAL:
        if len(args) < 2:
            return "LOCAL needs a tool and a directory: rule REGEX LOCAL cp|dd DIR [tool args...]"
        if args[0] not in LOCAL_TOOLS:
            return f"LOCAL copies with cp or dd, not {args[0]!r}"
        return None
    if len(args) != 1:
        return (f"{kind.value} needs exactly one directory: rule REGEX {kind.value} DIR"
                + (f" (got {len(args)} arguments)" if args else ""))
    return None
