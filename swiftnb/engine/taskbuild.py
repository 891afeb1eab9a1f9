"""Building an app call's Task: its command words, redirections, staged files, profiles
and job id, from the frame of the call.

A part of :class:`swiftnb.engine.run.Run` (a mixin): the state it reads is the run's,
declared below.
"""

from __future__ import annotations

import itertools
import os
from typing import TYPE_CHECKING, Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.appplan import AppPlan, CommandPlan, Word, jobid_prefix
from swiftnb.engine.filemap import _now
from swiftnb.engine.formatting import java_str
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


class TaskBuilding:
    """The run's task building: build_task and the job ids."""

    base_dir: str
    run_dir: str
    _uid: itertools.count
    _thread: itertools.count
    _made_dirs: set[str]
    _call_paths: dict[FileNode, str] | None

    if TYPE_CHECKING:  # the run's own, used here
        def plain(self, v: Any) -> Any:
            ...

        def path_of(self, node: Any) -> str:
            ...

        def local(self, path: str) -> str:
            ...

    def _jobid(self, tr: str) -> str:
        return self._next_jobid(jobid_prefix(tr))

    def _next_jobid(self, prefix: str) -> str:
        # a bijection of the per-run counter mod 35**8 (7919 is prime to 35): ids look
        # scattered like Swift's but never repeat within a run
        high, low = divmod((next(self._uid) * 7919) % _UID_SPACE, _PAIR_SPACE ** 2)
        low_high, low_low = divmod(low, _PAIR_SPACE)
        high_high, high_low = divmod(high, _PAIR_SPACE)
        return f"{prefix}{_PAIRS[low_low]}{_PAIRS[low_high]}{_PAIRS[high_low]}{_PAIRS[high_high]}"

    def _words(self, v: Any, out: list[str]) -> None:
        """The words of one argument's value: a file its path, an array its elements'
        words in key order, a primitive as Java printed it."""
        c = v.__class__
        if c is str:
            out.append(v)
        elif c is Cell:
            self._words(v.value, out)
        elif c is FileNode:
            out.append(self.path_of(v))
        elif c is ArrayNode:
            for k in v.sorted_keys():
                self._words(v.items[k], out)
        elif c is StructNode:
            raise SwiftError("Cannot pass a structure as an application parameter")
        elif isinstance(v, Node):
            return
        elif isinstance(v, dict):
            for k in D.sorted_keys(v):
                self._words(v[k], out)
        elif isinstance(v, D.FileValue):
            out.append(v.path or "")
        else:
            out.append(java_str(v))

    def build_task(self, info: ProcInfo, frame: list, outs: list[Node], pos: A.Pos) -> Task:
        plan = info.plan
        if plan is None or not plan.commands:
            raise SwiftError(f"app {info.name} has no command")
        # the paths named while the call is built, each made once (see path_of)
        self._call_paths = {}
        try:
            return self._task(info, plan, frame, outs)
        finally:
            self._call_paths = None

    def _task(self, info: ProcInfo, plan: AppPlan, frame: list, outs: list[Node]) -> Task:
        first = plan.commands[0]
        argv, (stdin, stdout, stderr) = self._command_line(first, frame)
        profiles: dict[str, str] = {}
        maxwall = None
        if info.profiles:
            for k, v in info.profiles:
                profiles[java_str(self.plain(k(frame)))] = java_str(self.plain(v(frame)))
            mw = profiles.get("maxwalltime") or profiles.get("maxWallTime")
            if mw:
                maxwall = _walltime(mw)
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
        # by position, in the order of Task's fields (a third of the cost by keywords;
        # tests/engine/test_task_building.py reads every one of them back)
        task = Task(self._next_jobid(plan.jobid_prefix), first.tr, argv, self.base_dir,
                    self.run_dir, stdin, stdout, stderr, inputs, outputs, profiles, {},
                    maxwall, first.source, 0, None, f"R-{next(self._thread)}", globs)
        if len(plan.commands) > 1:
            task.more_commands = self._more_commands(plan.commands[1:], frame)
        return task

    def _more_commands(self, commands: tuple[CommandPlan, ...],
                       frame: list) -> tuple[Command, ...]:
        """The commands after the first of an app body of several (trunk runs them in
        order in the one job directory), each with its own words and redirections."""
        more = []
        for command in commands:
            argv, streams = self._command_line(command, frame)
            more.append(Command(tr=command.tr, args=argv, stdin=streams[0],
                                stdout=streams[1], stderr=streams[2], source=command.source))
        return tuple(more)

    def _command_line(self, command: CommandPlan, frame: list
                      ) -> tuple[list[str], tuple[str | None, str | None, str | None]]:
        """One command's words, and its stdin, stdout and stderr (None: not redirected):
        the literals as the plan has them, the rest from the call's frame."""
        argv: list[str] = []
        for word in command.words:
            if word.__class__ is str:
                argv.append(word)
                continue
            v = word(frame)  # type: ignore[operator]  # not a str: an evaluator
            c = v.__class__
            if c is str:
                argv.append(v)
            elif c is int:
                argv.append(str(v))
            else:
                self._words(v, argv)
        stdin, stdout, stderr = command.redirections
        if stdin is None and stderr is None and (stdout is None or stdout.__class__ is str):
            return argv, (None, stdout, None)
        return argv, (self._stream(stdin, frame), self._stream(stdout, frame),
                      self._stream(stderr, frame))

    def _stream(self, redirection: Word | None, frame: list) -> str | None:
        """A redirection's file name (its words joined), None when not redirected."""
        if redirection is None or redirection.__class__ is str:
            return redirection
        v = redirection(frame)  # type: ignore[operator]  # an evaluator
        if v.__class__ is str:  # ``stdout=@o``: one file's name
            return v
        words: list[str] = []
        self._words(v, words)
        return " ".join(words)


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
