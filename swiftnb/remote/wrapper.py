"""The job wrapper: one app invocation in its own job directory (Swift's ``_swiftwrap``).

Why this file is stdlib-only: the coaster worker ships it, unchanged, to stdlib-only Python
processes on cluster nodes and imports it there.  It must not import anything of swiftnb.

A job is described by a plain JSON-able *spec* (see :func:`spec_from_task`), so that it can
cross a socket as it is.  The wrapper

1. creates the job directory ``WORKDIR/SITE_RUN/jobs/<first letter of jobid>/<jobid>``
   (``WORKDIR`` is the site ``workDirectory``, ``swiftwork`` under the base directory by
   default; ``SITE_RUN`` is ``SCRIPT-RUNID``; retries get ``<jobid>-<attempt>`` so every
   attempt has its own workspace, as Guide 5.1 requires),
2. stages inputs in at their :func:`job_name` (an absolute ``/d/f`` as ``__root__/d/f``)
   so that no app can write to the user's file: a copy of its own for a file up to
   1 MiB (and every input when the site has a ``scratch`` directory), else a link to
   the site run's copy (``SITE_RUN/shared/...``, made once, again when an app changed
   it); a ``stdin=`` that is no input gets a copy beside the job directory; it
   pre-creates the directories of the outputs in the job directory,
3. runs the argv list (never a shell string) with the job directory as working directory
   and stdin/stdout/stderr redirected; every mapped file the app may write is named by
   its :func:`job_name`, inside the job directory (``..`` as ``__parent__``, an absolute
   path under ``__root__``), in whatever argument word it stands (:func:`job_args`);
   an app body of several commands (the spec's ``commands``: those after the first,
   Swift/K trunk) runs as one process, this file as ``python -I wrapper.py --commands``
   (:func:`run_commands`), which runs them in order, each with its own redirections,
   and stops at the first that fails, whose exit code becomes the job's,
4. on exit 0 with every declared output present, moves the outputs to their mapped
   places with ``os.replace`` (atomic; a copy to a temporary name first across file
   systems, a name within NAME_MAX), so a mapped path never holds a partial file,
   whether relative or absolute, and a failed app leaves the previous content in
   place.  An output is a regular file of its own: one the app left as a symbolic link
   to a regular file or as a second hard link is replaced by a copy of the data first;
   a dangling link, a link to a directory or a device, a pipe fail the call naming
   it (no output is moved then).  A job directory or base directory removed while the
   app ran is a ``stage-out`` failure naming it, not the app's.  With them every file
   matching the spec's ``output_globs`` (dynamic outputs: an app that makes an array of
   files whose number only it knows; none is required); otherwise builds Swift's
   failure text (reference 2.6)::

       Exception in echo:
           Arguments: [a, b]
           Host: local
           Directory: script-run001/jobs/e/echo-k0qzzmvr
           stderr.txt: <tail of stderr>
           stdout.txt: <tail of stdout>
       Caused by: Application /bin/echo failed with an exit code of 1

   followed by ``\tat script.swift:LINE:COL`` (the call's position) when the spec
   carries ``source``;

5. removes the job directory unless ``keep`` (keepSiteDir) is set.

The result dict: ``ok``, ``exit_code``, ``message`` (the text above), ``cause`` (its last
line), ``stdout_tail``, ``stderr_tail``, ``site``, ``directory``, ``kind`` (None when ok,
else one of the ``KIND_*`` strings: what kind of failure, for retries and site scores),
``retryable`` and ``canceled`` (older flags, derived from ``kind``), ``staged_out`` (on
success: the base_dir-relative paths moved to base_dir, in the order moved; a remote site
runs the wrapper with base_dir = its ``shared/`` directory and fetches exactly these) and
``cdm_actions`` (what the CDM directives did, one line each, as ``_swiftwrap``'s info file
told).

Collective data management (User Guide 20): the spec's ``cdm`` maps an input or output
path to ``[POLICY, *args]``.  DIRECT ``DIR``: an input is read from ``DIR/path`` (not
staged to base_dir; copied or linked to a run copy as any input, never linked to the
file itself), an output written through a link to ``DIR/path`` and left there (a link
the app left there is made a regular file); LOCAL ``TOOL DIR
[args]``: an input copied from ``DIR/path`` into the job directory by ``cp`` or ``dd``;
BROADCAST ``DIR``: an input copied once per node into ``DIR/path`` (kept while size and
mtime match) and linked; GATHER ``DIR``: an output moved to ``DIR/path`` on the site
instead of base_dir.  Such outputs are not in ``staged_out`` (they are not fetched back).
As in ``_swiftwrap``, an existing ``DIR/path`` from an earlier run satisfies a DIRECT
output's check: the wrapper never deletes files on the shared file system.

Blocking callers use :func:`run_job`; an asyncio caller uses :func:`prepare`, starts
``job.argv`` itself (``job.popen_kwargs()``) and calls ``job.finish(returncode)``.
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from typing import Any, Callable, Iterable, NamedTuple

__all__ = [
    "KIND_APP_EXIT",
    "KIND_NOT_EXECUTABLE",
    "KIND_STAGE_IN",
    "KIND_STAGE_OUT",
    "KIND_WALLTIME",
    "KIND_CANCELED",
    "KIND_WORKER",
    "KINDS",
    "failure_result",
    "Job",
    "prepare",
    "run_job",
    "spec_from_task",
    "job_dir_relative",
    "job_name",
    "job_args",
    "PARENT",
    "ROOT",
    "format_arguments",
    "TAIL_CHARS",
]

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


def failure_result(kind: str, cause: str, *, site: str = "local") -> dict[str, Any]:
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


#: How much of stdout/stderr a failure message carries (the end of it).
TAIL_CHARS = 2000

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
#: ``python wrapper.py --commands < plan``: run a job's commands (run_commands)
_SEQUENCE_FLAG = "--commands"
#: the second line of a sequence's status file once its current command has ended
_ENDED = b"ended"


def format_arguments(args: list[str]) -> str:
    """Java's ``List.toString``: ``[a, b]`` (the form of ``Arguments:`` and JOB_START)."""
    return "[" + ", ".join(str(a) for a in args) + "]"


