"""Slurm as an LRM: ``sbatch`` a job script, ``squeue`` the states, ``scancel`` jobs.

Directives come from the :class:`~swiftnb.execution.batch.lrm.Resources`: ``--job-name``,
``--time`` (whole minutes, rounded up: Slurm's unit), ``--nodes``, ``--ntasks-per-node``,
``--partition`` (the site's queue), ``--account`` (its project), ``--output``/``--error``,
``--chdir`` (the job's working directory).  Of the generic ``jobOptions`` keys, two mean
something to Slurm:

- ``ppn``: processes per node, as Swift's PBS provider took it: ``--ntasks-per-node``
  (it wins over the tasks per node the block or task asked for);
- ``depth``: cores per process (aprun's ``-d`` on Cray): ``--cpus-per-task``.

Every ``slurm.X`` key becomes ``#SBATCH --X=value`` after the generic ones (so that
``slurm.time`` can override ``--time``: sbatch keeps the last of repeated options); a
value of ``true`` or ``""`` is a bare flag (``slurm.exclusive: true`` -> ``--exclusive``),
``false`` leaves the option out.  Any other key (``pbs.*``, ``condor.*``, ...) has no
meaning here (:meth:`LRM.ignored_options`): a site's jobOptions lose it with a warning,
as Swift 0.96 passed over it (silently), and an app's options are refused with it.

Status: one ``squeue -h -t all -j ID,ID,... -o "%i %T %r"`` per poll (``-t all`` keeps
finished jobs listed for ``MinJobAge``).  squeue lists the ids it knows and skips the
others, except when it knows none of them: then it fails ("Invalid job id specified"),
exactly as it fails when slurmctld does not answer.  Rather than reading its message, a
failed squeue is followed by ``scontrol ping`` (its exit status says whether the
controller is up, and it answers at once even when it is down, where squeue takes 10-20
s): down means ProviderError(CONNECTION_LOST) quoting squeue's words, so the poller backs
off and keeps polling; up means the ids are unknown.  Ids squeue does not list are looked
up once in accounting (``sacct``, one call; a cluster without accounting says so and the
ids stay missing, so the poller calls them lost after a few polls).  The exit code of a
job that just ended comes from ``scontrol -o show job`` (``ExitCode=3:0``), all such jobs
in one round trip.  A pending job's reason (``%r``: ``PartitionConfig``, ``Resources``...)
becomes its ``JobStatus.waiting``, explained once per reason (waiting.py); a reason about
its size is told with what the job asks (``scontrol show job``) and what the partition's
nodes have (``sinfo``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.optionvalues import given_flags, prefixed_flags
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, parse_table,
                                         register_lrm, whole_minutes)
from swiftnb.execution.batch.waiting import slurm_waiting
from swiftnb.execution.shell import CommandResult, Shell
from swiftnb.scheduling.provider import ProviderError
from swiftnb.scheduling.waiting import Waiting

__all__ = ["Slurm", "SLURM_STATES"]

#: every job state squeue and sacct print (Slurm 22.05 ``squeue(1)`` "JOB STATE CODES")
SLURM_STATES: dict[str, JobState] = {
    "PENDING": JobState.PENDING,
    "CONFIGURING": JobState.PENDING,     # allocated, nodes booting: nothing runs yet
    "REQUEUED": JobState.PENDING,
    "REQUEUE_FED": JobState.PENDING,
    "REQUEUE_HOLD": JobState.PENDING,
    "RESV_DEL_HOLD": JobState.PENDING,
    "RUNNING": JobState.RUNNING,
    "COMPLETING": JobState.RUNNING,      # the script ended, its epilog runs: the end follows
    "RESIZING": JobState.RUNNING,
    "SIGNALING": JobState.RUNNING,
    "STAGE_OUT": JobState.RUNNING,
    "SUSPENDED": JobState.SUSPENDED,
    "STOPPED": JobState.SUSPENDED,       # SIGSTOPped, holds its nodes
    "COMPLETED": JobState.COMPLETED,
    "FAILED": JobState.FAILED,
    "OUT_OF_MEMORY": JobState.FAILED,
    "SPECIAL_EXIT": JobState.FAILED,
    "CANCELLED": JobState.CANCELED,
    "TIMEOUT": JobState.TIMEOUT,
    "DEADLINE": JobState.TIMEOUT,        # killed at its --deadline
    "NODE_FAIL": JobState.LOST,
    "BOOT_FAIL": JobState.LOST,
    "PREEMPTED": JobState.LOST,
    "REVOKED": JobState.LOST,            # a federation ran it on another cluster
}

_STATUS_FORMAT = "%i %T %r"
_EXIT_CODE = re.compile(r"(?:^|\s)ExitCode=(\d+):(\d+)")
_FIELD = re.compile(r"(?:^|\s)(NumNodes|NumCPUs|NumTasks|Partition|TimeLimit)=(\S+)")
#: reasons whose sentence is worth what the job asks and the partition has
_SIZE_REASONS = frozenset({"PartitionConfig", "PartitionNodeLimit", "PartitionTimeLimit",
                           "Resources"})
_JOB_ID = re.compile(r"(?:^|\s)JobId=(\S+)")
_OPTION_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_PLAIN_NAME = re.compile(r"[^A-Za-z0-9._-]")


def _exit_code(text: str) -> int | None:
    """``3:0`` -> 3; ``0:9`` (killed by signal 9) -> 137, as a shell reports it."""
    code, _, sig = text.partition(":")
    if not code.isdigit():
        return None
    return 128 + int(sig) if sig.isdigit() and int(sig) else int(code)


def _value(value: object) -> str:
    """A directive's value: quoted when it holds blanks (sbatch reads ``"a b"`` as one)."""
    text = str(value)
    return f'"{text}"' if any(c.isspace() for c in text) else text


