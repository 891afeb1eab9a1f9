"""The ``sim`` provider: a simulated site with queue times, durations, failures, outages.

Configured like any site::

    site.grid1 {
      execution { type: "sim", options { slots: 8, queueTime: "exp:20",
                  taskDuration: "uniform:30:90", failureProbability: 0.05, seed: 1,
                  outages: "600+120", speed: 1.5 } }
    }

It runs no program.  Each task is "submitted" (optionally after ``submitTime``), waits
``queueTime`` in the site's queue, then for one of ``slots`` free slots, "runs" for
``taskDuration / speed`` seconds, and then either fails (with probability
``failureProbability``, at a random point of its run) or creates its declared output
files (and stdout/stderr files) and completes.  An outage (``start+duration`` seconds
after the clock started) refuses submissions ("Connection refused", which Swift's
scores punish hard) and kills the jobs running when it begins.  It reports the statuses
a real site would: 1 (submitted), 16 (stage-in, only with ``stageInTime``), 2 (active),
then 7 (completed) or 5 (failed, with a message).

Durations are seconds: a plain number, ``exp:MEAN``, ``uniform:A:B``,
``normal:MEAN:SD`` or ``empirical:X,Y,...`` (resampled); ``taskDuration`` may also map
app names to durations (``{ALL: 10, blast: "uniform:60:120"}``), and
``durationArgument: {sleep: 0}`` makes a ``sleep`` task's drawn duration a factor of its
first argument (a what-if model of ``sleep 900`` predicts ``sleep 60`` too).

With ``blockSlots`` set, the site is a coaster site: tasks run on the slots of simulated
blocks that queue, start and end (swiftnb.execution.simblocks: ``maxBlocks``,
``blockWalltime``, ``blockQueueTime``, ``blockStartup``, ``blockSubmitTime``,
``serviceStartTime``, ``blockIdleTime``), and ``slots`` no longer applies.

Time comes from the clock given (the scheduler's VirtualClock on a simulated grid, so a
run of hours takes seconds), or real time.  Every random draw for a task is made when it
is submitted, from a generator seeded by ``seed`` and the site name, so a seeded run
whose tasks arrive in the same order is reproducible.
"""

from __future__ import annotations

import asyncio
import os
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from swiftnb.config.types import BadValue, Distribution, parse_distribution, parse_outages
from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.execution.simblocks import BlockTimes, SimBlock, SimBlocks
from swiftnb.scheduling.clock import Clock, RealClock, VirtualClock
from swiftnb.scheduling.options import ProviderOptions, option
from swiftnb.scheduling.provider import Job, Provider, ProviderState, StatusReporter, swift_job_dir
from swiftnb.scheduling.throttles import Throttle

if TYPE_CHECKING:
    from swiftnb.config.model import SiteConfig
    from swiftnb.scheduling.build import BuildContext

__all__ = ["SimProvider", "SimOptions", "make_provider"]