def job_dir(site_run: str, jobid: str, attempt: int = 0) -> str:
    """The one layout of job directories (the wrapper makes them, providers name them):
    relative to the site work directory, ``SITE_RUN/jobs/X/JOBID`` (X its first letter);
    retries get ``JOBID-ATTEMPT`` so that every attempt has a workspace of its own."""
    name = jobid if not attempt else f"{jobid}-{attempt}"
    return f"{site_run}/jobs/{jobid[:1] or '_'}/{name}"


def job_dir_relative(spec: dict[str, Any]) -> str:
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
) -> dict[str, Any]:
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
    spec = {
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


def _tail(path: str | None, limit: int = TAIL_CHARS) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            try:
                fh.seek(-limit, os.SEEK_END)
            except OSError:
                fh.seek(0)
            data = fh.read()
    except OSError:
        return ""
    return printable_tail(data)


#: control characters shown as "." in a failure report (tabs, newlines and ESC stay)
_CONTROL = {c: "." for c in (*range(0, 9), 11, 12, *range(14, 27), *range(28, 32), 127)}


def printable_tail(data: bytes) -> str:
    """A stream tail for people: UTF-8 (bad bytes replaced), control characters (a
    binary stdout's NULs) as dots, so a report never garbles the terminal."""
    return data.decode("utf-8", "replace").rstrip("\n").translate(_CONTROL)


#: what a ``..`` of a mapped path becomes inside the job directory, as in Swift
PARENT = "__parent__"
#: where an absolute mapped path ``/d/f`` lives inside the job directory (and under a
#: remote site's ``shared/``): ``__root__/d/f``, Swift's name for it
ROOT = "__root__"


def in_job(rel: str) -> str:
    """A relative mapped path as the job sees it: ``../x`` is ``__parent__/x`` (Swift's
    name for it), so that it stays inside the job directory."""
    norm = os.path.normpath(rel)
    if norm != ".." and not norm.startswith(".." + os.sep):
        return norm
    return os.path.join(*(PARENT if part == ".." else part for part in norm.split(os.sep)))


def job_name(path: str) -> str:
    """The one rule for where a mapped file is, as the app sees it: a path relative to
    its job directory.  Plain relative paths stay as they are, ``..`` becomes
    ``__parent__`` and an absolute ``/d/f`` becomes ``__root__/d/f`` (Swift 0.96's
    remote names), so that nothing the app writes lands outside its job directory before
    the wrapper moves it, whole, to its mapped place."""
    if os.path.isabs(path):
        return ROOT + os.path.normpath(path)
    return in_job(path)


#: characters that end a path inside an argument word (``--out=PATH``, ``a,b``, ``x:y``,
#: a shell command's words and redirections)
_PATH_END = " \t\n\r=:,;'\"()<>|&{}`"


def job_args(args: list[str], names: dict[str, str]) -> list[str]:
    """The app's argument words with each mapped path of ``names`` (mapped path -> name
    in the job directory) renamed wherever it stands as a whole path: the entire word
    or a part between separators (``--out=../x``, ``sh -c "cat /d/in > /d/out"``).  A
    longer path is never cut: ``/d/f`` is not renamed inside ``/d/f.bak`` or ``/e/d/f``.
    This is what makes an output's name in any argument and in ``stdout=`` agree."""
    if not names:
        return list(args)
    alternatives = "|".join(re.escape(p) for p in sorted(names, key=len, reverse=True))
    end = re.escape(_PATH_END)
    pattern = re.compile(f"(?:(?<=[{end}])|^)(?:{alternatives})(?=[{end}]|$)")
    out = []
    for word in args:
        renamed = names.get(word)
        if renamed is not None:
            out.append(renamed)
        else:
            out.append(pattern.sub(lambda m: names[m.group(0)], word))
    return out


def _inside(root: str, rel: str) -> str | None:
    """Where a relative mapped path lives in the job directory ``root`` (``..`` as
    ``__parent__``); None for an absolute path or the directory itself."""
    norm = os.path.normpath(rel)
    if os.path.isabs(norm) or norm == ".":
        return None
    return os.path.join(root, in_job(norm))


def _glob_parts(glob: str) -> list[str] | None:
    """The components of a relative stage-out glob, or None when it is absolute or
    leaves the job directory (those files are written in place by the app)."""
    if not glob or os.path.isabs(glob):
        return None
    parts = [p for p in glob.split("/") if p and p != "."]
    if not parts or ".." in parts or parts[-1] == "**":
        return None
    return parts


def _component_match(token: str, name: str) -> bool:
    """One path component of a Swift glob: ``*`` any characters, ``?`` one, the rest
    literal (no character classes, as Swift escaped ``[]``)."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in token)
    return re.fullmatch(rx, name, re.S) is not None


def glob_files(root: str, glob: str) -> list[str]:
    """Files under ``root`` matching a Swift stage-out glob (``*`` ``?`` per component,
    ``**`` any depth of directories, the last component files), as sorted relative
    paths.  Symlinked directories are not entered (a staged input directory is already
    in its place); a symbolic link the last component matches is returned, whatever it
    points to, for the stage-out to copy or refuse (staged inputs are left out by the
    caller)."""
    parts = _glob_parts(glob)
    if parts is None:
        return []
    found: set[str] = set()

    def walk(rel: str, pos: int) -> None:
        token = parts[pos]
        here = os.path.join(root, rel) if rel else root
        last = pos == len(parts) - 1
        if not last and token != "**" and "*" not in token and "?" not in token:
            sub = os.path.join(here, token)  # a literal directory: no listing needed
            if os.path.isdir(sub) and not os.path.islink(sub):
                walk(f"{rel}/{token}" if rel else token, pos + 1)
            return
        try:
            entries = list(os.scandir(here))
        except OSError:
            return
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            if e.is_symlink():
                if last and _component_match(token, e.name):
                    found.add(child)
                continue
            if last:
                if e.is_file() and _component_match(token, e.name):
                    found.add(child)
            elif token == "**":
                if e.is_dir():
                    walk(child, pos)  # one more directory level
            elif e.is_dir() and _component_match(token, e.name):
                walk(child, pos + 1)
        if token == "**":
            walk(rel, pos + 1)  # no (more) directory level

    walk("", 0)
    return sorted(found)


#: PATH lookups already done: (name, PATH) -> path.  Only hits are kept, so a program
#: installed during a run is still found.
_WHICH: dict[tuple[str, str], str] = {}

#: Executables found to be runnable files (a changed one fails at exec, with its reason).
_RUNNABLE: set[str] = set()

#: Destination directories known to exist (saves a failing mkdir per output).
_DIRS_MADE: set[str] = set()


def _which(name: str, env: dict[str, str] | None) -> str | None:
    path = (env or os.environ).get("PATH", os.defpath)
    key = (name, path)
    found = _WHICH.get(key)
    if found is None:
        found = shutil.which(name, path=path)
        if found is not None:
            if len(_WHICH) > 4096:
                _WHICH.clear()
            _WHICH[key] = found
    return found


def _ensure_dir(path: str) -> None:
    if path and path not in _DIRS_MADE:
        os.makedirs(path, exist_ok=True)
        if len(_DIRS_MADE) > 65536:
            _DIRS_MADE.clear()
        _DIRS_MADE.add(path)


def _anonymous_file(name: str) -> int | None:
    """A descriptor for the wrapper's own stdout/stderr capture that costs no directory
    entry (``memfd``); None where memfd is missing (a real file beside the job directory
    is used then)."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is None:
        return None
    try:
        fd: int = memfd(name)
        return fd
    except OSError:
        return None


_DEVNULL: int | None = None


def _devnull() -> int:
    """One read-only ``/dev/null`` descriptor for every child's stdin, kept open (Popen
    would open and close one per child)."""
    global _DEVNULL
    if _DEVNULL is None:
        _DEVNULL = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    return _DEVNULL


def _temp_beside(dest: str) -> str:
    """A temporary name in ``dest``'s directory, unique to this process and moment (so
    that an ``os.replace`` from it is atomic and concurrent writers never share it).
    It fits NAME_MAX whatever ``dest``'s name: the part of that name it shows is cut to
    what leaves room for the unique part (which alone tells temporary names apart)."""
    unique = f".swiftnb-{os.getpid()}-{time.monotonic_ns()}-{next(_TEMP_SERIAL)}"
    room = _NAME_MAX - 1 - len(unique)
    shown = os.fsencode(os.path.basename(dest))[:room]
    return os.path.join(os.path.dirname(dest),
                        "." + os.fsdecode(shown) + unique)


#: the longest file name (bytes) of Linux file systems; a temporary name stays within it
_NAME_MAX = 255


#: tells apart temporary names made at the same nanosecond by threads of one worker
_TEMP_SERIAL = itertools.count()


def _copy_fd(src: int, dst: int, size: int) -> None:
    """``size`` bytes of ``src`` (a regular file's, from its start) into ``dst``, in the
    kernel where it can (copy_file_range: a reflink on file systems that share
    extents), else by reads and writes."""
    try:
        while size > 0:
            copied = os.copy_file_range(src, dst, size)
            if not copied:
                return
            size -= copied
        return
    except OSError as exc:  # another file system on an old kernel, a /proc file...
        if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
    while True:
        data = os.read(src, 1 << 20)
        if not data:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view):]


