"""One prepared invocation: where it runs, what it runs, and how it ends (its streams,
its processes, its outputs checked and moved to their mapped places)."""

from __future__ import annotations

import os
import shutil
import signal
from typing import Any, NamedTuple

from .digests import output_digest
from .files import _anonymous_file, _devnull, _make_regular, _move_atomic
from .jobbase import _STDERR_SUFFIX, _STDOUT_SUFFIX
from .names import glob_files, job_name
from .processes import (_APPS, MARK_VAR, end_orphans, kill_group, kill_marked, strangers,
                        with_descendants)
from .report import signal_note
from .sequence import ENDED
from .spares import SpareDirs
from .spawn import AppEnvironment, AppProcess, start_app
from .spec import (_EXEC_ERRNOS, KIND_CANCELED, KIND_NOT_EXECUTABLE, KIND_STAGE_OUT,
                   KIND_WALLTIME, KIND_WORKER, JobResult, JobSpec)
from .staging import JobStaging
from .cdm import _CDM_OUTPUT

class _Move(NamedTuple):
    """One output to move after a successful exit."""

    src: str
    dest: str
    staged: str | None   # the base_dir-relative path it lands at (``staged_out``), or None
    action: str | None   # a CDM action to report once moved ("GATHER out/a.txt"), or None
    #: ``src``'s lstat when the check read it (the stage-out need not read it again)
    st: os.stat_result | None = None



