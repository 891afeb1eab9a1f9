"""The LRM adapter contract: submit a job script, ask the states of jobs, cancel jobs.

One adapter per batch system (Slurm, Grid Engine, PBS/Torque, LSF, HTCondor, Cobalt)
implements :class:`LRM`.  An adapter is given a :class:`~swiftnb.execution.shell.Shell`
and runs the batch system's own commands through it (``sbatch``, ``squeue``, ``scancel``),
so one adapter serves a cluster whose commands are on this machine (``local:slurm``,
``type: "slurm"``) and one reached through a login node (``ssh-cl:slurm``).

What a job needs is a :class:`Resources` (nodes, walltime, queue, project, the site's
``jobOptions``); each adapter turns it into its directives (``#SBATCH --time=...``) and
refuses, with a message, the options it cannot honour: a key silently dropped would run
the job somewhere the user did not ask for.  A site's own ``jobOptions`` key it has no
meaning for is left out aloud instead, with a warning, as Swift 0.96 left it out
(:meth:`LRM.honoured_options`), so a configuration written for another batch system
runs.

A job's state is a :class:`JobState`, mapped once to Swift's CoG status codes
(queued = SUBMITTED, running = ACTIVE, ...), so the log, the ticker and the timings show
batch jobs as they show everything else.  :class:`JobPoller` asks one batched status
query per poll for every job it watches, backing off while nothing changes and while the
batch system does not answer (a restarting ``slurmctld`` loses no job).

The shape follows Parsl's providers (``parsl/providers/slurm/slurm.py``), made async and
typed.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import enum
import math
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

from swiftnb.engine.task import FailureKind
from swiftnb.events import TaskStatus
from swiftnb.execution.batch.optionvalues import (given_flags, gone_only, line_breaking,
                                                  whole_number_problem)
from swiftnb.scheduling.waiting import Waiting
from swiftnb.execution.shell import CommandResult, Shell, ShellError, ShellFailure
from swiftnb.nearest import close_matches
from swiftnb.scheduling.background import internal_error, start_background
from swiftnb.scheduling.provider import ProviderError

__all__ = ["JobState", "JobStatus", "Resources", "LRM", "JobPoller", "register_lrm",
           "lrm_class", "lrm_names", "hms", "whole_minutes", "qsub_flags"]

_V = TypeVar("_V")  # an option's value, kept as given


class JobState(enum.Enum):
    """Where a batch job is, in words every batch system's states map to."""

    PENDING = "pending"        # queued, held, waiting for resources
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"    # ended on its own (its exit code says how)
    FAILED = "failed"          # ended with an error the batch system saw
    CANCELED = "canceled"      # cancelled (by us or by an administrator)
    TIMEOUT = "timeout"        # killed at its walltime
    LOST = "lost"              # node failure, preempted, or the batch system forgot it
    UNKNOWN = "unknown"        # a state this adapter does not know (kept in the message)

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL

    @property
    def task_status(self) -> TaskStatus:
        """The CoG status code a task in this state shows (the ticker's words)."""
        return _TASK_STATUS[self]


_TERMINAL = frozenset({JobState.COMPLETED, JobState.FAILED, JobState.CANCELED,
                       JobState.TIMEOUT, JobState.LOST})
_TASK_STATUS = {
    JobState.PENDING: TaskStatus.SUBMITTED, JobState.RUNNING: TaskStatus.ACTIVE,
    JobState.SUSPENDED: TaskStatus.SUSPENDED, JobState.COMPLETED: TaskStatus.COMPLETED,
    JobState.FAILED: TaskStatus.FAILED, JobState.CANCELED: TaskStatus.CANCELED,
    JobState.TIMEOUT: TaskStatus.FAILED, JobState.LOST: TaskStatus.FAILED,
    JobState.UNKNOWN: TaskStatus.SUBMITTED,
}


