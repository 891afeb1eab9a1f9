"""The settings of one run as :func:`swiftnb.runner.prepare_run` takes them: one object
in five groups (which configuration, where the run directory goes, what the run logs,
what the console shows, what the run does) instead of 26 keywords.  ``prepare_run``
still takes the keywords (the notebooks', the kernel's and the command line's calls):
:meth:`RunOptions.from_keywords` groups them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from swiftnb.config.model import Config
    from swiftnb.events import EventBus

__all__ = ["RunOptions", "ConfigChoice", "Placement", "Logging", "Console", "Execution",
           "ScriptArgs"]

#: a script's arguments: ``{"n": 3}`` or ``["-n=3"]`` (None: none)
ScriptArgs = Mapping[str, object] | Sequence[object] | None


@dataclass(frozen=True)
class ConfigChoice:
    """The configuration: a ``Config`` already loaded, or the files and properties to
    load it from; ``sites`` selects sites in either case."""

    config: Config | None = None
    config_file: str | None = None
    properties: Mapping[str, Any] | None = None
    sites: str | Sequence[str] | None = None
    sites_file: str | None = None
    tc_file: str | None = None
    #: memoization where the configuration does not set ``memoize`` (the Swift kernel
    #: and ``%%swift`` give True; None: the configuration's, off by default)
    memoize_default: bool | None = None


@dataclass(frozen=True)
class Placement:
    """Where the run works (``base_dir``, the script's directory) and where its run
    directory is made: ``run_parent`` instead of ``base_dir`` (the Swift kernel keeps a
    session's runs together there), named ``runid`` instead of ``runNNN``."""

    base_dir: str = "."
    runid: str | None = None
    run_parent: str | None = None


@dataclass(frozen=True)
class Logging:
    """The run's records: the log file (``minimal``/``reduced``: Swift's
    ``-minimalLogging``, WARN lines only, and ``-reducedLogging``, no task-level lines),
    the event bus, and whether the handle keeps the events (``keep_events``)."""

    log: bool = True
    logfile: str | None = None
    log_arguments: Sequence[str] | None = None
    verbose: bool = False
    minimal_logging: bool = False
    reduced_logging: bool = False
    #: the compact log (``-compactLogging``, docs/logs.md): what the readers need of each
    #: call, without the lines and fields another line of the call repeats
    compact_logging: bool = False
    bus: EventBus | None = None
    keep_events: bool = True


@dataclass(frozen=True)
class Console:
    """What the run shows: the progress ticker (on ``ticker_stream``, stderr if None)
    and where the script's stdout goes (the process's if None)."""

    ticker: bool = False
    ticker_stream: TextIO | None = None
    stdout: TextIO | None = None


@dataclass(frozen=True)
class Execution:
    """What the run does: the script's arguments (``{"n": 3}`` or ``["-n=3"]``), a dry
    run, the restart log to resume from, the name the run is known by, the Graphviz file
    of its dataflow (``"true"``: a name made from the run's), and top-level values given
    in advance (``seed``: the kernel's earlier cells)."""

    args: ScriptArgs = None
    dryrun: bool = False
    resume: str | None = None
    script_name: str | None = None
    pgraph: str | None = None
    seed: Mapping[str, Any] | None = None


_GROUPS: dict[str, type] = {"config": ConfigChoice, "where": Placement, "logging": Logging,
                            "console": Console, "execution": Execution}


@dataclass(frozen=True)
class RunOptions:
    """All the settings of a run, grouped."""

    config: ConfigChoice = field(default_factory=ConfigChoice)
    where: Placement = field(default_factory=Placement)
    logging: Logging = field(default_factory=Logging)
    console: Console = field(default_factory=Console)
    execution: Execution = field(default_factory=Execution)

    @classmethod
    def from_keywords(cls, **keywords: Any) -> RunOptions:
        """``prepare_run``'s keywords (``config_file=``, ``logfile=``, ``dryrun=``...)
        sorted into their groups; an unknown keyword is a TypeError, as it was."""
        groups: dict[str, dict[str, Any]] = {name: {} for name in _GROUPS}
        for key, value in keywords.items():
            for name, group in _GROUPS.items():
                if key in _FIELDS[group]:
                    groups[name][key] = value
                    break
            else:
                raise TypeError(f"prepare_run() got an unexpected keyword argument {key!r}")
        return cls(**{name: _GROUPS[name](**values) for name, values in groups.items()})


_FIELDS: dict[type, frozenset[str]] = {
    group: frozenset(f.name for f in dataclasses.fields(group)) for group in _GROUPS.values()}
