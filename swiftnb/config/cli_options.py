"""The ``swift`` command line: the one parser of every ``swiftnb`` sub-command.

``swiftnb run`` and ``swiftnb check-config`` (and the kernel's ``%%swift`` line) read a
command line with :func:`parse_command_line` and load its configuration with
:func:`load_from_args`, so a property given on the command line reaches the
configuration the same way whichever command reads it.  Before there were two parsers,
and they disagreed: ``run`` silently dropped ``-clustering.enabled true`` while
``check-config`` applied it.

A command line is options, then the script, then the script's ``-name=value``
arguments.  Options are:

* configuration files: ``-config FILE`` (a ``.properties`` file is a 0.95
  swift.properties), ``-configpath a:b``, ``-sites.file F``, ``-tc.file F``,
  ``-properties F``;
* properties (the ``[C]`` layer of the configuration): every global swift.conf key
  (``-lazyErrors``, ``-executionRetries 2``, ``-sites a,b``, ``-CDMFile F`` ...) and every
  0.95 property name of the User Guide (``-lazy.errors true``, ``-clustering.enabled
  true``, ``-cdm.file F``, ``-ticker.disable`` ...), see :data:`PROPERTIES`;
* the run's own options (``-resume F``, ``-runid ID``, ``-dryrun`` ...), see
  :data:`VALUE_OPTIONS` and :data:`FLAG_OPTIONS`.

Boolean properties may stand alone (``-lazyErrors``) or take a boolean word
(``-lazyErrors false``).  An unknown ``-option`` before the script is a
:class:`CommandLineError` naming it and the nearest valid one: nothing given on the
command line is silently dropped.  After the script, options the parser knows are still
options (``wf.swift -resume wf.rlog``, as swiftnb always read it); anything else is a
script argument.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from swiftnb.config import schema
from swiftnb.config.loader import load_config
from swiftnb.config.model import Config, ConfigError
from swiftnb.config.types import ValueType
from swiftnb.config.validate import PROPERTY_NAMES
from swiftnb.nearest import close_matches

__all__ = ["CommandLine", "CommandLineError", "Property", "PROPERTIES", "VALUE_OPTIONS",
           "FLAG_OPTIONS", "CONFIG_OPTIONS", "parse_command_line", "check_files", "file_problem",
           "load_from_args", "sitelist", "suggest"]


class CommandLineError(ConfigError):
    """A usage error on the command line (exit 1): an unknown option, a missing value,
    a named file that does not exist.  A ConfigError, so that every command already
    reporting configuration problems reports these too."""


# ------------------------------------------------------------------ the names

@dataclass(frozen=True)
class Property:
    """One command-line property: the swift.conf key it sets (None: accepted for
    compatibility with Swift 0.95, no effect), whether it is a boolean (may stand
    alone), and how its value becomes the key's value (``ticker.disable`` inverts)."""

    key: str | None
    boolean: bool = False
    convert: Callable[[str], str | None] | None = None
    note: str = ""  # why a property without a key has no effect (the warning says it)


_TRUE = ("true", "yes", "on")
_BOOL_WORDS = frozenset(_TRUE + ("false", "no", "off"))


def _invert(value: str) -> str:
    """``ticker.disable true`` is ``tickerEnabled false`` (and a non-boolean stays as
    given, for the configuration's validation to name)."""
    word = value.strip().lower()
    if word in _BOOL_WORDS:
        return "false" if word in _TRUE else "true"
    return value


def _staging(method: str) -> Callable[[str], str | None]:
    """``use.provider.staging true`` is ``staging: local`` (false sets nothing)."""
    return lambda value: method if value.strip().lower() in _TRUE else None


def _is_bool_key(key: str) -> bool:
    node = schema.GLOBAL.get(key)
    return isinstance(node, ValueType) and node.kind == "bool"


def _property_table() -> dict[str, Property]:
    """Every property name the command line accepts, without its ``-``."""
    table: dict[str, Property] = {}
    for key, node in schema.GLOBAL.items():  # the 0.96 names
        if isinstance(node, ValueType) and node.kind != "object":
            table[key] = Property(key, _is_bool_key(key))
    for name, key in PROPERTY_NAMES.items():  # the 0.95 names of swift.properties
        table[name] = Property(key, _is_bool_key(key))
    table["cdmfile"] = Property("CDMFile")  # Swift 0.95's -cdmfile spelling
    table["ticker.disable"] = Property("tickerEnabled", True, _invert)
    table["use.provider.staging"] = Property("staging", True, _staging("local"))
    table["use.wrapper.staging"] = Property("staging", True, _staging("wrapper"))
    removed = "removed in Swift 0.96, no effect"
    table["kickstart.enabled"] = Property(None, note=f"{removed} (swiftnb has no Kickstart)")
    table["kickstart.always.transfer"] = Property(
        None, True, note=f"{removed} (swiftnb has no Kickstart)")
    table["pgraph.graph.options"] = Property(None, note=f"{removed} (use -pgraph FILE)")
    table["pgraph.node.options"] = Property(None, note=f"{removed} (use -pgraph FILE)")
    return table


