"""IBM Spectrum LSF as an LRM: ``bsub < script``, ``bjobs -o``, ``bkill``.

Directives (``#BSUB``, read by bsub when the script comes on its standard input: given
as a file name, the script would be the command and its directives comments), as the
``bsub(1)`` reference documents them:

- ``-J`` name, ``-W H:MM`` (LSF takes ``[hour:]minute``: the walltime in whole minutes,
  rounded up), ``-n`` slots (nodes x P) and ``-R "span[ptile=P]"`` (P slots per host), P
  the jobOptions ``ppn`` or else the tasks per node;
- ``-q`` queue, ``-P`` project, ``-cwd`` working directory, ``-o``/``-e`` stdout and
  stderr (without them LSF mails the output: ``NAME.%J.out``/``.err`` by default);
- ``lsf.X: V`` as ``-X V`` after the others (``lsf.R: "rusage[mem=4000]"``, ``lsf.x:
  true`` for exclusive; ``true`` is a bare flag, ``false`` leaves it out).

States: one ``bjobs -a -noheader -o "jobid stat exit_code exit_reason delimiter='|'"
ID...`` per poll (``-a`` keeps ended jobs listed for ``CLEAN_PERIOD``, an hour by
default; ids bjobs does not know are reported on stderr, "Job <N> is not found", and
left out).  ``PEND``, ``WAIT`` and ``PSUSP`` (held while pending) are PENDING, ``RUN``
RUNNING, ``USUSP``/``SSUSP`` SUSPENDED, ``DONE`` COMPLETED, ``UNKWN`` UNKNOWN (mbatchd
lost contact with the host), ``ZOMBI`` LOST; ``EXIT`` is TIMEOUT when its exit reason is
``TERM_RUNLIMIT`` (LSF's run-limit kill), CANCELED when this adapter cancelled it or the
reason is ``TERM_OWNER``/``TERM_ADMIN``/``TERM_FORCE_*`` (bkill), FAILED otherwise.
Facts: LSF 10.1 command reference (bsub, bjobs -o, bkill) and "Termination reasons
displayed by bacct, bhist, and bjobs".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, register_lrm,
                                         whole_minutes)
from swiftnb.execution.batch.optionvalues import (given_flags, gone_only, plain_name, prefixed_flags,
                                                  quoted)
from swiftnb.scheduling.provider import ProviderError

__all__ = ["LSF", "LSF_STATES", "STATUS_FORMAT"]

#: bjobs ``STAT`` words of jobs that have not ended, and of ``DONE``
LSF_STATES: dict[str, JobState] = {
    "PEND": JobState.PENDING,
    "WAIT": JobState.PENDING,      # a chunk job's member waiting its turn
    "PSUSP": JobState.PENDING,     # held (suspended while pending)
    "RUN": JobState.RUNNING,
    "USUSP": JobState.SUSPENDED,
    "SSUSP": JobState.SUSPENDED,
    "DONE": JobState.COMPLETED,
    "UNKWN": JobState.UNKNOWN,     # mbatchd lost contact with the job's host
    "ZOMBI": JobState.LOST,        # killed while its host was unreachable
}
STATUS_FORMAT = "jobid stat exit_code exit_reason delimiter='|'"
_SUBMITTED = re.compile(r"Job <(\d+(?:\[\d+\])?)> is submitted")
_OPTION = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: what bjobs and bkill say of jobs that ended or that they do not know
_GONE_WORDS = ("is not found", "already finished", "no matching job")
_RUNLIMIT = ("TERM_RUNLIMIT", "run time limit")
_KILLED = ("TERM_OWNER", "TERM_ADMIN", "TERM_FORCE_OWNER", "TERM_FORCE_ADMIN",
           "killed by owner", "killed by root")


def _walltime(seconds: int) -> str:
    minutes = whole_minutes(seconds)
    return f"{minutes // 60}:{minutes % 60:02d}"


@register_lrm
class LSF(LRM):
    """LSF through ``bsub``, ``bjobs`` and ``bkill`` (module docstring)."""

    name: ClassVar[str] = "lsf"
    directive: ClassVar[str] = "#BSUB"
    option_keys: ClassVar[frozenset[str]] = frozenset({"ppn"})
    option_prefixes: ClassVar[tuple[str, ...]] = ("lsf.",)
    option_name = _OPTION
    option_name_is = "a bsub option name"
    option_value_is = "a #BSUB directive"
    status_command: ClassVar[str] = "bjobs"
    whole_number_keys: ClassVar[tuple[str, ...]] = ("ppn",)
    gone_words: ClassVar[tuple[str, ...]] = _GONE_WORDS

    def directives(self, resources: Resources) -> list[str]:
        options = resources.options
        self.refuse_problems(resources, [resources.queue, resources.project, resources.workdir,
                                         resources.stdout, resources.stderr], "a #BSUB directive")
        ppn = int(str(options.get("ppn", resources.tasks_per_node)))
        name = plain_name(resources.name)
        lines = [f"-J {name}", f"-W {_walltime(resources.walltime)}",
                 f"-n {resources.nodes * ppn}", f'-R "span[ptile={ppn}]"']
        lines += given_flags([("-q ", resources.queue), ("-P ", resources.project),
                              ("-cwd ", resources.workdir)])
        lines.append(f"-o {quoted(resources.stdout or name + '.%J.out')}")
        lines.append(f"-e {quoted(resources.stderr or name + '.%J.err')}")
        lines += prefixed_flags(options, "lsf.")
        return [f"{self.directive} {line}" for line in lines]

    # -- commands ----------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        result, doing = await self.submit_stdin(["bsub"], script, resources)
        found = _SUBMITTED.search(result.stdout)
        if result.returncode != 0 or found is None:
            raise self.refused(result, doing)
        return found.group(1)

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        result = await self.run(["bjobs", "-a", "-noheader", "-o", STATUS_FORMAT, *ids],
                                timeout=self.command_timeout, doing="bjobs")
        rows = [line.split("|") for line in result.stdout.splitlines() if line.count("|") >= 3]
        if result.returncode != 0 and not rows and not gone_only(result.stderr, _GONE_WORDS):
            words = result.stderr.strip() or f"exit code {result.returncode}"
            raise ProviderError(FailureKind.CONNECTION_LOST, f"{self.where()}: bjobs: {words}")
        wanted = set(ids)
        out: dict[str, JobStatus] = {}
        for job_id, stat, code, reason in ((r[0].strip(), r[1].strip(), r[2].strip(),
                                            "|".join(r[3:]).strip()) for r in rows):
            if job_id in wanted:
                out[job_id] = self._status_of(job_id, stat, code, reason)
                if out[job_id].state.terminal:
                    self.canceled.discard(job_id)
        return out

    def _status_of(self, job_id: str, stat: str, code_text: str, reason: str) -> JobStatus:
        code = int(code_text) if code_text.lstrip("-").isdigit() else None
        reason = "" if reason in ("-", "") else reason
        if stat == "DONE":
            return JobStatus(JobState.COMPLETED, 0)
        if stat != "EXIT":
            state = LSF_STATES.get(stat, JobState.UNKNOWN)
            return JobStatus(state, None, "" if state is JobState.RUNNING else stat)
        words = f"EXIT, exit code {code_text}" + (f", {reason}" if reason else "")
        if job_id in self.canceled or any(k.lower() in reason.lower() for k in _KILLED):
            return JobStatus(JobState.CANCELED, code, words)
        if any(k.lower() in reason.lower() for k in _RUNLIMIT):
            return JobStatus(JobState.TIMEOUT, code, words)
        return JobStatus(JobState.FAILED, code, words)

    async def cancel(self, ids: Sequence[str]) -> None:
        await self.cancel_all("bkill", ids)
