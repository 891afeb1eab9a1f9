"""HTCondor as an LRM: ``condor_submit``, ``condor_q``/``condor_history``, ``condor_rm``.

HTCondor runs programs, not job scripts: a job is a *submit description* naming an
executable.  So a job here is two files in its working directory: the shell script
(:meth:`Condor.script`: the usual script without directives, the executable) and the
description written at submit time from :meth:`Condor.directives` (``NAME.sub``):

- ``universe = vanilla`` (``condor.universe`` replaces it, as in CoG's provider),
  ``executable``, ``output``/``error`` (``NAME.out``/``.err`` by default), ``log``
  (``NAME.log``, the job's event log), ``notification = never``;
- ``request_cpus = nodes x P`` (P the jobOptions ``ppn`` or else the tasks per node): a
  vanilla job has one machine, and a block's plain launcher starts its nodes' workers side
  by side on it;
- the walltime as ``periodic_remove = (JobStatus == 2) && ((time() -
  EnteredCurrentStatus) > SECONDS)``: the schedd removes a job running longer (checked
  every ``PERIODIC_EXPR_INTERVAL``, 60 s by default, so the kill comes up to a minute
  late);
- ``accounting_group`` from the project; a queue is refused (HTCondor has none: machines
  are chosen by ``condor.requirements``);
- ``condor.KEY: V`` as ``KEY = V`` after the others (the schedd keeps the last), as CoG
  wrote them;
- ``queue``.

Ids are ``CLUSTER.0`` (``condor_submit`` prints "1 job(s) submitted to cluster 42.").
States: one ``condor_q -af:t ClusterId ProcId JobStatus ExitCode ExitBySignal ExitSignal
RemoveReason HoldReason ID...`` per poll; a job that left the queue (completed and
removed jobs leave it at once) is read from ``condor_history`` with the same attributes,
one call for all of them.  ``JobStatus`` 1 (idle) and 5 (held: it will not run until
released; HoldReason is kept) are PENDING, 2 and 6 (transferring output) RUNNING, 7
SUSPENDED, 4 COMPLETED or FAILED by its exit code (or signal), 3 (removed) TIMEOUT when
the RemoveReason is the ``PeriodicRemove`` expression, CANCELED otherwise.  Facts: the
HTCondor manual (condor_submit, condor_q, "Job ClassAd attributes").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import LRM, JobState, JobStatus, Resources, register_lrm
from swiftnb.execution.batch.optionvalues import plain_name
from swiftnb.scheduling.provider import ProviderError

__all__ = ["Condor", "CONDOR_STATES", "ATTRIBUTES"]

#: ``JobStatus`` values (the HTCondor manual, "Job ClassAd attributes")
CONDOR_STATES: dict[int, JobState] = {
    1: JobState.PENDING,     # idle
    2: JobState.RUNNING,
    3: JobState.CANCELED,    # removed
    4: JobState.COMPLETED,
    5: JobState.PENDING,     # held
    6: JobState.RUNNING,     # transferring output
    7: JobState.SUSPENDED,
}
ATTRIBUTES = ("ClusterId", "ProcId", "JobStatus", "ExitCode", "ExitBySignal", "ExitSignal",
              "RemoveReason", "HoldReason")
_SUBMITTED = re.compile(r"(\d+) job\(s\) submitted to cluster (\d+)")
_KEY = re.compile(r"\+?[A-Za-z][A-Za-z0-9_.]*\Z")
_GONE_WORDS = ("not found", "already", "couldn't find")


@register_lrm
class Condor(LRM):
    """HTCondor through ``condor_submit``, ``condor_q``, ``condor_history`` and
    ``condor_rm`` (module docstring)."""

    name: ClassVar[str] = "condor"
    aliases: ClassVar[tuple[str, ...]] = ("condorlocal",)
    option_keys: ClassVar[frozenset[str]] = frozenset({"ppn"})
    option_prefixes: ClassVar[tuple[str, ...]] = ("condor.",)
    option_name = _KEY
    option_name_is = "a submit description command"
    option_value_is = "a submit description line"
    option_value_forbids = "\n\r"
    status_command: ClassVar[str] = "condor_q"
    whole_number_keys: ClassVar[tuple[str, ...]] = ("ppn",)
    gone_words: ClassVar[tuple[str, ...]] = _GONE_WORDS

    @staticmethod
    def paths(resources: Resources) -> tuple[str, str, str]:
        """The job's script, submit description and event log."""
        base = f"{resources.workdir or '.'}/{plain_name(resources.name)}"
        return f"{base}.sh", f"{base}.sub", f"{base}.log"

    def directives(self, resources: Resources) -> list[str]:
        """The submit description's lines from ``resources`` (without ``executable`` and
        ``queue``, which :meth:`description` adds)."""
        options = resources.options
        no_queues = (f"HTCondor has no queues: jobQueue '{resources.queue}' cannot be "
                     "honoured (choose machines with jobOptions condor.requirements)")
        self.refuse_problems(resources, [resources.project, resources.stdout, resources.stderr],
                             "a submit description", *([no_queues] if resources.queue else []))
        ppn = int(str(options.get("ppn", resources.tasks_per_node)))
        _, _, log = self.paths(resources)
        base = log[:-len(".log")]
        lines = [] if "condor.universe" in options else ["universe = vanilla"]
        lines += [f"output = {resources.stdout or base + '.out'}",
                  f"error = {resources.stderr or base + '.err'}",
                  f"log = {log}",
                  f"request_cpus = {resources.nodes * ppn}",
                  "periodic_remove = (JobStatus == 2) && "
                  f"((time() - EnteredCurrentStatus) > {max(1, int(resources.walltime))})",
                  "notification = never"]
        if resources.project:
            lines.append(f"accounting_group = {resources.project}")
        for key, value in options.items():
            if key.startswith("condor."):
                lines.append(f"{key[len('condor.'):]} = {value}")
        return lines

    def description(self, resources: Resources) -> str:
        """The whole submit description of the job whose script :meth:`paths` names."""
        script, _, _ = self.paths(resources)
        lines = [f"executable = {script}", *self.directives(resources), "queue"]
        return "\n".join(lines) + "\n"

    def script(self, command: str, resources: Resources) -> str:
        """The job's executable: the usual script without directives (they go to the
        submit description, checked here already: a wrong option fails before submit)."""
        self.directives(resources)
        return self.script_of([], command, resources)

    # -- commands ----------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        doing = f"condor_submit of job {resources.name}"
        description = self.description(resources)
        script_path, submit_path, _ = self.paths(resources)
        await self.write_file(script_path, script, mode="700")
        await self.write_file(submit_path, description)
        result = await self.run(["condor_submit", submit_path], timeout=self.command_timeout,
                                doing=doing)
        found = _SUBMITTED.search(result.stdout)
        if result.returncode != 0 or found is None:
            raise self.refused(result, doing)
        return f"{found.group(2)}.0"

    async def _ask(self, command: str, ids: Sequence[str]) -> dict[str, list[str]]:
        argv = [command, "-af:t", *ATTRIBUTES, *ids]
        result = await self.run(argv, timeout=self.command_timeout, doing=command)
        rows: dict[str, list[str]] = {}
        for line in result.stdout.splitlines():
            fields = line[1:].split("\t") if line.startswith("\t") else line.split("\t")
            if len(fields) >= len(ATTRIBUTES):
                rows[f"{fields[0].strip()}.{fields[1].strip()}"] = [f.strip() for f in fields]
        if result.returncode != 0 and not rows:
            words = result.stderr.strip() or result.stdout.strip() or (
                f"exit code {result.returncode}")
            raise ProviderError(FailureKind.CONNECTION_LOST, f"{self.where()}: {command}: {words}")
        return rows

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        rows = await self._ask("condor_q", ids)
        left = [i for i in ids if i not in rows]
        if left:
            try:
                rows.update(await self._ask("condor_history", left))
            except ProviderError:
                pass  # no history kept (or it failed): those jobs stay missing
        out: dict[str, JobStatus] = {}
        for job_id in ids:
            row = rows.get(job_id)
            if row is not None:
                out[job_id] = self._status_of(job_id, row)
                if out[job_id].state.terminal:
                    self.canceled.discard(job_id)
        return out

    def _status_of(self, job_id: str, row: Sequence[str]) -> JobStatus:
        status_text, code_text, by_signal, signal_text, removed, held = row[2:8]
        number = int(status_text) if status_text.isdigit() else 0
        state = CONDOR_STATES.get(number, JobState.UNKNOWN)
        if state is JobState.COMPLETED:
            if by_signal.lower() == "true" and signal_text.isdigit():
                return JobStatus(JobState.FAILED, 128 + int(signal_text),
                                 f"killed by signal {signal_text}")
            code = int(code_text) if code_text.lstrip("-").isdigit() else None
            if code == 0:
                return JobStatus(JobState.COMPLETED, 0)
            return JobStatus(JobState.FAILED, code, f"ExitCode {code_text}")
        if state is JobState.CANCELED:
            reason = "" if removed == "undefined" else removed
            if job_id not in self.canceled and "PeriodicRemove" in reason:
                return JobStatus(JobState.TIMEOUT, None, f"removed at its walltime ({reason})")
            return JobStatus(JobState.CANCELED, None, f"removed ({reason})" if reason else
                             "removed")
        if number == 5:
            return JobStatus(state, None, f"held: {held}")
        return JobStatus(state, None, "" if state is JobState.RUNNING else f"JobStatus {number}")

    async def cancel(self, ids: Sequence[str]) -> None:
        await self.cancel_all("condor_rm", ids)
