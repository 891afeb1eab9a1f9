"""Containment: a job's processes, wherever they went, end with its call.

An app's descendants may leave its process group (GNU ``timeout``, ``setsid``, a daemon's
double fork) and outlive it; every one still inherits the environment.  Each job's
processes carry MARK_VAR=<the job's own mark>, and the end of the call (success,
failure, walltime, cancel) kills every process that carries it, as a batch system ends
a job's processes.  Without /proc (not Linux) only the process group is reached.  Those
that dropped the mark (``env -i``) reparent to this process, a subreaper, and are ended
as its orphans.

The subreaper role catches the orphans of *every* descendant, not only an app's.  A
process that exists for its apps (a coaster worker, the wrapper run as a batch job)
holds it for good (``become_subreaper``); a process that does other things too (a
Jupyter kernel, pytest) holds it only while an app of its own runs (``hold_subreaper``
/ ``release_subreaper``, counted), so that what other code orphans between calls goes
to init as before.  What it adopts while it holds the role is no app's and no child
anything here will wait for when its session is led by another process: a child this
process forks stays in our session or leads its own, and no process can join another
session.  Such children that have exited are reaped where the end of a call reads the
children list anyway (``strangers``): no /proc read is added when none is left.  An
orphan in our own session or one that leads its own session cannot be told from a
child that other code forked (``subprocess.Popen`` waits for its own by pid, and
asyncio's watcher would report 255 for one reaped under it), so it is never reaped.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
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


def read_proc(path: str) -> bytes:
    """A small /proc file's bytes in three system calls (``open()`` makes nine: its
    buffer's fstat, isatty and seeks); on every call's path, a few times.  OSError."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        data = os.read(fd, 65536)
        if len(data) < 65536:
            return data
        parts = [data]
        while data:  # a long environment
            data = os.read(fd, 65536)
            parts.append(data)
        return b"".join(parts)
    finally:
        os.close(fd)


