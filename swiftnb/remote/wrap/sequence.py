"""The process of a job of several commands (Swift/K trunk's multi-command app body).

Why a module of its own, importing nothing of the package: the wrapper starts it as a
process of its own for every such job (:func:`sequence_argv`), by its own name from its
own directory, which is a directory of an installation or one inside the shipped zipapp
(zipimport reads both).  It also owns the kernel's "die with your parent" request
(:func:`parent_death_kill`), which the wrapper's apps get too.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
from typing import Any, TypedDict

#: the argument that marks a sequence process (for people reading ``ps``)
SEQUENCE_FLAG = "--commands"
#: the second line of a sequence's status file once its current command has ended
ENDED = b"ended"


class PlannedCommand(TypedDict):
    """One command of a sequence, its program resolved and its redirections placed."""

    argv: list[str]
    stdin: str | None
    stdout: str | None
    stderr: str | None


def sequence_argv() -> list[str]:
    """The argv of a sequence process (its plan comes on stdin): this module, imported
    from its directory by its own name, so that nothing else of the package loads."""
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys; sys.path.insert(0, %r); import sequence; sys.exit(sequence.main())"
            % here)
    return [sys.executable, "-I", "-c", code, SEQUENCE_FLAG]


_PR_SET_PDEATHSIG = 1
#: libc's functions looked up so far (False: this libc has none of that name)
LIBC: dict[str, Any] = {}


def libc_function(name: str) -> Any:
    """libc's function ``name`` (errno kept for ctypes.get_errno), else False; looked
    up once per process."""
    found = LIBC.get(name)
    if found is None:
        try:
            import ctypes

            found = getattr(ctypes.CDLL(None, use_errno=True), name)
        except (OSError, AttributeError, ImportError):
            found = False
        LIBC[name] = found
    return found


def load_prctl() -> Any:
    """libc's prctl (Linux), else False."""
    return libc_function("prctl")


def parent_death_kill() -> "Any":
    """A ``preexec_fn`` that has the kernel SIGKILL the child when its parent (the wrapper)
    dies, so that a killed wrapper takes its app along (Linux prctl); None elsewhere."""
    prctl = load_prctl()
    if prctl is False:
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os._exit(137)
    return preexec


def run_commands(plan: dict[str, Any]) -> int:
    """The process of a job of several commands (:func:`sequence_argv`, the
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
    die_with_us = parent_death_kill()
    try:
        for index, command in enumerate(plan["commands"]):
            os.pwrite(status, b"%-8d\n%s\n" % (index, b" " * len(ENDED)), 0)
            code = _run_command(command, die_with_us)
            os.pwrite(status, ENDED, 9)
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


def _run_command(command: PlannedCommand, preexec: "Any" = None) -> int:
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


def main() -> int:
    """The sequence process: run_commands on the plan read from stdin, then
    end as its failing command did (by the same signal, when a signal ended it)."""
    code = run_commands(json.load(sys.stdin))
    if code < 0:
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
        return 128 - code
    return code
