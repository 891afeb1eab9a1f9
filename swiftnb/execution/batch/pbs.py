"""PBS (Torque, OpenPBS, PBS Professional) as an LRM: ``qsub``, ``qstat -f``, ``qdel``.

Directives (``#PBS``), as Swift 0.96's CoG PBS provider wrote them (``PBSExecutor``) and
the Torque/PBS ``qsub(1)`` pages document them:

- ``-S /bin/sh`` (PBS runs the script with the user's login shell otherwise), ``-N``
  name (letters, digits, ``._-``, at most 15 characters: Torque's limit), ``-m n``;
- ``-l walltime=HH:MM:SS`` (enforced to the second);
- ``-l nodes=N:ppn=P`` with P the jobOptions ``ppn`` or else the tasks per node, and
  ``pbs.properties`` appended as ``:PROPS`` (``nodes=2:ppn=8:ib``);
- with ``pbs.mpp: true`` (Cray XT/XE under PBS), ``-l mppwidth=N*P,mppnppn=P`` instead,
  plus ``,mppdepth=D`` from jobOptions ``depth`` (``depth`` means nothing without it and
  is refused; so are ``pbs.properties``, which a Cray mpp request has no place for);
- ``-q`` queue, ``-A`` project, ``-o``/``-e`` stdout and stderr;
- ``pbs.X: V`` (X one letter) as ``-X V``, after the others (``pbs.l: "mem=4gb"``,
  ``pbs.W: "group_list=g"``; ``true`` is a bare flag).

``pbs.aprun: true`` starts the job's processes with Cray's ``aprun`` (on systems where a
PBS job's script runs on a service node): it writes no directive; the launcher reads it
(:meth:`PBS.launcher_hint`; ``request.py`` for one job per task, ``launcher: "aprun"``
for coaster blocks).

States: one ``qstat -f ID...`` per poll (the full display names every job's
``job_state`` and, once it ended, its ``exit_status``; Torque keeps ended jobs listed as
``C`` for ``keep_completed`` seconds).  ``-x`` is not asked first, since it means XML to
Torque and "finished jobs too" to PBS Professional; PBS Professional answers "Job has
finished, use -x" for ended jobs, which are then asked again with ``qstat -f -x``.  A job
qstat no longer knows (Torque without ``keep_completed``) is read from the exit-code
file its script writes (CoG's ``exitcode`` file) when the job has a working directory;
otherwise it is left out and the poller decides it is lost.

Ends: ``exit_status`` 0 is COMPLETED; -11 (Torque ``JOB_EXEC_OVERLIMIT_WT``), -29 (PBS
Professional ``JOB_EXEC_KILL_WALLTIME``), or a kill by signal (256+N) after
``resources_used.walltime`` reached ``Resource_List.walltime``, is TIMEOUT; jobs this
adapter cancelled, and 271 (SIGTERM from the server: Torque's code for a deleted running
job), are CANCELED; anything else FAILED.  Signal codes are reported as a shell reports
them (128+N).  Facts: Torque Administrator Guide "Job exit status", PBS Professional
Reference Guide "Job exit status codes".
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import ClassVar

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, Resources, hms, qsub_flags,
                                         register_lrm)
from swiftnb.execution.batch.optionvalues import (flag_words, gone_only, line_breaking, plain_name,
                                                  truth, truth_problem)
from swiftnb.execution.shell import CommandResult, Shell
from swiftnb.scheduling.provider import ProviderError

__all__ = ["PBS", "PBS_STATES", "parse_full_status"]

#: ``job_state`` letters of jobs that have not ended (Torque qstat(1), PBS Pro RG 8.1)
PBS_STATES: dict[str, JobState] = {
    "Q": JobState.PENDING,     # queued
    "H": JobState.PENDING,     # held
    "W": JobState.PENDING,     # waiting for its start time
    "T": JobState.PENDING,     # being moved
    "R": JobState.RUNNING,
    "E": JobState.RUNNING,     # exiting after having run
    "B": JobState.RUNNING,     # an array job that has begun
    "S": JobState.SUSPENDED,
    "U": JobState.SUSPENDED,   # suspended because its workstation is busy (PBS Pro)
}
#: ``job_state`` letters of ended jobs: completed (Torque), finished (PBS Pro), a
#: finished subjob (PBS Pro)
_ENDED = frozenset("CFX")
#: exit codes a PBS server sets for a job it killed at its walltime
_WALLTIME_CODES = {-11: "Torque JOB_EXEC_OVERLIMIT_WT", -29: "PBS JOB_EXEC_KILL_WALLTIME"}
#: Torque's exit code for a running job deleted with qdel (256 + SIGTERM)
_DELETED = 271
#: what qstat and qdel say of a job that ended or that they no longer know
_GONE_WORDS = ("unknown job id", "job has finished", "invalid state", "request invalid for state")
_FINISHED_WORDS = ("job has finished",)
_JOB_ID = re.compile(r"\d+(\[\d*\])?(\.\S+)?\Z")
#: besides pbs.X (qsub's option -X): CoG's PBSExecutor attributes, pbs.resource_list an
#: extra ``#PBS -l VALUE`` line (real users' sites.xml files carry it)
_SPECIAL = frozenset({"pbs.aprun", "pbs.mpp", "pbs.properties", "pbs.resource_list"})
#: the exit-code file beside a job's working directory (CoG's ``exitcode`` file)
_EXIT_SUFFIX = ".pbs-exit"


def parse_full_status(text: str) -> dict[str, dict[str, str]]:
    """``qstat -f`` output as {job id: {attribute: value}}; a long value continues on
    lines that start with a tab (Torque and PBS Pro wrap at 80 columns)."""
    jobs: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    last = ""
    for line in text.splitlines():
        if line.startswith("Job Id:"):
            current = jobs.setdefault(line.split(":", 1)[1].strip(), {})
            last = ""
        elif current is None or not line.strip():
            continue
        elif " = " in line and not line.startswith("\t"):
            key, _, value = line.strip().partition(" = ")
            current[key] = value
            last = key
        elif last:
            current[last] += line.strip()
    return jobs


def _seconds(hhmmss: str | None) -> int | None:
    parts = (hhmmss or "").strip().split(":")
    if not parts or not all(p.isdigit() for p in parts):
        return None
    total = 0
    for part in parts:
        total = total * 60 + int(part)
    return total


def _mentions(line: str, job_id: str) -> bool:
    """Whether a message names job ``123.server`` (or ``123`` on another server name)."""
    number = re.escape(job_id.split(".", 1)[0])
    return re.search(rf"(?<![\d.]){number}(?![\d\[])", line) is not None


def _same_job(a: str, b: str) -> bool:
    """``123.server`` and ``123.server.domain`` (the server may lengthen its name)."""
    return a == b or a.split(".", 1)[0] == b.split(".", 1)[0]


def _depth_ignored(options: Mapping[str, object], where: str) -> str | None:
    """Why ``depth`` has no effect here, if it has none: it is PBS's mppdepth with
    ``pbs.mpp`` and aprun's ``-d`` with ``pbs.aprun``.  CoG's PBS provider read it
    without either too and wrote it nowhere: 0.96 ignored it."""
    if "depth" not in options or truth(options.get("pbs.mpp", False)) is True \
            or truth(options.get("pbs.aprun", False)) is True:
        return None
    return (f"{where}.depth (threads per process) is PBS's mppdepth with pbs.mpp: true, "
            "or aprun's -d with pbs.aprun: true; with neither it has no effect (Swift 0.96 "
            "ignored it): remove it, or set ppn for the cores of a node")


@register_lrm
class PBS(LRM):
    """PBS and Torque through ``qsub``, ``qstat -f`` and ``qdel`` (module docstring)."""

    name: ClassVar[str] = "pbs"
    aliases: ClassVar[tuple[str, ...]] = ("pbslocal",)
    directive: ClassVar[str] = "#PBS"
    option_keys: ClassVar[frozenset[str]] = frozenset({"ppn", "depth"} | _SPECIAL)
    option_prefixes: ClassVar[tuple[str, ...]] = ("pbs.",)
    status_command: ClassVar[str] = "qstat"
    #: Torque's limit on a job name (PBS Pro takes 236)
    name_limit: ClassVar[int] = 15
    whole_number_keys: ClassVar[tuple[str, ...]] = ("ppn", "depth")
    gone_words: ClassVar[tuple[str, ...]] = _GONE_WORDS

    def __init__(self, shell: Shell, *, site: str = "") -> None:
        super().__init__(shell, site=site)
        self._exit_files: dict[str, str] = {}   # job id -> its exit-code file

    @classmethod
    def ignored_options(cls, options: Mapping[str, object],
                        where: str = "jobOptions") -> dict[str, str]:
        ignored = super().ignored_options(options, where)
        why = _depth_ignored(options, where)
        if why is not None:
            ignored["depth"] = why
        return ignored

    @classmethod
    def check_options(cls, options: Mapping[str, object], where: str = "jobOptions") -> list[str]:
        problems = super().check_options(options, where)
        for key in ("pbs.aprun", "pbs.mpp"):
            problem = truth_problem(options, key, where)
            if problem:
                problems.append(problem)
        for key, value in options.items():
            if key.startswith("pbs.") and key not in _SPECIAL:
                letter = key[len("pbs."):]
                if len(letter) != 1 or not letter.isalpha():
                    problems.append(f"{where}.{key}: '{letter}' is not a qsub option; pbs.X "
                                    "gives qsub's one-letter option -X (pbs.l, pbs.W...), "
                                    "besides pbs.aprun, pbs.mpp, pbs.properties and "
                                    "pbs.resource_list")
            if key.startswith("pbs.") and line_breaking([value]) is not None:
                problems.append(f"{where}.{key}: a value with quotes or line breaks cannot "
                                "be a #PBS directive")
        return problems

    @classmethod
    def launcher_hint(cls, options: Mapping[str, object]) -> str | None:
        """``aprun`` when ``pbs.aprun`` is true: the job's processes start through Cray's
        aprun (the launcher's business, not a directive's)."""
        return "aprun" if truth(options.get("pbs.aprun", False)) else None

    def directives(self, resources: Resources) -> list[str]:
        options = resources.options
        mpp = truth(options.get("pbs.mpp", False)) is True
        clash = ("jobOptions.pbs.properties go with nodes=N:ppn=P; a Cray request "
                 "(pbs.mpp: true) has no place for node properties")
        self.refuse_problems(resources, [resources.queue, resources.project, resources.stdout,
                                         resources.stderr], "a #PBS directive",
                             *([clash] if "pbs.properties" in options and mpp else []))
        ppn = int(str(options.get("ppn", resources.tasks_per_node)))
        if mpp:
            size = f"mppwidth={resources.nodes * ppn},mppnppn={ppn}"
            if "depth" in options:
                size += f",mppdepth={options['depth']}"
        else:
            size = f"nodes={resources.nodes}:ppn={ppn}"
            if options.get("pbs.properties"):
                size += f":{options['pbs.properties']}"
        lines = ["-S /bin/sh", f"-N {plain_name(resources.name, self.name_limit)}", "-m n",
                 f"-l walltime={hms(resources.walltime)}", f"-l {size}"]
        lines += qsub_flags(resources)
        if options.get("pbs.resource_list"):
            lines.append(f"-l {options['pbs.resource_list']}")
        for key, value in options.items():
            if (key.startswith("pbs.") and key not in _SPECIAL
                    and (words := flag_words(f"-{key[4:]}", value))):
                lines.append(words)
        return [f"{self.directive} {line}" for line in lines]

    @staticmethod
    def exit_file(resources: Resources) -> str | None:
        """Where the job's script leaves its exit code (None without a working directory)."""
        if not resources.workdir:
            return None
        return f"{resources.workdir}/{plain_name(resources.name)}{_EXIT_SUFFIX}"

    def script(self, command: str, resources: Resources) -> str:
        """The usual script, which leaves its exit code in a file of its working directory
        (an EXIT trap, so that a command's own ``exit`` is kept too), read when qstat has
        forgotten the job."""
        if resources.workdir:
            name = shlex.quote(plain_name(resources.name) + _EXIT_SUFFIX)
            keep = ('_swiftnb_rc=$?; echo "$_swiftnb_rc" > "$_swiftnb_exit.tmp" && '
                    'mv -f "$_swiftnb_exit.tmp" "$_swiftnb_exit"; exit "$_swiftnb_rc"')
            command = f'_swiftnb_exit="$PWD"/{name}\ntrap {shlex.quote(keep)} EXIT\n{command}'
        return super().script(command, resources)

    # -- commands ----------------------------------------------------------------------------
    async def submit(self, script: str, resources: Resources) -> str:
        result, doing = await self.submit_stdin(["qsub"], script, resources)
        if result.returncode != 0:
            raise self.refused(result, doing)
        lines = result.stdout.strip().splitlines()
        job_id = lines[-1].strip() if lines else ""
        if not _JOB_ID.match(job_id):
            raise self.refused(result, f"{doing}: no job id in qsub's answer")
        path = self.exit_file(resources)
        if path is not None:
            self._exit_files[job_id] = path
        return job_id

    async def _qstat(self, ids: Sequence[str], history: bool) -> tuple[dict[str, dict[str, str]],
                                                                        list[str], list[str]]:
        """One ``qstat -f`` (``-x`` for history): the jobs it shows, the ids it says have
        finished (PBS Pro) and the ids it does not know."""
        argv = ["qstat", "-f", *(["-x"] if history else []), *ids]
        result = await self.run(argv, timeout=self.command_timeout, doing=" ".join(argv[:3]))
        shown = parse_full_status(result.stdout)
        if result.returncode != 0 and not shown and not gone_only(result.stderr, _GONE_WORDS):
            raise self._no_answer(result, "qstat -f")
        finished: list[str] = []
        unknown: list[str] = []
        for line in result.stderr.splitlines():
            for job_id in ids:
                if _mentions(line, job_id):
                    low = line.lower()
                    (finished if any(w in low for w in _FINISHED_WORDS) else unknown).append(job_id)
        found: dict[str, dict[str, str]] = {}
        for shown_id, attrs in shown.items():
            for job_id in ids:
                if _same_job(shown_id, job_id):
                    found[job_id] = attrs
        return found, finished, unknown

    def _no_answer(self, result: CommandResult, doing: str) -> ProviderError:
        words = result.stderr.strip() or result.stdout.strip() or f"exit code {result.returncode}"
        return ProviderError(FailureKind.CONNECTION_LOST, f"{self.where()}: {doing}: {words}")

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        if not ids:
            return {}
        found, finished, unknown = await self._qstat(ids, history=False)
        if finished:
            more, _, gone = await self._qstat(finished, history=True)
            found.update(more)
            unknown += gone
        out = {job_id: self._status_of(job_id, attrs) for job_id, attrs in found.items()}
        forgotten = [i for i in ids if i not in out and i in self._exit_files]
        if forgotten:
            out.update(await self._from_exit_files(forgotten))
        for job_id, job in out.items():
            if job.state.terminal:
                self._exit_files.pop(job_id, None)
                self.canceled.discard(job_id)
        return out

    def _status_of(self, job_id: str, attrs: Mapping[str, str]) -> JobStatus:
        letter = attrs.get("job_state", "?").strip()[:1]
        if letter not in _ENDED:
            state = PBS_STATES.get(letter, JobState.UNKNOWN)
            comment = attrs.get("comment", "")
            reason = "" if state is JobState.RUNNING else f"job_state {letter}" + (
                f" ({comment})" if comment else "")
            return JobStatus(state, None, reason)
        code_text = attrs.get("exit_status", attrs.get("Exit_status", "")).strip()
        code = int(code_text) if code_text.lstrip("-").isdigit() else None
        used = _seconds(attrs.get("resources_used.walltime"))
        limit = _seconds(attrs.get("Resource_List.walltime"))
        return self._ended(job_id, code, used, limit)

    def _ended(self, job_id: str, code: int | None, used: int | None = None,
               limit: int | None = None) -> JobStatus:
        shell_code = code - 128 if code is not None and code > 256 else code
        words = f"exit_status {code}" if code is not None else "no exit status"
        if job_id in self.canceled:
            return JobStatus(JobState.CANCELED, shell_code, f"cancelled ({words})")
        if code in _WALLTIME_CODES:
            return JobStatus(JobState.TIMEOUT, None, f"killed at its walltime ({words}: "
                             f"{_WALLTIME_CODES[code]})")
        signalled = code is not None and code > 128
        if signalled and used is not None and limit is not None and used >= limit:
            return JobStatus(JobState.TIMEOUT, shell_code,
                             f"killed at its walltime {hms(limit)} ({words})")
        if code is None:
            return JobStatus(JobState.CANCELED, None, "ended without running (deleted?)")
        if code == _DELETED:
            return JobStatus(JobState.CANCELED, shell_code, f"deleted while running ({words})")
        if code == 0:
            return JobStatus(JobState.COMPLETED, 0)
        if code < 0:
            return JobStatus(JobState.FAILED, None, f"the PBS server could not run it ({words})")
        return JobStatus(JobState.FAILED, shell_code, words)

    async def _from_exit_files(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        """Jobs qstat forgot, from the exit codes their scripts left (one command)."""
        paths = {self._exit_files[i]: i for i in ids}
        result = await self.run(["sh", "-c", 'for f do [ -r "$f" ] && printf "%s\\t%s\\n" '
                                 '"$f" "$(cat "$f")"; done; true', "sh", *paths],
                                timeout=self.command_timeout, doing="reading exit-code files")
        out: dict[str, JobStatus] = {}
        for line in result.stdout.splitlines():
            path, _, code = line.rpartition("\t")
            job_id = paths.get(path)
            if job_id is not None and code.strip().lstrip("-").isdigit():
                out[job_id] = self._ended(job_id, int(code.strip()))
        return out

    async def cancel(self, ids: Sequence[str]) -> None:
        await self.cancel_all("qdel", ids)
