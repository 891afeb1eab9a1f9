"""Building an app call's Task: its command words, redirections, staged files, profiles
and job id, from the frame of the call.

A part of :class:`swiftnb.engine.run.Run` (a mixin): the state it reads is the run's,
declared below.
"""

from __future__ import annotations

import functools
import itertools
import os
from typing import TYPE_CHECKING, Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.filemap import _now
from swiftnb.engine.formatting import app_arg_str
from swiftnb.engine.task import Command, Task
from swiftnb.engine.values import (
    ArrayNode,
    Cell,
    Composite,
    FileNode,
    Node,
    StructNode,
    SwiftError,
)
from swiftnb.lang import ast as A

if TYPE_CHECKING:
    from swiftnb.engine.procedures import ProcInfo

__all__ = ["TaskBuilding"]

_B35 = "0123456789abcdefghijklmnopqrstuvxyz"  # base 35: a-z without w
_UID_SPACE = 35**8  # eight base-35 digits
_PAIR_SPACE = 35**2
#: two base-35 digits, least significant first, for each number below 35**2
_PAIRS = tuple(_B35[n % 35] + _B35[n // 35] for n in range(_PAIR_SPACE))


@functools.lru_cache(maxsize=1024)
def _jobid_prefix(tr: str) -> str:
    """``echo-``: the app's name as a job id starts, made once per app."""
    return "".join(ch if ch.isalnum() or ch in "_-" else "_"
                   for ch in os.path.basename(tr)) + "-"


class TaskBuilding:
    """The run's task building: build_task and the job ids."""

    base_dir: str
    run_dir: str
    _uid: itertools.count
    _thread: itertools.count
    _made_dirs: set[str]

    if TYPE_CHECKING:  # the run's own, used here
        def plain(self, v: Any) -> Any:
            ...

        def path_of(self, node: Any) -> str:
            ...

        def local(self, path: str) -> str:
            ...


    def _jobid(self, tr: str) -> str:
        # a bijection of the per-run counter mod 35**8 (7919 is prime to 35): ids look
        # scattered like Swift's but never repeat within a run
        n = (next(self._uid) * 7919) % _UID_SPACE
        high, low = divmod(n, _PAIR_SPACE ** 2)
        return (f"{_jobid_prefix(tr)}{_PAIRS[low % _PAIR_SPACE]}{_PAIRS[low // _PAIR_SPACE]}"
                f"{_PAIRS[high % _PAIR_SPACE]}{_PAIRS[high // _PAIR_SPACE]}")

    def _words(self, v: Any, out: list[str]) -> None:
        if isinstance(v, Node):
            c = v.__class__
            if c is Cell:
                self._words(v.value, out)  # type: ignore[attr-defined]  # its class is checked above
            elif c is FileNode:
                out.append(self.path_of(v))
            elif c is ArrayNode:
                for k in v.sorted_keys():  # type: ignore[attr-defined]  # its class is checked above
                    x = v.items[k]  # type: ignore[attr-defined]  # its class is checked above
                    self._words(x, out)
            elif c is StructNode:
                raise SwiftError("Cannot pass a structure as an application parameter")
            return
        if isinstance(v, dict):
            for k in D.sorted_keys(v):
                self._words(v[k], out)
            return
        if isinstance(v, D.FileValue):
            out.append(v.path or "")
            return
        out.append(app_arg_str(v))

    def build_task(self, info: ProcInfo, frame: list, outs: list[Node], pos: A.Pos) -> Task:
        if not info.commands:
            raise SwiftError(f"app {info.name} has no command")
        exe, args, redir, source = info.commands[0]
        argv, rd = self._command_line(args, redir, frame)
        profiles: dict[str, str] = {}
        for k, v in info.profiles:
            profiles[app_arg_str(self.plain(k(frame)))] = app_arg_str(self.plain(v(frame)))
        inputs: list[str] = []
        for slot in info.in_slots:
            x = frame[slot]
            c = x.__class__
            if c is FileNode:
                inputs.append(self.path_of(x))
            elif c is Cell and not isinstance(x.value, Node):
                continue  # a primitive: no file
            elif isinstance(x, Node):
                for leaf in V.file_leaves(x):
                    inputs.append(self.path_of(leaf))
        outputs: list[str] = []
        globs: list[str] = []
        for o in outs:
            if o.__class__ is FileNode:
                outputs.append(self.path_of(o))
                continue
            for leaf in V.file_leaves(o):
                outputs.append(self.path_of(leaf))
            if isinstance(o, Composite) and not o.closed:
                # dynamic output: the app decides the elements; the mapper names the
                # files it may create, the wrapper brings back whatever matches
                m = _now(o.mapper)
                if m is not None and not m.fixed:
                    try:
                        globs.extend(m.stage_out_globs())
                    except D.BuiltinError:
                        pass
        made = self._made_dirs
        for p in outputs:
            d = p.rpartition("/")[0]  # "" for a name without a directory, or under /
            if d and d not in made:
                made.add(d)
                try:
                    os.makedirs(self.local(d), exist_ok=True)
                except OSError:
                    pass
        maxwall = None
        if profiles:
            mw = profiles.get("maxwalltime") or profiles.get("maxWallTime")
            if mw:
                maxwall = _walltime(mw)
        task = Task(
            jobid=self._jobid(exe), tr=exe, args=argv, base_dir=self.base_dir,
            run_dir=self.run_dir, stdin=rd[0], stdout=rd[1], stderr=rd[2], inputs=inputs,
            outputs=outputs, profiles=profiles, maxwalltime=maxwall, source=source,
            thread=f"R-{next(self._thread)}", output_globs=globs,
        )
        if len(info.commands) > 1:
            task.more_commands = self._more_commands(info.commands[1:], frame)
        return task

    def _more_commands(self, commands: list[Any], frame: list) -> tuple[Command, ...]:
        """The commands after the first of an app body of several (trunk runs them in
        order in the one job directory), each with its own words and redirections."""
        more = []
        for exe, args, redir, source in commands:
            argv, streams = self._command_line(args, redir, frame)
            more.append(Command(tr=exe, args=argv, stdin=streams[0], stdout=streams[1],
                                stderr=streams[2], source=source))
        return tuple(more)

    def _command_line(self, args: list[Any], redir: list[Any],
                      frame: list) -> tuple[list[str], list[str | None]]:
        """One command's words, and its stdin, stdout and stderr (None: not redirected)."""
        argv: list[str] = []
        for ev in args:
            self._words(ev(frame), argv)
        streams: list[str | None] = []
        for r in redir:
            if r is None:
                streams.append(None)
            else:
                words: list[str] = []
                self._words(r(frame), words)
                streams.append(" ".join(words))
        return argv, streams


def _walltime(text: str) -> float | None:
    """``maxwalltime`` profile: minutes, ``MM:SS`` or ``HH:MM:SS``."""
    try:
        parts = [float(p) for p in str(text).split(":")]
    except ValueError:
        return None
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]
