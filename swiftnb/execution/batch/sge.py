"""Grid Engine (Sun/Oracle/Son of/Univa Grid Engine) as an LRM adapter: ``qsub``, ``qstat``,
``qacct``, ``qdel``.

The job script carries ``#$`` directives: ``-N`` name, ``-S /bin/sh`` (a queue's shell is
often csh, and Grid Engine ignores the ``#!`` line), ``-l h_rt=HH:MM:SS`` (enforced in
seconds), ``-q`` queue, ``-A`` project, ``-pe PE SLOTS`` when a job asks for more than one
slot, ``-wd``, ``-o``/``-e``, and any ``sge.X`` jobOptions key as ``-X value``.  No
``-V``: the job would carry this machine's (or the login shell's) whole environment; the
variables a job needs are exported by the script (``Resources.env``).

Choices, against what Swift 0.96 (CoG's SGE provider) did:

- The parallel environment is jobOptions ``pe``, the attribute CoG read (0.95's
  ``site.X.pe``), else CoG's default ``1way`` (``parallel.environment`` in its shipped
  provider-sge.properties).  A one-slot job needs no PE and gets none.  Which PEs a
  cluster has is the cluster's business, not the checking machine's: a configuration is
  never refused for it; a job (or coaster block) qsub refuses for a PE the cluster lacks
  fails SUBMIT_REFUSED with qsub's words and the cluster's PEs (``qconf -spl``).
- ``jobProject`` is ``-A`` (the account string, charged in accounting), as CoG wrote it:
  ``-P`` names a share-tree project that qmaster refuses unless an administrator made it;
  ``sge.P`` gives that when wanted.

State: one ``qstat`` (the user's own jobs) per poll for every job.  A job qstat no longer
lists has ended: ``qacct -j`` says how (``failed`` and ``exit_status``; ``failed 37``
is qmaster's walltime kill).  qacct lags a job's end by the accounting flush time
(``reporting_params``; 15 s by default), so for ``accounting_grace`` seconds a job that
has left qstat and is not in qacct yet keeps its last state; after that it is left out
and the poller decides it is lost.  A job in an error state (``Eqw``: its output file or
working directory could not be opened, say) never runs until an administrator clears it:
it is reported FAILED with Grid Engine's reason and deleted.  Jobs this adapter cancelled
are CANCELED whatever qacct says (a pending job deleted leaves no accounting record; a
running one ends as ``failed 100``, like a job killed by a signal).

Facts from Son of Grid Engine 8.1.9 as run here (/work/shared/reference/test-clusters.md)
and its man pages (qsub(1), qstat(1), accounting(5), sge_types(1)).

A pending job's ``qstat -j`` scheduling info (``cannot run in PE "smp" because it only
offers 8 slots``) becomes its ``JobStatus.waiting`` (waiting.py), asked each poll while
jobs pend; a cluster whose scheduler does not collect it (``schedd_job_info false``)
leaves it empty.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, hms,
                                         register_lrm)
from swiftnb.execution.batch.waiting import sge_scheduling_info, sge_waiting
from swiftnb.execution.shell import CommandResult, Shell
from swiftnb.scheduling.provider import ProviderError

__all__ = ["GridEngine", "DEFAULT_PE", "job_name", "state_of"]

#: the ``failed`` code of a job qmaster killed at its h_rt (accounting(5))
_FAILED_WALLTIME = 37
#: what Grid Engine's communication library prints when qmaster cannot be reached; the
#: only way to tell "qmaster is down" from "qmaster refused the job" (both exit 1)
_NO_CONTACT = ("commlib error", "unable to contact qmaster", "unable to send message to qmaster")
#: the parallel environment of a job of more than one slot when jobOptions has no ``pe``
#: (CoG's provider-sge.properties: ``parallel.environment=1way``)
DEFAULT_PE = "1way"
#: qsub's words for a parallel environment the cluster does not have
_NO_SUCH_PE = "parallel environment"
#: an option name after ``sge.``: letters, digits, ``_`` (``l``, ``P``, ``hold_jid``)
_OPTION = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def job_name(name: str) -> str:
    """A name Grid Engine takes for ``-N``: no whitespace or ``/:@\\*?'"`` (sge_types(1)),
    not starting with a digit (qsub: "cannot start with a digit"), at most 100 characters."""
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
    if not cleaned or not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "j" + cleaned
    return cleaned[:100]


def state_of(letters: str) -> JobState:
    """A qstat state (``qw``, ``hqw``, ``r``, ``t``, ``Rr``, ``s``, ``S``, ``T``, ``Eqw``,
    ``dr``...) in JobState words; its letters combine, the most telling first."""
    if "d" in letters:
        return JobState.CANCELED      # qdel'd (by us or an administrator), going away
    if "E" in letters:
        return JobState.FAILED        # error state: it will not run until cleared
    if any(c in letters for c in "sST"):
        return JobState.SUSPENDED
    if any(c in letters for c in "rtR"):
        return JobState.RUNNING       # t: being started on its host
    if any(c in letters for c in "qwh"):
        return JobState.PENDING
    return JobState.UNKNOWN


@dataclass(frozen=True, slots=True)
class _Accounting:
    """One qacct record's ``failed`` and ``exit_status``."""

    failed: int
    failed_words: str
    exit_status: int


