"""The job spec and the result: what crosses a socket, an SSH channel or a batch job's
files between the client and the wrapper, as plain JSON.  TypedDicts (standard library
only) so that both sides read the same names, checked by mypy.  Also the failure kinds
and the one layout of job directories (:func:`job_dir`)."""

from __future__ import annotations

import errno
import os
from typing import Any, TypedDict


class CommandSpec(TypedDict):
    """One command after the first of an app body of several (Swift/K trunk)."""

    tr: str
    executable: str
    args: list[str]
    stdin: str | None
    stdout: str | None
    stderr: str | None
    source: str | None


class _SpecRequired(TypedDict):
    jobid: str
    tr: str
    base_dir: str
    work_dir: str
    site_run: str


class JobSpec(_SpecRequired, total=False):
    """One app invocation (:func:`spec_from_task` makes it; a hand-made one may leave out
    what is not required).  Paths are as the site sees them: a remote site's provider
    rewrites ``base_dir`` and ``work_dir`` (``swiftnb.execution.staging``)."""

    executable: str
    args: list[str]
    site: str
    attempt: int
    stdin: str | None
    stdout: str | None
    stderr: str | None
    inputs: list[str]
    outputs: list[str]
    env: dict[str, str]
    keep: bool
    walltime: float | None
    source: str | None
    scratch: str | None
    output_globs: list[str]
    #: ``{path: [POLICY, *args]}`` (see "Collective data management")
    cdm: dict[str, list[str]]
    digest_outputs: bool
    #: shared-fs staging: copy inputs into the job directory, never link them
    copy_inputs: bool
    commands: list[CommandSpec]
    #: a coaster worker's answer carries outputs up to this size (bytes) inline
    inline_limit: int


class _ResultRequired(TypedDict):
    ok: bool
    exit_code: int | None
    message: str
    cause: str
    stdout_tail: str
    stderr_tail: str
    site: str
    directory: str
    retryable: bool
    canceled: bool
    kind: str | None
    staged_out: list[str]
    output_digests: dict[str, str]
    cdm_actions: list[str]


class JobResult(_ResultRequired, total=False):
    """How a job ended (see the package docstring for each key)."""

    #: what env.SWIFT_EXTRA_INFO's command printed (Guide 11.4)
    extra_info: str
    #: small outputs, base64, keyed by their ``staged_out`` path (a worker adds them)
    inline: dict[str, str]


# -- failure kinds ----------------------------------------------------------------------
# Every result dict carries ``kind``: None when ok, else one of these strings.  Retries,
# site scores and messages read the kind, never the message text.  The client maps them to
# ``swiftnb.engine.task.FailureKind`` (same values); this module cannot import it.

#: the app's fault: a non-zero exit, or declared outputs missing after exit 0
KIND_APP_EXIT = "app-exit"
#: no such program, no executable bit, a directory, exec refused: never retried
KIND_NOT_EXECUTABLE = "not-executable"
#: an input missing, a link or copy failed, the job directory not creatable
KIND_STAGE_IN = "stage-in"
#: an output could not be moved to its place
KIND_STAGE_OUT = "stage-out"
#: killed for running past its walltime
KIND_WALLTIME = "walltime"
#: withdrawn (the run stopped, a replica won, the service canceled it)
KIND_CANCELED = "canceled"
#: the machinery running the wrapper failed (a coaster worker bug, fork refused)
KIND_WORKER = "worker"

KINDS = (KIND_APP_EXIT, KIND_NOT_EXECUTABLE, KIND_STAGE_IN, KIND_STAGE_OUT, KIND_WALLTIME,
         KIND_CANCELED, KIND_WORKER)

#: kinds another attempt cannot cure (the client's FailureKind.retryable agrees)
_NOT_RETRYABLE = frozenset({KIND_NOT_EXECUTABLE, KIND_CANCELED})

#: ``exec`` errors that say the program cannot run here; others (EAGAIN, ENOMEM: the
#: node refused a fork) are the site's trouble, not the app's, and worth a retry
_EXEC_ERRNOS = frozenset({errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.EISDIR,
                          errno.ENOTDIR, errno.ELOOP, errno.ETXTBSY, errno.EPERM,
                          errno.ENAMETOOLONG})


