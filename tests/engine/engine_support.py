"""The engine tests' executors: apps run as real subprocesses, a restart log that only
records.  A module of its own (not conftest.py) so that test modules import it by a
name no other directory's conftest shares."""

from __future__ import annotations

import asyncio
import os

from swiftnb.engine.task import Task, TaskResult


class SubprocessTestExecutor:
    """A minimal real executor for engine tests: runs each task as a subprocess (argv
    list, redirections relative to base_dir) in base_dir itself.  The production
    executors (scheduling/, execution/) are tested on their own; this keeps the engine
    tests independent of them."""

    def __init__(self, max_parallel: int = 8) -> None:
        self.tasks: list[Task] = []
        self.running = 0
        self.max_running = 0
        self.sem = asyncio.Semaphore(max_parallel)

    def app_executable(self, tr: str) -> str | None:
        """Every app runs the program of its name here."""
        return tr

    async def submit(self, task: Task) -> TaskResult:
        self.tasks.append(task)
        async with self.sem:
            self.running += 1
            self.max_running = max(self.max_running, self.running)
            try:
                return await self._run(task)
            finally:
                self.running -= 1

    async def _run(self, task: Task) -> TaskResult:
        def at(p: str | None) -> str | None:
            return None if p is None else os.path.join(task.base_dir, p)

        stdin = open(at(task.stdin), "rb") if task.stdin else asyncio.subprocess.DEVNULL
        stdout = open(at(task.stdout), "wb") if task.stdout else asyncio.subprocess.DEVNULL
        stderr = open(at(task.stderr), "wb") if task.stderr else asyncio.subprocess.PIPE
        proc = None
        try:
            proc = await asyncio.create_subprocess_exec(
                task.executable or task.tr, *task.args, cwd=task.base_dir, stdin=stdin,
                stdout=stdout, stderr=stderr)
            _, err = await proc.communicate()
            err = err or b""
        except asyncio.CancelledError:
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
            raise
        finally:
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()  # not left to the garbage collector after the loop ends
            for fh in (stdin, stdout, stderr):
                if hasattr(fh, "close"):
                    fh.close()
        if proc.returncode != 0:
            return TaskResult(False, proc.returncode,
                              f"Exception in {task.tr}:\nCaused by: exit code {proc.returncode}",
                              stderr_tail=err.decode(errors="replace"))
        missing = [o for o in task.outputs if not os.path.exists(at(o))]
        if missing:
            return TaskResult(False, 0, "The following output files were not created by "
                              f"the application: {', '.join(missing)}")
        return TaskResult(True, 0)

    async def close(self) -> None:
        pass


class RecordingRestartLog:
    """Test double of engine/restart.py's RestartLog: a set of recorded paths."""

    def __init__(self, done: set[str] | None = None) -> None:
        self.done = set(done or ())
        self.recorded: list[str] = []
        self.warnings: list[str] = []  # what reading the log set aside (none here)

    def is_done(self, outputs: list[str]) -> bool:
        return all(o in self.done for o in outputs)

    def record(self, outputs: list[str]) -> None:
        self.recorded.extend(outputs)
        self.done.update(outputs)