@dataclass(frozen=True, slots=True)
class JobStatus:
    """One job's state as the batch system reported it; ``reason`` is its own words
    (``TIMEOUT``, ``NODE_FAIL``, ``failed 37 : qmaster enforced h_rt``) for messages;
    ``waiting``, of a pending job, why the batch system keeps it waiting, when it says."""

    state: JobState
    exit_code: int | None = None
    reason: str = ""
    waiting: Waiting | None = None


@dataclass(frozen=True, slots=True)
class Resources:
    """What one batch job asks for.

    ``walltime`` is in seconds (each adapter rounds it the way its batch system takes it:
    Slurm whole minutes, others HH:MM:SS).  ``options`` are the site's ``jobOptions``
    merged with the app's ``options`` (``ppn``, ``depth``, ``pbs.aprun``, ``slurm.*``...);
    an adapter refuses a key it does not know (:meth:`LRM.check_options`).
    """

    name: str = "swiftnb"
    walltime: int = 600
    nodes: int = 1
    tasks_per_node: int = 1
    queue: str | None = None
    project: str | None = None
    workdir: str | None = None      # the job's working directory on the cluster
    stdout: str | None = None       # files on the cluster
    stderr: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)
    env: Mapping[str, str] = field(default_factory=dict)


def hms(seconds: int) -> str:
    """``HH:MM:SS`` (hours may exceed 24), as PBS, SGE, LSF-less systems take walltimes."""
    seconds = max(1, int(seconds))
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def qsub_flags(resources: Resources) -> list[str]:
    """The queue (``-q``), project (``-A``), stdout (``-o``) and stderr (``-e``) directives
    of the batch systems whose submit command descends from qsub (PBS, Moab, Cobalt),
    each where the job names one."""
    return given_flags([("-q ", resources.queue), ("-A ", resources.project),
                        ("-o ", resources.stdout), ("-e ", resources.stderr)])


def whole_minutes(seconds: int) -> int:
    """Walltime in whole minutes, rounded up (Slurm's ``--time``, LSF's ``-W``)."""
    return max(1, math.ceil(int(seconds) / 60))