def _write_copy(src: int, path: str, st: os.stat_result, mode: int) -> None:
    """A new file at ``path`` (which must not exist) holding the data of ``src``, whose
    status is ``st``, with its modification time (as ``cp -p``: tools comparing times
    see the file as the user left it)."""
    out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        _copy_fd(src, out, st.st_size)
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(out)


def _copy_into(src: int, dest: str, mode: int) -> None:
    """Replace ``dest`` by a copy of ``src``'s data in one step (through a temporary
    name beside it)."""
    tmp = _temp_beside(dest)
    try:
        _write_copy(src, tmp, os.fstat(src), mode)
        os.replace(tmp, dest)
    except BaseException:
        _unlink(tmp)
        raise


#: what a file that is neither a regular file nor a directory is, for people
_FILE_TYPES = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISDIR, "a directory"))


def _what(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def _make_regular(path: str, name: str, *, top: bool = True) -> str | None:
    """Make the output the app left at ``path`` a regular file of its own (a directory:
    each file in it), as Swift/K's staging copied content: a symbolic link to a regular
    file or a file with other hard links (``ln /etc/passwd out``) is replaced by a copy
    of the data.  None when done, else why the output cannot be one (``name`` is how
    the message calls it): a dangling link, a link to a directory or a device, a pipe.
    An OSError of the copy is raised (a stage-out trouble, not the app's)."""
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        if st.st_nlink > 1:
            _copy_regular(path, st.st_mode)
        return None
    if stat.S_ISDIR(st.st_mode):
        with os.scandir(path) as entries:
            inside = sorted(entries, key=lambda e: e.name)
        for entry in inside:
            cause = _make_regular(entry.path, f"{name}/{entry.name}", top=False)
            if cause is not None:
                return cause
        return None
    what = "output file" if top else "file"
    if not stat.S_ISLNK(st.st_mode):
        return f"The {what} {name} is {_what(st.st_mode)}, not a regular file"
    target = os.readlink(path)
    try:
        followed = os.stat(path)
    except OSError:
        return f"The {what} {name} is a symbolic link to {target}, which does not exist"
    if not stat.S_ISREG(followed.st_mode):
        return (f"The {what} {name} is a symbolic link to {target}, which is "
                f"{_what(followed.st_mode)}, not a regular file")
    _copy_regular(path, followed.st_mode)
    return None


def _copy_regular(path: str, mode: int) -> None:
    """Replace ``path`` (a link to a regular file, or one of its hard links) by a copy of
    its data; the copy is opened without blocking and checked again, so a link changed
    to a pipe meanwhile is never read."""
    src = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        _copy_into(src, path, stat.S_IMODE(mode) | 0o600)
    finally:
        os.close(src)


#: inputs up to this size are copied into each job directory; larger ones (and input
#: directories) are linked to one copy per run
_COPY_LIMIT = 1 << 20


def _copy_input(source: str, place: str, st: os.stat_result) -> None:
    """A job's own copy of an input file or directory (its links followed, so nothing
    in it leads back to the user's files), with the file's mode and times: an app that
    copies its input (``cp @i @o``) makes the output it made when inputs were links."""
    if stat.S_ISDIR(st.st_mode):
        shutil.copytree(source, place, symlinks=False, ignore_dangling_symlinks=True)
        return
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _write_copy(src, place, st, stat.S_IMODE(st.st_mode))
    finally:
        os.close(src)


def _same_copy(source: str, copy: str) -> bool:
    """Whether ``copy`` is a current copy of ``source``: a directory copy is kept as it
    is; a file's size and modification time must match (an app that wrote to it
    changed its time: it is copied again for the next job)."""
    try:
        have = os.lstat(copy)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(have.st_mode):
        return True
    want = os.stat(source)
    return (stat.S_ISREG(have.st_mode) and have.st_size == want.st_size
            and have.st_mtime_ns == want.st_mtime_ns)


def _site_copy_of(source: str, copy: str) -> None:
    """Make ``copy`` a copy of ``source`` (data, mode, times) in one step (a temporary
    name first: jobs of other processes may be linking to it)."""
    if os.path.isdir(source):
        tmp = _temp_beside(copy)
        try:
            shutil.copytree(source, tmp, symlinks=False, ignore_dangling_symlinks=True)
            os.rename(tmp, copy)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not os.path.isdir(copy):  # else another job made it first
                raise
        return
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _copy_into(src, copy, stat.S_IMODE(os.fstat(src).st_mode))
    finally:
        os.close(src)


def _move_atomic(src: str, dest: str) -> None:
    """Put ``src`` at ``dest`` in one step; across file systems copy to a temp name first."""
    parent = os.path.dirname(dest)
    _ensure_dir(parent)
    try:
        os.replace(src, dest)
        return
    except FileNotFoundError:
        if not os.path.lexists(src) or not parent:
            raise
        _DIRS_MADE.discard(parent)  # removed behind our back: make it again
        os.makedirs(parent, exist_ok=True)
        os.replace(src, dest)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    tmp = _temp_beside(dest)
    try:
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, tmp, symlinks=True)
            if os.path.isdir(dest) and not os.path.islink(dest):
                shutil.rmtree(dest)
        else:
            shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True) if os.path.isdir(tmp) else _unlink(tmp)
        raise


