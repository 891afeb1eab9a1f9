"""A job's state: its directory, where each mapped file is in it, its result, and its
clean-up.  The base of the wrapper's Job (staging.py prepares, job.py runs and ends)."""

from __future__ import annotations

import os
import shutil
from typing import TypeVar

from .cdm import _CDM_INPUT, _CDM_OUTPUT, _bad_cdm_entry
from .files import _unlink
from .names import _inside, job_name
from .processes import new_mark
from .report import TAIL_CHARS, file_tail, format_arguments, printable_tail
from .sequence import PlannedCommand
from .spares import SpareDirs
from .spec import (_NOT_RETRYABLE, KIND_APP_EXIT, KIND_CANCELED, KIND_STAGE_IN, CommandSpec,
                   JobResult, JobSpec, job_dir_relative)

#: Files the wrapper writes next to (not inside) the job directory, so that an app that
#: lists its working directory sees only its own files.
_STDOUT_SUFFIX = ".stdout.txt"
_STDERR_SUFFIX = ".stderr.txt"

#: Where a mapped stdout/stderr (``stdout=@filename(f)``) is written before it is moved to
#: its mapped place: beside the job directory too.  The app never sees its own streams as
#: files, and their directories (``out/`` of ``out/f.txt``) need not be made in the job
#: directory unless another output lives there.
_MAPPED_SUFFIX = {_STDOUT_SUFFIX: ".stdout", _STDERR_SUFFIX: ".stderr"}

#: A job of several commands: the plan its sequence process reads, and the file where it
#: tells which command it is at (beside the job directory too)
_PLAN_SUFFIX = ".commands.json"
_STATUS_SUFFIX = ".command"

_Self = TypeVar("_Self", bound="JobBase")