class LRM(abc.ABC):
    """One batch system, reached through a shell.

    Subclasses set ``name`` (the jobManager / execution.type word), ``aliases`` (0.96's
    other names: ``pbslocal``), ``option_keys`` (the ``jobOptions`` keys they honour) and
    ``option_prefixes`` (``slurm.``: any key under it becomes a directive), and implement
    :meth:`directives`, :meth:`submit`, :meth:`status` and :meth:`cancel`.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    #: the line prefix of a directive in the job script (``#SBATCH``); "" for none
    directive: ClassVar[str] = ""
    option_keys: ClassVar[frozenset[str]] = frozenset()
    option_prefixes: ClassVar[tuple[str, ...]] = ()
    #: the command a status poll runs, for messages ("squeue did not answer")
    status_command: ClassVar[str] = "status"
    #: what a name under ``option_prefixes`` must look like, what the batch system calls
    #: such a name, and what its value becomes (``slurm.mem``: "an sbatch option name",
    #: "an #SBATCH directive"); None: the adapter checks its prefixed keys itself
    option_name: ClassVar[re.Pattern[str] | None] = None
    option_name_is: ClassVar[str] = "an option name"
    option_value_is: ClassVar[str] = "a directive"
    #: characters a prefixed key's value may not hold (its directive could not carry them)
    option_value_forbids: ClassVar[str] = '"\n\r'
    #: seconds one of the batch system's commands may take (squeue takes 10-20 s to give
    #: up on a slurmctld that does not answer)
    command_timeout: ClassVar[float] = 60.0
    #: ``jobOptions`` keys whose value must be a whole number of at least 1 (``ppn``)
    whole_number_keys: ClassVar[tuple[str, ...]] = ()
    #: words of the cancel command's complaint that only mean the job had ended already
    gone_words: ClassVar[tuple[str, ...]] = ()
    #: what the batch system calls a queue, for messages (Slurm: partition)
    queue_is: ClassVar[str] = "queue"

    def __init__(self, shell: Shell, *, site: str = "") -> None:
        self.shell = shell
        self.site = site
        #: the jobs cancelled here: their end reads CANCELED, not FAILED
        self.canceled: set[str] = set()

    # -- what subclasses implement -------------------------------------------------------
    @abc.abstractmethod
    def directives(self, resources: Resources) -> list[str]:
        """The job script's directive lines for ``resources`` (with their prefix)."""

    @abc.abstractmethod
    async def submit(self, script: str, resources: Resources) -> str:
        """Submit a job script; return the batch system's job id.  A refusal raises
        ProviderError(SUBMIT_REFUSED) quoting the batch system's own words."""

    @abc.abstractmethod
    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        """The states of ``ids``, in one query.  Jobs the batch system no longer lists
        are left out (the poller decides when a missing job is lost).  Raises
        ProviderError when the batch system does not answer."""

    @abc.abstractmethod
    async def cancel(self, ids: Sequence[str]) -> None:
        """Cancel jobs (those already ended are no error)."""

    # -- shared by every adapter ---------------------------------------------------------
    def script(self, command: str, resources: Resources) -> str:
        """The whole job script: directives, environment, working directory, command."""
        return self.script_of(self.directives(resources), command, resources)

    @staticmethod
    def script_of(directives: list[str], command: str, resources: Resources) -> str:
        """A job script with these ``directives`` (none where a batch system takes them
        elsewhere, as HTCondor's submit description does)."""
        lines = ["#!/bin/sh", *directives]
        for key, value in resources.env.items():
            lines.append(f"export {key}={shlex.quote(value)}")
        if resources.workdir:
            lines.append(f"cd {shlex.quote(resources.workdir)} || exit 1")
        lines.append(command)
        return "\n".join(lines) + "\n"

    @classmethod
    def ignored_options(cls, options: Mapping[str, object],
                        where: str = "jobOptions") -> dict[str, str]:
        """key -> why, for the ``jobOptions`` keys this batch system ignores: those it
        has no meaning for (Swift 0.96's schema took any key there, and its providers
        passed over the ones they did not know).  A site's own jobOptions lose them with
        a warning (:meth:`honoured_options`); elsewhere :meth:`check_options` refuses
        them."""
        ignored: dict[str, str] = {}
        for key in options:
            if key in cls.option_keys or any(key.startswith(p) and len(key) > len(p)
                                             for p in cls.option_prefixes):
                continue
            known = sorted(cls.option_keys) + [p + "*" for p in cls.option_prefixes]
            near = close_matches(key, sorted(cls.option_keys))
            hint = f"; did you mean '{near[0]}'?" if near else ""
            ignored[key] = (f"{where}.{key} has no meaning for {cls.name} "
                            f"(it understands {', '.join(known) or 'none'}){hint}")
        return ignored

    @classmethod
    def honoured_options(cls, options: Mapping[str, _V], where: str,
                         warn: Callable[[str], None],
                         origin: Callable[[str], str] | None = None) -> dict[str, _V]:
        """A site's ``jobOptions`` less the keys this batch system ignores, each of which
        ``warn`` is told of, with where it was written (``origin(key)`` relative to the
        site's ``execution.options``)."""
        kept = dict(options)
        for key, why in cls.ignored_options(options, where).items():
            place = (origin(f"jobOptions.{key}") or origin("jobOptions")) if origin else ""
            warn(f"{place + ': ' if place else ''}{why}; ignored")
            del kept[key]
        return kept

    @classmethod
    def check_options(cls, options: Mapping[str, object], where: str = "jobOptions") -> list[str]:
        """Problems with ``jobOptions`` keys this batch system would not honour."""
        problems = list(cls.ignored_options(options, where).values())
        for key, value in options.items():
            prefix = next((p for p in cls.option_prefixes
                           if key.startswith(p) and len(key) > len(p)), None)
            if prefix is not None and cls.option_name is not None:
                name = key[len(prefix):]
                if not cls.option_name.match(name):
                    problems.append(f"{where}.{key}: '{name}' is not {cls.option_name_is}")
                elif any(c in str(value) for c in cls.option_value_forbids):
                    held = ("quotes or line breaks" if '"' in cls.option_value_forbids
                            else "line breaks")
                    problems.append(f"{where}.{key}: a value with {held} cannot be "
                                    f"{cls.option_value_is}")
        problems.extend(problem for key in cls.whole_number_keys
                        if (problem := whole_number_problem(options, key, where)))
        return problems

    def refuse_problems(self, resources: Resources, carried: Iterable[str | None], carrier: str,
                        *more: str) -> None:
        """Raise ValueError naming every problem of a job before its script is written:
        its options (:meth:`check_options`), the first of ``carried`` (queue, project,
        paths) that ``carrier`` (``a #PBS directive``) cannot hold, and the adapter's own
        ``more``; one message, so a configuration is fixed in one go."""
        problems = self.check_options(resources.options)
        bad = line_breaking(carried)
        if bad is not None:
            problems.append(f"{bad!r} holds quotes or line breaks, which {carrier} cannot carry")
        problems.extend(more)
        if problems:
            raise ValueError("; ".join(problems))

    @classmethod
    def check_resources(cls, resources: Resources) -> str | None:
        """What is wrong with a job of this shape, found by writing its directives (keys
        that do not fit together, a value a directive cannot hold), or None: so a
        configuration is refused when it is read, not when its first job is written."""
        from swiftnb.execution.shell import LocalShell

        try:
            cls(LocalShell()).directives(resources)
        except (ValueError, ProviderError) as exc:
            return str(exc)
        return None

    @classmethod
    def launcher_hint(cls, options: Mapping[str, object]) -> str | None:
        """The launcher these ``jobOptions`` ask for (PBS's ``pbs.aprun: true`` means
        aprun), or None for the batch system's usual one."""
        return None

    def where(self) -> str:
        """``site X (slurm on 127.0.0.1:2222)``, for messages."""
        on = f"{self.name} on {self.shell.name}"
        return f"site {self.site} ({on})" if self.site else on

    async def run(self, argv: Sequence[str], *, input: bytes | None = None,
                  timeout: float = 60.0, doing: str = "") -> CommandResult:
        """Run one of the batch system's commands; a shell failure (host unreachable,
        connection lost, command timed out) becomes ProviderError of its kind."""
        try:
            return await self.shell.run(argv, input=input, timeout=timeout)
        except ShellError as exc:
            raise ProviderError(_failure_of(exc),
                                f"{self.where()}: {doing or argv[0]}: {exc}") from None

    def refused(self, result: CommandResult, doing: str) -> ProviderError:
        """The batch system said no: its words, the site and what was being done."""
        words = (result.stderr.strip() or result.stdout.strip() or
                 f"exit code {result.returncode}")
        return ProviderError(FailureKind.SUBMIT_REFUSED, f"{self.where()}: {doing}: {words}")

    def submitting(self, command: str, resources: Resources) -> str:
        """``bsub of job NAME to queue 'Q'`` (or to the default queue), for messages."""
        where = (f"{self.queue_is} '{resources.queue}'" if resources.queue
                 else f"the default {self.queue_is}")
        return f"{command} of job {resources.name} to {where}"

    async def submit_stdin(self, argv: Sequence[str], script: str,
                           resources: Resources) -> tuple[CommandResult, str]:
        """Run the submit command ``argv`` with the job script on its standard input; the
        result, and what was done (:meth:`submitting`) for the message of a refusal."""
        doing = self.submitting(argv[0], resources)
        result = await self.run(argv, input=script.encode(), timeout=self.command_timeout,
                                doing=doing)
        return result, doing

    async def cancel_all(self, command: str, ids: Sequence[str]) -> None:
        """Cancel ``ids`` with one ``command ID...``; a complaint that only says the jobs
        had ended (:attr:`gone_words`) is no error, as the contract of :meth:`cancel` says."""
        if not ids:
            return
        self.canceled.update(ids)
        result = await self.run([command, *ids], timeout=self.command_timeout, doing=command)
        if result.returncode != 0 and not gone_only(result.stderr or result.stdout,
                                                    self.gone_words):
            raise self.refused(result, command)

    async def write_file(self, path: str, text: str, *, mode: str = "600") -> None:
        """Write a small file on the cluster (a job script, a secret), readable by its
        owner only unless ``mode`` says otherwise."""
        result = await self.run(["sh", "-c", f'umask 077 && cat > "$0" && chmod {mode} "$0"', path],
                                input=text.encode(), doing=f"writing {path}")
        if result.returncode != 0:
            raise self.refused(result, f"writing {path}")