# -- collective data management (CDM, User Guide 20) ------------------------------------
# The client (``swiftnb.execution.cdm``) reads the policy file and puts, for each input and
# output a non-DEFAULT rule matches, ``[POLICY, *args]`` into the spec's ``cdm`` field.  This
# module gets that plain data only: it does not import cdm.py.

#: policies that change how an input is staged in
_CDM_INPUT = frozenset({"DIRECT", "LOCAL", "BROADCAST"})
#: policies that change how an output is staged out
_CDM_OUTPUT = frozenset({"DIRECT", "GATHER"})
#: LOCAL's copy programs
_CDM_TOOLS = ("cp", "dd")


def _bad_cdm_entry(entry: Any) -> str | None:
    """What is wrong with one ``[POLICY, *args]`` directive, or None."""
    if not isinstance(entry, (list, tuple)) or not entry:
        return "not a list [POLICY, args...]"
    policy, args = entry[0], list(entry[1:])
    if policy in ("DIRECT", "BROADCAST", "GATHER"):
        return None if args and args[0] else f"{policy} needs a directory"
    if policy == "LOCAL":
        if len(args) < 2 or not args[1]:
            return "LOCAL needs a tool and a directory"
        return None if args[0] in _CDM_TOOLS else f"LOCAL copies with cp or dd, not {args[0]}"
    if policy == "DEFAULT":
        return None
    return f"unknown policy {policy}"


def _bad_cdm_directive(cdm: dict[str, Any]) -> str | None:
    """The stage-in failure cause for the first malformed directive of a spec, or None
    (a hand-made spec may carry one; cdm.py never makes one)."""
    for path, entry in cdm.items():
        problem = _bad_cdm_entry(entry)
        if problem is not None:
            return f"Bad CDM directive for {path}: {entry!r}: {problem}"
    return None


def _broadcast_copy(source: str, target: str) -> bool:
    """BROADCAST: put a copy of ``source`` at the node-wide ``target`` unless one with
    the same size and modification time is there already (an app that wrote to it
    changed its time); True when it copied.  The copy goes to
    a temporary name first, so a job on the same node never links a half-written file.
    A directory is copied when absent and used as it is when present."""
    try:
        have, want = os.stat(target), os.stat(source)
        if os.path.isdir(target) or (have.st_size == want.st_size
                                     and have.st_mtime_ns == want.st_mtime_ns):
            return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = _temp_beside(target)
    try:
        if os.path.isdir(source):
            shutil.copytree(source, tmp, symlinks=False, ignore_dangling_symlinks=True)
        else:
            shutil.copy2(source, tmp)  # keeps the mtime the next job compares
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True) if os.path.isdir(tmp) else _unlink(tmp)
        if os.path.isdir(source) and os.path.isdir(target):
            return False  # another job on the node copied it first
        raise
    return True


_DIGEST_CHUNK = 1 << 20