def _shown(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def _distribution(value: Any) -> Distribution | dict[str, Distribution]:
    """A duration: a Distribution, or app name -> Distribution (``taskDuration``)."""
    if isinstance(value, Distribution):
        return value
    if isinstance(value, Mapping):
        per_app = {}
        for app, duration in value.items():
            try:
                per_app[str(app)] = _distribution(duration)
            except ValueError as exc:
                raise ValueError(f"{exc} (for app {app})") from None
        return per_app  # type: ignore[return-value]  # the distributions per app
    try:
        return parse_distribution(value)
    except BadValue as exc:
        raise ValueError(f"invalid value {_shown(value)}, {exc}") from None


def _outages(value: Any) -> tuple[tuple[float, float], ...]:
    if isinstance(value, (list, tuple)) and value and isinstance(value[0], tuple):
        return tuple(sorted(value))
    try:
        return tuple(sorted(parse_outages(value))) if value else ()
    except BadValue as exc:
        raise ValueError(f"invalid value {_shown(value)}, {exc}") from None


_NONE = Distribution("const", (0.0,))


def _argument_indexes(value: Any) -> tuple[tuple[str, int], ...]:
    """``durationArgument``: app name -> index of the argument durations scale with."""
    if isinstance(value, tuple):
        return value
    if not isinstance(value, Mapping):
        raise ValueError(f"invalid value {_shown(value)}, expected a map of app names to "
                         "argument indexes ({sleep: 0})")
    try:
        return tuple((str(app), int(index)) for app, index in value.items())
    except (TypeError, ValueError):
        raise ValueError(f"invalid value {_shown(value)}, expected argument indexes "
                         "(numbers)") from None


@dataclass(frozen=True)
class SimOptions(ProviderOptions):
    """``execution.options`` of a simulated site (the one declaration of them)."""

    slots: int = 8
    queueTime: Distribution = option(_NONE, convert=_distribution)
    taskDuration: Distribution | dict[str, Distribution] = option(
        Distribution("const", (1.0,)), convert=_distribution)
    failureProbability: float = 0.0
    seed: int = 0
    outages: tuple[tuple[float, float], ...] = option((), convert=_outages)
    speed: float = 1.0
    submitTime: Distribution = option(_NONE, convert=_distribution)
    stageInTime: Distribution = option(_NONE, convert=_distribution)
    writeOutputs: bool = True
    failureMessage: str = "Application {tr} failed with an exit code of 1 (simulated failure)"
    durationArgument: tuple[tuple[str, int], ...] = option((), convert=_argument_indexes)
    blockSlots: int = 0
    maxBlocks: int = 1
    blockWalltime: float = 0.0
    blockQueueTime: Distribution = option(_NONE, convert=_distribution)
    blockStartup: Distribution = option(_NONE, convert=_distribution)
    blockSubmitTime: Distribution = option(_NONE, convert=_distribution)
    serviceStartTime: Distribution = option(_NONE, convert=_distribution)
    blockIdleTime: Distribution = option(_NONE, convert=_distribution)

    def check(self) -> Iterator[tuple[str, str]]:
        if self.slots < 1:
            yield "slots", f"invalid value {self.slots}, expected a number of at least 1"
        if not 0.0 <= self.failureProbability <= 1.0:
            yield ("failureProbability", f"invalid value {self.failureProbability:g}, "
                   "expected a number between 0 and 1")
        if self.speed <= 0:
            yield "speed", f"invalid value {self.speed:g}, expected a number greater than 0"
        if self.blockSlots < 0:
            yield "blockSlots", f"invalid value {self.blockSlots}, expected 0 (no blocks) or more"
        if self.maxBlocks < 1:
            yield "maxBlocks", f"invalid value {self.maxBlocks}, expected a number of at least 1"


class SimProvider(Provider):
    """A simulated site (see the module docstring for the options)."""

    runs_clusters = True

    def __init__(
        self,
        name: str,
        options: SimOptions | Mapping[str, Any] | None = None,
        *,
        clock: Clock | None = None,
        site_run: str = "run",
        bus: EventBus | None = None,
    ) -> None:
        self.name = name
        self.site_run = site_run
        if not isinstance(options, SimOptions):
            options = SimOptions.from_mapping(options or {}, where=f"site {name}: options",
                                              type_name="sim")
        self.options = options
        self.slots = options.slots
        self.queue_time = options.queueTime
        self.task_duration = options.taskDuration
        self.submit_time = options.submitTime
        self.stage_in_time = options.stageInTime
        self.failure_probability = options.failureProbability
        self.speed = options.speed
        self.outages: list[tuple[float, float]] = list(options.outages)
        self.write_outputs = options.writeOutputs
        self.failure_message = options.failureMessage
        self.seed = options.seed
        self.rng = random.Random(f"{self.seed}:{name}")
        self.clock: Clock = clock if clock is not None else RealClock()
        #: outages are relative to this: the virtual epoch, or when the site was made
        self.origin = self.clock.start if isinstance(self.clock, VirtualClock) else self.clock.now()
        #: the site's slots: a job holds one while it runs (first come, first served)
        self._slots = Throttle("slots", self.slots, host=name)
        self._made_dirs: set[str] = set()
        self.duration_argument = dict(options.durationArgument)
        #: the coaster blocks (None: tasks take the site's ``slots``)
        self.blocks: SimBlocks | None = None
        if options.blockSlots > 0:
            times = BlockTimes(options.blockQueueTime, options.blockStartup,
                               options.blockSubmitTime, options.serviceStartTime,
                               options.blockIdleTime)
            self.blocks = SimBlocks(
                name, slots=options.blockSlots, max_blocks=options.maxBlocks,
                walltime=options.blockWalltime, times=times, clock=self.clock,
                rng=random.Random(f"{self.seed}:{name}:blocks"),
                emit=(lambda kind, fields: bus.emit(kind, fields, logger="RemoteLogHandler"))
                if bus is not None else (lambda kind, fields: None))
        self.counts = {"submitted": 0, "queued": 0, "running": 0, "completed": 0,
                       "failed": 0, "canceled": 0, "refused": 0}

    # -- Provider interface ----------------------------------------------------------
    async def start(self) -> None:
        return None

    async def shutdown(self) -> None:
        self._slots.cancel_waiters()
        if self.blocks is not None:
            self.blocks.close()

    def state(self) -> ProviderState:
        c = self.counts
        return ProviderState(
            site=self.name, type="sim", submitted=c["submitted"], queued=c["queued"],
            running=c["running"], completed=c["completed"], failed=c["failed"],
            canceled=c["canceled"], slots=self.slots,
            free_slots=self.slots - self._slots.used,
            detail={"refused": c["refused"]})

    def prepare(self, task: Task) -> Job:
        return Job(task, swift_job_dir(self.site_run, task.jobid, task.attempt))

    async def execute(self, job: Job, report: StatusReporter) -> TaskResult:
        task = job.task
        clock = self.clock
        draw = self._draw(task)
        counts = self.counts
        counts["submitted"] += 1
        if draw["submit"] > 0:
            await clock.sleep(draw["submit"])
        if self._outage_at(clock.now()) is not None:
            counts["refused"] += 1
            refused = f"Connection refused: site {self.name} is down (simulated outage)"
            report.status(TaskStatus.FAILED, message=refused)
            return TaskResult(ok=False, message=refused, site=self.name,
                              failure=FailureKind.CONNECTION_LOST)
        report.status(TaskStatus.SUBMITTED)
        counts["queued"] += 1
        holding = False
        running = False
        pool = self.blocks
        block: SimBlock | None = None
        try:
            try:
                if draw["queue"] > 0:
                    await clock.sleep(draw["queue"])
                if pool is not None:
                    block = await pool.acquire(task.maxwalltime or draw["duration"])
                else:
                    await self._slots.acquire()
                    holding = True
            finally:
                counts["queued"] -= 1
            now = clock.now()
            if self._outage_at(now) is not None:
                return self._fail(task, report, f"Job lost: site {self.name} went down "
                                                "(simulated outage)", FailureKind.CONNECTION_LOST)
            worker = block.worker if block is not None else None
            if draw["stage_in"] > 0 and task.inputs:
                async with report.file_transfer():  # the run's fileTransfersThrottle
                    report.status(TaskStatus.STAGE_IN, workerid=worker)
                    await clock.sleep(draw["stage_in"])
            report.status(TaskStatus.ACTIVE, workerid=worker)
            counts["running"] += 1
            running = True
            start = clock.now()
            run_for = draw["duration"]
            message = None
            if draw["fail"]:
                run_for *= draw["fail_at"]
                message = self.failure_message.format(tr=task.tr, site=self.name,
                                                      jobid=task.jobid)
            kind = FailureKind.APP_EXIT
            outage = self._next_outage(start, start + run_for)
            if outage is not None:
                run_for = outage - start
                message = f"Job lost: site {self.name} went down (simulated outage)"
                kind = FailureKind.CONNECTION_LOST
            if run_for > 0:
                await clock.sleep(run_for)
            if message is not None:
                return self._fail(task, report, message, kind)
            if self.write_outputs:
                self._create_outputs(task)
            counts["completed"] += 1
            report.status(TaskStatus.COMPLETED)
            return TaskResult(ok=True, exit_code=0, site=self.name)
        except asyncio.CancelledError:
            counts["canceled"] += 1
            raise
        finally:
            if running:
                counts["running"] -= 1
            if holding:
                self._slots.release()
            if pool is not None and block is not None:
                pool.release(block)

    async def execute_cluster(self, jobs: list[Job], report: StatusReporter) -> list[TaskResult]:
        """Run a cluster of short jobs as one job: one queue wait, one slot, back to back."""
        tasks = [job.task for job in jobs]
        clock = self.clock
        draws = [self._draw(t) for t in tasks]
        self.counts["submitted"] += 1
        if draws[0]["submit"] > 0:
            await clock.sleep(draws[0]["submit"])
        if self._outage_at(clock.now()) is not None:
            message = f"Connection refused: site {self.name} is down (simulated outage)"
            report.status(TaskStatus.FAILED, message=message)
            return [TaskResult(ok=False, message=message, site=self.name,
                               failure=FailureKind.CONNECTION_LOST) for _ in tasks]
        report.status(TaskStatus.SUBMITTED)
        if draws[0]["queue"] > 0:
            await clock.sleep(draws[0]["queue"])
        pool = self.blocks
        block: SimBlock | None = None
        if pool is not None:  # the cluster's walltime: its jobs' together
            block = await pool.acquire(sum(t.maxwalltime or d["duration"]
                                           for t, d in zip(tasks, draws)))
        else:
            await self._slots.acquire()
        try:
            report.status(TaskStatus.ACTIVE, workerid=block.worker if block else None)
            results = []
            for task, draw in zip(tasks, draws):
                run_for = draw["duration"] * (draw["fail_at"] if draw["fail"] else 1.0)
                if run_for > 0:
                    await clock.sleep(run_for)
                if draw["fail"]:
                    self.counts["failed"] += 1
                    message = self.failure_message.format(tr=task.tr, site=self.name,
                                                          jobid=task.jobid)
                    results.append(TaskResult(ok=False, exit_code=1, message=message,
                                              site=self.name))
                else:
                    if self.write_outputs:
                        self._create_outputs(task)
                    self.counts["completed"] += 1
                    results.append(TaskResult(ok=True, exit_code=0, site=self.name))
            return results
        finally:
            if pool is not None and block is not None:
                pool.release(block)
            elif pool is None:
                self._slots.release()

    # -- internals -----------------------------------------------------------------
    def _draw(self, task: Task) -> dict[str, Any]:
        rng = self.rng
        duration = self.task_duration
        if isinstance(duration, dict):
            duration = duration.get(task.tr) or duration.get("ALL") or duration.get("*") \
                or Distribution("const", (1.0,))
        scale = 1.0
        index = self.duration_argument.get(task.tr)
        if index is not None:
            try:
                scale = max(0.0, float(task.args[index]))
            except (IndexError, ValueError):
                scale = 1.0  # no such numeric argument: the drawn duration as it is
        return {
            "submit": _sample(self.submit_time, rng),
            "queue": _sample(self.queue_time, rng),
            "stage_in": _sample(self.stage_in_time, rng),
            "duration": duration.sample(rng) * scale / self.speed,
            "fail": rng.random() < self.failure_probability,
            "fail_at": rng.random(),
        }

    def _fail(self, task: Task, report: StatusReporter, message: str,
              kind: FailureKind = FailureKind.APP_EXIT) -> TaskResult:
        self.counts["failed"] += 1
        report.status(TaskStatus.FAILED, message=message)
        return TaskResult(ok=False, exit_code=1 if kind is FailureKind.APP_EXIT else None,
                          message=message, site=self.name, failure=kind)

    def _outage_at(self, t: float) -> tuple[float, float] | None:
        rel = t - self.origin
        for start, duration in self.outages:
            if start <= rel < start + duration:
                return (start, duration)
        return None

    def _next_outage(self, t0: float, t1: float) -> float | None:
        """The clock time of the first outage beginning in (t0, t1), if any."""
        for start, _duration in self.outages:
            at = self.origin + start
            if t0 < at < t1:
                return at
        return None


    def _create_outputs(self, task: Task) -> None:
        paths = dict.fromkeys(task.outputs)
        for extra in (task.stdout, task.stderr):
            if extra:
                paths[extra] = None
        data = f"simulated output of {task.jobid} on {self.name}\n".encode()
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        for path in paths:
            full = path if os.path.isabs(path) else os.path.join(task.base_dir, path)
            parent = os.path.dirname(full)
            if parent and parent not in self._made_dirs:
                os.makedirs(parent, exist_ok=True)
                self._made_dirs.add(parent)
            fd = os.open(full, flags, 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)


def _sample(dist: Any, rng: random.Random) -> float:
    if isinstance(dist, dict):
        dist = dist.get("ALL") or Distribution("const", (0.0,))
    sample: float = dist.sample(rng)
    return sample


def make_provider(site: SiteConfig, ctx: BuildContext) -> SimProvider:
    """The provider of an ``execution.type: "sim"`` site."""
    options = SimOptions.from_mapping(site.execution.options, where=ctx.where(site),
                                      origin=ctx.origin(site), type_name="sim",
                                      warn=ctx.warn)
    return SimProvider(site.name, options, clock=ctx.clock, site_run=ctx.site_run, bus=ctx.bus)