#: property name (without ``-``) -> what it sets
PROPERTIES: dict[str, Property] = _property_table()

#: the property names of a CDM policy file, whose file must exist (Guide section 20)
CDM_FILE_NAMES = ("cdm.file", "cdmfile", "CDMFile")

#: options naming configuration files (kept in ``CommandLine.values``)
CONFIG_OPTIONS = frozenset({"-config", "-configpath", "-sites.file", "-tc.file",
                            "-properties"})

#: the run's options that take a value
VALUE_OPTIONS = frozenset({"-resume", "-runid", "-logfile", "-ui", "-pgraph", "-e"})

#: the run's options without a value (-pauseOnStart is accepted and ignored;
#: -compactLogging is swiftnb's own: docs/logs.md)
FLAG_OPTIONS = frozenset({
    "-typecheck", "-dryrun", "-verbose", "-v", "-debug", "-d", "-version", "-help", "-h",
    "-monitor", "-tui", "-listconfig", "-sitelist", "-recompile", "-rlog",
    "-minimal.logging", "-reduced.logging", "-minimalLogging", "-reducedLogging",
    "-compact.logging", "-compactLogging",
    "-pauseOnStart", "-compileOnly", "-c"})

#: flags that take an optional word after them (0.96: ``-listconfig [files|full]``)
OPTIONAL_VALUES: dict[str, tuple[str, ...]] = {"-listconfig": ("files", "full")}


# ------------------------------------------------------------------ the parse