def _qacct_records(text: str) -> list[_Accounting]:
    """The records of one ``qacct -j ID`` output, those of its last submission only (job
    numbers wrap; an array job has a record per task, all submitted at once)."""
    records: list[dict[str, str]] = []
    for line in text.splitlines():
        if line.startswith("====="):
            records.append({})
            continue
        if not records:
            continue
        key, _, value = line.partition(" ")
        if key in ("qsub_time", "failed", "exit_status"):
            records[-1][key] = value.strip()
    complete = [r for r in records if "failed" in r and "exit_status" in r]
    if not complete:
        return []
    last = complete[-1].get("qsub_time")
    out = []
    for r in complete:
        if r.get("qsub_time") != last:
            continue
        code, _, words = r["failed"].partition(":")
        status = r["exit_status"].split()
        try:
            out.append(_Accounting(int(code.strip()), words.strip(), int(status[0])))
        except (ValueError, IndexError):
            continue
    return out


def _words(result: CommandResult) -> str:
    """What a Grid Engine command said, without its closing "Exiting." line."""
    text = "\n".join(line for line in (result.stderr + "\n" + result.stdout).splitlines()
                     if line.strip() and line.strip() != "Exiting.")
    return text.strip() or f"exit code {result.returncode}"


def _no_contact(words: str) -> bool:
    lowered = words.lower()
    return any(marker in lowered for marker in _NO_CONTACT)


