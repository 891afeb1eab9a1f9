"""What the engine hands to whoever runs apps: a Task, and the Executor interface.

The engine owns this interface (docs/design.md, "The house"): it knows nothing of sites.  A
local executor runs tasks on this machine; the scheduler implements the same interface
and puts sites, throttles and policies behind it.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(slots=True)
class Command:
    """A command line after the first of an app body of several (Swift/K trunk runs them
    one after another in the job directory; the first that fails ends the job).  Its
    fields mean what the Task's first-command fields of the same names mean."""

    tr: str                          # the app name of its first word
    args: list[str]
    stdin: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    executable: str | None = None    # resolved by the site's app catalogue (None = tr)
    source: str = ""                 # "script.swift:13:5": where it is, for messages

    def for_log(self) -> str:
        """``tr a b``: the command as trunk's FormatCommands wrote it in the log."""
        return " ".join((self.tr, *self.args))


@dataclass(slots=True)
class Task:
    """One app invocation, fully evaluated.

    Paths in ``inputs``, ``outputs`` and the redirections are as the script's mappers
    named them: relative to ``base_dir`` (the directory the run was started from) or
    absolute.  The job runs in a job directory where those relative paths resolve to the
    staged inputs, and outputs are moved to their mapped places only on success.
    """

    jobid: str                      # e.g. "echo-clz8qmvr" (Swift's TR-<uid> form)
    tr: str                         # the app name (transformation) of the first command word
    args: list[str]                 # argv after the executable, never a shell string
    base_dir: str                   # where relative mapped paths resolve
    run_dir: str                    # the run directory (job dirs and logs go under it)
    stdin: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    profiles: dict[str, str] = field(default_factory=dict)   # profile "k" = v; options
    env: dict[str, str] = field(default_factory=dict)
    maxwalltime: float | None = None  # seconds
    source: str = ""                 # "script.swift:12:5", for error messages
    attempt: int = 0
    executable: str | None = None    # resolved by the site's app catalogue (None = tr)
    thread: str | None = None        # the engine thread of the call (THREAD_ASSOCIATION thread=)
    # dynamic outputs (an app producing a whole array mapped by filesys_mapper or
    # simple_mapper): globs relative to base_dir (`*` `?` per path component, `**` for
    # directories; mapper.stage_out_globs()) of files the app may create; the wrapper
    # brings back whatever matches, none is required
    output_globs: list[str] = field(default_factory=list)
    # the commands after the first of an app body of several, in order; empty for the
    # usual one-command app (whose command is tr, args and the redirections above)
    more_commands: tuple[Command, ...] = ()
    # memoization (docs/memoization.md): the wrapper reports each declared output's
    # content digest ("sha256:<hex>") where it ends up, on whatever site ran the job
    digest_outputs: bool = False

    @property
    def apps(self) -> tuple[str, ...]:
        """Every app the job runs, the first command's first: a site must have them all."""
        if not self.more_commands:
            return (self.tr,)
        return (self.tr, *(c.tr for c in self.more_commands))

    def log_arguments(self) -> list[str]:
        """JOB_START's ``arguments``: the args of a one-command app; of several, each
        command as ``tr a b`` (trunk's ``[cmd1 args, cmd2 args]``)."""
        if not self.more_commands:
            return [str(a) for a in self.args]
        return [" ".join((self.tr, *map(str, self.args))),
                *(c.for_log() for c in self.more_commands)]


@dataclass(frozen=True, slots=True)
class AppEntry:
    """What a site's app catalogue says of one app: its program, the environment its
    job gets, and its walltime in seconds (None: not set)."""

    executable: str
    env: Mapping[str, str]
    walltime: float | None


def later_commands(commands: tuple[Command, ...], catalogue: Callable[[str], AppEntry | None]
                   ) -> tuple[tuple[Command, ...], dict[str, str], float | None]:
    """The commands after the first of an app body of several, as a site runs them, and
    what their apps add to the job (Swift/K trunk's TCProfile): each command's program from
    its own app (the program of its own name where the catalogue lists none, as on a
    simulated site), the variables of each app's environment, and the sum of the apps'
    walltimes (None: none set one).  The caller lets the first app's and the script's own
    settings win."""
    resolved: list[Command] = []
    env: dict[str, str] = {}
    walltime: float | None = None
    for command in commands:
        entry = catalogue(command.tr)
        if entry is not None:
            env.update(entry.env)
            if entry.walltime is not None:
                walltime = (walltime or 0.0) + entry.walltime
        if command.executable is None:
            command = dataclasses.replace(
                command, executable=entry.executable if entry is not None else None)
        resolved.append(command)
    return tuple(resolved), env, walltime


class FailureKind(str, enum.Enum):
    """What kind of failure ended an attempt: scores, retries and messages read this,
    never the message text.  The values are the wrapper's ``kind`` strings (the wrapper
    is stdlib-only and runs on remote machines, so it cannot import this enum)."""

    APP_EXIT = "app-exit"              # non-zero exit, or declared outputs missing
    NOT_EXECUTABLE = "not-executable"  # no such program, no executable bit: never retried
    STAGE_IN = "stage-in"              # an input could not be put in place
    STAGE_OUT = "stage-out"            # an output could not be brought back
    CONNECTION_LOST = "connection-lost"  # the site's host refused or dropped the connection
    TIMEOUT = "timeout"                # the site did not answer in time
    SUBMIT_REFUSED = "submit-refused"  # the site (LRM, service) refused the job
    WALLTIME = "walltime"              # killed for running past its walltime
    CANCELED = "canceled"              # withdrawn: the run stopped, or a replica won
    WORKER = "worker"                  # the site's own machinery failed (a worker bug)

    @property
    def retryable(self) -> bool:
        """Whether another attempt may succeed (Swift retried everything but these)."""
        return self not in (FailureKind.NOT_EXECUTABLE, FailureKind.CANCELED)


@dataclass(slots=True)
class TaskResult:
    """How a task ended.  ``ok`` means exit 0 and every declared output produced;
    otherwise ``failure`` says what kind of failure it was."""

    ok: bool
    exit_code: int | None = None
    message: str = ""               # for people: what failed and why
    stdout_tail: str = ""
    stderr_tail: str = ""
    site: str = ""
    failure: FailureKind | None = None
    # path (as in Task.outputs) -> "sha256:<hex>", when the task asked (digest_outputs)
    output_digests: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.ok and self.failure is None:
            self.failure = FailureKind.APP_EXIT

    @property
    def canceled(self) -> bool:
        return self.failure is FailureKind.CANCELED

    @property
    def retryable(self) -> bool:
        return not self.ok and self.failure is not None and self.failure.retryable

    @classmethod
    def cancel(cls, site: str = "", message: str = "Canceled") -> TaskResult:
        """The result of an attempt withdrawn before or while it ran."""
        return cls(ok=False, message=message, site=site, failure=FailureKind.CANCELED)


class Executor(Protocol):
    """Runs tasks for the engine.  ``submit`` returns when the task has ended."""

    async def submit(self, task: Task) -> TaskResult: ...

    async def close(self) -> None: ...

    def capacity(self) -> float:
        """How many calls it runs at once (``math.inf``: no limit).  The engine holds new
        loop iterations while it has many more than this in the executor
        (engine/callgate.py): those would only wait, each holding its coroutines."""
        ...

    def app_executable(self, tr: str) -> str | None:
        """The program the configured site catalogue gives for the app ``tr``, for
        memoization's app fingerprint; None when no site lists it."""
        ...
