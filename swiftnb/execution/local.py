"""The local provider: runs tasks as child processes of this machine, through the wrapper.

The loop prepares a job's directory (a spare directory renamed into place, see
``wrapper.SpareDirs``; inputs linked), starts the app, hears of its end through a pidfd
(no thread, no signal handler) and stages it out: a few cheap system calls each, and
on one thread nothing waits for the GIL (a runner thread per app cost about 0.3 ms of
CPU per call in thread switches, on a path whose whole budget is about 1 ms).

An app is started without ``subprocess.Popen`` (``remote/wrap/spawn.py``: the same vfork
and exec, the environment encoded once a run).  One thing cannot be cheap on the loop's
thread: vfork holds its caller until the child has exec'd, and on a busy machine the
child waits for a CPU.  So the provider times every start; when starts get slow it
hands the starts to runner threads (``runners.Runners``; a run under load then keeps 0.8
of xargs' speed instead of 0.25), still hearing of each end and staging it out on the
loop (a thread that staged out too wanted the GIL a second time per call), and
tries the loop again every ``_THREADED_STRETCH`` starts.  Runner threads start, wait for
and stage out the whole app on sites that copy inputs to a scratch directory (a copy
takes as long as the file is big) and on systems without pidfds.

Every child runs in its own session; cancelling ``execute`` kills its whole process
group.  This process is the apps' subreaper: what an app leaves running ends with its
call (the wrapper's marks and orphans; a daemon that escaped both: ``escapees.py``).
Status reports follow Swift's local provider: 8 (submitting), 1 (submitted), 2 (active),
then 7 (completed) or 5 (failed, with the message).
"""

from __future__ import annotations

import asyncio
import errno
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.remote import wrapper
from swiftnb.remote.wrap.spawn import AppEnvironment, AppProcess
from swiftnb.execution import escapees
from swiftnb.execution.joblog import InfoWriter
from swiftnb.execution.outcome import result_from_dict
from swiftnb.execution.runners import Runners
from swiftnb.execution.shell import remove_local_tree
from swiftnb.scheduling.options import ProviderOptions
from swiftnb.scheduling.provider import Job, Provider, ProviderState, StatusReporter

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.scheduling.build import BuildContext

__all__ = ["LocalProvider", "LocalOptions", "make_provider"]

#: Runner threads at most (one per running job; made as needed, idle ones reused).
MAX_RUNNERS = 1024
#: Starts on the loop slower than this (seconds, moving average) send the next starts to
#: runner threads: the machine is busy, and vfork holds the loop until the child runs.
#: Measured on 2 cores: a start takes 0.3 ms when idle (1% over 2 ms, some 20 ms), and
#: 7 ms with three CPU-bound processes besides.
_SLOW_START = 0.002
#: A single start counts at most this much: one stall is not a busy machine.
_START_CLIP = 0.005
#: How many starts go to runner threads before the loop is tried again.
_THREADED_STRETCH = 64


class _Process:
    """An app's process: started and staged out on the loop (``start``, then ``end``
    when its pidfd says it has exited) or on a runner thread (``run``); ``kill`` (from
    the loop) ends it early.

    No lock: ``kill`` sets its flag before it reads ``proc`` and ``start`` sets ``proc``
    before it reads the flag, so one of the two always sends the signal."""

    def __init__(self, job: wrapper.Job, environment: AppEnvironment,
                 on_success: Callable[[], None] | None = None) -> None:
        self.job = job
        self.environment = environment
        self.on_success = on_success  # after exit 0, before the stage-out
        self.result: wrapper.JobResult | None = None  # the job's end, left None when canceled
        self.proc: AppProcess | None = None
        self.canceled = False
        self.timed_out = False

    def start(self) -> None:
        """Start the app.  OSError: it could not be started."""
        job = self.job
        escapees.app_starting()
        try:
            self.proc = job.start(self.environment)
        finally:
            job.close_streams()
            escapees.app_started(self.proc.pid if self.proc is not None else None)
        if self.canceled or self.timed_out:
            job.kill(self.proc.pid)

    def end(self, returncode: int) -> None:
        """Stage out the ended app: the wrapper's result in ``result``; then end the
        daemons it (or an app before it) left where the wrapper cannot find them."""
        if self.proc is not None:
            escapees.app_ended(self.proc.pid)
        try:
            self._stage_out(returncode)
        finally:
            escapees.end_escaped(self.job.left_strangers)

    def _stage_out(self, returncode: int) -> None:
        if returncode == 0 and self.on_success is not None and not self.canceled:
            self.on_success()
        if not self.canceled:
            self.result = self.job.finish(returncode, timed_out=self.timed_out)

    def run(self) -> None:
        """``start``, wait and ``end``, blocking (on a runner thread)."""
        if self.canceled:
            return
        self.start()
        assert self.proc is not None
        self.end(self.proc.wait())

    def kill(self, *, timed_out: bool = False) -> None:
        if timed_out:
            self.timed_out = True
        else:
            self.canceled = True
        proc = self.proc
        if proc is not None and proc.returncode is None:  # reaped: its pid may be reused
            self.job.kill(proc.pid)