def file_digest(path: str) -> str:
    """"sha256:<hex>" of a file's bytes, read in 1 MiB pieces (contract of
    ``Task.digest_outputs``; ``swiftnb.store.digests`` computes the same on this side)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for piece in iter(lambda: fh.read(_DIGEST_CHUNK), b""):
            h.update(piece)
    return "sha256:" + h.hexdigest()


def output_digest(path: str) -> str:
    """A file's digest, or a directory's (:func:`directory_digest`)."""
    return directory_digest(path) if os.path.isdir(path) else file_digest(path)


def directory_digest(path: str, digest: Callable[[str], str] = file_digest) -> str:
    """sha256 over the sorted lines "<relative path>\t<file digest>\n" of the regular
    files under a directory (relative paths with "/"); ``digest`` gives a file's digest
    (the run store passes its cached one, so both sides agree by construction)."""
    lines = []
    for top, dirs, names in os.walk(path):
        dirs.sort()
        for name in names:
            full = os.path.join(top, name)
            if stat.S_ISREG(os.lstat(full).st_mode):
                rel = os.path.relpath(full, path).replace(os.sep, "/")
                lines.append(f"{rel}\t{digest(full)}\n")
    lines.sort()
    return "sha256:" + hashlib.sha256("".join(lines).encode("utf-8", "surrogateescape")).hexdigest()


class _Move(NamedTuple):
    """One output to move after a successful exit."""

    src: str
    dest: str
    staged: str | None   # the base_dir-relative path it lands at (``staged_out``), or None
    action: str | None   # a CDM action to report once moved ("GATHER out/a.txt"), or None


class SpareDirs:
    """Job directories kept for the next job, which takes one with a rename.

    Why: a ``mkdir`` + ``rmdir`` pair per app call is the dearest part of a short job on
    ext4 (allocating a directory inode scans the recently freed ones), several times an
    ``echo``'s own cost; a rename allocates nothing.  A job whose inputs or outputs sit
    in subdirectories (``cat c/c0001.txt``) leaves those behind empty, and its directory
    is kept with them: its *shape*, the set of their relative paths.  The next job of the
    same app (``tr``) takes a spare of the shape the last one left, or an empty one, and
    removes before its app starts any directory of the shape it did not need, so an app
    always sees exactly the directories it would have had.  ``limit`` spares at most;
    the end of the run removes them with the site directory.  One lock orders every
    creation of a job directory in this process, so a rename never replaces another
    job's (just made) directory.
    """

    def __init__(self, limit: int = 64) -> None:
        import threading

        self.limit = limit
        self.lock = threading.Lock()
        self._dirs: dict[frozenset[str], list[str]] = {}
        self._count = 0
        self._shapes: dict[str, frozenset[str]] = {}  # tr -> the shape its last job left

    def __len__(self) -> int:
        return self._count

    def shape_for(self, tr: str) -> frozenset[str]:
        """The shape a job of app ``tr`` most likely needs (the last one's)."""
        return self._shapes.get(tr, _NO_SHAPE)

    def take(self, path: str, shape: frozenset[str] = frozenset()) -> frozenset[str] | None:
        """Move a spare of ``shape`` (else an empty one) to ``path``, which must not
        exist (call with ``lock`` held); the shape taken, or None when there is none."""
        for wanted in (shape, _NO_SHAPE) if shape else (_NO_SHAPE,):
            pool = self._dirs.get(wanted)
            while pool:
                spare = pool.pop()
                self._count -= 1
                try:
                    os.rename(spare, path)
                    return wanted
                except FileNotFoundError:
                    if not os.path.isdir(spare):
                        continue  # removed behind our back (the site directory went away)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    os.rename(spare, path)
                    return wanted
                except OSError:
                    return None  # e.g. another file system: fall back to mkdir
        return None

    def give(self, path: str, shape: frozenset[str] = frozenset(), tr: str | None = None) -> bool:
        """Keep a job directory holding only the (empty) directories of ``shape`` for
        reuse; False when the pool is full.  ``tr``: the app whose job left it."""
        with self.lock:
            if tr is not None:
                self._shapes[tr] = shape
            if self._count >= self.limit:
                return False
            self._dirs.setdefault(shape, []).append(path)
            self._count += 1
            return True

    def clear(self) -> None:
        """Remove the spares (a kept site directory should not hold them)."""
        with self.lock:
            pools, self._dirs, self._count = self._dirs, {}, 0
        for shape, paths in pools.items():
            for path in paths:
                if shape:
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.rmdir(path)
                    except OSError:
                        pass


_NO_SHAPE: frozenset[str] = frozenset()


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class Job:
    """One prepared invocation: where it runs, what it runs, and how it ends.

    ``failure`` is set (a result dict) when preparation itself failed (missing input,
    executable not found); the caller then returns it without starting anything.
    """

    # A job of several commands only (class defaults: a one-command job pays nothing):
    #: what the sequence process runs (see run_commands), one entry per command
    _plan: tuple[dict[str, Any], ...] = ()
    #: the file the plan is read from, and where the process tells which command it is at
    plan_path: str | None = None
    _status_path = ""
    #: each command's program, resolved
    _programs: tuple[str, ...] = ()
    #: the later command (spec form) a failure is about; None: the first
    _failed: dict[str, Any] | None = None
    #: the stdout and stderr whose ends a failure shows, when not the first command's
    _tails: tuple[str, str] | None = None

    def __init__(self, spec: dict[str, Any], spares: SpareDirs | None = None) -> None:
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
        self.mark = _new_mark()
        self._started = False
        self._pids_after = 0
        self.app_pid: int | None = None  # set by started(pid)
        self.alone = False  # the only job of this process (run_job in its own process)
        #: env.SWIFT_EXTRA_INFO's command and what it printed (Guide 11.4)
        self.extra_info_command = extra.get("SWIFT_EXTRA_INFO")
        self.extra_info: str | None = None
        #: env.SWIFT_GEN_SCRIPTS: keep the command line as run.sh in the job directory
        self.gen_script = "SWIFT_GEN_SCRIPTS" in extra
        self.executable: str = spec.get("executable") or spec["tr"]
        self.argv: list[str] = []
        #: the commands after the first (spec ``commands``), None for a one-command app
        self.more: list[dict[str, Any]] | None = spec.get("commands")
        self.failure: dict[str, Any] | None = None
        self.stdin_path: str | None = None
        self.stdout_path = self._stream_path(spec.get("stdout"), _STDOUT_SUFFIX)
        self.stderr_path = self._stream_path(spec.get("stderr"), _STDERR_SUFFIX)
        self._streams: list[Any] = []
        self._captured: dict[str, Any] = {}   # stream path -> anonymous file holding it
        self._made: list[str] = []            # directories created inside the job dir
        self._premade: set[str] = set()       # the spare's directories, not yet used
        self._own_files: list[str] = []       # wrapper capture files on disk (no memfd)
        self._links: list[str] = []           # staged inputs (symlinks or copies)
        self._staged_out = False              # outputs (and captured streams) moved out
        self._digests: dict[str, str] = {}     # output -> "sha256:..." once moved (if asked)
        self._moved_out: list[str] = []       # base_dir-relative paths moved there, in order

    # -- preparation ------------------------------------------------------------------

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
        else:
            os.symlink(self._site_copy(source, key), place)

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
            _site_copy_of(source, copy)
        return copy

    def _output_place(self, path: str) -> str | None:
        """Where the app writes an output (or the wrapper a mapped stream) in the job
        directory: its :func:`job_name` there, whatever the path (an absolute one too:
        the mapped place holds the old file until the app succeeds); None for ``.``."""
        if os.path.isabs(path):
            return os.path.join(self.dir, job_name(path))
        return _inside(self.dir, path)

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

    # -- collective data management ---------------------------------------------------

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

    def prepare(self) -> "Job":
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
            for path in list(spec.get("outputs") or ()) + [spec.get("stdout"), spec.get("stderr")]:
                if not path:
                    continue
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
            plan: Iterable[dict[str, Any]] = self._plan or [
                {"argv": self.argv, "stdin": self.stdin_path, "stdout": self.stdout_path,
                 "stderr": self.stderr_path}]
            for command in plan:
                line = shlex.join(command["argv"])
                for sign, key in (("<", "stdin"), (">", "stdout"), ("2>", "stderr")):
                    if command[key]:
                        line += f" {sign} {shlex.quote(command[key])}"
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
        plan = [{"argv": self.argv, "stdin": self.stdin_path,
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
        self.argv = [sys.executable, "-I", os.path.abspath(__file__), _SEQUENCE_FLAG]
        return True

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
            return int(lines[0] or 0), lines[1:2] == [_ENDED]
        except (OSError, ValueError):
            return 0, True

    def _wrapper_killed(self, returncode: int | None) -> dict[str, Any] | None:
        """The result when a signal ended the sequence process (the wrapper's part of a
        job of several commands) while a command of the app still ran: the machinery's
        failure, not the app's (the command died with it), else None."""
        if self.plan_path is None or returncode is None or returncode >= 0:
            return None
        if self._sequence_status()[1]:
            return None
        program = self._ran_last()
        return self._result(
            False, None, f"The wrapper process of the job was killed{_signal_note(returncode)} "
            f"while Application {program} ran; the application was ended with it",
            kind=KIND_WORKER)

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
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), path)
            taken = spares.take(path, shape)
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

    def _fail_early(self, cause: str, kind: str = KIND_STAGE_IN) -> "Job":
        """Record a failure before the app started (preparation: a stage-in failure
        unless said otherwise) and remove what was made."""
        self.failure = self._result(False, None, cause, kind=kind)
        self.cleanup()
        return self

    # -- running ----------------------------------------------------------------------

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

    def close_streams(self) -> None:
        """Close this process's copies of the child's descriptors (not the captures)."""
        for fd in self._streams:
            try:
                os.close(fd)
            except OSError:
                pass
        self._streams = []

    def popen_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``subprocess.Popen(job.argv, **kw)`` (opens the streams).

        The child gets its own session (process group) so that cancellation can kill it,
        and the job's mark in its environment so that ``kill`` and ``finish`` find what
        it started elsewhere.
        """
        stdin, stdout, stderr = self.open_streams()
        env = dict(os.environ if self.env is None else self.env)
        env[MARK_VAR] = self.mark
        self._pids_after = last_pid()
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

    # -- ending -----------------------------------------------------------------------

    def started(self, pid: int) -> None:
        """The app runs as ``pid`` (its session's leader): its orphans are found by it."""
        self.app_pid = pid
        _APPS.add(pid)

    def kill(self, pid: int, sig: int = signal.SIGKILL) -> None:
        """Kill the app started as ``pid`` and every process it started, wherever."""
        kill_group(pid, sig)
        kill_marked(self.mark, sig, self._pids_after)

    def end_processes(self) -> None:
        """Kill what the app left running (its background children): the call is over.
        Those that kept the mark are found anywhere; those that dropped it (``env -i``)
        and outlived the app are children of this subreaper (``end_orphans``)."""
        if self._started:
            kill_marked(self.mark, after=self._pids_after)
        if self.app_pid is not None:
            _APPS.discard(self.app_pid)
            end_orphans(self.app_pid, self.alone)

    def finish(self, returncode: int | None, *, timed_out: bool = False, canceled: bool = False,
               cleanup: bool = True) -> dict[str, Any]:
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
                    f"exit code of {code}{_signal_note(returncode)}")
            missing, moves = self._check_outputs()
            if missing:
                return self._vanished(0) or self._result(
                    False, 0, "The following output files were not created by the application: "
                    + ", ".join(missing))
            try:
                for move in moves:  # all regular files before any is moved
                    dest = move.dest
                    cause = _make_regular(move.src, move.staged or dest)
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

    def _vanished(self, code: int | None) -> dict[str, Any] | None:
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
                      *(c.get(k) for c in self.more or () for k in ("stdout", "stderr"))):
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
            if not os.path.lexists(src):
                if path in outputs:
                    missing.append(path)
                continue
            if rule is not None:  # GATHER: to the site's DIR, not back to base_dir
                moves.append(_Move(src, self._cdm_target(rule[1], path), None, f"GATHER {path}"))
            elif os.path.isabs(path):  # in place only now that the app has succeeded
                moves.append(_Move(src, os.path.normpath(path), None, None))
            else:
                moves.append(_Move(src, os.path.join(self.base_dir, path), path, None))
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

    def _tail_of(self, path: str) -> str:
        anon = self._captured.get(path)
        if anon is None:
            return _tail(path)
        try:
            size = os.fstat(anon).st_size
            return printable_tail(os.pread(anon, TAIL_CHARS, max(0, size - TAIL_CHARS)))
        except OSError:
            return ""

    def start_failed(self, exc: OSError) -> dict[str, Any]:
        """The result when ``Popen(job.argv)`` raised: close and clean up, then say why.

        An exec error (no such file, permission, bad format) means the program cannot run
        here: ``not-executable``, never retried.  A refused fork (EAGAIN, ENOMEM, EMFILE)
        is the node's trouble: ``worker``, worth another attempt."""
        self.close_streams()
        self.cleanup()
        kind = KIND_NOT_EXECUTABLE if exc.errno in _EXEC_ERRNOS else KIND_WORKER
        return self._result(False, None, f"Cannot execute {self.argv[0]}: {exc.strerror or exc}",
                            kind=kind)

    def _result(self, ok: bool, code: int | None, cause: str, *,
                kind: str = KIND_APP_EXIT) -> dict[str, Any]:
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
        return {
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
            **({"extra_info": self.extra_info} if self.extra_info is not None else {}),
        }

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