class JobBase:
    """One invocation's state and places: where its job directory and files are, what
    it tells when it fails, and how its directory goes.  :class:`JobStaging` prepares it,
    :class:`Job` runs and ends it.

    ``failure`` is set (a result dict) when preparation itself failed (missing input,
    executable not found); the caller then returns it without starting anything.
    """

    # A job of several commands only (class defaults: a one-command job pays nothing):
    #: what the sequence process runs (see run_commands), one entry per command
    _plan: tuple[PlannedCommand, ...] = ()
    #: the file the plan is read from, and where the process tells which command it is at
    plan_path: str | None = None
    _status_path = ""
    #: each command's program, resolved
    _programs: tuple[str, ...] = ()
    #: the later command (spec form) a failure is about; None: the first
    _failed: CommandSpec | None = None
    #: the stdout and stderr whose ends a failure shows, when not the first command's
    _tails: tuple[str, str] | None = None

    def __init__(self, spec: JobSpec, spares: SpareDirs | None = None) -> None:
        self.spec = spec
        self._spares = spares
        self.base_dir: str = spec["base_dir"]
        self.work_dir: str = spec["work_dir"]
        self.rel_dir = job_dir_relative(spec)
        extra = {str(k): str(v) for k, v in (spec.get("env") or {}).items()}
        # env.SWIFT_JOBDIR_PATH (Guide 11.4): a node-local directory to copy inputs to
        scratch = spec.get("scratch") or extra.get("SWIFT_JOBDIR_PATH") or None
        # inputs are copied on a node-local scratch disk, and with shared-fs staging
        # (``copy_inputs``), where the shared file system's paths are not to be linked
        self.copy_inputs = bool(scratch) or bool(spec.get("copy_inputs"))
        self._root = scratch or self.work_dir
        self.dir = os.path.join(self._root, self.rel_dir)
        self.site = spec.get("site") or "local"
        self.keep = bool(spec.get("keep"))
        #: CDM directives, ``{path: [POLICY, *args]}`` (see "Collective data management")
        self.cdm: dict[str, list[str]] = dict(spec.get("cdm") or {})
        #: what the CDM directives did, for people ("DIRECT in/x.txt -> /gpfs/d/in/x.txt")
        self.cdm_actions: list[str] = []
        env: dict[str, str] | None = None
        if extra:
            env = dict(os.environ)
            env.update(extra)
            if extra.get("PATHPREFIX"):  # Guide 11.4: before the site's PATH, not instead
                env["PATH"] = f"{extra['PATHPREFIX']}:{env.get('PATH', os.defpath)}"
        self.env = env  # None: the child inherits this process's environment
        #: in the environment of every process of this job (see kill_marked)
        self.mark = new_mark()
        self._started = False
        self._pids_after = 0
        self.app_pid: int | None = None  # set by started(pid)
        #: whether a process the app left may still run (end_processes looks; until
        #: then, unknown: True)
        self.left_strangers = True
        self.alone = False  # the only job of this process (run_job in its own process)
        #: env.SWIFT_EXTRA_INFO's command and what it printed (Guide 11.4)
        self.extra_info_command = extra.get("SWIFT_EXTRA_INFO")
        self.extra_info: str | None = None
        #: env.SWIFT_GEN_SCRIPTS: keep the command line as run.sh in the job directory
        self.gen_script = "SWIFT_GEN_SCRIPTS" in extra
        self.executable: str = spec.get("executable") or spec["tr"]
        self.argv: list[str] = []
        #: the commands after the first (spec ``commands``), None for a one-command app
        self.more: list[CommandSpec] | None = spec.get("commands")
        self.failure: JobResult | None = None
        self.stdin_path: str | None = None
        self.stdout_path = self._stream_path(spec.get("stdout"), _STDOUT_SUFFIX)
        self.stderr_path = self._stream_path(spec.get("stderr"), _STDERR_SUFFIX)
        self._streams: list[int] = []
        self._captured: dict[str, int] = {}   # stream path -> anonymous file holding it
        self._made: list[str] = []            # directories created inside the job dir
        self._premade: set[str] = set()       # the spare's directories, not yet used
        self._own_files: list[str] = []       # wrapper capture files on disk (no memfd)
        self._links: list[str] = []           # staged inputs (symlinks or copies)
        #: root's own copies of large inputs: (place, source, size, mtime_ns) as staged
        self._guarded: list[tuple[str, str, int, int]] = []
        self._staged_out = False              # outputs (and captured streams) moved out
        self._digests: dict[str, str] = {}     # output -> "sha256:..." once moved (if asked)
        self._moved_out: list[str] = []       # base_dir-relative paths moved there, in order

    def _stream_path(self, mapped: str | None, suffix: str) -> str:
        if not mapped:
            return self.dir + suffix
        direct = self._cdm_dir(mapped, _CDM_OUTPUT)
        if direct is not None and direct[0] == "DIRECT":
            return self._cdm_target(direct[1], mapped)  # no staging: straight into DIR
        if self._output_place(mapped) is None:
            return os.path.join(self.base_dir, mapped)
        if suffix == _STDERR_SUFFIX and mapped == self.spec.get("stdout"):
            suffix = _STDOUT_SUFFIX  # stdout and stderr into one file: one capture
        return self.dir + _MAPPED_SUFFIX[suffix]

    def _captured_as(self, path: str) -> str | None:
        """Where the wrapper captured a mapped relative stream path, if it did."""
        spec = self.spec
        if path == spec.get("stdout") and self.stdout_path.startswith(self.dir + "."):
            return self.stdout_path
        if path == spec.get("stderr") and self.stderr_path.startswith(self.dir + "."):
            return self.stderr_path
        return None

    def _resolve_input(self, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(self.base_dir, path)

    def _input_slot(self, path: str) -> str | None:
        """Where an input is staged in the job directory: its :func:`job_name` there (an
        absolute ``/d/f`` as ``__root__/d/f``: the app reads a staged file, never the
        user's); None for ``.``."""
        if os.path.isabs(path):
            return os.path.join(self.dir, job_name(path))
        return _inside(self.dir, path)

    def _staged_place(self, path: str) -> str | None:
        """Where an input is in the job directory: where its CDM policy puts it, else
        :meth:`_input_slot`."""
        if self._cdm_dir(path, _CDM_INPUT) is not None:
            return self._cdm_place(path)
        return self._input_slot(path)

    def _output_place(self, path: str) -> str | None:
        """Where the app writes an output (or the wrapper a mapped stream) in the job
        directory: its :func:`job_name` there, whatever the path (an absolute one too:
        the mapped place holds the old file until the app succeeds); None for ``.``."""
        if os.path.isabs(path):
            return os.path.join(self.dir, job_name(path))
        return _inside(self.dir, path)

    def _cdm_dir(self, path: str, policies: frozenset[str]) -> tuple[str, str, list[str]] | None:
        """``(POLICY, DIR, extra)`` of the CDM directive for ``path`` when its policy is
        one of ``policies``, else None (default staging).  LOCAL's directive is
        ``[LOCAL, TOOL, DIR, *args]``: ``extra`` is then ``[TOOL, *args]``.  A malformed
        directive is None here; :func:`_bad_cdm_directive` reports it at preparation."""
        entry = self.cdm.get(path)
        if not entry or entry[0] not in policies or _bad_cdm_entry(entry) is not None:
            return None
        policy, args = str(entry[0]), [str(a) for a in entry[1:]]
        if policy == "LOCAL":
            return policy, args[1], [args[0], *args[2:]]
        return policy, args[0], args[1:]

    def _cdm_target(self, directory: str, path: str) -> str:
        """Where a policy's DIR holds ``path``: ``DIR/path``; an absolute path is joined
        as ``DIR + path`` (the Guide's ``rule .*f.txt DIRECT /``).  A relative DIR is
        relative to base_dir (the site's shared directory on a remote site)."""
        root = directory if os.path.isabs(directory) else os.path.join(self.base_dir, directory)
        return os.path.normpath(os.path.join(root, path.lstrip("/")))

    def _cdm_place(self, path: str) -> str | None:
        """Where a CDM input or output appears in the job directory: at its path, an
        absolute one without its leading ``/`` (as ``_swiftwrap`` put it: the app names
        the absolute path itself).  None when the path leaves the job directory."""
        return _inside(self.dir, path.lstrip("/") if os.path.isabs(path) else path)

    def close_streams(self) -> None:
        """Close this process's copies of the child's descriptors (not the captures)."""
        for fd in self._streams:
            try:
                os.close(fd)
            except OSError:
                pass
        self._streams = []

    def _tail_of(self, path: str) -> str:
        anon = self._captured.get(path)
        if anon is None:
            return file_tail(path)
        try:
            size = os.fstat(anon).st_size
            return printable_tail(os.pread(anon, TAIL_CHARS, max(0, size - TAIL_CHARS)))
        except OSError:
            return ""

    def _result(self, ok: bool, code: int | None, cause: str, *,
                kind: str = KIND_APP_EXIT) -> JobResult:
        """The result dict.  ``kind`` is ignored when ok (then None); ``staged_out``
        lists what was moved to base_dir (relative paths, in order) only when ok."""
        out, err = self._tails or (self.stdout_path, self.stderr_path)
        stdout_tail = "" if ok else self._tail_of(out)
        stderr_tail = "" if ok else self._tail_of(err)
        message = ""
        if not ok:
            shown = self._failed or self.spec  # the command the failure is about
            message = (
                f"Exception in {shown['tr']}:\n"
                f"    Arguments: {format_arguments(list(shown.get('args') or ()))}\n"
                f"    Host: {self.site}\n"
                f"    Directory: {self.rel_dir}\n"
                f"    stderr.txt: {stderr_tail}\n"
                f"    stdout.txt: {stdout_tail}\n"
                f"Caused by: {cause}"
            )
            source = shown.get("source") or self.spec.get("source")
            if source:  # the script position of the (failing) command
                message += f"\n\tat {source}"
        result: JobResult = {
            "ok": ok,
            "exit_code": code,
            "message": message,
            "cause": cause,
            "stdout_tail": stdout_tail,
            "stderr_tail": stderr_tail,
            "site": self.site,
            "directory": self.rel_dir,
            "retryable": ok or kind not in _NOT_RETRYABLE,
            "canceled": not ok and kind == KIND_CANCELED,
            "kind": None if ok else kind,
            "staged_out": list(self._moved_out) if ok else [],
            "output_digests": dict(self._digests) if ok else {},
            "cdm_actions": list(self.cdm_actions),
        }
        if self.extra_info is not None:
            result["extra_info"] = self.extra_info
        return result

    def _fail_early(self: _Self, cause: str, kind: str = KIND_STAGE_IN) -> _Self:
        """Record a failure before the app started (preparation: a stage-in failure
        unless said otherwise) and remove what was made."""
        self.failure = self._result(False, None, cause, kind=kind)
        self.cleanup()
        return self

    def _shape_left(self) -> frozenset[str] | None:
        """The relative paths of the directories this job made, when they and the job
        directory hold nothing else (a spare of that shape); else None."""
        made = set(self._made)
        for directory in (self.dir, *self._made):
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        if entry.path not in made:
                            return None
            except OSError:
                return None
        start = len(self.dir) + 1
        return frozenset(directory[start:] for directory in self._made)

    def cleanup(self) -> None:
        """Remove the job directory and the wrapper's stream files (unless keep)."""
        self.close_streams()
        captured, self._captured = self._captured, {}
        for path, anon in captured.items():
            if self.keep:
                try:  # keepSiteDir: leave the captured stream where a person looks for it
                    with open(path, "wb") as fh, os.fdopen(anon, "rb", closefd=False) as src:
                        src.seek(0)
                        shutil.copyfileobj(src, fh)
                except OSError:
                    pass
            try:
                os.close(anon)
            except OSError:
                pass
        if self.keep:
            return
        try:  # the usual case: outputs moved out, only what the wrapper made is left
            if not self.copy_inputs:
                for link in self._links:
                    os.unlink(link)
            spares = self._spares
            shape = self._shape_left()
            if spares is None or shape is None or not spares.give(self.dir, shape,
                                                                   self.spec["tr"]):
                for directory in reversed(self._made):
                    os.rmdir(directory)
                os.rmdir(self.dir)
        except OSError:
            shutil.rmtree(self.dir, ignore_errors=True)
        self._made = []
        self._links = []
        for path in self._own_files:
            _unlink(path)
        self._own_files = []
        if not self._staged_out:  # the streams of a failed app are not outputs
            for named in (self.spec.get("stdout"), self.spec.get("stderr")):
                left = self._captured_as(named) if named else None
                if left:
                    _unlink(left)