class Job(JobStaging):
    """One prepared invocation: where it runs, what it runs, and how it ends.

    ``failure`` is set (a result dict) when preparation itself failed (missing input,
    executable not found); the caller then returns it without starting anything.
    """

    def open_streams(self) -> tuple[int, int, int]:
        """Descriptors (stdin, stdout, stderr) for the child; :meth:`close_streams` closes
        them.  Plain descriptors, not file objects: this runs once per app call."""
        opened: list[int] = []
        try:
            if self.plan_path is not None:
                streams = self._sequence_streams(self.plan_path, opened)
            else:
                streams = self._command_streams(opened)
        except BaseException:
            self._streams = opened
            self.close_streams()
            raise
        self._streams = opened
        return streams

    def _command_streams(self, opened: list[int]) -> tuple[int, int, int]:
        """The one command's redirections, or the wrapper's captures."""
        if self.stdin_path:
            stdin = os.open(self.stdin_path, os.O_RDONLY | os.O_CLOEXEC)
            opened.append(stdin)
        else:
            stdin = _devnull()
        stdout = self._open_out(self.stdout_path, not self.spec.get("stdout"), opened)
        stderr = stdout if self.stderr_path == self.stdout_path else self._open_out(
            self.stderr_path, not self.spec.get("stderr"), opened)
        return stdin, stdout, stderr

    def _sequence_streams(self, plan_path: str, opened: list[int]) -> tuple[int, int, int]:
        """A job of several commands: the plan on stdin, and the wrapper's captures as
        stdout and stderr (what a command without redirections writes); each command
        opens its own redirections."""
        stdin = os.open(plan_path, os.O_RDONLY | os.O_CLOEXEC)
        opened.append(stdin)
        stdout = self._open_out(self.dir + _STDOUT_SUFFIX, True, opened)
        stderr = self._open_out(self.dir + _STDERR_SUFFIX, True, opened)
        return stdin, stdout, stderr

    def _open_out(self, path: str, wrapper_owned: bool, opened: list[int]) -> int:
        if wrapper_owned:
            anon = self._captured.get(path)
            if anon is None:
                anon = _anonymous_file(os.path.basename(path))
            if anon is not None:  # kept open: read back for the failure message
                self._captured[path] = anon
                return anon
            self._own_files.append(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        opened.append(fd)
        return fd

    def popen_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``subprocess.Popen(job.argv, **kw)`` (opens the streams).

        The child gets its own session (process group) so that cancellation can kill it,
        and the job's mark in its environment so that ``kill`` and ``finish`` find what
        it started elsewhere.
        """
        stdin, stdout, stderr = self.open_streams()
        env = dict(os.environ if self.env is None else self.env)
        env[MARK_VAR] = self.mark
        self._started = True
        return {
            "cwd": self.dir,
            "env": env,
            "stdin": stdin,
            "stdout": stdout,
            "stderr": stderr,
            "start_new_session": True,
            "close_fds": True,
        }

    def start(self, environment: AppEnvironment) -> AppProcess:
        """Start the app (what ``Popen(job.argv, **job.popen_kwargs())`` does, without
        Popen's per-call work; ``environment``: this process's, encoded once a run),
        then :meth:`started`.  OSError: it could not be started."""
        streams = self.open_streams()
        own = environment if self.env is None else AppEnvironment(self.env)
        self._started = True
        process = start_app(self.argv, self.dir, own.with_var(MARK_VAR, self.mark), streams)
        self.started(process.pid)
        return process

    def started(self, pid: int) -> None:
        """The app runs as ``pid`` (its session's leader): its orphans are found by it,
        and what it started by pids after its own (unless pids wrapped)."""
        self.app_pid = pid
        self._pids_after = pid - 1
        _APPS.add(pid)

    def kill(self, pid: int, sig: int = signal.SIGKILL) -> None:
        """Kill the app started as ``pid`` and every process it started, wherever."""
        kill_group(pid, sig)
        kill_marked(self.mark, sig, self._pids_after)

    def end_processes(self) -> None:
        """Kill what the app left running (its background children): the call is over.
        Those that kept the mark are found anywhere; those that dropped it (``env -i``)
        and outlived the app are children of this subreaper (``end_orphans``).  As this
        process is the apps' subreaper, what the app left is among its children that
        are no running app (``strangers``): none, and both searches are skipped
        (``left_strangers`` says so); else the marked ones are looked for in those
        children's trees, not among every process made since the app started."""
        if self.app_pid is not None:
            _APPS.discard(self.app_pid)
        found = strangers()
        self.left_strangers = found is None or bool(found)
        if not self.left_strangers:
            return
        if self._started:
            if found is None or self.app_pid is None:
                kill_marked(self.mark, after=self._pids_after)
            else:  # the app has ended: what it left is among the strangers
                kill_marked(self.mark, within=lambda: with_descendants(strangers() or []))
        if self.app_pid is not None:
            end_orphans(self.app_pid, self.alone)

    def finish(self, returncode: int | None, *, timed_out: bool = False, canceled: bool = False,
               cleanup: bool = True) -> JobResult:
        """Check the outcome, move outputs (on success), clean up; the result dict.

        ``cleanup=False`` leaves removing the job directory to the caller (``cleanup()``),
        e.g. on a background thread: the outputs are already in place by then.
        """
        self.close_streams()
        self.end_processes()
        try:
            if canceled:
                return self._result(False, returncode, "Canceled", kind=KIND_CANCELED)
            if timed_out:
                program = self.argv[0] if self.plan_path is None else self._ran_last()
                return self._result(
                    False, returncode,
                    f"Application {program} exceeded its walltime of "
                    f"{float(self.spec.get('walltime') or 0):g} seconds and was killed",
                    kind=KIND_WALLTIME)
            killed = self._wrapper_killed(returncode)
            if killed is not None:
                return killed
            code = returncode if returncode is None or returncode >= 0 else 128 - returncode
            if code != 0:
                program = self.argv[0] if self.plan_path is None else self._ran_last()
                return self._vanished(code) or self._result(
                    False, code, f"Application {program} failed with an "
                    f"exit code of {code}{signal_note(returncode)}")
            changed = self._changed_inputs()
            if changed:
                program = self.argv[0] if self.plan_path is None else self._ran_last()
                return self._result(
                    False, 0, f"Application {program} modified its input "
                    f"{', '.join(changed)}: inputs are read-only (the run's other calls "
                    f"read the same file)")
            missing, moves = self._check_outputs()
            if missing:
                return self._vanished(0) or self._result(
                    False, 0, "The following output files were not created by the application: "
                    + ", ".join(missing))
            try:
                for move in moves:  # all regular files before any is moved
                    dest = move.dest
                    cause = _make_regular(move.src, move.staged or dest, st=move.st)
                    if cause is not None:
                        return self._result(False, 0, cause)
                for move in moves:
                    dest = move.dest
                    _move_atomic(move.src, dest)
                    if move.staged is not None:
                        self._moved_out.append(move.staged)
                    if move.action is not None:
                        self.cdm_actions.append(f"{move.action} -> {dest}")
                self._staged_out = True
                self._digests = self._output_digests()
            except OSError as exc:
                # never lose a finished app's outputs: keep its job directory out of the
                # site directory (which the end of the run removes) and say where
                kept = self._rescue()
                where = (f"; the job directory with the outputs is kept in {kept}" if kept
                         else "")
                return self._result(False, 0, f"Could not move output "
                                    f"{os.path.relpath(dest, self.base_dir)} to {dest}: "
                                    f"{exc.strerror or exc}{where}", kind=KIND_STAGE_OUT)
            return self._result(True, 0, "")
        finally:
            if cleanup:
                self.cleanup()
            else:
                self.close_streams()

    def _output_digests(self) -> dict[str, str]:
        """The declared outputs' digests where they ended up (spec "digest_outputs"),
        keyed by the path as the spec names it; empty when not asked."""
        if not self.spec.get("digest_outputs"):
            return {}
        digests: dict[str, str] = {}
        for path in dict.fromkeys(self.spec.get("outputs") or ()):
            rule = self._cdm_dir(path, _CDM_OUTPUT)
            if rule is not None:
                where = self._cdm_target(rule[1], path)
            elif os.path.isabs(path):
                where = os.path.normpath(path)
            else:
                where = os.path.join(self.base_dir, path)
            digests[path] = output_digest(where)
        return digests

    def _vanished(self, code: int | None) -> JobResult | None:
        """The result when the run's directory or the job directory was removed while
        the app ran (its failure then is the site's, not the app's), else None."""
        for what, path in (("base directory of the run", self.base_dir),
                           ("job directory", self.dir)):
            if not os.path.isdir(path):
                return self._result(
                    False, code, f"The {what} {path} was removed while the application "
                    f"ran (it ended with exit code {code}); its outputs are lost",
                    kind=KIND_STAGE_OUT)
        return None

    def _check_outputs(self) -> tuple[list[str], list["_Move"]]:
        missing: list[str] = []
        moves: list[_Move] = []
        declared = list(self.spec.get("outputs") or ())
        for extra in (self.spec.get("stdout"), self.spec.get("stderr"),
                      *(s for c in self.more or () for s in (c.get("stdout"), c.get("stderr")))):
            if extra and extra not in declared:
                declared.append(extra)
        outputs = set(self.spec.get("outputs") or ())
        seen: set[str] = set()
        for path in declared:
            if path in seen:
                continue
            seen.add(path)
            rule = self._cdm_dir(path, _CDM_OUTPUT)
            if rule is not None and rule[0] == "DIRECT":
                moves.extend(self._direct_output_check(path, rule[1], path in outputs, missing))
                continue
            src = self._captured_as(path) or self._output_place(path)
            if src is None:
                if path in outputs and not os.path.lexists(os.path.join(self.base_dir, path)):
                    missing.append(path)
                continue
            try:
                st = os.lstat(src)
            except OSError:
                if path in outputs:
                    missing.append(path)
                continue
            if rule is not None:  # GATHER: to the site's DIR, not back to base_dir
                moves.append(_Move(src, self._cdm_target(rule[1], path), None, f"GATHER {path}",
                                   st))
            elif os.path.isabs(path):  # in place only now that the app has succeeded
                moves.append(_Move(src, os.path.normpath(path), None, None, st))
            else:
                moves.append(_Move(src, os.path.join(self.base_dir, path), path, None, st))
        if self.spec.get("output_globs"):
            moves.extend(self._dynamic_outputs(seen))
        return missing, moves

    def _direct_output_check(self, path: str, directory: str, declared: bool,
                             missing: list[str]) -> list["_Move"]:
        """A DIRECT output is in DIR already (the app wrote through the link): nothing to
        move, but it must exist.  An app that replaced the link by a file of its own
        (write to a temporary name, rename) gets that file moved to DIR."""
        target = self._cdm_target(directory, path)
        inside = self._cdm_place(path)
        if inside is not None and os.path.lexists(inside) and not self._links_to(inside, target) \
                and self._captured_as(path) is None:
            return [_Move(inside, target, None, f"DIRECT {path} (link replaced by the app)")]
        if os.path.islink(target):  # made regular in place (a move to itself)
            return [_Move(target, target, None, None)]
        if declared and not os.path.lexists(target):
            missing.append(path)
        return []

    @staticmethod
    def _links_to(place: str, target: str) -> bool:
        """Whether ``place`` is still the link to ``target`` that the wrapper made."""
        try:
            return os.readlink(place) == target
        except OSError:
            return False

    def _dynamic_outputs(self, seen: set[str]) -> list["_Move"]:
        """(source, destination) of the files matching ``output_globs``: what an app
        producing a whole array created.  Staged inputs (copies on scratch sites) and the
        declared outputs already listed are left out."""
        skip = {job_name(p) for p in seen}  # their names in the job directory
        staged = [os.path.relpath(place, self.dir) for place in
                  map(self._staged_place, self.spec.get("inputs") or ()) if place]
        skip.update(staged)
        # files inside a staged input directory (a copy of its own) are inputs too
        under_input = tuple(p + os.sep for p in staged)
        moves: list[_Move] = []
        done: set[str] = set()
        for glob in self.spec.get("output_globs") or ():
            for rel in glob_files(self.dir, glob):
                norm = os.path.normpath(rel)
                if norm in skip or norm in done or (under_input and norm.startswith(under_input)):
                    continue
                done.add(norm)
                moves.append(_Move(os.path.join(self.dir, norm), os.path.join(self.base_dir, norm),
                                   norm, None))
        return moves

    def start_failed(self, exc: OSError) -> JobResult:
        """The result when ``Popen(job.argv)`` raised: close and clean up, then say why.

        An exec error (no such file, permission, bad format) means the program cannot run
        here: ``not-executable``, never retried.  A refused fork (EAGAIN, ENOMEM, EMFILE)
        is the node's trouble: ``worker``, worth another attempt."""
        self.close_streams()
        self.cleanup()
        kind = KIND_NOT_EXECUTABLE if exc.errno in _EXEC_ERRNOS else KIND_WORKER
        return self._result(False, None, f"Cannot execute {self.argv[0]}: {exc.strerror or exc}",
                            kind=kind)

    def _rescue(self) -> str | None:
        """Move the job directory to ``WORKDIR/SITE_RUN.kept/NAME`` (kept after the run);
        its new path, or None (then it stays where it is, as with keepSiteDir)."""
        target = os.path.join(self.work_dir, f"{self.spec.get('site_run') or 'run'}.kept",
                              os.path.basename(self.dir))
        try:
            self.close_streams()
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.move(self.dir, target)
        except OSError:
            self.keep = True
            return None
        for stream in (self.spec.get("stdout"), self.spec.get("stderr")):
            captured = self._captured_as(stream) if stream else None
            if stream and captured and os.path.lexists(captured):  # not moved: keep it
                try:
                    kept = os.path.join(target, job_name(stream))
                    os.makedirs(os.path.dirname(kept), exist_ok=True)
                    shutil.move(captured, kept)
                except OSError:
                    pass
        self._made = []
        self._links = []
        return target

    def _ran_last(self) -> str:
        """The program of the command a job of several commands was at when it ended
        (the one that failed or ran out of walltime); its command and streams are what a
        failure then tells of."""
        index = min(max(self._sequence_status()[0], 0), len(self._plan) - 1)
        command = self._plan[index]
        if index and self.more is not None:
            self._failed = self.more[index - 1]
        self._tails = (command["stdout"] or self.dir + _STDOUT_SUFFIX,
                       command["stderr"] or self.dir + _STDERR_SUFFIX)
        return self._programs[index]

    def _sequence_status(self) -> tuple[int, bool]:
        """The index of the command the sequence process was at, and whether that
        command had ended (see run_commands); (0, True) when its status file says nothing."""
        try:
            with open(self._status_path, "rb") as fh:
                lines = fh.read().split(b"\n")
            return int(lines[0] or 0), lines[1:2] == [ENDED]
        except (OSError, ValueError):
            return 0, True

    def _wrapper_killed(self, returncode: int | None) -> JobResult | None:
        """The result when a signal ended the sequence process (the wrapper's part of a
        job of several commands) while a command of the app still ran: the machinery's
        failure, not the app's (the command died with it), else None."""
        if self.plan_path is None or returncode is None or returncode >= 0:
            return None
        if self._sequence_status()[1]:
            return None
        program = self._ran_last()
        return self._result(
            False, None, f"The wrapper process of the job was killed{signal_note(returncode)} "
            f"while Application {program} ran; the application was ended with it",
            kind=KIND_WORKER)


def prepare(spec: JobSpec, spares: SpareDirs | None = None) -> Job:
    """Create the job directory and stage inputs; check ``job.failure`` before running.

    ``spares``: the caller's pool of empty job directories to reuse (see SpareDirs)."""
    return Job(spec, spares).prepare()
