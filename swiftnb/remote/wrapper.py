"""The job wrapper's public face (Swift's ``_swiftwrap``): the names the client side and
the coaster worker use, from the modules of :mod:`swiftnb.remote.wrap`, where it is
described.  Blocking callers use :func:`run_job`; an asyncio caller uses :func:`prepare`,
starts the app itself (``job.start(environment)``, or Popen with ``job.popen_kwargs()``)
and calls ``job.finish(returncode)``."""

from __future__ import annotations

from .wrap.digests import directory_digest, file_digest, output_digest
from .wrap.job import Job, prepare
from .wrap.main import run_job
from .wrap.names import PARENT, ROOT, glob_files, in_job, job_args, job_name
from .wrap.processes import MARK_VAR, become_subreaper, kill_group, kill_marked
from .wrap.report import TAIL_CHARS, format_arguments, printable_tail
from .wrap.spares import SpareDirs
from .wrap.spec import (
    KIND_APP_EXIT,
    KIND_CANCELED,
    KIND_NOT_EXECUTABLE,
    KIND_STAGE_IN,
    KIND_STAGE_OUT,
    KIND_WALLTIME,
    KIND_WORKER,
    KINDS,
    CommandSpec,
    JobResult,
    JobSpec,
    failure_result,
    job_dir,
    job_dir_relative,
    spec_from_task,
)
from .wrap.staging import copies_much

__all__ = [
    "KIND_APP_EXIT",
    "KIND_NOT_EXECUTABLE",
    "KIND_STAGE_IN",
    "KIND_STAGE_OUT",
    "KIND_WALLTIME",
    "KIND_CANCELED",
    "KIND_WORKER",
    "KINDS",
    "CommandSpec",
    "JobResult",
    "JobSpec",
    "failure_result",
    "Job",
    "prepare",
    "run_job",
    "copies_much",
    "spec_from_task",
    "job_dir",
    "job_dir_relative",
    "job_name",
    "job_args",
    "in_job",
    "glob_files",
    "PARENT",
    "ROOT",
    "format_arguments",
    "printable_tail",
    "TAIL_CHARS",
    "SpareDirs",
    "become_subreaper",
    "kill_group",
    "kill_marked",
    "MARK_VAR",
    "file_digest",
    "output_digest",
    "directory_digest",
]
