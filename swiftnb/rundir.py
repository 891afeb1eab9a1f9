"""Run ids and run directories, as Swift's ``swiftrun`` made them.

Every ``swiftnb run`` gets a run directory ``runNNN`` in the current directory (three
digits, from ``run001``, next = highest existing + 1; created with ``mkdir`` so two runs
started at once never share one).  ``-runid X`` names the run, and its directory ``X``.
Inside it (docs/running.md):

* ``SCRIPT-RUNID.log``  the Swift-format log (``-logfile`` overrides), the name Swift's
  Loader gives it without the ``bin/swift`` wrapper (reference 5.1), kept in the run
  directory so that runs do not litter the working directory;
* ``SCRIPT-RUNID.0.rlog``  the restart log while the run is going; deleted on success;
* ``swift.out``  a copy of everything the run printed (stdout and stderr), as
  ``bin/swift`` tee'd it;
* ``.lock``  locked (``flock``) for the whole run: a second run with the same ``-runid``
  is refused while the first goes (it would remove the first one's site directory).

Job directories live under the site work directory (``swiftwork/SCRIPT-RUNID/jobs``), as
in Swift; ``SCRIPT-RUNID`` is :attr:`RunDir.site_run`.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field

from swiftnb.errors import SwiftnbError

try:
    import fcntl
except ImportError:  # not on Windows: runs are not locked there
    fcntl = None  # type: ignore[assignment]  # no fcntl on this system

__all__ = ["RunDir", "RunDirError", "discard_run_dir", "make_run_dir", "next_run_number",
           "release_run_dir", "script_stem", "LOCK_NAME"]

#: the file of a run directory locked while a run uses it
LOCK_NAME = ".lock"


class RunDirError(SwiftnbError, OSError):
    """The run directory or the log cannot be made; ``str()`` is the message alone."""

    def __str__(self) -> str:
        return str(self.strerror)

_RUN_RE = re.compile(r"^run(\d{3,})$")


def script_stem(script: str) -> str:
    """``path/to/foo.swift`` -> ``foo``."""
    name = os.path.basename(script)
    return name[:-6] if name.endswith(".swift") else os.path.splitext(name)[0] or name


def next_run_number(parent: str) -> int:
    """1 + the highest ``runNNN`` in ``parent`` (1 when there is none)."""
    highest = 0
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        names = []
    for name in names:
        m = _RUN_RE.match(name)
        if m:
            highest = max(highest, int(m.group(1)))
    return highest + 1


@dataclass(frozen=True)
class RunDir:
    """Where one run keeps its files."""

    runid: str
    path: str            # absolute run directory
    script: str          # the script path as given
    stem: str            # script name without .swift
    log_file: str        # absolute path of the Swift-format log
    restart_file: str    # absolute path of the restart log of this run
    created: bool = True  # made for this run (False: -runid named an existing one)
    #: the descriptor holding the run directory's lock (-1: released)
    lock_fd: list[int] = field(default_factory=lambda: [-1], compare=False, repr=False)

    @property
    def site_run(self) -> str:
        """``SCRIPT-RUNID``: the run's directory inside each site's work directory."""
        return f"{self.stem}-{self.runid}"

    @property
    def out_file(self) -> str:
        return os.path.join(self.path, "swift.out")


def make_run_dir(
    script: str,
    *,
    cwd: str | None = None,
    runid: str | None = None,
    logfile: str | None = None,
    parent: str | None = None,
) -> RunDir:
    """Create the run directory (``runNNN`` unless ``runid`` is given) and name its files.

    It is made in ``parent`` (default: ``cwd``); ``-logfile`` is relative to ``cwd``."""
    base = os.path.abspath(cwd or os.getcwd())
    where = os.path.abspath(os.path.join(base, parent)) if parent else base
    stem = script_stem(script)
    if runid:
        if runid in (".", "..") or "/" in runid or (os.altsep and os.altsep in runid):
            raise RunDirError(22, f"-runid {runid}: a run id is a name, not a path")
        path = os.path.join(where, runid)
        created = not os.path.isdir(path)
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise RunDirError(exc.errno or 0, f"-runid {runid}: cannot create the run "
                              f"directory {path}: {exc.strerror or exc}") from None
    else:
        created = True
        n = next_run_number(where)
        while True:
            runid = f"run{n:03d}"
            path = os.path.join(where, runid)
            try:
                os.mkdir(path)
                break
            except FileExistsError:
                n += 1
            except OSError as exc:  # a read-only or vanished current directory
                raise RunDirError(exc.errno or 0, f"{path}: {exc.strerror or exc}") from None
    lock_fd = _lock_run_dir(path, runid, created)
    log_file = os.path.abspath(os.path.join(base, logfile)) if logfile else os.path.join(
        path, f"{stem}-{runid}.log")
    if os.path.isdir(log_file):
        os.close(lock_fd)
        raise RunDirError(errno.EISDIR, f"cannot write the log {log_file}: it is a directory")
    for written in (log_file, os.path.join(path, "swift.out")):
        if _same_file(written, os.path.join(base, script)):
            os.close(lock_fd)
            raise RunDirError(errno.EEXIST, f"the run would write its {os.path.basename(written)} "
                              f"over the script {script}")
    if logfile:
        try:  # the log is appended to: try that now, before anything runs
            os.makedirs(os.path.dirname(log_file), exist_ok=True)
            with open(log_file, "a", encoding="utf-8"):
                pass
        except OSError as exc:
            os.close(lock_fd)
            raise RunDirError(exc.errno or 0, f"-logfile {logfile}: cannot write the log: "
                              f"{exc.strerror or exc}") from None
    # Guide 16.2: NAME-RUNID.N.rlog with the first free N, so a run that reuses a run id
    # (-runid) never overwrites the restart log an earlier failed run left to resume from
    index = 0
    while os.path.lexists(os.path.join(path, f"{stem}-{runid}.{index}.rlog")):
        index += 1
    restart_file = os.path.join(path, f"{stem}-{runid}.{index}.rlog")
    return RunDir(runid=runid, path=path, script=script, stem=stem, log_file=log_file,
                  restart_file=restart_file, created=created, lock_fd=[lock_fd])


def _lock_run_dir(path: str, runid: str, created: bool) -> int:
    """Lock the run directory for this run (its descriptor): two runs of one run id would
    share the site directory and restart log names, and the first to end would remove
    the other's site directory.  Refused (``EBUSY``) while another run holds it."""
    lock_path = os.path.join(path, LOCK_NAME)
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:  # a read-only file system, a directory named .lock
        if created:
            _remove_quietly(path)
        raise RunDirError(exc.errno or 0, f"-runid {runid}: cannot use the run directory "
                          f"{path}: {exc.strerror or exc}") from None
    if fcntl is None:
        return fd
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise RunDirError(errno.EBUSY, f"-runid {runid}: the run id is in use by another "
                          f"run (its run directory {path} is locked)") from None
    return fd


def _same_file(a: str, b: str) -> bool:
    """Whether two names are one file (through links too); a missing one is not."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _remove_quietly(path: str) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def release_run_dir(run_dir: RunDir) -> None:
    """The run has ended: its run id may be used again."""
    fd = run_dir.lock_fd[0]
    run_dir.lock_fd[0] = -1
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass


def discard_run_dir(run_dir: RunDir) -> None:
    """Remove the directory of a run refused before it started, with the files its setup
    wrote (the log's header, an empty restart log), if it was made for this run: a
    refused run leaves no empty ``runNNN`` behind.  A directory ``-runid`` named that
    existed before is left alone (it may hold an earlier run's log)."""
    if run_dir.created:
        _remove_quietly(run_dir.path)
    release_run_dir(run_dir)