def copies_much(spec: dict[str, Any]) -> bool:
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


def prepare(spec: dict[str, Any], spares: SpareDirs | None = None) -> Job:
    """Create the job directory and stage inputs; check ``job.failure`` before running.

    ``spares``: the caller's pool of empty job directories to reuse (see SpareDirs)."""
    return Job(spec, spares).prepare()


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Kill a job's whole process group (it was started in its own session)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


# -- containment ------------------------------------------------------------------------
# An app's descendants may leave its process group (GNU ``timeout``, ``setsid``, a daemon's
# double fork) and outlive it; every one still inherits the environment.  Each job's
# processes carry MARK_VAR=<the job's own mark>, and the end of the call (success,
# failure, walltime, cancel) kills every process that carries it, as a batch system ends
# a job's processes.  Without /proc (not Linux) only the process group is reached.

#: the environment variable whose value marks one job's processes
MARK_VAR = "SWIFTNB_JOB"
_MARKS = itertools.count()
#: rounds of finding and killing before giving up on a tree that forks faster
_KILL_ROUNDS = 200
#: up to how many pids given since a job started are tried one by one, not listed
_PROBE_SPAN = 512


def _new_mark() -> str:
    return f"{os.getpid()}.{next(_MARKS)}.{time.monotonic_ns()}"


