"""``local`` as a batch system: a job is a background process on the shell's machine.

Swift's ``ssh-cl:local`` started coaster workers as plain processes on the host it logged
in to (a login node or a workstation with no batch system).  This adapter gives that host
the LRM contract, so the block provider needs nothing special for it: ``submit`` starts
the script in a session of its own (it outlives the SSH channel that started it, and
``cancel`` ends its whole session), its walltime is enforced with ``timeout``, and its
exit status lands in a file beside the script, which ``status`` reads for all jobs at once.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import ClassVar

from swiftnb.execution.batch.lrm import LRM, JobState, JobStatus, Resources, register_lrm
from swiftnb.execution.shell import Shell

__all__ = ["ForkLRM"]

#: timeout(1)'s exit status when it stopped the command at its walltime
_TIMED_OUT = 124


@register_lrm
class ForkLRM(LRM):
    """Background processes on the shell's machine (``ssh-cl:local``)."""

    name: ClassVar[str] = "local"
    aliases: ClassVar[tuple[str, ...]] = ("fork",)
    status_command: ClassVar[str] = "ps"

    def __init__(self, shell: Shell, *, site: str = "") -> None:
        super().__init__(shell, site=site)
        self._paths: dict[str, str] = {}   # job id (its session's pid) -> its script's path
        self._canceled: set[str] = set()

    def directives(self, resources: Resources) -> list[str]:
        return []

    def script(self, command: str, resources: Resources) -> str:
        # no directives: the walltime is submit()'s timeout(1); the rest is the usual script
        return super().script(command, resources)

    async def submit(self, script: str, resources: Resources) -> str:
        workdir = resources.workdir or "."
        path = f"{workdir}/{resources.name}.sh"
        await self.write_file(path, script, mode="700")
        out = resources.stdout or f"{path}.stdout"
        err = resources.stderr or f"{path}.stderr"
        q = shlex.quote
        inner = (f"timeout -s TERM -k 5 {int(resources.walltime)} sh {q(path)} "
                 f">{q(out)} 2>{q(err)} </dev/null; echo $? >{q(path + '.exit.tmp')} && "
                 f"mv {q(path + '.exit.tmp')} {q(path + '.exit')}")
        result = await self.run(["sh", "-c", f"setsid sh -c {q(inner)} >/dev/null 2>&1 "
                                 "</dev/null & echo $!"], doing="starting a job")
        job_id = result.stdout.strip()
        if result.returncode != 0 or not job_id.isdigit():
            raise self.refused(result, "starting a job")
        self._paths[job_id] = path
        return job_id

    async def status(self, ids: Sequence[str]) -> dict[str, JobStatus]:
        known = [i for i in ids if i in self._paths]
        if not known:
            return {}
        q = shlex.quote
        # alive first: the exit file is written before the session's leader ends (and a
        # zombie is not alive: an init that reaps slowly keeps kill -0 succeeding)
        probe = "; ".join(
            f'_s=$(ps -o stat= -p {i} 2>/dev/null); case "$_s" in ""|Z*) '
            f"if [ -f {q(self._paths[i] + '.exit')} ]; then echo {i} done "
            f"$(cat {q(self._paths[i] + '.exit')}); else echo {i} gone; fi;; "
            f"*) echo {i} running;; esac" for i in known)
        result = await self.run(["sh", "-c", probe], doing="asking the jobs' states")
        out: dict[str, JobStatus] = {}
        for line in result.stdout.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            job_id, word = parts[0], parts[1]
            if word == "running":
                out[job_id] = JobStatus(JobState.RUNNING)
            elif word == "done":
                code = int(parts[2]) if len(parts) > 2 and parts[2].lstrip("-").isdigit() else None
                if code == _TIMED_OUT:
                    out[job_id] = JobStatus(JobState.TIMEOUT, code, "killed at its walltime")
                elif code == 0:
                    out[job_id] = JobStatus(JobState.COMPLETED, 0)
                else:
                    out[job_id] = JobStatus(JobState.FAILED, code, f"exit code {code}")
            elif job_id in self._canceled:
                out[job_id] = JobStatus(JobState.CANCELED, None, "cancelled")
            else:
                out[job_id] = JobStatus(JobState.LOST, None, "the process is gone and left no "
                                        "exit status (killed?)")
        return out

    async def cancel(self, ids: Sequence[str]) -> None:
        known = [i for i in ids if i.isdigit()]
        self._canceled.update(known)
        if known:
            # the whole session: timeout(1) puts the script in a process group of its own
            await self.run(["sh", "-c", " ".join(f"pkill -TERM -s {i};" for i in known)
                            + " true"], doing="cancelling jobs")
