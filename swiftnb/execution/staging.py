"""Staging: moving a task's files between this machine and the site where it runs.

docs/design.md ("Remote execution") makes staging one layer that providers call: the ssh
provider, the batch provider (one LRM job per task) and coaster blocks on clusters all
hold a :class:`Stager` for their site and call it around each attempt::

    stager = Stager(shell, site="cluster", host="login.example.org", mode="swift", ...)
    stager.site_dir = "/scratch/me/swiftwork/wf-run001"   # once known (after the probe)
    spec, base = await stager.stage_in(task, attempt)     # inputs there, the job's spec
    ...                                                   # run ``spec`` with the wrapper
    result = await stager.stage_out(task, spec, base, result, attempt)  # outputs back
    await stager.forget(base)                             # provider staging: job dir gone

The spec is the wrapper's job description (``wrapper.spec_from_task``) with remote paths:
nothing below the scheduler assumes that the site shares this machine's file system.

Staging modes (the site's ``staging``, else the global one):

* ``swift`` (default): each input is copied once per run into ``shared/<path>`` (the
  site's cache), the wrapper links it into the job directory, the outputs are moved to
  ``shared/`` and copied back.  An absolute path ``/d/f`` is staged as
  ``shared/__root__/d/f`` and the app's arguments name it so.
* ``local``, ``service-local`` (provider staging): the inputs are copied into a
  directory of the job's own (``stage/JOBID``), and nothing is shared between jobs.
* ``direct``: nothing is copied: the host sees this machine's paths (a shared file
  system); the wrapper links them in.
* ``shared-fs``: likewise on a shared file system, but the wrapper copies the inputs
  into the job directory.
* ``wrapper``: the wrapper stages from the shared file system into the site's
  ``scratch``, which it needs (``missing required site property: 'scratch'``).

CDM rules (``-cdm.file fs.data``) apply in every mode: an input the policy marks
DIRECT or LOCAL is not staged (the wrapper finds it where the rule says), an
output marked DIRECT or GATHER stays on the host.

Every copy holds one of the run's fileTransfersThrottle slots (and each remote mkdir a
fileOperationsThrottle slot) through the attempt's
:class:`~swiftnb.scheduling.provider.StatusReporter`, and is logged as Swift's
FILE_STAGE_IN/OUT_START and _END lines.
"""

from __future__ import annotations

import asyncio
import base64
import os
from typing import TYPE_CHECKING, Any

from swiftnb.engine.task import Command, FailureKind, Task
from swiftnb.events import EventBus
from swiftnb.remote import wrapper
from swiftnb.atomicfile import write_atomically
from swiftnb.execution.shell import Shell, ShellError, ShellFailure
from swiftnb.scheduling.provider import ProviderError, StatusReporter

if TYPE_CHECKING:
    from swiftnb.execution.cdm import CdmPolicy

__all__ = ["Stager", "STAGING_MODES", "ROOT_PREFIX", "INLINE_LIMIT", "remote_relpath",
           "local_path", "shell_failure_kind"]

STAGING_MODES = ("swift", "local", "service-local", "direct", "shared-fs", "wrapper")
#: Where an absolute path /d/f lives under shared/ (swift and provider staging): the
#: wrapper's name for it in the job directory.
ROOT_PREFIX = wrapper.ROOT
#: outputs up to this size come back inside the wrapper's result, not as a file copy
INLINE_LIMIT = 64 * 1024


def shell_failure_kind(error: ShellError) -> FailureKind:
    """The failure kind of a shell operation that failed (not of the app)."""
    if error.kind is ShellFailure.TIMEOUT:
        return FailureKind.TIMEOUT
    if error.kind in (ShellFailure.UNREACHABLE, ShellFailure.CONNECTION_LOST):
        return FailureKind.CONNECTION_LOST
    return FailureKind.SUBMIT_REFUSED  # host key, authentication, config: the site refuses