def _status(word: str, reason: str = "", exit_code: int | None = None) -> JobStatus:
    """One job's status from Slurm's state word (``CANCELLED by 0``: its first word)."""
    name = word.split()[0].rstrip("+") if word.split() else ""
    state = SLURM_STATES.get(name, JobState.UNKNOWN)
    words = word if not reason or reason == "None" else f"{word} ({reason})"
    return JobStatus(state, exit_code, "" if state is JobState.COMPLETED else words)


@register_lrm
class Slurm(LRM):
    """Slurm through ``sbatch``, ``squeue``, ``scontrol`` and ``scancel`` (see the module
    docstring for the directives and the status query)."""

    name: ClassVar[str] = "slurm"
    directive: ClassVar[str] = "#SBATCH"
    option_keys: ClassVar[frozenset[str]] = frozenset({"ppn", "depth"})
    option_prefixes: ClassVar[tuple[str, ...]] = ("slurm.",)
    option_name = _OPTION_NAME
    option_name_is = "an sbatch option name"
    option_value_is = "an #SBATCH directive"
    status_command: ClassVar[str] = "squeue"
    queue_is: ClassVar[str] = "partition"
    whole_number_keys: ClassVar[tuple[str, ...]] = ("ppn", "depth")

    def __init__(self, shell: Shell, *, site: str = "") -> None:
        super().__init__(shell, site=site)
        #: job id -> (squeue's last reason, its Waiting): a reason is explained once
        self._reasons: dict[str, tuple[str, Waiting | None]] = {}

    def directives(self, resources: Resources) -> list[str]:
        options: Mapping[str, object] = resources.options
        problems = self.check_options(options)
        if problems:
            raise ValueError("; ".join(problems))
        for what, path in (("workdir", resources.workdir), ("stdout", resources.stdout),
                           ("stderr", resources.stderr)):
            if path is not None and any(c in path for c in '"\n\r'):
                raise ValueError(f"the job's {what} {path!r} holds quotes or line breaks, "
                                 "which an #SBATCH directive cannot carry")
        per_node = int(str(options.get("ppn", resources.tasks_per_node)))
        lines = [f"--job-name={_PLAIN_NAME.sub('_', resources.name) or 'swiftnb'}",
                 f"--time={whole_minutes(resources.walltime)}",
                 f"--nodes={resources.nodes}",
                 f"--ntasks-per-node={per_node}"]
        if "depth" in options:
            lines.append(f"--cpus-per-task={int(str(options['depth']))}")
        lines += given_flags([("--partition=", resources.queue), ("--account=", resources.project),
                              ("--output=", resources.stdout), ("--error=", resources.stderr),
                              ("--chdir=", resources.workdir)], write=_value)
        lines += prefixed_flags(options, "slurm.", "--", sep="=", write=_value)
        return [f"{self.directive} {line}" for line in lines]

    # -- commands ----------------------------------------------------------------------------
    async def _controller_down(self) -> bool:
        """Whether slurmctld does not answer (``scontrol ping`` exits non-zero; it answers
        at once either way)."""
        result = await self.run(["scontrol", "ping"], timeout=self.command_timeout,
                                doing="asking whether slurmctld answers")
        return result.returncode != 0

    async def _failed(self, result: CommandResult, doing: str) -> ProviderError:
        """A Slurm command failed: CONNECTION_LOST when the controller is down (the poller
        and the retries wait for it), otherwise the batch system refused."""
        error = self.refused(result, doing)
        if await self._controller_down():
            return ProviderError(FailureKind.CONNECTION_LOST,
                                 f"{error} (slurmctld does not answer)")
        return error

    async def submit(self, script: str, resources: Resources) -> str:
        result, doing = await self.submit_stdin(["sbatch", "--parsable"], script, resources)
        if result.returncode != 0:
            raise await self._failed(result, doing)
        job_id = result.stdout.strip().split(";")[0]
        if not job_id or not job_id.replace("_", "").isdigit():
            raise self.refused(result, f"{doing}: no job id in sbatch's answer")
        return job_id

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        result = await self.run(["squeue", "-h", "-t", "all", "-j", ",".join(ids),
                                 "-o", _STATUS_FORMAT], timeout=self.command_timeout,
                                doing="squeue")
        found: dict[str, tuple[str, str]] = {}
        if result.returncode != 0:
            error = await self._failed(result, "squeue")
            if error.kind is FailureKind.CONNECTION_LOST:
                raise error
            # slurmctld answers: squeue refused because it knows none of the ids
        else:
            for job_id, state, reason in parse_table(result.stdout, 3):
                found[job_id] = (state, reason)
        wanted = set(ids)
        out: dict[str, JobStatus] = {}
        ended = [i for i, (state, _) in found.items()
                 if i in wanted and _status(state).state.terminal]
        codes = await self._exit_codes(ended)
        for job_id, (state, reason) in found.items():
            if job_id in wanted:
                out[job_id] = _status(state, reason, codes.get(job_id))
        for job_id, status in list(out.items()):
            if status.state is JobState.PENDING:
                waiting = await self._waiting(job_id, found[job_id][1])
                if waiting is not None:
                    out[job_id] = JobStatus(status.state, status.exit_code, status.reason,
                                            waiting)
            else:
                self._reasons.pop(job_id, None)
        missing = [i for i in ids if i not in out]
        if missing:
            out.update(await self._accounting(missing))
        return out

    async def _waiting(self, job_id: str, reason: str) -> Waiting | None:
        """Why a pending job waits; for a reason about its size, with what it asks and
        what the partition's nodes have (asked again only when the reason changes)."""
        known = self._reasons.get(job_id)
        if known is not None and known[0] == reason:
            return known[1]
        facts = await self._size_facts(job_id) if reason in _SIZE_REASONS else ""
        waiting = slurm_waiting(reason, facts)
        self._reasons[job_id] = (reason, waiting)
        return waiting

    async def _size_facts(self, job_id: str) -> str:
        """``16 CPUs on 1 node, partition debug's nodes have 8 CPUs`` (what is known)."""
        result = await self.run(["scontrol", "-o", "show", "job", job_id],
                                timeout=self.command_timeout, doing="scontrol show job")
        asked = dict(_FIELD.findall(result.stdout)) if result.returncode == 0 else {}
        if not asked:
            return ""
        low, _, high = asked.get("NumNodes", "?").partition("-")
        nodes = low if high in ("", low) else f"{low}-{high}"  # sbatch's 1-1 is 1
        facts = (f"it asks for {asked.get('NumCPUs', '?')} CPUs ({asked.get('NumTasks', '?')} "
                 f"tasks) on {nodes} node(s) for {asked.get('TimeLimit', '?')}")
        partition = asked.get("Partition")
        if partition:
            sinfo = await self.run(["sinfo", "-h", "-p", partition, "-o", "%c %D %l"],
                                   timeout=self.command_timeout, doing="sinfo")
            rows = [line.split() for line in sinfo.stdout.splitlines() if line.split()]
            if sinfo.returncode == 0 and rows and len(rows[0]) == 3:
                cpus = "/".join(sorted({row[0] for row in rows}))
                count = sum(int(row[1]) for row in rows if row[1].isdigit())
                facts += (f"; partition {partition} has {count} node(s) of {cpus} CPUs, "
                          f"time limit {rows[0][2]}")
        return facts

    async def _exit_codes(self, ids: Sequence[str]) -> dict[str, int]:
        """Exit codes of ended jobs from ``scontrol -o show job``, one round trip."""
        if not ids:
            return {}
        result = await self.run(["sh", "-c", 'for j do scontrol -o show job "$j"; done',
                                 "sh", *ids], timeout=self.command_timeout,
                                doing="scontrol show job")
        codes: dict[str, int] = {}
        for line in result.stdout.splitlines():
            job, code = _JOB_ID.search(line), _EXIT_CODE.search(line)
            if job is not None and code is not None:
                value = _exit_code(f"{code.group(1)}:{code.group(2)}")
                if value is not None:
                    codes[job.group(1)] = value
        return codes

    async def _accounting(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        """Jobs squeue no longer lists, from ``sacct`` (nothing when the cluster keeps no
        accounting: sacct says so and exits non-zero)."""
        result = await self.run(["sacct", "-n", "-X", "-P", "-j", ",".join(ids),
                                 "-o", "JobID,State,ExitCode"], timeout=self.command_timeout,
                                doing="sacct")
        out: dict[str, JobStatus] = {}
        if result.returncode != 0:
            return out
        wanted = set(ids)
        for line in result.stdout.splitlines():
            parts = line.split("|")
            if len(parts) >= 3 and parts[0] in wanted:
                out[parts[0]] = _status(parts[1], exit_code=_exit_code(parts[2]))
        return out

    async def cancel(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        result = await self.run(["scancel", *ids], timeout=self.command_timeout,
                                doing="scancel")
        if result.returncode != 0:
            error = await self._failed(result, "scancel")
            if error.kind is FailureKind.CONNECTION_LOST:
                raise error
            # otherwise the jobs had ended already: no error, as the contract says