def _failure_of(exc: ShellError) -> FailureKind:
    if exc.kind is ShellFailure.TIMEOUT:
        return FailureKind.TIMEOUT
    if exc.kind in (ShellFailure.UNREACHABLE, ShellFailure.CONNECTION_LOST):
        return FailureKind.CONNECTION_LOST
    return FailureKind.SUBMIT_REFUSED


_LRMS: dict[str, type[LRM]] = {}


def register_lrm(cls: type[LRM]) -> type[LRM]:
    """Make ``cls`` the adapter for its ``name`` and ``aliases`` (a class decorator)."""
    for word in (cls.name, *cls.aliases):
        _LRMS[word] = cls
    return cls


_loaded = False


def _load_builtin() -> None:
    """Import the built-in adapters (importing a module registers its adapter), once:
    a module imported on its own before must not hide the others."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib

    for module in ("fork", "slurm", "sge", "pbs", "lsf", "condor", "cobalt", "moab"):
        name = f"swiftnb.execution.batch.{module}"
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a trimmed installation: that one is absent
            if exc.name != name:
                raise


def lrm_class(name: str) -> type[LRM]:
    """The adapter for ``slurm``, ``pbs``, ``pbslocal``, ... (ValueError naming the
    known ones otherwise)."""
    _load_builtin()
    cls = _LRMS.get(name.strip().lower())
    if cls is None:
        raise ValueError(f"no batch system called '{name}' (known: {', '.join(lrm_names())})")
    return cls


def lrm_names() -> list[str]:
    _load_builtin()
    return sorted(_LRMS)


StateCallback = Callable[[str, JobStatus], None]


class JobPoller:
    """Polls one LRM for every job it watches with one status query per round.

    A callback hears each change of a job's state (``RUNNING`` once, then its end); a
    ``waiting`` callback, each new reason a pending job waits for
    (:attr:`JobStatus.waiting`), once per change.  The
    interval starts at ``interval`` and grows by half (to ``max_interval``) while nothing
    changes or while the batch system does not answer; a change brings it back.  A job
    missing from ``missing_limit`` answers in a row after it was seen is LOST (the batch
    system forgot it); errors are reported through ``on_error`` once per outage.
    """

    def __init__(self, lrm: LRM, *, interval: float = 1.0, max_interval: float = 30.0,
                 missing_limit: int = 3,
                 on_error: Callable[[str], None] | None = None) -> None:
        self.lrm = lrm
        self.min_interval = interval
        self.max_interval = max(interval, max_interval)
        self.interval = interval
        self.missing_limit = missing_limit
        self.on_error = on_error
        self._watched: dict[str, StateCallback] = {}
        self._last: dict[str, JobState] = {}
        self._waiting: dict[str, StateCallback] = {}
        self._told: dict[str, Waiting | None] = {}  # the last waiting told, per job
        self._missing: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._held: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self.outage: str | None = None   # the last error while the LRM does not answer
        self.polls = 0
        self.last_poll: float | None = None

    def watch(self, job_id: str, callback: StateCallback,
              waiting: StateCallback | None = None) -> None:
        self._watched[job_id] = callback
        if waiting is not None:
            self._waiting[job_id] = waiting
        self._missing[job_id] = 0
        self.interval = self.min_interval
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = start_background(self._loop(), self._held, self._loop_failed)

    def forget(self, job_id: str) -> None:
        self._watched.pop(job_id, None)
        self._waiting.pop(job_id, None)
        self._told.pop(job_id, None)
        self._last.pop(job_id, None)
        self._missing.pop(job_id, None)

    def poke(self) -> None:
        """Poll soon (a job was cancelled, say)."""
        self.interval = self.min_interval
        self._wake.set()

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _loop_failed(self, exc: BaseException) -> None:
        """The poll loop broke: the jobs it watched end FAILED with its error (their
        attempts fail and the run says why), rather than waiting forever."""
        status = JobStatus(JobState.FAILED, reason=internal_error(
            f"polling {self.lrm.name} for its jobs' states", exc))
        watched, self._watched = self._watched, {}
        self._last.clear()
        self._missing.clear()
        for job_id, callback in watched.items():
            callback(job_id, status)
        if watched:  # they may still run: none is left behind in the batch system
            start_background(self.lrm.cancel(list(watched)), self._held, self._cancel_failed)

    def _cancel_failed(self, exc: BaseException) -> None:
        if self.on_error is not None:
            self.on_error(f"{self.lrm.where()}: the jobs of a broken poll loop could not be "
                          f"cancelled: {exc}")

    async def _loop(self) -> None:
        while self._watched:
            self._wake.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.interval)
            if self._watched:
                await self.poll()

    async def poll(self) -> None:
        """One round: query, deliver changes, adjust the interval."""
        ids = list(self._watched)
        self.polls += 1
        self.last_poll = time.monotonic()
        try:
            states = await self.lrm.status(ids)
        except ProviderError as exc:
            if self.outage is None and self.on_error is not None:
                self.on_error(f"{exc} (polling continues)")
            self.outage = str(exc)
            self.interval = min(self.max_interval, self.interval * 1.5)
            return
        if self.outage is not None and self.on_error is not None:
            self.on_error(f"{self.lrm.where()}: {self.lrm.status_command} answers again")
        self.outage = None
        changed = False
        for job_id in ids:
            status = states.get(job_id)
            if status is None:
                if job_id not in self._last:
                    continue  # not listed yet (submitted a moment ago)
                self._missing[job_id] = self._missing.get(job_id, 0) + 1
                if self._missing[job_id] < self.missing_limit:
                    continue
                status = JobStatus(JobState.LOST, reason=(
                    f"{self.lrm.name} no longer knows job {job_id}"))
            else:
                self._missing[job_id] = 0
            self._tell_waiting(job_id, status)
            if self._last.get(job_id) is status.state:
                continue
            self._last[job_id] = status.state
            changed = True
            callback = self._watched.get(job_id)
            if status.state.terminal:
                self.forget(job_id)
            if callback is not None:
                callback(job_id, status)
        self.interval = (self.min_interval if changed
                         else min(self.max_interval, self.interval * 1.5))


    def _tell_waiting(self, job_id: str, status: JobStatus) -> None:
        """A pending job's new reason to wait goes to its ``waiting`` callback, once."""
        told = self._waiting.get(job_id)
        if told is None or status.state is not JobState.PENDING or status.waiting is None:
            return
        if self._told.get(job_id) == status.waiting:
            return
        self._told[job_id] = status.waiting
        told(job_id, status)


def parse_table(text: str, width: int) -> Iterable[list[str]]:
    """Rows of whitespace-separated output with at least ``width`` fields (the rest of
    the line joined into the last one)."""
    for line in text.splitlines():
        parts = line.split(None, width - 1)
        if len(parts) >= width:
            yield parts
