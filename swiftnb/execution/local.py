"""The local provider: runs tasks as child processes of this machine, through the wrapper.

Why not ``asyncio.create_subprocess_exec``: on Python 3.11 its default child watcher
starts a thread per child, which costs more than the echo it waits for.  We start the
child with ``subprocess.Popen`` (vfork/exec, as asyncio does internally) and wait on a
Linux pidfd registered with the running loop, so a waiting job costs one file
descriptor and no thread.  Where pidfds are missing we fall back to a thread-pool wait.

A job starts on the loop's own thread: preparing its directory is a few system calls
(a spare directory renamed into place, see ``wrapper.SpareDirs``; inputs symlinked) and
handing that to a thread cost more than it saved.  Only sites that copy inputs to a
scratch directory prepare and clean up on threads, since a copy takes as long as the
file is big.

Every child runs in its own session; cancelling ``execute`` kills its whole process
group.  Status reports follow Swift's local provider: 8 (submitting), 1 (submitted),
2 (active), then 7 (completed) or 5 (failed, with the message).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from typing import Any

from swiftnb.engine.task import Task, TaskResult
from swiftnb.events import TaskStatus
from swiftnb.execution import wrapper
from swiftnb.scheduling.provider import StatusReporter

__all__ = ["LocalProvider", "result_from_dict", "wait_process"]


def result_from_dict(result: dict[str, Any]) -> TaskResult:
    """The engine's TaskResult from the wrapper's result dict."""
    return TaskResult(
        ok=bool(result.get("ok")),
        exit_code=result.get("exit_code"),
        message=result.get("message", ""),
        stdout_tail=result.get("stdout_tail", ""),
        stderr_tail=result.get("stderr_tail", ""),
        site=result.get("site", ""),
        canceled=bool(result.get("canceled")),
    )


async def wait_process(proc: subprocess.Popen) -> int:
    """Wait for a child without blocking the loop and without a thread (pidfd)."""
    loop = asyncio.get_running_loop()
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return await loop.run_in_executor(None, proc.wait)
    try:
        done = loop.create_future()

        def ready() -> None:
            if not done.done():
                done.set_result(None)

        try:
            loop.add_reader(fd, ready)
        except NotImplementedError:  # a loop without add_reader (Windows proactor)
            return await loop.run_in_executor(None, proc.wait)
        try:
            await done
        finally:
            loop.remove_reader(fd)
    finally:
        os.close(fd)
    return proc.wait()


def _start_job(spec: dict[str, Any], spares: wrapper.SpareDirs | None = None,
               ) -> tuple[wrapper.Job, subprocess.Popen | None, str | None]:
    """Prepare the job directory and start the app (run on a spawner thread)."""
    job = wrapper.prepare(spec, spares)
    if job.failure is not None:
        return job, None, None
    try:
        proc = subprocess.Popen(job.argv, **job.popen_kwargs())
    except OSError as exc:
        job.close_streams()
        job.cleanup()
        return job, None, str(exc.strerror or exc)
    job.close_streams()
    return job, proc, None


class LocalProvider:
    """Runs tasks on this machine.

    ``work_dir`` is the site workDirectory (relative = under the task's base directory;
    default ``swiftwork``); ``site_run`` the ``SCRIPT-RUNID`` directory inside it;
    ``keep`` is keepSiteDir; ``scratch`` a node-local directory for job directories
    (inputs copied, not linked).  ``enforce_walltime`` (default True) kills an app that
    runs longer than its task's maxwalltime, as coaster workers do.  Swift's local provider
    did not, so a hung app with a walltime hung the whole run; a user who wrote the limit
    expects it kept (docs/running.md).
    """

    def __init__(
        self,
        name: str = "local",
        *,
        work_dir: str | None = None,
        site_run: str | None = None,
        keep: bool = False,
        enforce_walltime: bool = True,
        scratch: str | None = None,
    ) -> None:
        self.name = name
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        self.enforce_walltime = enforce_walltime
        self.scratch = scratch
        self._running: dict[int, subprocess.Popen] = {}
        #: set by shutdown(): a task still in execute() ends as canceled, none starts
        self._closing = False
        self._inflight = 0
        self._drained: asyncio.Event | None = None
        self._site_dirs: set[str] = set()
        self._janitor: Any = None
        self._spawner: Any = None
        self._spares = wrapper.SpareDirs()
        self.submitted = 0
        self.completed = 0
        self.failed = 0

    async def start(self) -> None:
        self._closing = False  # a provider started again after shutdown() runs tasks again

    def spec(self, task: Task) -> dict[str, Any]:
        """The wrapper's job spec for a task on this site."""
        return wrapper.spec_from_task(
            task,
            site=self.name,
            work_dir=self.work_dir,
            site_run=self.site_run,
            keep=self.keep,
            walltime=task.maxwalltime if self.enforce_walltime else None,
            scratch=self.scratch,
        )

    def job_dir(self, task: Task) -> str:
        """The task's job directory relative to the site work directory."""
        return wrapper.job_dir_relative(self.spec(task))

    async def execute(self, task: Task, report: StatusReporter) -> TaskResult:
        if self._closing:  # the run is stopping: start nothing new
            report(TaskStatus.CANCELED)
            return TaskResult(ok=False, message="Canceled: the run was stopped", site=self.name,
                              canceled=True)
        self._inflight += 1
        try:
            return await self._execute(task, report)
        finally:
            self._inflight -= 1
            if self._inflight == 0 and self._drained is not None:
                self._drained.set()

    async def _execute(self, task: Task, report: StatusReporter) -> TaskResult:
        report(TaskStatus.SUBMITTING)
        self.submitted += 1
        spec = self.spec(task)
        self._site_dirs.add(os.path.join(spec["work_dir"], spec["site_run"]))
        if spec.get("scratch"):
            self._site_dirs.add(os.path.join(spec["scratch"], spec["site_run"]))
        copies = bool(spec.get("scratch"))
        if copies:
            job, proc, error = await self._start_in_thread(spec)
        else:  # a few cheap system calls: a thread hop would cost more than it saves
            job, proc, error = _start_job(spec, self._spares)
        if job.failure is not None:
            return self._ended(job.failure, report, task, spec)
        if proc is None:
            return self._ended(job._result(False, None, f"Cannot execute {job.argv[0]}: {error}"),
                               report, task, spec)
        self._running[proc.pid] = proc
        report(TaskStatus.SUBMITTED)
        report(TaskStatus.ACTIVE)
        timed_out = False
        try:
            if spec.get("walltime"):
                try:
                    returncode = await asyncio.wait_for(wait_process(proc), spec["walltime"])
                except asyncio.TimeoutError:
                    wrapper.kill_group(proc.pid)
                    returncode = await wait_process(proc)
                    timed_out = True
            else:
                returncode = await wait_process(proc)
        except asyncio.CancelledError:
            wrapper.kill_group(proc.pid)
            proc.wait()
            job.finish(None, canceled=True)
            report(TaskStatus.CANCELED)
            raise
        finally:
            self._running.pop(proc.pid, None)
        if self._closing:  # shutdown() killed it: the run was stopped, the app did not fail
            job.finish(None, canceled=True)
            report(TaskStatus.CANCELED)
            return TaskResult(ok=False, message="Canceled: the run was stopped", site=self.name,
                              canceled=True)
        result = job.finish(returncode, timed_out=timed_out, cleanup=not copies)
        if copies:  # removing copied inputs may take long
            self._janitor_submit(job.cleanup)
        return self._ended(result, report, task, spec)

    async def _start_in_thread(self, spec: dict[str, Any],
                               ) -> tuple[wrapper.Job, subprocess.Popen | None, str | None]:
        """Prepare and start a job whose inputs are copied (a scratch site), on a
        spawner thread: copies take as long as the files are big."""
        start = asyncio.get_running_loop().run_in_executor(
            self._spawner_pool(), _start_job, spec, self._spares)
        try:
            return await asyncio.shield(start)
        except asyncio.CancelledError:
            job, proc, _error = await start  # it may have started: kill it, do not leak it
            if proc is not None:
                wrapper.kill_group(proc.pid)
                proc.wait()
                job.finish(None, canceled=True)
            raise

    def _spawner_pool(self) -> Any:
        """Threads that prepare job directories with copied inputs and start them."""
        if self._spawner is None:
            from concurrent.futures import ThreadPoolExecutor

            self._spawner = ThreadPoolExecutor(4, thread_name_prefix="swiftnb-spawn")
        return self._spawner

    def _janitor_submit(self, fn: Any) -> None:
        """Remove job directories with copied inputs on one background thread."""
        if self._janitor is None:
            from concurrent.futures import ThreadPoolExecutor

            self._janitor = ThreadPoolExecutor(1, thread_name_prefix="swiftnb-jobdir-cleanup")
        self._janitor.submit(fn)

    def _ended(self, result: dict[str, Any], report: StatusReporter, task: Task,
               spec: dict[str, Any]) -> TaskResult:
        if result["ok"]:
            self.completed += 1
            report(TaskStatus.COMPLETED)
        else:
            self.failed += 1
            self._write_info(task, spec, result)
            report(TaskStatus.FAILED, message=result.get("cause") or result.get("message"))
        return result_from_dict(result)

    @staticmethod
    def _write_info(task: Task, spec: dict[str, Any], result: dict[str, Any]) -> None:
        """A failed job's record in ``RUNDIR/SCRIPT-RUNID.d/JOBID-info``, where Swift kept
        the wrapper logs of failed jobs, so the evidence outlives the job directory."""
        try:
            info_dir = os.path.join(task.run_dir, f"{spec['site_run']}.d")
            os.makedirs(info_dir, exist_ok=True)
            name = task.jobid if not spec.get("attempt") else f"{task.jobid}-{spec['attempt']}"
            with open(os.path.join(info_dir, f"{name}-info"), "w", encoding="utf-8") as fh:
                fh.write(f"JOBID={task.jobid}\nHOST={spec.get('site')}\n"
                         f"DIR={result.get('directory')}\nEXEC={spec.get('executable')}\n"
                         f"ARGS={wrapper.format_arguments(spec.get('args') or [])}\n"
                         f"STDIN={spec.get('stdin') or ''}\nSTDOUT={spec.get('stdout') or ''}\n"
                         f"STDERR={spec.get('stderr') or ''}\n"
                         f"INF={'|'.join(spec.get('inputs') or [])}\n"
                         f"OUTF={'|'.join(spec.get('outputs') or [])}\n"
                         f"EXIT_CODE={result.get('exit_code')}\n\n{result.get('message', '')}\n"
                         f"\n--- stdout (tail) ---\n{result.get('stdout_tail', '')}\n"
                         f"--- stderr (tail) ---\n{result.get('stderr_tail', '')}\n")
        except OSError:
            pass

    async def shutdown(self) -> None:
        """Kill what still runs; remove the site run directories unless keepSiteDir.

        Tasks still in ``execute`` (the run was interrupted) end as canceled, not failed,
        and are waited for (a few seconds at most) so that their job directories are gone
        before the site directory is removed."""
        self._closing = True
        for pid in list(self._running):
            wrapper.kill_group(pid)
        if self._inflight:
            self._drained = asyncio.Event()
            try:
                await asyncio.wait_for(self._drained.wait(), 10.0)
            except asyncio.TimeoutError:
                pass
        for proc in list(self._running.values()):
            proc.wait()
        self._running.clear()
        if self._spawner is not None:
            spawner, self._spawner = self._spawner, None
            spawner.shutdown(wait=False)
        if self._janitor is not None:
            janitor, self._janitor = self._janitor, None
            await asyncio.get_running_loop().run_in_executor(None, janitor.shutdown, True)
        self._spares.clear()
        if self.keep:
            return
        for site_dir in self._site_dirs:
            shutil.rmtree(site_dir, ignore_errors=True)
            try:
                os.rmdir(os.path.dirname(site_dir))  # the work dir, if nothing else is in it
            except OSError:
                pass
        self._site_dirs.clear()

    def state(self) -> dict[str, Any]:
        return {
            "site": self.name,
            "running": len(self._running),
            "submitted": self.submitted,
            "completed": self.completed,
            "failed": self.failed,
        }