def remote_relpath(path: str) -> str:
    """Where a mapped path lives under the remote base directory: its name in the job
    directory (``wrapper.job_name``: ``..`` as Swift's ``__parent__``, absolute paths
    under ``__root__``)."""
    return wrapper.job_name(path)


def _streams(task: Task) -> list[str]:
    """The redirections of every command of the task (several commands: each has its own)."""
    commands: list[Task | Command] = [task, *task.more_commands]
    return [p for c in commands for p in (c.stdin, c.stdout, c.stderr) if p]


def local_path(base_dir: str, rel: str) -> str:
    """The local path of a path relative to the remote base directory."""
    if rel == ROOT_PREFIX or rel.startswith(ROOT_PREFIX + "/"):
        return rel[len(ROOT_PREFIX):]
    parts = [".." if part == wrapper.PARENT else part for part in rel.split("/")]
    return os.path.normpath(os.path.join(base_dir, *parts))


class Stager:
    """Stages one site's tasks through a shell (see the module docstring).

    ``site`` and ``host`` name the site and its machine in messages and FILE_STAGE
    events; ``provider`` is the events' ``provider=`` field.  ``site_dir`` (the site run
    directory ``WORKDIR/SCRIPT-RUNID`` on the host, absolute) must be set before the
    first :meth:`stage_in`.  ``wrapper_walltime`` says whether the wrapper kills an app
    at its walltime (False where the batch system does it for the whole job).
    """

    def __init__(self, shell: Shell, *, site: str, host: str, mode: str = "swift",
                 scratch: str | None = None, cdm: CdmPolicy | None = None, keep: bool = False,
                 bus: EventBus | None = None, site_run: str = "run", provider: str = "ssh",
                 wrapper_walltime: bool = True) -> None:
        if mode not in STAGING_MODES:
            raise ValueError(f"site {site}: unknown staging mode {mode!r} "
                             f"(one of {', '.join(STAGING_MODES)})")
        if mode == "wrapper" and not scratch:
            raise ValueError(f"{site}: missing required site property: 'scratch' "
                             "(wrapper staging copies inputs into the site's scratch directory)")
        self.shell = shell
        self.site = site
        self.host = host
        self.mode = mode
        self.scratch = scratch
        self.cdm = cdm
        self.keep = keep
        self.bus = bus if bus is not None else EventBus()
        self.site_run = site_run
        self.provider = provider
        self.wrapper_walltime = wrapper_walltime
        self.site_dir: str | None = None
        self._staged: dict[str, tuple[float, int]] = {}   # shared/ cache: path -> (mtime, size)
        self._uploading: dict[str, asyncio.Future[None]] = {}  # path -> its copy under way
        self._dirs: set[str] = set()                       # remote directories made
        #: local directories outputs came back to (a stat and a mkdir each, once)
        self._local_dirs: set[str] = set()

    # -- what the mode means ------------------------------------------------------------
    @property
    def copies(self) -> bool:
        """Whether files are copied (swift and provider staging), not found in place."""
        return self.mode in ("swift", "local", "service-local")

    @property
    def per_job(self) -> bool:
        """Whether each job has a staging directory of its own (provider staging)."""
        return self.mode in ("local", "service-local")

    def _where(self) -> str:
        return f"site {self.site} ({self.shell.name})"

    def base_for(self, task: Task) -> str:
        """The remote directory the job's relative paths resolve in."""
        assert self.site_dir is not None, "Stager.site_dir is set once the site is prepared"
        if self.mode == "swift":
            return f"{self.site_dir}/shared"
        if self.per_job:
            name = task.jobid if not task.attempt else f"{task.jobid}-{task.attempt}"
            return f"{self.site_dir}/stage/{name}"
        return os.path.abspath(task.base_dir)  # the shared file system's own path

    # -- the job's spec -----------------------------------------------------------------
    def spec(self, task: Task, base: str) -> wrapper.JobSpec:
        """The wrapper's job spec of ``task`` with its files under ``base`` on the host."""
        cdm = self.cdm.directives(task.inputs, task.outputs) if self.cdm is not None else None
        spec = wrapper.spec_from_task(
            task, site=self.site, work_dir=os.path.dirname(self.site_dir or ""),
            site_run=self.site_run, keep=self.keep,
            walltime=(task.maxwalltime or None) if self.wrapper_walltime else None,
            scratch=self.scratch, cdm=cdm or None)
        spec["base_dir"] = base
        if self.copies:
            spec["inline_limit"] = INLINE_LIMIT
        if self.mode == "shared-fs":
            spec["copy_inputs"] = True
        if not self.copies:
            return spec
        # absolute paths are staged under __root__ and ../ under __parent__: the job and
        # its arguments use those names, in whatever word they stand (wrapper.job_args)
        moved = {p: remote_relpath(p) for p in (*task.inputs, *task.outputs, *_streams(task))
                 if p and remote_relpath(p) != p}
        if moved:
            for key in ("inputs", "outputs"):
                spec[key] = [moved.get(p, p) for p in spec[key]]
            for command in (spec, *spec.get("commands", ())):
                for key in ("stdin", "stdout", "stderr"):
                    if command[key] in moved:
                        command[key] = moved[command[key]]
                command["args"] = wrapper.job_args(command["args"], moved)
            if cdm:
                spec["cdm"] = {moved.get(p, p): rule for p, rule in cdm.items()}
        return spec

    def _skipped(self, path: str, kinds: tuple[str, ...]) -> bool:
        """Whether the CDM policy takes ``path`` out of staging."""
        if self.cdm is None:
            return False
        rule = self.cdm.rule_for(path)
        return rule is not None and rule.kind.name in kinds

    # -- in -----------------------------------------------------------------------------
    async def stage_in(self, task: Task, attempt: StatusReporter) -> tuple[wrapper.JobSpec, str]:
        """Put the task's inputs in place on the host; returns the job's spec and its base
        directory there.  ProviderError(STAGE_IN, or the connection's kind) names the
        file, the site and the host."""
        base = self.base_for(task)
        spec = self.spec(task, base)
        if not self.copies:
            return spec, base
        names = [p for p in (*task.inputs, task.stdin or "",
                             *(c.stdin or "" for c in task.more_commands)) if p]
        for path in dict.fromkeys(names):
            if self._skipped(path, ("DIRECT", "LOCAL")):  # BROADCAST copies from shared/
                continue
            source = path if os.path.isabs(path) else os.path.join(task.base_dir, path)
            rel = remote_relpath(path)
            try:
                if os.path.isdir(source):
                    for root, _dirs, files in os.walk(source):
                        for name in files:
                            full = os.path.join(root, name)
                            await self._put(full, os.path.join(rel, os.path.relpath(full, source)),
                                            base, attempt, task.jobid)
                elif os.path.exists(source):
                    await self._put(source, rel, base, attempt, task.jobid)
                # a missing input: the wrapper says so ("Could not locate input file")
            except ShellError as exc:
                raise ProviderError(
                    FailureKind.STAGE_IN if exc.kind is ShellFailure.REMOTE
                    else shell_failure_kind(exc),
                    f"{self._where()}: staging in {path}: {exc}") from None
        return spec, base

    def _stage_event(self, kind: str, jobid: str, src: str, src_host: str, dest: str,
                     dest_host: str, *, end: bool = False) -> None:
        """Swift's FILE_STAGE_IN/OUT_START and _END lines, around each copy while it
        holds its fileTransfersThrottle slot (so the log shows the throttle at work)."""
        self.bus.emit(f"{kind}_END" if end else f"{kind}_START", {
            "jobid": jobid, "srchost": src_host, "srcdir": os.path.dirname(src),
            "srcname": os.path.basename(src), "desthost": dest_host,
            "destdir": os.path.dirname(dest), "provider": self.provider})

    async def _put(self, source: str, rel: str, base: str, attempt: StatusReporter,
                   jobid: str) -> None:
        """Copy one input into place on the host, once per version: jobs that need the
        same file while it is on its way wait for that one copy (a second copy of the
        same path would truncate the file under the first job's app)."""
        st = os.stat(source)
        key = f"{base}/{rel}"
        version = (st.st_mtime, st.st_size)
        while True:
            if self._staged.get(key) == version:
                return  # already in the site's cache this run
            pending = self._uploading.get(key)
            if pending is None:
                break
            await asyncio.shield(pending)  # its failure is its own job's; look again
        done = asyncio.get_running_loop().create_future()
        self._uploading[key] = done
        try:
            directory = os.path.dirname(key)
            if directory not in self._dirs:
                async with attempt.file_operation():
                    await self.shell.makedirs(directory)
                self._dirs.add(directory)
            async with attempt.file_transfer():
                self._stage_event("FILE_STAGE_IN", jobid, source, "localhost", key, self.host)
                await self.shell.put(source, key)
                self._stage_event("FILE_STAGE_IN", jobid, source, "localhost", key, self.host,
                                  end=True)
            self._staged[key] = version
        finally:
            del self._uploading[key]
            done.set_result(None)

    # -- out ----------------------------------------------------------------------------
    async def stage_out(self, task: Task, spec: wrapper.JobSpec, base: str,
                        result: dict[str, Any], attempt: StatusReporter) -> dict[str, Any]:
        """Bring a successful job's outputs back (the wrapper's ``staged_out`` list, the
        small ones from its ``inline`` field); returns the result, made a STAGE_OUT
        failure (or the connection's kind) if a copy failed."""
        if not self.copies:
            return result
        inline = result.get("inline") or {}
        try:
            for rel in result.get("staged_out") or ():
                if self._skipped(local_path(".", rel), ("DIRECT", "GATHER")):
                    continue
                target = local_path(task.base_dir, rel)
                parent = os.path.dirname(target)
                if parent and parent not in self._local_dirs:
                    os.makedirs(parent, exist_ok=True)
                    self._local_dirs.add(parent)
                async with attempt.file_transfer():
                    remote = f"{base}/{rel}"
                    self._stage_event("FILE_STAGE_OUT", task.jobid, remote, self.host, target,
                                      "localhost")
                    if rel in inline:  # it came back inside the result
                        write_atomically(target, base64.b64decode(inline[rel]))
                    else:
                        await self.shell.get(remote, target)
                    self._stage_event("FILE_STAGE_OUT", task.jobid, remote, self.host, target,
                                      "localhost", end=True)
                self._staged.pop(f"{base}/{rel}", None)  # a new version on the host
        except (ShellError, OSError) as exc:
            self._local_dirs.clear()  # one may have been removed: a retry makes it again
            kind = (shell_failure_kind(exc) if isinstance(exc, ShellError)
                    and exc.kind is not ShellFailure.REMOTE else FailureKind.STAGE_OUT)
            cause = f"Could not stage out the outputs of {task.jobid} from {self.shell.name}: {exc}"
            return {**result, "ok": False, "kind": kind.value, "cause": cause,
                    "message": f"Exception in {task.tr}:\n    Host: {self.site}\n"
                               f"Caused by: {cause}"}
        digests = result.get("output_digests") or {}
        if digests:  # keyed as the task names them (absolute ones were staged as __root__/...)
            result = {**result, "output_digests": {
                p: digests[remote_relpath(p)] for p in task.outputs if remote_relpath(p) in digests}}
        return result

    async def forget(self, base: str) -> None:
        """After an attempt: provider staging's job directory goes once its outputs are
        back (unless keepSiteDir); other modes keep their cache for the next jobs."""
        if not self.per_job or self.keep:
            return
        self._staged = {k: v for k, v in self._staged.items() if not k.startswith(base + "/")}
        try:
            await self.shell.remove_tree(base)
        except ShellError:
            pass

    def reset(self) -> None:
        """Forget the site directory and what was copied there (the run's end)."""
        self.site_dir = None
        self._staged.clear()
        self._dirs.clear()
        self._local_dirs.clear()
