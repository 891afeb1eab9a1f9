"""Containment: a job's processes, wherever they went, end with its call.

An app's descendants may leave its process group (GNU ``timeout``, ``setsid``, a daemon's
double fork) and outlive it; every one still inherits the environment.  Each job's
processes carry MARK_VAR=<the job's own mark>, and the end of the call (success,
failure, walltime, cancel) kills every process that carries it, as a batch system ends
a job's processes.  Without /proc (not Linux) only the process group is reached.  Those
that dropped the mark (``env -i``) reparent to this process, a subreaper, and are ended
as its orphans.
"""

from __future__ import annotations

import itertools
import os
import signal
import time
from typing import Callable, Iterable

from .sequence import load_prctl

def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Kill a job's whole process group (it was started in its own session)."""
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, sig)
        except OSError:
            pass


MARK_VAR = "SWIFTNB_JOB"
_MARKS = itertools.count()
#: rounds of finding and killing before giving up on a tree that forks faster
_KILL_ROUNDS = 200
#: up to how many pids given since a job started are tried one by one, not listed
_PROBE_SPAN = 512


def new_mark() -> str:
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


_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False
#: pids of the apps started in this process and not yet ended (Job.started)
_APPS: set[int] = set()
_ORPHAN_ROUNDS = 50


def become_subreaper() -> None:
    """Have the processes an app orphans reparent to this process rather than to init
    (Linux PR_SET_CHILD_SUBREAPER), so that one which dropped the job's mark (``env -i``)
    is still found, as a child of ours in the app's session, and ended with its call.
    Once per process; nothing where prctl is missing."""
    global _subreaper
    if _subreaper:
        return
    _subreaper = True
    prctl = load_prctl()
    if prctl:
        prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def children() -> list[int]:
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


def reap(pid: int) -> None:
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
    own = os.getpid()

    def orphans() -> list[int]:
        found = []
        for pid in children():
            if pid in _APPS:
                continue
            where = _session_of(pid)
            if where is not None and where[0] == own and (alone or app in where[1:]):
                found.append(pid)
        return found

    return kill_rounds(orphans)


def kill_rounds(find: Callable[[], list[int]], rounds: int = _ORPHAN_ROUNDS) -> int:
    """Kill and reap what ``find`` names, again until it names nothing (the killed
    processes' own children reparent to us in turn); how many."""
    ended = 0
    for _ in range(rounds):
        found = find()
        if not found:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            reap(pid)
        ended += len(found)
    return ended