def last_pid() -> int:
    """The pid the kernel gave last (0 if unknown): a job's processes all come after the
    value read before it started, so a search for them may skip older ones."""
    try:
        with open("/proc/loadavg", "rb") as fh:
            return int(fh.read().split(b"/")[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _marked(needle: bytes, own: int, after: int, last: int) -> list[int]:
    """The processes (not this one) between pid ``after`` and ``last`` whose environment
    holds ``needle``; with ``after`` 0, of every process."""
    if after and 0 <= last - after <= _PROBE_SPAN:  # fewer pids to try than /proc holds
        pids: Iterable[int] = range(after + 1, last + 1)
    else:
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return []
    found = []
    for pid in pids:
        if pid <= after or pid == own:
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as fh:
                if needle in fh.read():
                    found.append(pid)
        except OSError:  # no such process, or another user's
            continue
    return found


def kill_marked(mark: str, sig: int = signal.SIGKILL, after: int = 0) -> int:
    """Kill every process of the job marked ``mark``, again until none is left (one may
    fork meanwhile; a killed one has no environment left to match); how many were found.
    ``after``: the last pid before the job started (``last_pid``), unless pids wrapped."""
    needle = (MARK_VAR + "=" + mark + "\0").encode()
    own = os.getpid()
    seen: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        last = last_pid()
        if after and last < after:  # pid numbers wrapped round: search them all
            after = 0
        found = _marked(needle, own, after, last)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        if seen.issuperset(found):  # killed already, not yet exited
            time.sleep(0.001)
        seen.update(found)
    return len(seen)


_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_prctl: Any = None
_subreaper = False
#: pids of the apps started in this process and not yet ended (Job.started)
_APPS: set[int] = set()
_ORPHAN_ROUNDS = 50


def _load_prctl() -> Any:
    """libc's prctl (Linux), else False."""
    global _prctl
    if _prctl is None:
        try:
            import ctypes

            _prctl = ctypes.CDLL(None, use_errno=True).prctl
        except (OSError, AttributeError, ImportError):
            _prctl = False
    return _prctl


def become_subreaper() -> None:
    """Have the processes an app orphans reparent to this process rather than to init
    (Linux PR_SET_CHILD_SUBREAPER), so that one which dropped the job's mark (``env -i``)
    is still found, as a child of ours in the app's session, and ended with its call.
    Once per process; nothing where prctl is missing."""
    global _subreaper
    if _subreaper:
        return
    _subreaper = True
    prctl = _load_prctl()
    if prctl:
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _children() -> list[int]:
    """This process's children (its threads' /proc children lists)."""
    found: list[int] = []
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as fh:
                found.extend(int(p) for p in fh.read().split())
        except (OSError, ValueError):
            pass
    return found


def _session_of(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, process group, session) of ``pid``, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (OSError, IndexError, ValueError):
        return None


def _reap(pid: int) -> None:
    """Collect a killed orphan's exit (it is our child now), waiting a little for it."""
    for _ in range(200):
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done:
            return
        time.sleep(0.005)


def end_orphans(app: int, alone: bool = False) -> int:
    """Kill and reap the orphans of the app started as ``app`` that reparented to this
    subreaper: children of ours in its session or process group that are no app of ours.
    ``alone``: this process runs that one job only (the wrapper run as a batch job's
    process), so every such child is the job's, whatever session it made.  How many."""
    own, ended = os.getpid(), 0
    for _ in range(_ORPHAN_ROUNDS):  # an orphan's own children reparent to us in turn
        found = []
        for pid in _children():
            if pid in _APPS:
                continue
            where = _session_of(pid)
            if where is not None and where[0] == own and (alone or app in where[1:]):
                found.append(pid)
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            _reap(pid)
        ended += len(found)
    return ended


def _parent_death_kill() -> "Any":
    """A ``preexec_fn`` that has the kernel SIGKILL the child when its parent (the wrapper)
    dies, so that a killed wrapper takes its app along (Linux prctl); None elsewhere."""
    prctl = _load_prctl()
    if prctl is False:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(137)
    return preexec


def run_job(spec: dict[str, Any], alone: bool = False) -> dict[str, Any]:
    """Run one job to its end, blocking; the result dict (``ok``, ``exit_code``, ``message``...).
    ``alone``: this process exists for this job (any orphan it adopts is the job's)."""
    become_subreaper()
    job = prepare(spec)
    if job.failure is not None:
        return job.failure
    job.alone = alone
    try:
        proc = subprocess.Popen(job.argv, preexec_fn=_parent_death_kill(), **job.popen_kwargs())
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


def _signal_note(returncode: int | None) -> str:
    """`` (killed by signal 9, SIGKILL)`` for an app a signal ended (the exit code alone,
    128 + N as a shell reports it, does not say so), else empty."""
    if returncode is None or returncode >= 0:
        return ""
    import signal

    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "unknown signal"
    return f" (killed by signal {-returncode}, {name})"


def run_commands(plan: dict[str, Any]) -> int:
    """The process of a job of several commands (``python -I wrapper.py --commands``, the
    plan on stdin, in the job directory): run them one after another, each with its own
    redirections; the first that fails ends the job with its exit code, and the later
    ones do not run (as trunk's ``_swiftwrap``).  Before each command starts, its index
    is written to the plan's status file: the wrapper names the command that failed;
    when it has ended, ``ended`` below: a sequence process killed (no ``ended``) while
    a command ran is the wrapper's failure, not the app's, and the command, which the
    kernel kills when this process dies (PR_SET_PDEATHSIG), dies with it.
    A command killed by a signal is returned as the negative signal number."""
    status = os.open(plan["status"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC,
                     0o666)
    die_with_us = _parent_death_kill()
    try:
        for index, command in enumerate(plan["commands"]):
            os.pwrite(status, b"%-8d\n%s\n" % (index, b" " * len(_ENDED)), 0)
            code = _run_command(command, die_with_us)
            os.pwrite(status, _ENDED, 9)
            if code != 0:
                return code
    finally:
        os.close(status)
    return 0


class _LinkedRedirect(Exception):
    """A redirection's target (or a directory on its way inside the job directory) is a
    symbolic link; its str is the path."""


def _open_redirect(path: str) -> int:
    """Open a later command's stdout or stderr for writing, never through a symbolic link
    an earlier command left at the name or on its way inside the job directory (the
    process's working directory): that would write over a file outside the job.
    _LinkedRedirect then."""
    here = os.getcwd()
    parent = os.path.dirname(os.path.abspath(path))
    if parent == here or parent.startswith(here + os.sep):
        if os.path.realpath(parent) != os.path.normpath(
                os.path.join(os.path.realpath(here), os.path.relpath(parent, here))):
            raise _LinkedRedirect(path)
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _LinkedRedirect(path) from None
        raise


def _run_command(command: dict[str, Any], preexec: "Any" = None) -> int:
    """One command of several, its redirections opened here; a stream it does not
    redirect is this process's (the wrapper's capture).  Its exit code, negative for a
    signal; 127 (126) when it could not be started, as a shell says."""
    opened: list[int] = []
    try:
        stdin = os.open(command["stdin"] or os.devnull, os.O_RDONLY)
        opened.append(stdin)
        stdout = stderr = None
        try:
            if command["stdout"]:
                stdout = _open_redirect(command["stdout"])
                opened.append(stdout)
            if command["stderr"] and command["stderr"] == command["stdout"]:
                stderr = stdout
            elif command["stderr"]:
                stderr = _open_redirect(command["stderr"])
                opened.append(stderr)
        except _LinkedRedirect as exc:
            print(f"Cannot redirect the output of {command['argv'][0]} to {exc}: it is a "
                  f"symbolic link (an earlier command made it), not followed out of the job "
                  f"directory", file=sys.stderr)
            return 1
        proc = subprocess.Popen(command["argv"], stdin=stdin, stdout=stdout, stderr=stderr,
                                preexec_fn=preexec)
    except OSError as exc:
        print(f"Cannot execute {command['argv'][0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127 if exc.errno == errno.ENOENT else 126
    finally:
        for fd in opened:
            os.close(fd)
    return proc.wait()


def _sequence_main() -> int:
    """``python wrapper.py --commands``: run_commands on the plan read from stdin, then
    end as its failing command did (by the same signal, when a signal ended it)."""
    code = run_commands(json.load(sys.stdin))
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":  # a worker can run ``python wrapper.py < spec.json``
    if sys.argv[1:] == [_SEQUENCE_FLAG]:
        sys.exit(_sequence_main())
    _exit_on_signals()
    print(json.dumps(run_job(json.load(sys.stdin), alone=True)))