@register_lrm
class GridEngine(LRM):
    """Grid Engine through ``qsub``/``qstat``/``qacct``/``qdel`` on the shell's machine."""

    name: ClassVar[str] = "sge"
    aliases: ClassVar[tuple[str, ...]] = ()   # 0.96 had no other name for it
    directive: ClassVar[str] = "#$"
    option_keys: ClassVar[frozenset[str]] = frozenset({"pe"})
    option_prefixes: ClassVar[tuple[str, ...]] = ("sge.",)
    option_name = _OPTION
    option_name_is = "a qsub option name"
    option_value_forbids = ""           # checked for every key below: line breaks
    status_command: ClassVar[str] = "qstat"
    #: how many cancelled job ids are remembered (asked again later, they stay CANCELED)
    remembered_cancels: ClassVar[int] = 10000

    def __init__(self, shell: Shell, *, site: str = "", accounting_grace: float = 60.0) -> None:
        """``accounting_grace``: seconds a job that has left qstat keeps its last state
        while qacct has no record of it (the accounting flush time, and some)."""
        super().__init__(shell, site=site)
        self.accounting_grace = accounting_grace
        self._canceled: dict[str, None] = {}      # ids cancelled here, oldest first
        self._last: dict[str, JobStatus] = {}     # as qstat last listed each job
        self._gone_since: dict[str, float] = {}   # when qstat stopped listing it

    # -- the job script ------------------------------------------------------------------
    @classmethod
    def check_options(cls, options: Mapping[str, object], where: str = "jobOptions") -> list[str]:
        problems = super().check_options(options, where)
        for key, value in options.items():
            if key == "pe" and not str(value).strip():
                problems.append(f"{where}.pe is empty (it names a parallel environment: "
                                "qconf -spl lists this cluster's)")
            if "\n" in str(value):
                problems.append(f"{where}.{key} holds a line break")
        return problems

    def directives(self, resources: Resources) -> list[str]:
        problems = self.check_options(resources.options)
        slots = resources.nodes * resources.tasks_per_node
        pe = str(resources.options.get("pe", "")).strip() or DEFAULT_PE
        for what, value in (("queue", resources.queue), ("project", resources.project),
                            ("workdir", resources.workdir), ("stdout", resources.stdout),
                            ("stderr", resources.stderr)):
            if value and "\n" in value:
                problems.append(f"the {what} holds a line break")
        if problems:
            raise ProviderError(FailureKind.SUBMIT_REFUSED,
                                f"{self.where()}: " + "; ".join(problems))
        d = self.directive
        lines = [f"{d} -N {job_name(resources.name)}", f"{d} -S /bin/sh",
                 f"{d} -l h_rt={hms(resources.walltime)}"]
        if resources.queue:
            lines.append(f"{d} -q {_arg(resources.queue)}")
        if resources.project:
            lines.append(f"{d} -A {_arg(resources.project)}")
        if slots > 1:
            lines.append(f"{d} -pe {_arg(pe)} {slots}")
        if resources.workdir:
            lines.append(f"{d} -wd {_arg(resources.workdir)}")
        if resources.stdout:
            lines.append(f"{d} -o {_arg(resources.stdout)}")
        if resources.stderr:
            lines.append(f"{d} -e {_arg(resources.stderr)}")
        elif resources.stdout:
            lines.append(f"{d} -j y")   # stderr with stdout, not in a file in $HOME
        for key, value in resources.options.items():
            if key.startswith("sge."):
                text = str(value).strip()
                lines.append(f"{d} -{key[4:]} {_arg(text)}" if text else f"{d} -{key[4:]}")
        return lines

    # -- commands ------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        doing = f"submitting job {job_name(resources.name)}" + (
            f" to queue {resources.queue}" if resources.queue else "")
        result = await self.run(["qsub", "-terse"], input=script.encode(),
                                timeout=self.command_timeout, doing=doing)
        first = result.stdout.strip().split(".")[0]   # an array job: 123.1-10:1
        if result.returncode == 0 and first.isdigit():
            return first
        words = _words(result)
        kind = FailureKind.CONNECTION_LOST if _no_contact(words) else FailureKind.SUBMIT_REFUSED
        if kind is FailureKind.SUBMIT_REFUSED and _NO_SUCH_PE in words.lower():
            words += await self._known_pes(resources)
        raise ProviderError(kind, f"{self.where()}: {doing}: qsub said: {words}")

    async def _known_pes(self, resources: Resources) -> str:
        """The cluster's parallel environments (``qconf -spl``), for a job refused for its
        PE: the user picks one of them as jobOptions.pe."""
        asked = str(resources.options.get("pe", "")).strip()
        given = f"jobOptions.pe {asked!r}" if asked else (
            f"the default parallel environment {DEFAULT_PE!r} (no jobOptions.pe)")
        result = await self.run(["qconf", "-spl"], timeout=self.command_timeout,
                                doing="qconf -spl")
        names = [line.strip() for line in result.stdout.splitlines() if line.strip()]
        if result.returncode != 0 or not names:
            return f" (the job asked for {given}; qconf -spl listed none: {_words(result)})"
        return (f" (the job asked for {given}; this cluster's parallel environments "
                f"(qconf -spl): {', '.join(names)}: set jobOptions.pe to one of them)")

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        result = await self.run(["qstat"], timeout=self.command_timeout, doing="qstat")
        if result.returncode != 0:
            raise ProviderError(FailureKind.CONNECTION_LOST,
                                f"{self.where()}: qstat did not answer: {_words(result)}")
        listed: dict[str, str] = {}
        for line in result.stdout.splitlines():
            parts = line.split()
            if len(parts) >= 5 and parts[0].isdigit():
                # an array job has a line per task: keep the most advanced state
                if parts[0] not in listed or state_of(parts[4]) is JobState.RUNNING:
                    listed[parts[0]] = parts[4]
        now = time.monotonic()
        out: dict[str, JobStatus] = {}
        errored: list[str] = []
        for job_id in ids:
            letters = listed.get(job_id)
            if letters is None:
                continue
            self._gone_since.pop(job_id, None)
            state = state_of(letters)
            if state is JobState.FAILED:
                errored.append(job_id)
                continue
            reason = "" if state in (JobState.PENDING, JobState.RUNNING) else f"state {letters}"
            out[job_id] = JobStatus(state, reason=reason)
        if errored:
            out.update(await self._errors(errored))
        pending = [i for i, status in out.items() if status.state is JobState.PENDING]
        if pending:
            out.update(await self._pending(pending, out))
        missing = [i for i in ids if i not in listed]
        if missing:
            out.update(await self._ended(missing, now))
        for job_id, status in out.items():
            if status.state.terminal:
                self._forget(job_id)
            else:
                self._last[job_id] = status
        self._expire(now)
        return out

    async def _pending(self, ids: Sequence[str],
                       statuses: Mapping[str, JobStatus]) -> dict[str, JobStatus]:
        """Pending jobs with why the scheduler keeps them waiting (``qstat -j``'s
        scheduling info, when ``schedd_job_info`` is on); as they were if it says nothing."""
        result = await self.run(["qstat", "-j", ",".join(ids)], timeout=self.command_timeout,
                                doing="qstat -j")
        info = sge_scheduling_info(result.stdout) if result.returncode == 0 else {}
        out: dict[str, JobStatus] = {}
        for job_id in ids:
            waiting = sge_waiting(info.get(job_id, []))
            if waiting is not None:
                status = statuses[job_id]
                out[job_id] = JobStatus(status.state, status.exit_code, status.reason, waiting)
        return out

    async def _errors(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        """FAILED with Grid Engine's error reason for jobs in an error state, which are
        then deleted (they would wait in the queue until an administrator clears them)."""
        result = await self.run(["qstat", "-j", ",".join(ids)], timeout=self.command_timeout,
                                doing="qstat -j")
        reasons: dict[str, list[str]] = {}
        current = ""
        for line in result.stdout.splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "job_number":
                current = value.strip()
            elif key.startswith("error reason") and current:
                # "error reason    1:      11/24/2026 15:48:55 [0:1720]: error: can't ..."
                words = value.split("]:", 1)[-1].strip()
                reasons.setdefault(current, []).append(words)
        await self.run(["qdel", *ids], timeout=self.command_timeout, doing="qdel")
        return {i: JobStatus(JobState.FAILED, reason="; ".join(reasons.get(i, [])) or
                             "in an error state (qstat -j shows why)") for i in ids}

    async def _ended(self, ids: Sequence[str], now: float) -> dict[str, JobStatus]:
        """How jobs that qstat no longer lists ended, from one shell running qacct for each."""
        loop = 'for j do echo "@@qacct $j"; qacct -j "$j" 2>&1; done'
        result = await self.run(["sh", "-c", loop, "sh", *ids], timeout=self.command_timeout,
                                doing="qacct")
        sections: dict[str, list[str]] = {}
        current: list[str] | None = None
        for line in result.stdout.splitlines():
            if line.startswith("@@qacct "):
                current = sections.setdefault(line.split(None, 1)[1].strip(), [])
            elif current is not None:
                current.append(line)
        out: dict[str, JobStatus] = {}
        for job_id in ids:
            records = _qacct_records("\n".join(sections.get(job_id, [])))
            if records:
                out[job_id] = self._finished(job_id, records)
            elif job_id in self._canceled:
                out[job_id] = JobStatus(JobState.CANCELED, reason="deleted by qdel")
            elif job_id in self._last:
                since = self._gone_since.setdefault(job_id, now)
                if now - since < self.accounting_grace:
                    out[job_id] = self._last[job_id]   # qacct has not caught up yet
        return out

    def _finished(self, job_id: str, records: Sequence[_Accounting]) -> JobStatus:
        worst = max(records, key=lambda r: (r.failed != 0, r.exit_status != 0))
        words = f"failed {worst.failed} : {worst.failed_words}" if worst.failed else ""
        if job_id in self._canceled:
            return JobStatus(JobState.CANCELED, worst.exit_status, words or "deleted by qdel")
        if worst.failed == _FAILED_WALLTIME:
            return JobStatus(JobState.TIMEOUT, worst.exit_status, words)
        if worst.failed:
            return JobStatus(JobState.FAILED, worst.exit_status or None,
                             f"{words}, exit_status {worst.exit_status}")
        if worst.exit_status != 0:
            return JobStatus(JobState.FAILED, worst.exit_status,
                             f"exit_status {worst.exit_status}")
        return JobStatus(JobState.COMPLETED, 0)

    def _forget(self, job_id: str) -> None:
        self._last.pop(job_id, None)
        self._gone_since.pop(job_id, None)

    def _expire(self, now: float) -> None:
        """Drop what is remembered of jobs gone for long (nobody asks for them any more)."""
        for job_id, since in list(self._gone_since.items()):
            if now - since > 2 * self.accounting_grace:
                self._forget(job_id)

    async def cancel(self, ids: Sequence[str]) -> None:
        """``qdel``; a job that has already ended is no error (qdel says it does not
        exist), an unreachable qmaster is."""
        if not ids:
            return
        for job_id in ids:
            self._canceled[job_id] = None
        for job_id in list(self._canceled)[:max(0, len(self._canceled) -
                                               self.remembered_cancels)]:
            del self._canceled[job_id]
        result = await self.run(["qdel", *ids], timeout=self.command_timeout, doing="qdel")
        if result.returncode != 0 and _no_contact(_words(result)):
            raise ProviderError(FailureKind.CONNECTION_LOST,
                                f"{self.where()}: cancelling {' '.join(ids)}: qdel said: "
                                f"{_words(result)}")


def _arg(value: str) -> str:
    """One directive argument; quoted when it holds spaces or quotes (qsub splits ``#$``
    lines as a shell would)."""
    return shlex.quote(value) if value and re.search(r"[\s'\"\\]", value) else value