class LocalProvider(Provider):
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
        always_info: bool = False,
        info_per_job: bool = False,
        cdm: CdmPolicy | None = None,
        bus: EventBus | None = None,
    ) -> None:
        self.name = name
        self.work_dir = work_dir
        self.site_run = site_run
        self.keep = keep
        self.enforce_walltime = enforce_walltime
        self.scratch = scratch
        self.always_info = always_info
        self.cdm = cdm
        # bus: a lost record is said
        self._info = InfoWriter(background=True, bus=bus, per_job=info_per_job)
        self._processes: set[_Process] = set()
        #: set by shutdown(): a task still in execute() ends as canceled, none starts
        self._closing = False
        self._inflight = 0
        self._drained: asyncio.Event | None = None
        self._site_dirs: set[str] = set()
        self._runners = Runners("swiftnb-local", MAX_RUNNERS)
        self._spares = wrapper.SpareDirs()
        #: what apps start with: this process's environment when the run started
        self._environment = AppEnvironment()
        self._pidfds = hasattr(os, "pidfd_open")  # False once the kernel said no
        self._start_time = 0.0  # moving average of a start on the loop, seconds
        self._threaded = 0      # starts still to hand to runner threads
        self._reaping: set[asyncio.Future[Any]] = set()  # apps started on the loop, not reaped
        self.submitted = 0
        self.completed = 0
        self.failed = 0

    async def start(self) -> None:
        self._closing = False  # a provider started again after shutdown() runs tasks again
        self._environment = AppEnvironment()  # a run's apps see the environment it began with

    def spec(self, task: Task) -> wrapper.JobSpec:
        """The wrapper's job spec for a task on this site."""
        return wrapper.spec_from_task(
            task,
            site=self.name,
            work_dir=self.work_dir,
            site_run=self.site_run,
            keep=self.keep,
            walltime=task.maxwalltime if self.enforce_walltime else None,
            scratch=self.scratch,
            cdm=self.cdm.directives(task.inputs, task.outputs) or None if self.cdm else None,
        )

    def prepare(self, task: Task) -> Job:
        """The task's job: its wrapper spec, which names its job directory."""
        spec = self.spec(task)
        return Job(task, wrapper.job_dir_relative(spec), spec)

    async def execute(self, job: Job, report: StatusReporter) -> TaskResult:
        if self._closing:  # the run is stopping: start nothing new
            report.status(TaskStatus.CANCELED)
            return TaskResult(ok=False, message="Canceled: the run was stopped", site=self.name,
                              failure=FailureKind.CANCELED)
        self._inflight += 1
        try:
            return await self._execute(job, report)
        finally:
            self._inflight -= 1
            if self._inflight == 0 and self._drained is not None:
                self._drained.set()

    async def _execute(self, prepared: Job, report: StatusReporter) -> TaskResult:
        report.status(TaskStatus.SUBMITTING)
        self.submitted += 1
        task = prepared.task
        spec = prepared.spec if prepared.spec is not None else self.spec(task)
        self._site_dirs.add(os.path.join(spec["work_dir"], spec["site_run"]))
        scratch = spec.get("scratch")
        if scratch:
            self._site_dirs.add(os.path.join(scratch, spec["site_run"]))
        loop = asyncio.get_running_loop()
        if wrapper.copies_much(spec):  # copies take as long as the files are big
            job = await self._runners.call(wrapper.prepare, spec, self._spares)
        else:  # a rename, a few links and small copies: cheaper here than a thread hop
            job = wrapper.prepare(spec, self._spares)
        if job.failure is not None:
            return self._ended(job.failure, report, task, spec)
        # alwaysTransferWrapperLog: the record of a job that exits 0 is written as it ends
        # (a failure found later, e.g. a missing output, writes it again)
        on_success = (None if not self.always_info else lambda: self._write_info(
            task, spec, {"directory": job.rel_dir, "exit_code": 0,
                         "extra_info": job.extra_info}))
        process = _Process(job, self._environment, on_success)
        self._processes.add(process)
        # Active from the moment the app is started (as a Swift job was once its wrapper
        # ran): on a runner thread, a "started" message back would cost the loop one more
        # wake-up per job
        report.status(TaskStatus.SUBMITTED)
        report.status(TaskStatus.ACTIVE)
        timer: asyncio.TimerHandle | None = None
        walltime = spec.get("walltime")
        if walltime:
            timer = loop.call_later(float(walltime), lambda: process.kill(timed_out=True))
        try:
            if spec.get("scratch") or not self._pidfds:
                waited = self._runners.call(process.run)
            elif self._threaded:
                self._threaded -= 1
                waited = self._start_on_thread(process, loop)
            else:
                waited = self._start_here(process, loop)
            await asyncio.shield(waited)
        except OSError as exc:  # not executable (or a refused fork): the wrapper says which
            return self._ended(job.start_failed(exc), report, task, spec)
        except asyncio.CancelledError:
            process.kill()
            try:  # it dies at once; shielded, a second cancel cannot leave it unreaped
                await asyncio.shield(waited)
            except (OSError, asyncio.CancelledError):
                pass
            if process.result is None:  # else the app had ended and been staged out
                job.finish(None, canceled=True)
            report.status(TaskStatus.CANCELED)
            raise
        finally:
            self._processes.discard(process)
            if timer is not None:
                timer.cancel()
        if process.canceled:  # shutdown() killed it: the run stopped, the app did not fail
            if process.result is None:
                job.finish(None, canceled=True)
            report.status(TaskStatus.CANCELED)
            return TaskResult(ok=False, message="Canceled: the run was stopped", site=self.name,
                              failure=FailureKind.CANCELED)
        assert process.result is not None  # staged out as it ended
        return self._ended(process.result, report, task, spec)

    def _start_here(self, process: _Process, loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
        """Start the app on the loop (OSError: it could not be); the future is done once
        it has ended and been staged out."""
        began = time.perf_counter()
        process.start()
        took = min(time.perf_counter() - began, _START_CLIP)
        self._start_time += (took - self._start_time) * 0.1
        if self._start_time > _SLOW_START:  # busy machine: the loop stalls in vfork
            self._threaded = _THREADED_STRETCH
            # just under the mark: one slow start back on the loop sends the next ones
            # to threads again, fast ones bring the average down
            self._start_time = _SLOW_START * 0.9
        return self._reap_here(process, loop)

    def _start_on_thread(self, process: _Process,
                         loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
        """Start the app on a runner thread (the loop goes on while vfork waits for the
        child's exec), then hear of its end and stage it out on the loop, as
        ``_start_here`` does: the thread holds the GIL only for the start's few lines, not
        for the stage-out too (on a busy machine, each thread that wants the GIL while
        the loop holds it is a futex sleep and wake)."""
        done = loop.create_future()

        def reaped(future: asyncio.Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(None)

        def started(future: asyncio.Future[Any]) -> None:
            error = future.exception()
            if error is not None:  # not started (OSError): the wrapper says why
                done.set_exception(error)
                return
            try:
                self._reap_here(process, loop).add_done_callback(reaped)
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                done.set_exception(exc)

        self._runners.call(process.start).add_done_callback(started)
        return done

    def _reap_here(self, process: _Process,
                   loop: asyncio.AbstractEventLoop) -> asyncio.Future[Any]:
        """A future done once the started app has ended and been staged out: its end
        heard through a pidfd on the loop (else waited for on a runner thread)."""
        proc = process.proc
        assert proc is not None
        try:
            pidfd = os.pidfd_open(proc.pid)
        except OSError as exc:  # wait on a runner thread instead
            if exc.errno not in (errno.EMFILE, errno.ENFILE):  # a kernel without pidfds
                self._pidfds = False
            return self._runners.call(lambda: process.end(proc.wait()))
        done = loop.create_future()

        def ended() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            self._reaping.discard(done)
            try:
                process.end(proc.wait())
            except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
                if not done.done():
                    done.set_exception(exc)
            else:
                if not done.done():
                    done.set_result(None)

        try:
            loop.add_reader(pidfd, ended)
        except NotImplementedError:  # a loop without readers (Windows' proactor)
            os.close(pidfd)
            return self._runners.call(lambda: process.end(proc.wait()))
        self._reaping.add(done)
        return done

    def _ended(self, result: wrapper.JobResult, report: StatusReporter, task: Task,
               spec: wrapper.JobSpec) -> TaskResult:
        if result["ok"]:
            self.completed += 1
            report.status(TaskStatus.COMPLETED)
        else:
            self.failed += 1
            self._write_info(task, spec, result)
            report.status(TaskStatus.FAILED, message=result.get("cause") or result.get("message"))
        return result_from_dict(result)

    def _write_info(self, task: Task, spec: wrapper.JobSpec, result: Mapping[str, Any]) -> None:
        self._info.write(task.run_dir, spec, result)

    async def shutdown(self) -> None:
        """Kill what still runs; remove the site run directories unless keepSiteDir.

        Tasks still in ``execute`` (the run was interrupted) end as canceled, not failed,
        and are waited for (a few seconds at most) so that their job directories are gone
        before the site directory is removed, and so are the apps the loop started: they
        are reaped before the loop may close."""
        self._closing = True
        for process in list(self._processes):
            process.kill()
        if self._inflight:
            self._drained = asyncio.Event()
            try:
                await asyncio.wait_for(self._drained.wait(), 10.0)
            except TimeoutError:
                pass
        if self._reaping:  # killed apps the loop has yet to reap: no zombie outlives us
            await asyncio.wait(list(self._reaping), timeout=10.0)
        self._info.close()  # every -info record on disk before the run reports its end
        self._runners.shutdown()  # idle threads end; a restarted provider gets new ones
        self._runners = Runners("swiftnb-local", MAX_RUNNERS)
        self._spares.clear()
        if self.keep:
            return
        for site_dir in self._site_dirs:
            try:  # its shared/ may hold read-only copies of input directories
                remove_local_tree(site_dir)
            except OSError:
                pass
            try:
                os.rmdir(os.path.dirname(site_dir))  # the work dir, if nothing else is in it
            except OSError:
                pass
        self._site_dirs.clear()

    def state(self) -> ProviderState:
        return ProviderState(
            site=self.name, type="local", submitted=self.submitted,
            running=sum(1 for p in self._processes if p.proc is not None),
            completed=self.completed, failed=self.failed)


@dataclass(frozen=True)
class LocalOptions(ProviderOptions):
    """``execution.options`` of a local site: none of its own (the brokerage keys only)."""


def make_provider(site: SiteConfig, ctx: BuildContext) -> LocalProvider:
    """The provider of an ``execution.type: "local"`` site."""
    LocalOptions.from_mapping(site.execution.options, where=ctx.where(site),
                              origin=ctx.origin(site), type_name="local",
                              warn=ctx.warn)
    scratch = site.scratch
    if scratch and not os.path.isabs(scratch):  # node-local copies of inputs
        scratch = os.path.abspath(scratch)
    return LocalProvider(site.name, work_dir=site.work_directory, site_run=ctx.site_run,
                         keep=ctx.keep(site), scratch=scratch,
                         always_info=ctx.config.always_transfer_wrapper_log,
                         info_per_job=ctx.config.wrapper_log_per_job, cdm=ctx.cdm,
                         bus=ctx.bus)
