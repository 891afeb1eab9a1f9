"""Preparing a job: its directory made (or a spare taken), inputs staged in by the
default rule or their CDM policy, output directories made, its program found, and a
job of several commands planned."""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
from typing import Iterable, TypeVar

from . import files
from .cdm import _CDM_INPUT, _CDM_OUTPUT, _bad_cdm_directive, _broadcast_copy
from .files import (_COPY_LIMIT, _RUNNABLE, _copy_input, _devnull, _ensure_dir, _same_copy,
                    _unlink, _which)
from .jobbase import _PLAN_SUFFIX, _STATUS_SUFFIX, _STDERR_SUFFIX, _STDOUT_SUFFIX, JobBase
from .spares import _NO_SHAPE
from .names import _glob_parts, in_job, job_args, job_name
from .report import TAIL_CHARS, printable_tail
from .sequence import PlannedCommand, sequence_argv
from .spec import KIND_NOT_EXECUTABLE, JobSpec


_Staged = TypeVar("_Staged", bound="JobStaging")


class JobStaging(JobBase):
    """A job as it is prepared (:meth:`prepare`); :class:`Job` runs it."""

    def prepare(self: _Staged) -> _Staged:
        spec = self.spec
        try:
            self._make_job_dir()
        except OSError as exc:
            where = "scratch directory" if self.copy_inputs else "work directory"
            return self._fail_early(
                f"Could not create the job directory {self.rel_dir} in the site {where} "
                f"{self._root}: {exc.strerror or exc}"
                + (f" ({exc.filename})" if exc.filename else ""))
        bad = _bad_cdm_directive(self.cdm)
        if bad is not None:
            return self._fail_early(bad)
        try:
            for path in spec.get("inputs") or ():
                rule = self._cdm_dir(path, _CDM_INPUT)
                if rule is not None:
                    cause = self._stage_in_cdm(path, *rule)
                    if cause is not None:
                        return self._fail_early(cause)
                    continue
                source = self._resolve_input(path)
                try:
                    st = os.stat(source)
                except OSError:
                    return self._fail_early(f"Could not locate input file: {path}")
                place = self._input_slot(path)
                if place is None or os.path.lexists(place):
                    continue
                self._make_inside(os.path.dirname(place))
                self._stage_input(source, place, job_name(path), st)
            streams = {spec.get("stdout"), spec.get("stderr")}
            direct_done: set[str] = set()
            outputs = [p for p in (*(spec.get("outputs") or ()), spec.get("stdout"),
                                   spec.get("stderr")) if p]
            for path in outputs:
                rule = self._cdm_dir(path, _CDM_OUTPUT)
                if rule is not None and rule[0] == "DIRECT":
                    if path not in direct_done:
                        direct_done.add(path)
                        self._direct_output(path, rule[1], path in streams)
                    continue
                inside = self._output_place(path)
                if inside is not None and path in streams:
                    continue  # captured beside the job directory (_MAPPED_SUFFIX)
                if inside is not None:
                    self._make_inside(os.path.dirname(inside))
                else:
                    _ensure_dir(os.path.dirname(os.path.join(self.base_dir, path)))
            for glob in spec.get("output_globs") or ():
                # the literal directories of a dynamic output (``outs`` of ``outs/*.out``)
                # exist for the app, as the directories of declared outputs do
                parts = _glob_parts(glob) or []
                literal = []
                for part in parts[:-1]:
                    if "*" in part or "?" in part:
                        break
                    literal.append(part)
                if literal:
                    self._make_inside(os.path.join(self.dir, *literal))
            stdin = spec.get("stdin")
            if stdin:
                self.stdin_path = self._input_place(stdin)
                if not os.path.exists(self.stdin_path):
                    return self._fail_early(f"Could not locate input file: {stdin}")
        except OSError as exc:
            return self._fail_early(f"Could not prepare the job directory {self.rel_dir} "
                                    f"(stage in): {exc}")
        if self._premade:
            self._drop_premade()
        exe = self._resolve_executable(self.executable)
        if exe is None:
            return self
        # the arguments name each mapped file as the job sees it (job_name), in whatever
        # word it stands
        self.argv = [exe] + job_args([str(a) for a in spec.get("args") or ()], self._renamed())
        if self.more is not None and not self._prepare_sequence():
            return self
        if self.extra_info_command or self.gen_script:
            self._site_notes()
        return self

    def _stage_input(self, source: str, place: str, key: str,
                     st: os.stat_result | None = None) -> None:
        """Put input ``source`` at ``place`` so that the app cannot change the user's
        file: a copy of its own on scratch and shared-fs sites; else a copy of a small
        file (as cheap as a link: one inode either way), or a link to the site's copy
        of a large file or a directory (``SITE_RUN/shared/KEY``, made once per run and
        again when an app changed it, as Swift/K's staging copied inputs into
        ``shared/``)."""
        self._links.append(place)  # removed with the job directory, whatever happens next
        if st is None:
            st = os.stat(source)
        if not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode):
            os.symlink(source, place)  # a device or a pipe: no content to copy (or end)
        elif self.copy_inputs or (stat.S_ISREG(st.st_mode) and st.st_size <= _COPY_LIMIT):
            _copy_input(source, place, st)
        elif not files.permission_bits_bind():  # root writes a read-only copy anyway
            _copy_input(source, place, st)
            if stat.S_ISREG(st.st_mode):
                self._guarded.append((place, source, st.st_size, st.st_mtime_ns))
        else:
            os.symlink(self._site_copy(source, key), place)

    def _changed_inputs(self) -> list[str]:
        """The large inputs root's app changed in its own copy (an app that is not root
        cannot: its link leads to the read-only shared copy): named as the user knows
        them."""
        changed = []
        for place, source, size, mtime in self._guarded:
            try:
                now = os.stat(place)
            except OSError:
                continue  # removed: the app's own copy, nobody else reads it
            if (now.st_size, now.st_mtime_ns) != (size, mtime):
                changed.append(os.path.relpath(source, self.base_dir)
                               if source.startswith(self.base_dir + os.sep) else source)
        return changed

    def _site_copy(self, source: str, key: str) -> str:
        """The site run's copy of a large input or an input directory, made if
        missing or stale; a file already in the site run directory (a remote site's
        ``shared/``, where staging copied it) is its own site copy."""
        site_run = os.path.join(self.work_dir, self.spec.get("site_run") or "run")
        if os.path.abspath(source).startswith(site_run + os.sep):
            return source
        copy = os.path.join(site_run, "shared", key)
        if not _same_copy(source, copy):
            _ensure_dir(os.path.dirname(copy))
            files._site_copy_of(source, copy)
        return copy

    def _renamed(self) -> dict[str, str]:
        """The mapped paths the app must be told by another name (mapped path -> name in
        the job directory): those with ``..``, and absolute inputs, outputs and
        streams, which are staged in (or written in) the job directory; a CDM input
        where its policy puts it; a CDM DIRECT output is written in place by its policy."""
        spec = self.spec
        names: dict[str, str] = {}
        for path in spec.get("inputs") or ():
            place = self._staged_place(path)
            name = os.path.relpath(place, self.dir) if place else None
            if name and name != os.path.normpath(path):
                names[path] = name
        stdin = spec.get("stdin")
        if stdin and stdin not in names and not os.path.isabs(stdin) \
                and in_job(stdin) != os.path.normpath(stdin):
            names[stdin] = in_job(stdin)
        for path in (*(spec.get("outputs") or ()), spec.get("stdout"), spec.get("stderr")):
            if not path or path in names:
                continue
            rule = self._cdm_dir(path, _CDM_OUTPUT)
            if rule is not None and rule[0] == "DIRECT":
                continue
            name = job_name(path)
            if name != os.path.normpath(path):
                names[path] = name
        return names

    def _stage_in_cdm(self, path: str, policy: str, directory: str, extra: list[str]) -> str | None:
        """Stage one input by its CDM policy (Guide 20.4); None when done, else why not.

        DIRECT links ``DIR/path`` (no copy: the file stays on the shared file system);
        LOCAL copies it from ``DIR/path`` with ``cp`` or ``dd`` (the node pulls it);
        BROADCAST copies the staged input once per node into ``DIR/path`` and links it."""
        source = (self._resolve_input(path) if policy == "BROADCAST"
                  else self._cdm_target(directory, path))
        if not os.path.lexists(source):
            return f"Could not locate input file: {path}"
        place = self._cdm_place(path)
        if place is None or os.path.lexists(place):
            return None
        self._make_inside(os.path.dirname(place))
        if policy == "DIRECT":  # read in place, through a copy: never written there
            self._stage_input(source, place, job_name(path))
            self.cdm_actions.append(f"DIRECT {path} -> {source}")
        elif policy == "LOCAL":
            cause = self._local_copy(path, extra[0], extra[1:], source, place)
            if cause is not None:
                return cause
            self.cdm_actions.append(f"LOCAL {path} <- {source} ({extra[0]})")
        else:
            node_copy = self._cdm_target(directory, path)
            copied = _broadcast_copy(source, node_copy)
            os.symlink(node_copy, place)
            self._links.append(place)
            self.cdm_actions.append(f"BROADCAST {path} -> {node_copy} "
                                    f"({'copied' if copied else 'already on the node'})")
        return None

    def _local_copy(self, path: str, tool: str, args: list[str], source: str,
                    dest: str) -> str | None:
        """LOCAL: run ``cp ARGS SRC DST`` or ``dd if=SRC of=DST ARGS`` (argv, no shell);
        None when it worked, else why not (with the tool's stderr)."""
        if tool == "dd":
            argv = ["dd", f"if={source}", f"of={dest}", *args]
        else:
            argv = ["cp", *args, source, dest]
        try:
            done = subprocess.run(argv, stdin=_devnull(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, env=self.env, cwd=self.dir)
        except OSError as exc:
            return f"Could not copy input file {path} with {tool}: {exc.strerror or exc}"
        self._links.append(dest)  # removed with the job directory, whatever happened
        if done.returncode != 0:
            return (f"Could not copy input file {path} with {tool} (exit code "
                    f"{done.returncode}): {printable_tail(done.stderr[-TAIL_CHARS:])}")
        return None

    def _direct_output(self, path: str, directory: str, stream: bool) -> None:
        """DIRECT output: the app writes through a link in the job directory straight to
        ``DIR/path`` (a mapped stdout/stderr is opened there, no link); nothing is moved
        afterwards.  Makes ``DIR``'s directories first."""
        target = self._cdm_target(directory, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        self.cdm_actions.append(f"DIRECT {path} -> {target}")
        place = None if stream else self._cdm_place(path)
        if place is None or os.path.lexists(place):
            return
        self._make_inside(os.path.dirname(place))
        os.symlink(target, place)
        self._links.append(place)

    def _site_notes(self) -> None:
        """Guide 11.4: run env.SWIFT_EXTRA_INFO's command just before the app and keep
        what it printed (for the job's -info record); with env.SWIFT_GEN_SCRIPTS, keep
        the command line as ``run.sh`` in the job directory."""
        if self.extra_info_command:
            try:
                done = subprocess.run(self.extra_info_command, shell=True, cwd=self.dir,
                                      env=self.env, capture_output=True, timeout=60,
                                      stdin=subprocess.DEVNULL)
                self.extra_info = printable_tail(done.stdout)
            except (OSError, subprocess.TimeoutExpired) as exc:
                self.extra_info = f"(SWIFT_EXTRA_INFO failed: {exc})"
        if self.gen_script:
            import shlex

            lines = []
            plan: Iterable[PlannedCommand] = self._plan or [
                {"argv": self.argv, "stdin": self.stdin_path, "stdout": self.stdout_path,
                 "stderr": self.stderr_path}]
            for command in plan:
                line = shlex.join(command["argv"])
                redirects = (("<", command["stdin"]), (">", command["stdout"]),
                             ("2>", command["stderr"]))
                for sign, target in redirects:
                    if target:
                        line += f" {sign} {shlex.quote(target)}"
                lines.append(line + (" || exit" if self._plan else ""))
            try:
                with open(os.path.join(self.dir, "run.sh"), "w", encoding="utf-8",
                          errors="surrogateescape") as fh:  # names are bytes
                    fh.write(f"#!/bin/sh\ncd {shlex.quote(self.dir)}\n" + "\n".join(lines) + "\n")
            except OSError:
                pass

    def _input_place(self, path: str, index: int = 0) -> str:
        """Where the app reads an input redirection (``stdin=``): its staged place in the
        job directory; one that is not an input is staged beside the job directory
        (``JOBDIR.stdin``; the ``index``-th command's), so that no app gets a
        descriptor of the user's file.  A missing file: its mapped place."""
        inside = self._staged_place(path)
        if inside and os.path.lexists(inside):
            return inside
        source = self._resolve_input(path)
        if not os.path.isfile(source):
            return source
        private = f"{self.dir}.stdin{index or ''}"
        _unlink(private)  # left by a job of this name that never cleaned up
        self._own_files.append(private)
        self._stage_input(source, private, job_name(path))
        return private

    def _stream_place(self, path: str | None) -> str | None:
        """Where a later command of several writes a mapped stdout or stderr: the first
        command's capture when it is the same path, else its place in the job directory
        (moved out with the outputs), or in place for a CDM DIRECT output."""
        if not path:
            return None
        spec = self.spec
        if path == spec.get("stdout"):
            return self.stdout_path
        if path == spec.get("stderr"):
            return self.stderr_path
        rule = self._cdm_dir(path, _CDM_OUTPUT)
        if rule is not None and rule[0] == "DIRECT":
            target = self._cdm_target(rule[1], path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            return target
        inside = self._output_place(path)
        if inside is None:
            return os.path.join(self.base_dir, path)
        self._make_inside(os.path.dirname(inside))
        return inside

    def _prepare_sequence(self) -> bool:
        """Prepare a job of several commands (Swift/K trunk's multi-command app body):
        resolve each program, stage each redirection, and make the job's process a
        :func:`run_commands` over them, the plan on its stdin.  False when it failed
        (``failure`` is set and the job directory gone)."""
        spec = self.spec
        names = self._renamed()
        plan: list[PlannedCommand] = [{"argv": self.argv, "stdin": self.stdin_path,
                 "stdout": self.stdout_path if spec.get("stdout") else None,
                 "stderr": self.stderr_path if spec.get("stderr") else None}]
        programs = [self.argv[0]]
        try:
            for command in self.more or ():
                self._failed = command  # a failure now is about this command
                program = self._resolve_executable(command.get("executable") or command["tr"])
                if program is None:
                    return False
                stdin = command.get("stdin")
                stdin_path = self._input_place(stdin, len(plan)) if stdin else None
                if stdin_path is not None and not os.path.exists(stdin_path):
                    self._fail_early(f"Could not locate input file: {stdin}")
                    return False
                plan.append({"argv": [program, *job_args([str(a) for a in command["args"]],
                                                         names)],
                             "stdin": stdin_path,
                             "stdout": self._stream_place(command.get("stdout")),
                             "stderr": self._stream_place(command.get("stderr"))})
                programs.append(program)
            self._failed = None
            self.plan_path = self.dir + _PLAN_SUFFIX
            self._status_path = self.dir + _STATUS_SUFFIX
            self._own_files += [self.plan_path, self._status_path]
            with open(self.plan_path, "w") as fh:
                json.dump({"status": self._status_path, "commands": plan}, fh)
        except OSError as exc:
            self._fail_early(f"Could not prepare the job directory {self.rel_dir} "
                             f"(stage in): {exc}")
            return False
        self._plan, self._programs = tuple(plan), tuple(programs)
        self.argv = sequence_argv()
        return True

    def _make_job_dir(self) -> None:
        """Create a job directory no other job uses.  A directory of that name may exist:
        left by an earlier run with the same run id, or a concurrent job with the same
        jobid.  It is never removed (it may be in use); this job takes the next free
        ``<name>.<n>`` instead, so every attempt has a workspace of its own."""
        base_rel = self.rel_dir
        for n in range(1, 10000):
            rel = base_rel if n == 1 else f"{base_rel}.{n}"
            path = os.path.join(self._root, rel)
            try:
                self._create_dir(path)
            except FileNotFoundError:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                try:
                    self._create_dir(path)
                except FileExistsError:
                    continue
            except FileExistsError:
                continue
            if n > 1:
                self.rel_dir, self.dir = rel, path
                spec = self.spec
                self.stdout_path = self._stream_path(spec.get("stdout"), _STDOUT_SUFFIX)
                self.stderr_path = self._stream_path(spec.get("stderr"), _STDERR_SUFFIX)
            return
        raise OSError(errno.EEXIST, "no free job directory name", self.dir)

    def _create_dir(self, path: str) -> None:
        """``os.mkdir(path)``, or a spare directory renamed to ``path`` (its
        subdirectories in ``_premade``, to be used or removed by :meth:`prepare`)."""
        spares = self._spares
        if spares is None:
            os.mkdir(path)
            return
        shape = spares.shape_for(self.spec["tr"]) if not self.copy_inputs else _NO_SHAPE
        with spares.lock:
            taken = spares.take(path, shape)  # FileExistsError: path is another's
            if taken is None:
                os.mkdir(path)
            else:
                self._premade = {os.path.join(path, rel) for rel in taken}

    def _drop_premade(self) -> None:
        """Remove the spare's directories this job did not need (deepest first)."""
        for directory in sorted(self._premade, key=len, reverse=True):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        self._premade = set()

    def _make_inside(self, directory: str) -> None:
        """Create a directory inside the job dir (or use the spare's), remembering it for
        a cheap clean-up."""
        if directory == self.dir or directory in self._made:
            return
        parent = os.path.dirname(directory)
        if parent != self.dir and parent not in self._made and (
                parent in self._premade or not os.path.isdir(parent)):
            self._make_inside(parent)
        if directory in self._premade:
            self._premade.discard(directory)
            self._made.append(directory)
            return
        try:
            os.mkdir(directory)
        except FileExistsError:
            return
        self._made.append(directory)

    def _resolve_executable(self, name: str) -> str | None:
        if os.sep in name:
            candidates = [name] if os.path.isabs(name) else [
                os.path.join(self.dir, name), os.path.join(self.base_dir, name)]
            found = next((c for c in candidates if os.path.exists(c)), None)
            if found is None:  # a path, not a name: the PATH was never searched
                self._fail_early(f"Cannot find executable {name}: no such file"
                                 + ("" if os.path.isabs(name) else
                                    f" (relative to {self.base_dir})"), KIND_NOT_EXECUTABLE)
                return None
        else:
            found = _which(name, self.env)
            if found is None:
                candidate = shutil.which(name, mode=os.F_OK,
                                         path=(self.env or os.environ).get("PATH", os.defpath))
                if candidate is not None:
                    self._fail_early(f"The executable {candidate} does not have the executable bit set",
                                     KIND_NOT_EXECUTABLE)
                else:
                    self._fail_early(f"Cannot find executable {name} on site system path",
                                     KIND_NOT_EXECUTABLE)
                return None
        if found in _RUNNABLE:
            return found
        if os.path.isdir(found):
            self._fail_early(f"The executable {found} is a directory", KIND_NOT_EXECUTABLE)
            return None
        if not os.access(found, os.X_OK):
            self._fail_early(f"The executable {found} does not have the executable bit set",
                             KIND_NOT_EXECUTABLE)
            return None
        if len(_RUNNABLE) > 4096:
            _RUNNABLE.clear()
        _RUNNABLE.add(found)
        return found


def copies_much(spec: JobSpec) -> bool:
    """Whether preparing the job may copy much data: a scratch or copy-inputs site, a
    CDM rule (its tools copy), an input directory or a file over the copy limit (the
    run's shared copy is made from it).  A caller with an event loop prepares such a
    job on a thread: a few stats here against a copy that blocks for as long as the
    file is big."""
    if spec.get("scratch") or spec.get("copy_inputs") or spec.get("cdm"):
        return True
    base = spec["base_dir"]
    for path in (*(spec.get("inputs") or ()), *((spec.get("stdin"),) if spec.get("stdin") else ())):
        try:
            st = os.stat(os.path.join(base, path))
        except (OSError, ValueError):
            continue  # prepare says what is wrong with it
        if stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and st.st_size > _COPY_LIMIT):
            return True
    return False
