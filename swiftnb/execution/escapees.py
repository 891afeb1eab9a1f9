"""The apps' daemons that escaped everything the wrapper knows them by, on the local site.

The local provider runs apps as children of the swiftnb process, which is their
subreaper while one runs: ``app_starting`` takes a hold of the role
(``processes.hold_subreaper``) and the end of that app's call (``end_escaped``) or its
failed start gives it back, so that between calls (between runs in a Jupyter kernel,
between tests under pytest) what other code in the process orphans goes to init rather
than to us: nothing here would reap it.  What an app orphans becomes our child.  The
wrapper ends what keeps the job's mark, and the orphans still in the app's session or
group.  A classic daemon double-forks: its middle process calls ``setsid`` and exits,
so the daemon is in another session and group, and with ``env -i`` it has dropped the
mark too.  Such a child of ours is still recognisable: its session leader is neither
ourselves nor itself, and this process never makes such a child (what swiftnb starts
runs in our session or in a session of its own).  Which app it came from is no longer
known, so it is ended once no app that ran when it was born still runs: at the end of
its own call when apps run one at a time, and never while the app that may have made
it still runs.  Linux only (/proc); elsewhere nothing is found.  The search (each
thread's children list and each child's stat) runs only after a call whose end saw a
child of ours that is no running app (``Job.left_strangers``): a daemon is one, so
the call that made it, or a later one, looks.
"""

from __future__ import annotations

import os
import threading

from swiftnb.remote.wrap.processes import (children, hold_subreaper, kill_rounds, proc_stat,
                                           release_subreaper)

__all__ = ["app_starting", "app_started", "app_ended", "end_escaped"]

#: the apps this process runs now: pid -> start time (clock ticks since boot), None
#: until read
_RUNNING: dict[int, int | None] = {}
#: apps being started (runner threads): their pids, hence their ages, are not known yet
_starting = 0
_lock = threading.Lock()
#: rounds of looking again: a daemon's own children are adopted in turn once it dies
_ROUNDS = 50


def _start_ticks(fields: list[bytes]) -> int:
    return int(fields[19])


def app_starting() -> None:
    """An app is about to start (then ``app_started``, or ``app_started(None)`` if it
    could not be): until then no daemon is judged, since that app may be its maker.
    From now until its call's ``end_escaped`` this process is the subreaper."""
    global _starting
    hold_subreaper()
    with _lock:
        _starting += 1


def app_started(pid: int | None) -> None:
    """An app of ours runs as ``pid``: a daemon born since may be its own.  Its start
    time is read when a daemon is judged, not here: this is on every app's start path."""
    global _starting
    with _lock:
        _starting -= 1
        if pid is not None:
            _RUNNING[pid] = None
    if pid is None:
        release_subreaper()


def app_ended(pid: int) -> None:
    with _lock:
        _RUNNING.pop(pid, None)


def _escaped(own_session: int) -> list[int]:
    """Our adopted children in a session led by another process, born before every app
    that still runs (so none of those can be their maker)."""
    with _lock:
        if _starting:
            return []
        known = dict(_RUNNING)
    running: dict[int, int] = {}
    for pid, ticks in known.items():
        if ticks is None:
            fields = proc_stat(pid)
            # gone already: its call is ending, and what it left may end with it
            ticks = _start_ticks(fields) if fields is not None else 1 << 62
            with _lock:
                if pid in _RUNNING:
                    _RUNNING[pid] = ticks
        running[pid] = ticks
    found = []
    for pid in children():
        if pid in running:
            continue
        fields = proc_stat(pid)
        if fields is None:
            continue
        session = int(fields[3])
        if session in (own_session, pid):
            continue  # ours, or a session leader: a child this process may have started
        born = _start_ticks(fields)
        if all(started > born for started in running.values()):
            found.append(pid)
    return found


def end_escaped(left_strangers: bool = True) -> int:
    """The last step of a started app's call: kill and reap the escaped daemons no
    running app can own (how many), then give back the call's hold of the subreaper
    role.  ``left_strangers`` False: the ended call's look at our children found none
    but running apps (``Job.left_strangers``), so there is nothing to find."""
    try:
        if not left_strangers:
            return 0
        own_session = os.getsid(0)
        return kill_rounds(lambda: _escaped(own_session), _ROUNDS)
    finally:
        release_subreaper()