def failure_result(kind: str, cause: str, *, site: str = "local") -> JobResult:
    """A result dict for a failure outside any job directory (a worker's own errors,
    a task withdrawn before it started): the keys of :meth:`Job._result`, the cause as
    the whole message (there is no app, directory or stream to tell of)."""
    return {
        "ok": False,
        "exit_code": None,
        "message": cause,
        "cause": cause,
        "stdout_tail": "",
        "stderr_tail": "",
        "site": site,
        "directory": "",
        "retryable": kind not in _NOT_RETRYABLE,
        "canceled": kind == KIND_CANCELED,
        "kind": kind,
        "staged_out": [],
        "output_digests": {},
        "cdm_actions": [],
    }


def job_dir(site_run: str, jobid: str, attempt: int = 0) -> str:
    """The one layout of job directories (the wrapper makes them, providers name them):
    relative to the site work directory, ``SITE_RUN/jobs/X/JOBID`` (X its first letter);
    retries get ``JOBID-ATTEMPT`` so that every attempt has a workspace of its own."""
    name = jobid if not attempt else f"{jobid}-{attempt}"
    return f"{site_run}/jobs/{jobid[:1] or '_'}/{name}"


def job_dir_relative(spec: JobSpec) -> str:
    """The job directory of a spec (see :func:`job_dir`)."""
    return job_dir(spec["site_run"], spec["jobid"], spec.get("attempt") or 0)


def spec_from_task(
    task: Any,
    *,
    site: str = "local",
    work_dir: str | None = None,
    site_run: str | None = None,
    keep: bool = False,
    walltime: float | None = None,
    scratch: str | None = None,
    cdm: dict[str, list[str]] | None = None,
) -> JobSpec:
    """The JSON-able job spec of a ``swiftnb.engine.task.Task`` (duck-typed: no import).

    ``work_dir`` is the site workDirectory (relative = relative to the task's base
    directory; default ``swiftwork``); ``site_run`` is ``SCRIPT-RUNID`` (default: the
    name of the run directory).  ``walltime`` (seconds) kills the app when exceeded.
    ``scratch`` (the site's node-local directory) puts job directories there and copies
    inputs instead of linking them, as ``_swiftwrap`` did.  ``cdm`` is
    ``{path: [POLICY, *args]}`` for the inputs and outputs a CDM rule covers
    (``swiftnb.execution.cdm.CdmPolicy.directives``); None or empty: default staging.
    """
    base_dir = os.path.abspath(task.base_dir)
    wd = work_dir or "swiftwork"
    if not os.path.isabs(wd):
        wd = os.path.join(base_dir, wd)
    spec: JobSpec = {
        "jobid": task.jobid,
        "tr": task.tr,
        "executable": task.executable or task.tr,
        "args": [str(a) for a in task.args],
        "base_dir": base_dir,
        "work_dir": wd,
        "site_run": site_run or os.path.basename(os.path.normpath(task.run_dir)) or "run",
        "site": site,
        "attempt": task.attempt,
        "stdin": task.stdin,
        "stdout": task.stdout,
        "stderr": task.stderr,
        "inputs": list(task.inputs),
        "outputs": list(task.outputs),
        "env": dict(task.env),
        "keep": bool(keep),
        "walltime": walltime,
        "source": task.source,
        "scratch": scratch,
        "output_globs": list(task.output_globs),
        "cdm": {str(path): [str(a) for a in entry] for path, entry in (cdm or {}).items()},
        "digest_outputs": bool(task.digest_outputs),
    }
    if task.more_commands:  # an app body of several commands: the ones after the first
        spec["commands"] = [{"tr": c.tr, "executable": c.executable or c.tr,
                             "args": [str(a) for a in c.args], "stdin": c.stdin,
                             "stdout": c.stdout, "stderr": c.stderr, "source": c.source}
                            for c in task.more_commands]
    return spec