def last_pid() -> int:
    """The pid the kernel gave last (0 if unknown): a job's processes all come after the
    value read before it started, so a search for them may skip older ones."""
    try:
        return int(read_proc("/proc/loadavg").split(b"/")[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _candidates(after: int, last: int) -> Iterable[int]:
    """The processes between pid ``after`` and ``last``; with ``after`` 0, every one."""
    if after and 0 <= last - after <= _PROBE_SPAN:  # fewer pids to try than /proc holds
        return range(after + 1, last + 1)
    try:
        return [pid for pid in (int(name) for name in os.listdir("/proc") if name.isdigit())
                if pid > after]
    except OSError:
        return []


def _marked(needle: bytes, own: int, pids: Iterable[int]) -> list[int]:
    """The processes of ``pids`` (not this one) whose environment holds ``needle``."""
    found = []
    for pid in pids:
        if pid == own:
            continue
        try:
            if needle in read_proc("/proc/%d/environ" % pid):
                found.append(pid)
        except OSError:  # no such process, or another user's
            continue
    return found


def kill_marked(mark: str, sig: int = signal.SIGKILL, after: int = 0,
                within: Callable[[], list[int]] | None = None) -> int:
    """Kill every process of the job marked ``mark``, again until none is left (one may
    fork meanwhile; a killed one has no environment left to match); how many were found.
    ``after``: a pid before the job's first (its app's, less one), unless pids wrapped.
    ``within``: where they can be, if known (``strangers`` and their descendants, once
    the app has ended), asked again each round."""
    needle = (MARK_VAR + "=" + mark + "\0").encode()
    own = os.getpid()
    seen: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        if within is not None:
            pids: Iterable[int] = within()
        else:
            last = last_pid()
            if after and last < after:  # pid numbers wrapped round: search them all
                after = 0
            pids = _candidates(after, last)
        found = _marked(needle, own, pids)
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
#: holds of the subreaper role (``hold_subreaper``), and whether one never ends
_holds = 0
_for_good = False
_holds_lock = threading.Lock()
#: the kernel makes this process its apps' subreaper now: every process an ended app
#: left running is in the tree of a child of ours
_reaper = False
#: pids of the apps started in this process and not yet ended (Job.started)
_APPS: set[int] = set()
_ORPHAN_ROUNDS = 50


def _set_subreaper(on: bool) -> None:
    """Ask the kernel for the role, or to drop it; ``_reaper`` says what it did."""
    global _reaper
    prctl = load_prctl()
    if prctl and prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0:
        _reaper = on


def hold_subreaper() -> None:
    """Have the processes an app orphans reparent to this process rather than to init
    (Linux PR_SET_CHILD_SUBREAPER) from now until the matching ``release_subreaper``,
    so that one which dropped the job's mark (``env -i``) is still found, as a child of
    ours, and ended with its call.  Call it before the app starts: what it orphans
    before the role is held goes to init.  Nothing where prctl is missing."""
    global _holds
    with _holds_lock:
        _holds += 1
        if _holds == 1 and not _reaper:
            _set_subreaper(True)


def release_subreaper() -> None:
    """End one ``hold_subreaper``; the last one gives the role back, so that what other
    code in this process orphans from now on goes to init, not to us, unreaped."""
    global _holds
    with _holds_lock:
        _holds -= 1
        if _holds == 0 and _reaper and not _for_good:
            _set_subreaper(False)


def become_subreaper() -> None:
    """Hold the role for good: this process exists for its apps (a coaster worker, the
    wrapper run as a batch job's process), so every orphan it adopts is theirs."""
    global _for_good
    with _holds_lock:
        if _for_good:
            return
        _for_good = True
    hold_subreaper()


def strangers() -> list[int] | None:
    """This process's children that are no running app of ours: where whatever an ended
    app left running is (its descendants were reparented to this subreaper, so each is
    one of these or under one); besides, apps of ours still being started.  None when
    not known (this process is not its apps' subreaper: they may be anywhere).  One
    look at the children lists, where a search by pid reads the environment of every
    process made since the app started (on every call's path).  Only the main
    thread's list is read: the kernel gives a subreaper's orphans to its first live
    thread, and apps started on other threads are no strangers.  Adopted children that
    have exited are reaped on the way (``reap_adopted``) and are not listed."""
    if not _reaper:
        return None
    try:
        kids = read_proc(f"/proc/self/task/{os.getpid()}/children").split()
    except OSError:  # the main thread has ended: orphans go to another one
        found = [pid for pid in children() if pid not in _APPS]
    else:
        found = [pid for pid in map(int, kids) if pid not in _APPS]
    return reap_adopted(found) if found else found


def proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first, then parent,
    process group, session; start time at index 19); None once it is gone."""
    try:
        return read_proc(f"/proc/{pid}/stat").rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def reap_adopted(pids: list[int]) -> list[int]:
    """Reap those of our children ``pids`` that have exited and were adopted, not forked
    here (their session is led by another process: see the module's docstring); the
    others, still to look at.  Nothing here waits for an adopted child, so reaping it
    takes no exit status from anyone."""
    own_session = os.getsid(0)
    left = []
    for pid in pids:
        fields = proc_stat(pid)
        if fields is None:
            continue
        if fields[0] == b"Z" and int(fields[3]) not in (own_session, pid):
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:  # not ours (any more)
                pass
            continue
        left.append(pid)
    return left


def with_descendants(pids: list[int]) -> list[int]:
    """``pids`` and every process under them (their threads' /proc children lists)."""
    found: list[int] = []
    todo = list(pids)
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(_children_of(str(pid)))
    return found


def children() -> list[int]:
    """This process's children (its threads' /proc children lists)."""
    return _children_of("self")


def _children_of(pid: str) -> list[int]:
    """The children of process ``pid`` (a number or ``self``): one list per thread,
    since a child belongs to the thread that forked it; none once it is gone."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tasks:
        try:
            found.extend(int(p) for p in read_proc(f"/proc/{pid}/task/{tid}/children").split())
        except (OSError, ValueError):
            pass
    return found


def _session_of(pid: int) -> tuple[int, int, int] | None:
    """(parent pid, process group, session) of ``pid``, None once it is gone."""
    fields = proc_stat(pid)
    if fields is None:
        return None
    try:
        return int(fields[1]), int(fields[2]), int(fields[3])
    except (IndexError, ValueError):
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
