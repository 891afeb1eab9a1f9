"""What the engine hands to whoever runs apps: a Task, and the Executor interface.

The engine owns this interface (DESIGN.md, "The house"): it knows nothing of sites.  A
local executor runs tasks on this machine; the scheduler implements the same interface
and puts sites, throttles and policies behind it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass(slots=True)
class Task:
    """One app invocation, fully evaluated.

    Paths in ``inputs``, ``outputs`` and the redirections are as the script's mappers
    named them: relative to ``base_dir`` (the directory the run was started from) or
    absolute.  The job runs in a job directory where those relative paths resolve to the
    staged inputs, and outputs are moved to their mapped places only on success.
    """

    jobid: str                      # e.g. "echo-clz8qmvr" (Swift's TR-<uid> form)
    tr: str                         # the app name (transformation) of the first command word
    args: list[str]                 # argv after the executable, never a shell string
    base_dir: str                   # where relative mapped paths resolve
    run_dir: str                    # the run directory (job dirs and logs go under it)
    stdin: str | None = None
    stdout: str | None = None
    stderr: str | None = None
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    profiles: dict[str, str] = field(default_factory=dict)   # profile "k" = v; options
    env: dict[str, str] = field(default_factory=dict)
    maxwalltime: float | None = None  # seconds
    source: str = ""                 # "script.swift:12:5", for error messages
    attempt: int = 0
    executable: str | None = None    # resolved by the site's app catalogue (None = tr)
    thread: str | None = None        # the engine thread of the call (THREAD_ASSOCIATION thread=)
    # dynamic outputs (an app producing a whole array mapped by filesys_mapper or
    # simple_mapper): globs relative to base_dir (`*` `?` per path component, `**` for
    # directories; mapper.stage_out_globs()) of files the app may create; the wrapper
    # brings back whatever matches, none is required
    output_globs: list[str] = field(default_factory=list)


@dataclass(slots=True)
class TaskResult:
    """How a task ended.  ``ok`` means exit 0 and every declared output produced."""

    ok: bool
    exit_code: int | None = None
    message: str = ""               # for people: what failed and why
    stdout_tail: str = ""
    stderr_tail: str = ""
    site: str = ""
    canceled: bool = False


class Executor(Protocol):
    """Runs tasks for the engine.  ``submit`` returns when the task has ended."""

    async def submit(self, task: Task) -> TaskResult: ...

    async def close(self) -> None: ...