@dataclass
class CommandLine:
    """A parsed command line.

    ``values`` holds every option given with a value by its spelling (``"-resume"``,
    ``"-config"`` ...), ``flags`` the options without one, ``conf`` the properties by
    swift.conf key (the configuration's ``[C]`` layer), ``given`` the properties as
    typed (for the log), ``ignored`` the accepted properties that have no effect.
    """

    argv: list[str] = field(default_factory=list)
    script: str | None = None
    script_args: list[str] = field(default_factory=list)
    values: dict[str, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)
    conf: dict[str, str] = field(default_factory=dict)
    given: dict[str, str] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)

    def flag(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    @property
    def config_file(self) -> str | None:
        """``-config FILE`` unless it is a 0.95 swift.properties."""
        path = self.values.get("-config")
        return None if path is None or path.endswith(".properties") else path

    @property
    def properties_file(self) -> str | None:
        """``-properties F``, or ``-config F.properties`` (as 0.95 read it)."""
        path = self.values.get("-config")
        if path is not None and path.endswith(".properties"):
            return path
        return self.values.get("-properties")

    @property
    def configpath(self) -> list[str] | None:
        text = self.values.get("-configpath")
        return None if text is None else [p for p in text.split(os.pathsep) if p]

    @property
    def sites_file(self) -> str | None:
        return self.values.get("-sites.file")

    @property
    def tc_file(self) -> str | None:
        return self.values.get("-tc.file")

    @property
    def listconfig(self) -> str | None:
        """``files`` or ``full`` when ``-listconfig`` was given (``files`` alone)."""
        if "-listconfig" not in self.flags:
            return None
        return self.values.get("-listconfig", "files")

    @property
    def sitelist(self) -> bool:
        return "-sitelist" in self.flags


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    """Split a ``swift`` command line into options, properties, script and arguments.

    Raises :class:`CommandLineError` for an unknown option or a missing value.
    """
    line = CommandLine(argv=list(argv))
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in FLAG_OPTIONS:
            line.flags.add(word)
            if i < len(words) and words[i] in OPTIONAL_VALUES.get(word, ()):
                line.values[word] = words[i]
                i += 1
        elif word in VALUE_OPTIONS or word in CONFIG_OPTIONS:
            line.values[word] = _value_after(words, i, word)
            i += 1
        elif _property_name(word, line.script) is not None:
            i = _take_property(line, words, i)
        elif line.script is not None:
            line.script_args.append(word)  # -name=value, or a word for the script
        elif word.startswith("-") and len(word) > 1:
            raise CommandLineError(f"unknown option {word}{suggest(word)}")
        else:
            line.script = word
    if line.configpath == []:
        raise CommandLineError("-configpath: no file given")
    return line


def _value_after(words: list[str], i: int, option: str) -> str:
    """The value of ``option`` at ``words[i]``; a missing one is a usage error (an
    option word is not taken as a value: ``-sites -lazyErrors`` lacks the sites)."""
    if i >= len(words) or _looks_like_option(words[i]):
        raise CommandLineError(f"option {option} needs a value")
    return words[i]


def _looks_like_option(word: str) -> bool:
    if not word.startswith("-") or word == "-":
        return False
    try:
        float(word)  # a negative number is a value
    except ValueError:
        return True
    return False


def _property_name(word: str, script: str | None) -> str | None:
    """The property a word names (``-lazy.errors`` or, before the script,
    ``-lazy.errors=true``), or None."""
    if not word.startswith("-"):
        return None
    name = word[1:]
    if "=" in name and script is None:
        name = name.partition("=")[0]
    return name if name in PROPERTIES else None


def _take_property(line: CommandLine, words: list[str], i: int) -> int:
    """Record the property at ``words[i - 1]`` (and its value); the next index."""
    word = words[i - 1]
    name, equals, value = word[1:].partition("=")
    prop = PROPERTIES[name]
    if not equals:
        if prop.boolean:
            value = "true"
            if i < len(words) and words[i].strip().lower() in _BOOL_WORDS:
                value = words[i]
                i += 1
        else:
            value = _value_after(words, i, word)
            i += 1
    line.given[name] = value
    if prop.key is None:
        line.ignored.append(name)
        return i
    converted = prop.convert(value) if prop.convert else value
    if converted is not None:
        line.conf[prop.key] = converted
    return i


def suggest(word: str) -> str:
    """`` (did you mean -X?)`` for the nearest valid option to ``word``, or ``""``."""
    known = sorted(FLAG_OPTIONS | VALUE_OPTIONS | CONFIG_OPTIONS
                   | {"-" + name for name in PROPERTIES})
    lowered = {k.lower(): k for k in known}
    close = [lowered[word.lower()]] if word.lower() in lowered else \
        close_matches(word, known)
    return f" (did you mean {close[0]}?)" if close else ""


# ------------------------------------------------------------------ loading

def check_files(line: CommandLine, cwd: str | os.PathLike = ".") -> None:
    """Raise :class:`CommandLineError` when a file named on the command line does not
    exist: a usage error, found before anything is compiled or run.  (A missing
    ``-configpath`` entry is the loader's "configuration file not found".)"""
    named = [(option, line.values.get(option))
             for option in ("-config", "-properties", "-sites.file", "-tc.file")]
    named += [("-" + name, line.given.get(name)) for name in CDM_FILE_NAMES]
    for option, path in named:
        if path is None:
            continue
        full = os.path.join(os.fspath(cwd), os.path.expanduser(path))
        problem = file_problem(full)
        if problem:
            raise CommandLineError(f"{option} {path}: {problem}")


def file_problem(path: str) -> str | None:
    """Why ``path`` is not a file to read, for people ("is a directory" is not "no such
    file": that would send the user looking for a missing file), or None."""
    if os.path.isdir(path):
        return "is a directory, not a file"
    if not os.path.isfile(path):
        return "no such file"
    return None


def load_from_args(line: CommandLine, *, env: Mapping[str, str] = os.environ,
                   cwd: str | os.PathLike = ".") -> Config:
    """The configuration a command line asks for: its files, then its properties.

    Raises :class:`CommandLineError` for a named file that does not exist, and
    ``ConfigError`` for every problem of the configuration itself.  Properties accepted
    for compatibility but without effect are listed in ``config.warnings``.
    """
    check_files(line, cwd)
    options: dict[str, str] = {
        key: f"-{name}" for name in line.given if (key := PROPERTIES[name].key) is not None}
    config = load_config(line.config_file, properties=line.conf, sites_file=line.sites_file,
                         tc_file=line.tc_file, properties_file=line.properties_file, env=env,
                         cwd=cwd, configpath=line.configpath, options=options)
    for name in line.ignored:
        config.warnings.append(f"-{name}: {PROPERTIES[name].note}")
    return config


def sitelist(config: Config) -> str:
    """``-sitelist``: the defined sites, one per line, enabled ones marked."""
    lines = ["Defined sites:"]
    for name, site in sorted(config.sites.items()):
        mark = " (enabled)" if name in config.selected_sites else ""
        lines.append(f"  {name}: {site.execution.type}{mark}")
    return "\n".join(lines) + "\n"
