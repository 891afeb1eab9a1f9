"""Moab (Adaptive Computing's Moab Workload Manager) as an LRM: ``msub``, ``showq``,
``checkjob``, ``canceljob``.

LLNL's and other centres' sites.xml files name it as ``jobmanager="local:moab"``; CoG
had no Moab provider of its own in 0.96, so this adapter follows Moab's documented
commands (Moab Workload Manager Administrator Guide: msub, showq, checkjob, canceljob).

Directives (``#MSUB``, which msub reads as qsub reads ``#PBS``):

- ``-N`` name (letters, digits, ``._-``), ``-S /bin/sh``;
- ``-l nodes=N:ppn=P`` with P the jobOptions ``ppn`` or else the tasks per node;
- ``-l walltime=HH:MM:SS``;
- ``-q`` queue (Moab's class), ``-A`` account, ``-o``/``-e`` stdout and stderr;
- ``moab.X: V`` (X one letter) as ``-X V`` (``moab.l: "feature=gpu"``,
  ``moab.W: "x=..."``; ``true`` is a bare flag).

States: one ``showq`` per poll lists every job still in the queue (its active, eligible
and blocked sections, each line ``JOBID USER STATE ...``).  A job it no longer lists has
ended; ``checkjob ID`` (one per ended job, once) says how: ``State: Completed`` with its
``Completion Code`` (0: COMPLETED; otherwise FAILED), ``State: Removed`` (cancelled,
or killed at its wallclock limit: its message says which), ``State: Vacated`` (its node
was lost).  A job checkjob cannot locate either is left out, and the poller decides it is
lost.  Jobs this adapter cancelled are CANCELED whatever checkjob says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, hms, qsub_flags,
                                         register_lrm)
from swiftnb.execution.batch.optionvalues import (gone_only, line_breaking, plain_name,
                                                  prefixed_flags)
from swiftnb.execution.shell import CommandResult
from swiftnb.scheduling.provider import ProviderError

__all__ = ["Moab", "MOAB_STATES", "parse_showq", "parse_checkjob"]

#: showq's STATE words of jobs still queued or running (Moab "Job States")
MOAB_STATES: dict[str, JobState] = {
    "running": JobState.RUNNING, "starting": JobState.RUNNING,
    "staged": JobState.PENDING, "staging": JobState.PENDING, "idle": JobState.PENDING,
    "notqueued": JobState.PENDING, "deferred": JobState.PENDING, "hold": JobState.PENDING,
    "userhold": JobState.PENDING, "systemhold": JobState.PENDING,
    "batchhold": JobState.PENDING, "blocked": JobState.PENDING,
    "suspended": JobState.SUSPENDED,
}
#: what msub prints before the id, on some installations (``Moab.123``)
_JOB_ID = re.compile(r"[A-Za-z0-9_.\-\[\]]+\Z")
#: canceljob's and checkjob's words for a job Moab no longer has
_GONE_WORDS = ("cannot locate job", "invalid job", "unknown job")


def parse_showq(text: str) -> dict[str, str]:
    """job id -> its STATE word, from showq's job lines (``12941 sartois Running 25
    2:44:11 Thu Sep 1 15:02:50``), whatever section they are in."""
    jobs: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] != "JOBID" and words[2].lower() in MOAB_STATES:
            jobs[words[0]] = words[2]
    return jobs


def parse_checkjob(text: str) -> dict[str, str]:
    """checkjob's ``Key: value`` lines (``State: Completed``, ``Completion Code: 0  Time:
    ...``), keys lower-cased; ``messages`` holds its Message lines, joined."""
    fields: dict[str, str] = {}
    messages: list[str] = []
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key.startswith(("message", "holdreason", "blockmsg")):
            messages.append(value.strip())
        else:
            fields.setdefault(key, value.strip())
    fields["messages"] = "; ".join(messages)
    return fields


def _same_job(shown: str, job_id: str) -> bool:
    """``Moab.12`` and ``12`` are one job (msub may print the prefix, showq not)."""
    return shown == job_id or shown.rsplit(".", 1)[-1] == job_id.rsplit(".", 1)[-1]


@register_lrm
class Moab(LRM):
    """Moab through ``msub``, ``showq``, ``checkjob`` and ``canceljob`` (module docstring)."""

    name: ClassVar[str] = "moab"
    aliases: ClassVar[tuple[str, ...]] = ()
    directive: ClassVar[str] = "#MSUB"
    option_keys: ClassVar[frozenset[str]] = frozenset({"ppn"})
    option_prefixes: ClassVar[tuple[str, ...]] = ("moab.",)
    status_command: ClassVar[str] = "showq"
    queue_is: ClassVar[str] = "class"
    whole_number_keys: ClassVar[tuple[str, ...]] = ("ppn",)

    @classmethod
    def check_options(cls, options: Mapping[str, object], where: str = "jobOptions") -> list[str]:
        problems = super().check_options(options, where)
        for key, value in options.items():
            if not key.startswith("moab."):
                continue
            letter = key[len("moab."):]
            if len(letter) != 1 or not letter.isalpha():
                problems.append(f"{where}.{key}: '{letter}' is not an msub option; moab.X "
                                "gives msub's one-letter option -X (moab.l, moab.W...)")
            if line_breaking([value]) is not None:
                problems.append(f"{where}.{key}: a value with quotes or line breaks cannot "
                                "be an #MSUB directive")
        return problems

    def directives(self, resources: Resources) -> list[str]:
        options = resources.options
        self.refuse_problems(resources, [resources.queue, resources.project, resources.stdout,
                                         resources.stderr], "an #MSUB directive")
        ppn = int(str(options.get("ppn", resources.tasks_per_node)))
        lines = ["-S /bin/sh", f"-N {plain_name(resources.name)}",
                 f"-l nodes={resources.nodes}:ppn={ppn}",
                 f"-l walltime={hms(resources.walltime)}"]
        lines += qsub_flags(resources)
        lines += prefixed_flags(options, "moab.")
        return [f"{self.directive} {line}" for line in lines]

    # -- commands ----------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        result, doing = await self.submit_stdin(["msub"], script, resources)
        if result.returncode != 0:
            raise self.refused(result, doing)
        lines = [line.strip() for line in result.stdout.splitlines() if line.strip()]
        job_id = lines[-1] if lines else ""
        if not _JOB_ID.match(job_id):
            raise self.refused(result, f"{doing}: no job id in msub's answer")
        return job_id

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        result = await self.run(["showq"], timeout=self.command_timeout, doing="showq")
        if result.returncode != 0:
            raise self._no_answer(result, "showq")
        queued = parse_showq(result.stdout)
        out: dict[str, JobStatus] = {}
        for job_id in ids:
            word = next((w for shown, w in queued.items() if _same_job(shown, job_id)), None)
            if word is not None:
                state = MOAB_STATES[word.lower()]
                out[job_id] = JobStatus(state, None,
                                        "" if state is JobState.RUNNING else f"State {word}")
        for job_id in ids:
            if job_id not in out:
                ended = await self._checkjob(job_id)
                if ended is not None:
                    out[job_id] = ended
        for job_id, job in out.items():
            if job.state.terminal:
                self.canceled.discard(job_id)
        return out

    async def _checkjob(self, job_id: str) -> JobStatus | None:
        """How a job showq no longer lists ended (None: Moab no longer knows it)."""
        result = await self.run(["checkjob", job_id], timeout=self.command_timeout,
                                doing=f"checkjob {job_id}")
        if result.returncode != 0 or "State:" not in result.stdout:
            if gone_only(result.stderr or result.stdout, _GONE_WORDS):
                return None
            raise self._no_answer(result, f"checkjob {job_id}")
        return self._ended(job_id, parse_checkjob(result.stdout))

    def _ended(self, job_id: str, fields: Mapping[str, str]) -> JobStatus:
        state = fields.get("state", "").split()[0] if fields.get("state") else ""
        code_words = fields.get("completion code", "").split()
        code = int(code_words[0]) if code_words and code_words[0].lstrip("-").isdigit() \
            else None
        words = f"State {state}" + (f", Completion Code {code}" if code is not None else "")
        if job_id in self.canceled:
            return JobStatus(JobState.CANCELED, code, f"cancelled ({words})")
        said = fields.get("messages", "")
        if "wallclock" in said.lower() or "walltime" in said.lower():
            return JobStatus(JobState.TIMEOUT, None, f"killed at its wallclock limit "
                             f"({words}: {said})")
        lowered = state.lower()
        if lowered == "completed":
            if code == 0:
                return JobStatus(JobState.COMPLETED, 0)
            return JobStatus(JobState.FAILED, code, words + (f": {said}" if said else ""))
        if lowered == "removed":
            return JobStatus(JobState.CANCELED, code, words + (f": {said}" if said else ""))
        if lowered == "vacated":
            return JobStatus(JobState.LOST, code, words + (f": {said}" if said else ""))
        if lowered in MOAB_STATES:  # between showq and checkjob it is still queued
            return JobStatus(MOAB_STATES[lowered], None, words)
        return JobStatus(JobState.UNKNOWN, code, words)

    def _no_answer(self, result: CommandResult, doing: str) -> ProviderError:
        words = result.stderr.strip() or result.stdout.strip() or f"exit code {result.returncode}"
        return ProviderError(FailureKind.CONNECTION_LOST, f"{self.where()}: {doing}: {words}")

    async def cancel(self, ids: Sequence[str]) -> None:
        if not ids:
            return
        self.canceled.update(ids)
        for job_id in ids:  # canceljob takes one job
            result = await self.run(["canceljob", job_id], timeout=self.command_timeout,
                                    doing=f"canceljob {job_id}")
            if result.returncode != 0 and not gone_only(result.stderr or result.stdout,
                                                        _GONE_WORDS):
                raise self.refused(result, f"canceljob {job_id}")
