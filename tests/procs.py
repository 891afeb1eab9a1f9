"""Processes as /proc shows them, for the fixtures that start daemons (sshd.py, slurm.py,
gridengine.py): they stop what they started by PID, and find what those daemons left
(per-connection sshds, slurmstepd and sge_shepherd sessions) by parent and session."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from swiftnb.remote.wrap.sequence import parent_death_kill

__all__ = ["Proc", "stat", "alive", "processes", "descendants", "in_sessions", "kill",
           "wait_gone", "running", "gone"]


@dataclass(frozen=True)
class Proc:
    pid: int
    state: str      # R, S, Z...
    ppid: int
    sid: int

    @property
    def live(self) -> bool:
        return self.state not in ("Z", "X")


def stat(pid: int) -> Proc | None:
    """A process's state, parent and session; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the name may hold spaces and ')'
    return Proc(pid, fields[0], int(fields[1]), int(fields[3]))


def alive(pid: int) -> bool:
    """Running, not a zombie (PID 1 here reaps orphans slowly; kill -0 succeeds on one)."""
    found = stat(pid)
    return found is not None and found.live


def processes() -> list[Proc]:
    """Every live process."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            proc = stat(int(entry))
            if proc is not None and proc.live:
                found.append(proc)
    return found


def descendants(root: int) -> list[int]:
    """Live descendants of ``root``, by parent pid."""
    children: dict[int, list[int]] = {}
    for proc in processes():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def in_sessions(sids: set[int]) -> list[int]:
    """Live processes whose session id is one of ``sids``."""
    return [proc.pid for proc in processes() if proc.sid in sids]


def kill(pid: int, sig: int) -> None:
    """Signal ``pid``; one already gone is no error."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def wait_gone(pids: Sequence[int], within: float) -> list[int]:
    """Wait until none of ``pids`` is alive; the ones still alive after ``within``."""
    deadline = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def running(needle: str) -> list[int]:
    """Live processes whose command line holds ``needle`` (a test's marker argument)."""
    found = []
    for proc in processes():
        try:
            with open(f"/proc/{proc.pid}/cmdline", "rb") as fh:
                if needle.encode() in fh.read():
                    found.append(proc.pid)
        except OSError:
            continue
    return found


def gone(needle: str, within: float = 5.0) -> bool:
    """Whether every process holding ``needle`` has ended within ``within`` seconds."""
    deadline = time.monotonic() + within
    while running(needle):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def dies_with_pytest() -> Callable[[], None] | None:
    """A ``preexec_fn`` for a test daemon: the kernel kills it when this process dies, so
    a pytest killed mid-run (a CI timeout) leaves no daemon behind.  Only when forked from
    the main thread: the kernel's signal follows the thread that forked, and a daemon a
    test restarts from a worker thread would die with that thread (its fixture's
    teardown stops it then)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return parent_death_kill()
