"""Cobalt (Argonne's batch system: Mira, Theta) as an LRM: ``qsub --mode script``,
``qstat``, ``qdel``.

Cobalt takes its options on qsub's command line or, in script mode, as ``#COBALT`` lines
of the script (ALCF's "Running jobs" guides); the script carries them here, so that it
says what it asked for:

- ``-t MINUTES`` (whole minutes, rounded up), ``-n`` nodes;
- ``-q`` queue, ``-A`` project;
- ``-O PREFIX`` (``WORKDIR/NAME``): Cobalt writes ``PREFIX.output``, ``PREFIX.error`` and
  its own log of the job, ``PREFIX.cobaltlog``; ``-o``/``-e`` when the job names its
  stdout and stderr;
- ``cobalt.X: V`` as ``--X V`` (``-X V`` for one letter) after the others
  (``cobalt.attrs: "mcdram=cache:numa=quad"``; ``cobalt.disable_preboot: true`` is a bare
  flag; CoG's ``cobalt.disablePreboot`` is spelled as Cobalt spells it).

The script is written to ``PREFIX.sh`` (script mode wants an executable file) and
submitted with ``qsub --mode script PREFIX.sh``; qsub prints the job id.  Tasks per node
and ``ppn`` are no Cobalt matter (a script job gets whole nodes; ``aprun`` places the
processes), so ``ppn`` is refused.

States: one ``qstat ID...`` per poll (columns JobID User WallTime Nodes State Location;
qstat exits 1 when it knows none of them).  ``queued``, ``starting`` and the holds are
PENDING, ``running``, ``exiting`` and ``killing`` RUNNING, ``preempted`` SUSPENDED.  An
ended job leaves qstat at once, and its end is read from its ``.cobaltlog`` (all of them
in one command): "task completed normally with an exit code of N" (COMPLETED or FAILED),
"maximum execution time exceeded" (TIMEOUT), "user delete requested" (CANCELED).  A job
whose log says none of these yet is left out (the poller decides when it is lost).
Facts: the ALCF user guides and Cobalt's own sources (``qstat``'s default header, the
queue manager's cobaltlog lines).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, register_lrm,
                                         whole_minutes)
from swiftnb.execution.batch.optionvalues import flag_words, given_flags, gone_only, plain_name
from swiftnb.execution.shell import Shell
from swiftnb.scheduling.provider import ProviderError

__all__ = ["Cobalt", "COBALT_STATES", "ended_from_log"]

#: qstat ``State`` words of jobs still in the queue manager
COBALT_STATES: dict[str, JobState] = {
    "queued": JobState.PENDING,
    "starting": JobState.PENDING,
    "user_hold": JobState.PENDING,
    "admin_hold": JobState.PENDING,
    "dep_hold": JobState.PENDING,
    "dep_fail": JobState.PENDING,     # held: a job it depends on failed
    "maxrun_hold": JobState.PENDING,
    "running": JobState.RUNNING,
    "exiting": JobState.RUNNING,      # the task ended; Cobalt cleans up
    "killing": JobState.RUNNING,
    "preempted": JobState.SUSPENDED,
}
_EXIT = re.compile(r"task completed normally with an exit code of (-?\d+|None)")
_WALLTIME = "maximum execution time exceeded"
_DELETED = "user delete requested"
_JOB_ID = re.compile(r"^\s*(\d+)\s*$", re.MULTILINE)
_OPTION = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
#: CoG's spellings of Cobalt options, as Cobalt spells them
_COG_SPELLINGS = {"disablePreboot": "disable_preboot"}


def ended_from_log(text: str, canceled: bool = False) -> JobStatus | None:
    """A job's end as its cobaltlog tells it, for a job qstat no longer lists (None while
    the log tells no end; a job this adapter cancelled that left no word is CANCELED)."""
    if _WALLTIME in text:
        return JobStatus(JobState.TIMEOUT, None, "maximum execution time exceeded")
    if _DELETED in text:
        return JobStatus(JobState.CANCELED, None, "deleted (user delete requested)")
    found = _EXIT.search(text)
    if found is None:
        return JobStatus(JobState.CANCELED, None, "deleted (qdel)") if canceled else None
    if found.group(1) == "None":
        return JobStatus(JobState.FAILED, None, "the task left no exit code")
    code = int(found.group(1))
    if code == 0:
        return JobStatus(JobState.COMPLETED, 0)
    return JobStatus(JobState.FAILED, code, f"exit code {code}")


@register_lrm
class Cobalt(LRM):
    """Cobalt through ``qsub``, ``qstat`` and ``qdel`` (module docstring)."""

    name: ClassVar[str] = "cobalt"
    aliases: ClassVar[tuple[str, ...]] = ("cobaltlocal",)
    directive: ClassVar[str] = "#COBALT"
    option_prefixes: ClassVar[tuple[str, ...]] = ("cobalt.",)
    option_name = _OPTION
    option_name_is = "a qsub option name"
    option_value_is = "a #COBALT directive"
    status_command: ClassVar[str] = "qstat"

    def __init__(self, shell: Shell, *, site: str = "") -> None:
        super().__init__(shell, site=site)
        self._logs: dict[str, str] = {}       # job id -> its cobaltlog

    @staticmethod
    def prefix(resources: Resources) -> str:
        """``-O``'s prefix: Cobalt's ``.output``, ``.error`` and ``.cobaltlog`` files."""
        return f"{resources.workdir or '.'}/{plain_name(resources.name)}"

    def directives(self, resources: Resources) -> list[str]:
        options = resources.options
        self.refuse_problems(resources, [resources.queue, resources.project, resources.workdir,
                                         resources.stdout, resources.stderr], "a #COBALT directive")
        lines = [f"-t {whole_minutes(resources.walltime)}", f"-n {resources.nodes}"]
        lines += given_flags([("-q ", resources.queue), ("-A ", resources.project),
                              ("-O ", self.prefix(resources)), ("-o ", resources.stdout),
                              ("-e ", resources.stderr)])
        for key, value in options.items():
            if not key.startswith("cobalt."):
                continue
            option = key[len("cobalt."):]
            option = _COG_SPELLINGS.get(option, option)
            dash = "-" if len(option) == 1 else "--"
            if words := flag_words(f"{dash}{option}", value):
                lines.append(words)
        return [f"{self.directive} {line}" for line in lines]

    # -- commands ----------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        doing = self.submitting("qsub", resources)
        prefix = self.prefix(resources)
        await self.write_file(f"{prefix}.sh", script, mode="700")
        result = await self.run(["qsub", "--mode", "script", f"{prefix}.sh"],
                                timeout=self.command_timeout, doing=doing)
        found = _JOB_ID.findall(result.stdout)
        if result.returncode != 0 or not found:
            raise self.refused(result, doing)
        job_id: str = found[-1]
        self._logs[job_id] = f"{prefix}.cobaltlog"
        return job_id

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        result = await self.run(["qstat", *ids], timeout=self.command_timeout, doing="qstat")
        rows = _table(result.stdout)
        if result.returncode != 0 and not rows and result.stderr.strip():
            raise ProviderError(FailureKind.CONNECTION_LOST,
                                f"{self.where()}: qstat: {result.stderr.strip()}")
        wanted = set(ids)
        out: dict[str, JobStatus] = {}
        for row in rows:
            job_id, word = row.get("JobID", ""), row.get("State", "")
            if job_id in wanted:
                state = COBALT_STATES.get(word, JobState.UNKNOWN)
                out[job_id] = JobStatus(state, None, "" if state is JobState.RUNNING else word)
        gone = [i for i in ids if i not in out and i in self._logs]
        if gone:
            out.update(await self._from_logs(gone))
        return out

    async def _from_logs(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        """Ended jobs from their cobaltlogs, one command for all."""
        paths = {self._logs[i]: i for i in ids}
        result = await self.run(["sh", "-c", 'for f do echo "==> $f"; cat "$f" 2>/dev/null; '
                                 'done; true', "sh", *paths], timeout=self.command_timeout,
                                doing="reading cobaltlogs")
        texts: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in result.stdout.splitlines():
            if line.startswith("==> ") and line[4:] in paths:
                current = texts.setdefault(paths[line[4:]], [])
            elif current is not None:
                current.append(line)
        out: dict[str, JobStatus] = {}
        for job_id, lines in texts.items():
            ended = ended_from_log("\n".join(lines), job_id in self.canceled)
            if ended is not None:
                out[job_id] = ended
                self._logs.pop(job_id, None)
                self.canceled.discard(job_id)
        return out

    async def cancel(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.canceled.update(ids)
        result = await self.run(["qdel", *ids], timeout=self.command_timeout, doing="qdel")
        if (result.returncode != 0 and result.stderr.strip()
                and not gone_only(result.stderr, ("not found", "no such job"))):
            raise self.refused(result, "qdel")


def _table(text: str) -> list[dict[str, str]]:
    """Cobalt's qstat table (a header line, a line of ``=``, rows) as dicts by column."""
    header: list[str] | None = None
    rows = []
    for line in text.splitlines():
        words = line.split()
        if not words or set(line.strip()) == {"="}:
            continue
        if header is None:
            if "JobID" in words and "State" in words:
                header = words
            continue
        rows.append(dict(zip(header, words)))
    return rows
