"""The wrapper run alone, blocking: ``python3 -I _swiftremote.pyz wrap < spec.json``
prints the result (a batch job's process, a worker's), or :func:`run_job` from Python."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

from .job import prepare
from .processes import become_subreaper, hold_subreaper, release_subreaper
from .sequence import parent_death_kill
from .spec import JobResult, JobSpec


def run_job(spec: JobSpec, alone: bool = False) -> JobResult:
    """Run one job to its end, blocking; the result dict (``ok``, ``exit_code``, ``message``...).
    ``alone``: this process exists for this job (any orphan it adopts is the job's).
    This process is the subreaper while the job runs (for good when ``alone``)."""
    if alone:
        become_subreaper()
    hold_subreaper()
    try:
        return _run_held(spec, alone)
    finally:
        release_subreaper()


def _run_held(spec: JobSpec, alone: bool) -> JobResult:
    job = prepare(spec)
    if job.failure is not None:
        return job.failure
    job.alone = alone
    try:
        proc = subprocess.Popen(job.argv, preexec_fn=parent_death_kill(), **job.popen_kwargs())
    except OSError as exc:
        return job.start_failed(exc)
    job.started(proc.pid)
    job.close_streams()
    walltime = spec.get("walltime")
    try:
        returncode = proc.wait(timeout=walltime if walltime else None)
    except subprocess.TimeoutExpired:
        job.kill(proc.pid)
        returncode = proc.wait()
        return job.finish(returncode, timed_out=True)
    except BaseException:
        job.kill(proc.pid)
        proc.wait()
        job.finish(None, canceled=True)
        raise
    return job.finish(returncode)


def _exit_on_signals() -> None:
    """A wrapper run on its own (a batch job's) that SIGTERM or SIGHUP reaches (scancel,
    qdel, a lost session) ends its app's processes before it exits: run_job's cleanup."""
    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, stop)



def main() -> int:
    """Run the spec read from stdin; print its result (one JSON line)."""
    _exit_on_signals()
    print(json.dumps(run_job(json.load(sys.stdin), alone=True)))
    return 0
