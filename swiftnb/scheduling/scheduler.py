"""The multi-site scheduler: the engine's Executor over many sites.

Per ``submit`` (one attempt; the engine counts retries and submits again, which goes
through selection again, as in Swift):

1. ``JOB_SITE_SELECT``; the job waits in the scheduler queue until the policy picks a
   site that has the app and is under its parallel-task limit (``CONTACT_SELECTED``);
   a retry avoids the sites that failed the job's earlier attempts while another site
   can run it (remembered per jobid until the engine's ``JOB_END`` for it);
2. the site's provider prepares the job (``Provider.prepare``), which is announced:
   ``THREAD_ASSOCIATION``, ``JOB_START``, ``JOB_TASK`` (steps 2 to 4 are the one attempt
   path of attempt.py, which the single local site and clusters take too);
3. the submission throttles (hostJobSubmitThrottle, then jobSubmitThrottle) are held
   while the task is SUBMITTING (status 8), released at the provider's first later
   status;
4. the provider runs it and reports statuses (``TASK_STATUS_CHANGE``); scores move by
   Swift's factors (reference 6.1), a saturated site's failure debt by the job's net
   change (sites.py); the policy hears about it;
5. with replication on, a job queued too long gets replicas elsewhere; the first to
   become active wins and the others are cancelled (``REPLICA_START``,
   ``REPLICA_CANCEL``, ``JOB_CANCELED``); an active job over twice its maxwalltime is
   killed and failed.

Waiting jobs do not cost an asyncio task each: they are futures in per-kind queues,
offered again whenever capacity appears (a job ends, a limit grows, a throttle changes,
the time the policy asked for arrives).  Throttles change through :meth:`set_throttle`,
each change a ``THROTTLE`` event; the per-site limit's own moves with the score are
``THROTTLE name=parallelTasks`` events.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import math
import random
from collections import deque
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from swiftnb.engine.task import FailureKind, Task, TaskResult
from swiftnb.events import Event, EventBus
from swiftnb.scheduling.apps import AppCatalogue
from swiftnb.scheduling.attempt import RunThrottles, TaskIds
from swiftnb.scheduling.clock import Clock, RealClock, TimerHandle
from swiftnb.scheduling.clustering import Clusterer, ClusteringSettings
from swiftnb.scheduling.errors import SchedulerError
from swiftnb.scheduling.policies import make_policy
from swiftnb.scheduling.policy import Policy, PolicyContext, QueueStats
from swiftnb.scheduling.provider import Provider
from swiftnb.scheduling.site_attempt import Replica, ReplicaGroup, SiteAttempt
from swiftnb.scheduling.sites import MINWEIGHT, ScoreFactors, Site
from swiftnb.scheduling.throttles import (THROTTLE_ALIASES, THROTTLE_NAMES, Throttle,
                                          ThrottleControl, parse_throttle, shown_limit,
                                          throttle_name)
from swiftnb.scheduling.waiting import SiteWaits
from swiftnb.nearest import close_matches

__all__ = ["Scheduler", "THROTTLE_NAMES", "THROTTLE_ALIASES", "SchedulerError"]


#: what the scheduler keys a task's app set by: its app's name, or every command's
AppKey = str | tuple[str, ...]


class _Waiter:
    """A job waiting for a site: ``exclude`` it must not get (sites holding a replica),
    ``avoid`` it should not (sites that failed it) unless nothing else ever could."""

    __slots__ = ("seq", "task", "exclude", "avoid", "skip", "future")

    def __init__(self, seq: int, task: Task, exclude: frozenset[Site], avoid: frozenset[Site],
                 future: asyncio.Future[Site]) -> None:
        self.seq = seq
        self.task = task
        self.exclude = exclude
        self.avoid = avoid
        self.skip = exclude | avoid
        self.future = future


class Scheduler(ThrottleControl):
    """Executor over several sites, each a Provider, chosen by a policy.

    ``sites`` are :class:`~swiftnb.scheduling.sites.Site` objects (provider, limits,
    apps, attributes).  ``policy`` is a Policy, or a name / mapping for
    :func:`~swiftnb.scheduling.policies.make_policy`.  ``clock`` is a RealClock (default)
    or a VirtualClock shared with simulated providers.  ``seed`` makes every random
    choice reproducible.
    """

    def __init__(
        self,
        sites: Iterable[Site],
        bus: EventBus,
        *,
        policy: Policy | str | dict[str, Any] | None = "random",
        clock: Clock | None = None,
        seed: int | None = None,
        job_submit_throttle: float | str | None = 4,
        host_job_submit_throttle: float | str | None = 2,
        file_transfers_throttle: float | str | None = 4,
        file_operations_throttle: float | str | None = 8,
        replication_enabled: bool = False,
        replication_min_queue_time: float = 60.0,
        replication_limit: int = 3,
        replication_sweep: float = 10.0,
        factors: ScoreFactors | None = None,
        clustering: ClusteringSettings | None = None,
        site_run: str | None = None,
        apps: AppCatalogue | None = None,
    ) -> None:
        self.sites: list[Site] = list(sites)
        if not self.sites:
            raise SchedulerError("no sites to schedule on")
        self.by_name = {s.name: s for s in self.sites}
        #: SCRIPT-RUNID, the run's directory name on sites (JOB_START tmpdir=)
        self.site_run = site_run
        self.bus = bus
        self.clock: Clock = clock or RealClock()
        self.rng = random.Random(seed)
        self.factors = factors or ScoreFactors()
        self.queue_stats = QueueStats()
        self.policy = make_policy(policy)
        self.job_submit = Throttle("jobSubmitThrottle", parse_throttle(job_submit_throttle))
        self.host_submit_limit = parse_throttle(host_job_submit_throttle)
        for site in self.sites:
            site.submit_throttle = Throttle("hostJobSubmitThrottle", self.host_submit_limit,
                                            host=site.name)
        self.file_transfers = Throttle("fileTransfersThrottle",
                                       parse_throttle(file_transfers_throttle))
        self.file_operations = Throttle("fileOperationsThrottle",
                                        parse_throttle(file_operations_throttle))
        self.run_throttles = RunThrottles(self.job_submit, self.file_transfers,
                                          self.file_operations)
        self.replication_enabled = bool(replication_enabled)
        self.replication_min_queue_time = float(replication_min_queue_time)
        self.replication_limit = int(replication_limit)
        self.replication_sweep = float(replication_sweep)
        self.ctx = PolicyContext(
            clock=self.clock, rng=self.rng, emit=self.bus.emit, sites=self.sites,
            factors=self.factors, queue_stats=self.queue_stats,
            replication_enabled=self.replication_enabled, wake=self._pump,
            adjust_score=self.adjust_score, set_score=self._set_score, app_sites=self._sites_for,
        )
        self.policy.bind(self.ctx)
        self.task_ids = TaskIds(self.clock.now())
        self._group_ids = itertools.count(1)
        #: the sites' app definitions, which fill a task in for its site (None: every app
        #: runs the program of its name, as on a simulated site)
        self.apps = apps
        self._seq = itertools.count()
        self._queues: dict[Hashable, deque[_Waiter]] = {}
        self._waiting = 0
        #: says (WAITING) which sites' limits hold the queued calls
        self.waits = SiteWaits(bus)
        self._pumping = False
        self._pump_again = False
        self._wakeup: TimerHandle | None = None
        self._app_sites: dict[AppKey, list[Site]] = {}
        self._start_futures: dict[str, asyncio.Future[Any]] = {}
        self._groups: set[ReplicaGroup] = set()
        self._in_flight: set[asyncio.Task[Any]] = set()
        self._queued: set[SiteAttempt] = set()
        self._sweeper: TimerHandle | None = None
        #: jobid -> names of the sites its failed attempts ran on, the latest last
        self._failed_on: dict[str, list[str]] = {}
        self._unsubscribe = bus.subscribe(self._on_event)
        self.closed = False
        self.clusterer: Clusterer | None = None
        if clustering is not None and clustering.enabled:
            self.clusterer = Clusterer(self, clustering)
        # counters for benchmarks and panels
        self.stats = {"submitted": 0, "replicas": 0, "replica_wins": 0, "canceled": 0,
                      "walltime_kills": 0}

    # ================================================================ Executor interface
    async def submit(self, task: Task) -> TaskResult:
        """Run one attempt of ``task`` on a site chosen by the policy."""
        if self.closed:  # the run stopped before this call reached a site: status 6
            return TaskResult(ok=False, message="Canceled: the run was stopped",
                              failure=FailureKind.CANCELED)
        self.stats["submitted"] += 1
        if self.clusterer is not None and self.clusterer.eligible(task):
            result = await self.clusterer.submit(task)
        elif self.replication_enabled:
            result = await self._submit_replicated(task, self._avoid(task))
        else:
            result = await self._attempt(task, None, frozenset(), self._avoid(task))
        self._remember(task, result)
        return result

    def capacity(self) -> float:
        """The sum of the sites' maxParallelTasks (math.inf if one has none), for the
        engine's call gate: the most calls the sites hold at once, whatever their scores."""
        return sum(math.inf if site.max_parallel_tasks is None else site.max_parallel_tasks
                   for site in self.sites)

    def app_executable(self, tr: str) -> str | None:
        """The program the first site that lists app ``tr`` runs for it (its name where
        no app definitions were given), for memoization's app fingerprint; None when no
        site lists it."""
        for site in self.sites:
            if _runs_all(site, (tr,)):
                found = self.apps.executable(site.name, tr) if self.apps is not None else None
                return found or tr
        return None

    # ================================================================ retries
    def _remember(self, task: Task, result: TaskResult) -> None:
        """Note the site that failed an attempt another attempt may follow."""
        if not result.retryable or result.site not in self.by_name:
            return
        failed = self._failed_on.setdefault(task.jobid, [])
        if result.site in failed:
            failed.remove(result.site)
        failed.append(result.site)

    def _avoid(self, task: Task) -> frozenset[Site]:
        """The sites this attempt should avoid: those that failed the job's earlier
        attempts (only the latest, once all have), unless no other site can run it."""
        failed = self._failed_on.get(task.jobid)
        if not failed:
            return frozenset()
        sites = self._sites_for(task)
        avoid = frozenset(s for s in sites if s.name in failed)
        if len(avoid) == len(sites):
            avoid = frozenset(s for s in sites if s.name == failed[-1])
        others = [s for s in sites if s not in avoid]
        if not others or self.policy.check(task, others) is not None:
            return frozenset()
        return avoid

    def _on_event(self, event: Event) -> None:
        """The engine's JOB_END: the job has no more attempts, forget where it failed."""
        if self._failed_on and event.kind == "JOB_END":
            self._failed_on.pop(event.get("jobid"), None)

    async def close(self) -> None:
        """Shut every started site down; pending timers are dropped."""
        if self.closed:
            return
        self.closed = True
        self._unsubscribe()
        self._failed_on.clear()
        for handle in (self._wakeup, self._sweeper):
            if handle is not None:
                handle.cancel()
        if self.clusterer is not None:
            self.clusterer.close()
        # the run was stopped (Ctrl-C, cancel): attempts still waiting for a site or
        # running end as canceled (status 6 on the log) before the sites shut down;
        # after a normal end there are none
        me = asyncio.current_task()
        stopping = [t for t in self._in_flight if t is not me and not t.done()]
        for t in stopping:
            t.cancel()
        if stopping:
            await asyncio.wait(stopping, timeout=10.0)
        for site in self.sites:
            if site.started:
                try:
                    await site.provider.shutdown()
                except Exception as exc:  # a site that fails to shut down must not hide others
                    self.bus.emit("WARNING", text=f"site {site.name}: shutdown failed: {exc}")

    # ================================================================ public controls
    def set_throttle(self, name: str, value: object, site: str | None = None) -> None:
        """Change a throttle while the run goes (notebook sliders call this).

        Site-level names (hostJobSubmitThrottle, maxParallelTasks, initialParallelTasks,
        delayBase) apply to ``site``, or to every site when ``site`` is None.  Every
        change is a ``THROTTLE name= host= old= new=`` event.
        """
        try:
            name = throttle_name(name)
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        targets = self.sites if site is None else [self._site(site)]
        try:
            self._set_throttle(name, value, site, targets)
        except SchedulerError:
            raise
        except ValueError as exc:
            raise SchedulerError(str(exc)) from None
        self._pump()

    def _set_throttle(self, name: str, value: object, site: str | None, targets: list[Site]) -> None:
        emit = self.bus.emit
        if name in ("jobSubmitThrottle", "fileTransfersThrottle", "fileOperationsThrottle"):
            throttle = {"jobSubmitThrottle": self.job_submit,
                        "fileTransfersThrottle": self.file_transfers,
                        "fileOperationsThrottle": self.file_operations}[name]
            new = parse_throttle(value, name)
            old: float | None = throttle.limit
            throttle.set_limit(new)
            emit("THROTTLE", {"name": name, "host": None, "old": shown_limit(old),
                              "new": shown_limit(new)})
        elif name == "hostJobSubmitThrottle":
            new = parse_throttle(value, name)
            if site is None:
                self.host_submit_limit = new
            for s in targets:
                old = s.submit_throttle.limit  # type: ignore[union-attr]  # every site has one (made with the scheduler)
                s.submit_throttle.set_limit(new)  # type: ignore[union-attr]  # (as above)
                emit("THROTTLE", {"name": name, "host": s.name, "old": shown_limit(old),
                                  "new": shown_limit(new)})
        elif name in ("maxParallelTasks", "initialParallelTasks"):
            n = _positive(value, name)
            for s in targets:
                old_limit = s.limit
                if name == "maxParallelTasks":
                    old = s.max_parallel_tasks
                    init = s.initial_parallel_tasks
                    if init is not None and init > n:
                        init = n
                    s.configure(n, init, reset_score=False)
                else:
                    old = s.initial_parallel_tasks
                    mx = s.max_parallel_tasks if s.max_parallel_tasks is not None else n
                    if n > mx:
                        raise SchedulerError(
                            f"initialParallelTasks ({n:g}) is greater than maxParallelTasks "
                            f"({mx:g}) for site '{s.name}'")
                    s.configure(mx, n, reset_score=True)
                emit("THROTTLE", {"name": name, "host": s.name, "old": shown_limit(old),
                                  "new": shown_limit(n)})
                self._limit_changed(s, old_limit, s.limit)
        elif name == "delayBase":
            n = _positive(value, name)
            for s in targets:
                old = s.delay_base
                s.delay_base = n
                emit("THROTTLE", {"name": name, "host": s.name, "old": shown_limit(old),
                                  "new": shown_limit(n)})
        elif name == "maxSubmitRate":
            rate = None if str(value).lower() in ("off", "none") else _positive(value, name, low=0)
            for s in targets:
                old = s.max_submit_rate
                s.max_submit_rate = rate or None
                emit("THROTTLE", {"name": name, "host": s.name,
                                  "old": shown_limit(old) if old else "off",
                                  "new": shown_limit(rate) if rate else "off"})
        elif name == "replicationLimit":
            old = self.replication_limit
            self.replication_limit = int(_positive(value, name, low=0))
            emit("THROTTLE", {"name": name, "host": None, "old": old, "new": self.replication_limit})
        elif name == "replicationMinQueueTime":
            old = self.replication_min_queue_time
            self.replication_min_queue_time = _positive(value, name, low=0)
            emit("THROTTLE", {"name": name, "host": None, "old": shown_limit(old),
                              "new": shown_limit(self.replication_min_queue_time)})

    def throttles(self) -> dict[str, Any]:
        """Current throttle values (global, and per site)."""
        return {
            "jobSubmitThrottle": shown_limit(self.job_submit.limit),
            "fileTransfersThrottle": shown_limit(self.file_transfers.limit),
            "fileOperationsThrottle": shown_limit(self.file_operations.limit),
            "replicationLimit": self.replication_limit,
            "replicationMinQueueTime": self.replication_min_queue_time,
            "sites": {
                s.name: {
                    "hostJobSubmitThrottle": shown_limit(s.submit_throttle.limit),  # type: ignore[union-attr]  # every site has one (made with the scheduler)
                    "maxParallelTasks": shown_limit(s.max_parallel_tasks),
                    "initialParallelTasks": shown_limit(s.initial_parallel_tasks),
                    "parallelTasks": s.limit,
                    "delayBase": s.delay_base,
                    "maxSubmitRate": s.max_submit_rate,
                }
                for s in self.sites
            },
        }

    def providers(self) -> list[Provider]:
        return [site.provider for site in self.sites]

    def state(self) -> dict[str, Any]:
        """A snapshot for people and panels."""
        return {
            "policy": self.policy.name,
            "time": self.clock.now(),
            "virtual_time": self.clock.virtual,
            "waiting": self._waiting,
            "retrying": len(self._failed_on),   # jobs whose failed sites are remembered
            "sites": [s.snapshot() for s in self.sites],
            "policy_state": self.policy.state(),
            **self.stats,
        }

    # ================================================================ one attempt
    def _site(self, name: str) -> Site:
        try:
            return self.by_name[name]
        except KeyError:
            near = close_matches(name, self.by_name)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise SchedulerError(f"unknown site {name!r}{hint}") from None

    def _sites_for(self, task: Task) -> list[Site]:
        """The sites whose catalogue has every app of the task, whatever their load."""
        key = _app_key(task)
        sites = self._app_sites.get(key)
        if sites is None:
            sites = self._app_sites[key] = [s for s in self.sites if _runs_all(s, task.apps)]
        return sites

    def _check(self, task: Task) -> str | None:
        sites = self._sites_for(task)
        if not sites:
            return _unavailable(task.apps, self.sites)
        return self.policy.check(task, sites)

    async def _attempt(self, task: Task, ref: Replica | None, exclude: frozenset[Site],
                       avoid: frozenset[Site] = frozenset()) -> TaskResult:
        self.bus.emit("JOB_SITE_SELECT", {"jobid": task.jobid})
        return (await self._tracked(task, None, ref, exclude, avoid))[0]

    async def run_cluster(self, head: Task, members: list[Task]) -> list[TaskResult]:
        """One attempt of a cluster of short jobs (clustering.py): ``head`` stands for the
        cluster in site selection, limits, scores and throttles; each member is
        announced and gets its own result."""
        return await self._tracked(head, members, None, frozenset(), frozenset())

    async def _tracked(self, head: Task, members: list[Task] | None, ref: Replica | None,
                       exclude: frozenset[Site], avoid: frozenset[Site]) -> list[TaskResult]:
        # remembered so that close() can stop what is in flight when the run is stopped
        me = asyncio.current_task()
        if me is not None:
            self._in_flight.add(me)
        try:
            return await self._place(head, members, ref, exclude, avoid)
        finally:
            if me is not None:
                self._in_flight.discard(me)

    async def _place(self, head: Task, members: list[Task] | None, ref: Replica | None,
                     exclude: frozenset[Site], avoid: frozenset[Site]) -> list[TaskResult]:
        """Wait for a site for ``head``, then run its attempt there: of ``head`` itself, or
        of the cluster's ``members`` (one result each)."""
        tasks = members if members is not None else [head]
        problem = self._check(head)
        if problem is not None:  # no site has the app: another attempt cannot differ
            return [TaskResult(ok=False, message=problem, failure=FailureKind.NOT_EXECUTABLE)
                    for _ in tasks]
        try:
            site = await self._allocate(head, exclude, avoid)
        except SchedulerError as exc:
            return [TaskResult(ok=False, message=str(exc), failure=FailureKind.SUBMIT_REFUSED)
                    for _ in tasks]
        att = SiteAttempt(self, site, head, self.task_ids.next(), ref)
        if ref is not None:
            ref.att = att
        try:
            return await self._run(att, tasks, cluster=members is not None)
        finally:
            if not att.finished:  # cancelled before the provider was reached
                att.finish(TaskResult(ok=False, failure=FailureKind.CANCELED, site=site.name))
            self._release(site)

    async def _run(self, att: SiteAttempt, tasks: list[Task], cluster: bool) -> list[TaskResult]:
        site = att.site
        if self.apps is not None:
            tasks = [self.apps.resolve(site.name, t) for t in tasks]
        jobs = [site.provider.prepare(t) for t in tasks]
        if not cluster:
            att.task = tasks[0]
        ref = att.ref
        for job in jobs:
            att.announce(job, group=ref.group.id if ref is not None else None,
                         replica=ref is not None and ref.replica)
        try:
            if not site.started:
                await self._start_site(site)
            await att.hold_submit()
            if site.max_submit_rate:
                await self._pace(site, site.max_submit_rate)
            if cluster:
                results = await att.execute_cluster(site.provider, jobs)
            else:
                results = [await att.execute(site.provider, jobs[0])]
        except asyncio.CancelledError:
            att.release_submit()
            if att.kill_reason is not None:
                cur = asyncio.current_task()
                if cur is not None:
                    cur.uncancel()
                result = TaskResult(ok=False, message=att.kill_reason, site=site.name,
                                    failure=FailureKind.WALLTIME)
                att.finish(result)
                return [result]
            att.finish(TaskResult(ok=False, failure=FailureKind.CANCELED, site=site.name))
            raise
        if cluster:
            failed = [r for r in results if not r.ok]
            att.finish(TaskResult(ok=not failed, message=failed[0].message if failed else "",
                                  site=site.name))
        else:
            att.finish(results[0])
        return results

    async def _pace(self, site: Site, rate: float) -> None:
        """maxSubmitRate (``rate`` per second): reserve the next submission time of the
        site and wait for it."""
        now = self.clock.now()
        slot = max(now, site.next_submit_at)
        site.next_submit_at = slot + 1.0 / rate
        if slot > now:
            await self.clock.sleep(slot - now)

    async def _start_site(self, site: Site) -> None:
        fut = self._start_futures.get(site.name)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._start_futures[site.name] = fut
            try:
                await site.provider.start()
            except BaseException as exc:
                del self._start_futures[site.name]
                fut.set_exception(exc)
                fut.exception()  # mark retrieved
                raise
            site.started = True
            fut.set_result(None)
        else:
            await asyncio.shield(fut)

    # ================================================================ selection queue
    async def _allocate(self, task: Task, exclude: frozenset[Site],
                        avoid: frozenset[Site] = frozenset()) -> Site:
        if self._waiting == 0:
            site = self._try_select(task, exclude | avoid)
            if site is not None:
                return site
        future: asyncio.Future[Site] = asyncio.get_running_loop().create_future()
        self._enqueue(_Waiter(next(self._seq), task, exclude, avoid, future))
        self._waiting += 1
        self._pump()
        if not future.done():
            for site in self._sites_for(task):
                if site.load >= site.limit and site not in exclude:
                    self.waits.full(site.name, site.limit)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release(future.result())
            else:
                future.cancel()
                self._waiting -= 1
            raise

    def _enqueue(self, waiter: _Waiter) -> None:
        key = (_app_key(waiter.task), waiter.skip, self.policy.task_key(waiter.task))
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = deque()
        queue.append(waiter)

    def _try_select(self, task: Task, exclude: frozenset[Site]) -> Site | None:
        candidates = [s for s in self._sites_for(task)
                      if s.load < s.limit and s not in exclude]
        if not candidates:
            return None
        site = self.policy.select(task, candidates)
        if site is None:
            return None
        site.load += 1
        site.assigned += 1
        site.last_used = self.clock.now()
        self.bus.emit("CONTACT_SELECTED", {"host": site.name, "score": site.tscore})
        self.adjust_score(site, -self.factors.job_submission)
        self.policy.on_selected(site, task)
        return site

    def _release(self, site: Site) -> None:
        site.load -= 1
        self.adjust_score(site, self.factors.success)  # Swift's delayedDelta, on release
        self._pump()
        if not self._waiting:
            self.waits.clear_all()

    def _pump(self) -> None:
        """Offer waiting jobs to sites, oldest first, until nothing more fits."""
        if self._pumping:
            self._pump_again = True
            return
        if self._waiting == 0:
            return
        self._pumping = True
        try:
            self._pump_again = True
            while self._pump_again:
                self._pump_again = False
                self._offer_round()
        finally:
            self._pumping = False
        self._arm_wakeup()

    def _offer_round(self) -> None:
        """One pass over the queues' heads in age order (a heap: retries that avoid
        different sites make many queues); a queue whose head finds no site is skipped for
        the rest of the pass, since its other jobs would get the same answer, and so are
        all queues of an app none of whose sites is under its limit."""
        heap: list[tuple[int, int, Hashable]] = []
        apps: set[AppKey] = set()
        full: set[AppKey] = set()  # apps whose every site is at its limit (until the next pass)
        for i, (key, queue) in enumerate(list(self._queues.items())):
            head = self._head(key, queue)
            if head is not None:
                heap.append((head.seq, i, key))
                apps.add(_app_key(head.task))
        heapq.heapify(heap)
        while heap and self._waiting and len(full) < len(apps):
            seq, i, key = heapq.heappop(heap)
            queued = self._queues.get(key)
            if queued is None:
                continue
            head = self._head(key, queued)
            if head is None:
                continue
            if head.seq != seq:  # the old head was withdrawn: take its place in age order
                heapq.heappush(heap, (head.seq, i, key))
                continue
            task = head.task
            app = _app_key(task)
            if app in full:
                continue
            site = self._try_select(task, head.skip)
            if site is None:
                if all(s.load >= s.limit for s in self._sites_for(task)):
                    full.add(app)
                continue
            queued.popleft()
            self._waiting -= 1
            head.future.set_result(site)
            head = self._head(key, queued)
            if head is not None:
                heapq.heappush(heap, (head.seq, i, key))

    def _head(self, key: Hashable, queue: deque[_Waiter]) -> _Waiter | None:
        """The first job of a queue still waiting (withdrawn ones dropped), or None."""
        while queue and queue[0].future.done():
            queue.popleft()
        if queue:
            return queue[0]
        del self._queues[key]
        return None

    def _arm_wakeup(self) -> None:
        if not self._waiting or self.closed:
            return
        when = self.policy.next_wakeup()
        if when is None:
            if not any(s.load for s in self.sites) and self._wakeup is None:
                self._fail_stuck()
            return
        if self._wakeup is not None and self._wakeup.when <= when and not self._wakeup.cancelled:
            return
        if self._wakeup is not None:
            self._wakeup.cancel()
        self._wakeup = self.clock.call_later(max(0.0, when - self.clock.now()), self._on_wakeup)

    def _on_wakeup(self) -> None:
        self._wakeup = None
        self._pump()

    def _fail_stuck(self) -> None:
        """Nothing runs, nothing will wake us, yet jobs wait: the policy refuses them all.

        Retries that avoid the sites that failed them get those sites back first (a
        failing site is better than none); the others fail.
        """
        queues, self._queues = self._queues, {}
        retried = False
        for queue in queues.values():
            for w in queue:
                if w.future.done():
                    continue
                if w.avoid:
                    self._enqueue(_Waiter(w.seq, w.task, w.exclude, frozenset(), w.future))
                    retried = True
                    continue
                w.future.set_exception(SchedulerError(
                    f"no site can take job {w.task.jobid}: the {self.policy.name} policy "
                    f"refused every site ({', '.join(s.name for s in self._sites_for(w.task))})"))
                self._waiting -= 1
        if retried:
            self._pump()

    # ================================================================ scores
    def adjust_score(self, site: Site, delta: float) -> None:
        """Move ``site``'s score by ``delta`` (its limit follows; the policy is told)."""
        self._set_score(site, site.score + delta)

    def _set_score(self, site: Site, value: float) -> None:
        old = site.score
        new = max(MINWEIGHT, value)
        if new == old:
            return
        site.score = new
        if not site.saturated:
            site.debt = 0.0  # e.g. sitesets reset it: the score speaks for itself again
        self.policy.on_score_changed(site, old, new)
        o, n = site.refresh_limit()
        if o != n:
            self._limit_changed(site, o, n)

    def _limit_changed(self, site: Site, old: int, new: int) -> None:
        if old == new:
            return
        self.bus.emit("THROTTLE", {"name": "parallelTasks", "host": site.name,
                                   "old": old, "new": new})
        if new > old:
            site.provider.allow_parallel(new)
            self._pump()

    # ================================================================ replication
    async def _submit_replicated(self, task: Task, avoid: frozenset[Site]) -> TaskResult:
        loop = asyncio.get_running_loop()
        group = ReplicaGroup(task, f"{task.jobid}-{next(self._group_ids)}", loop.create_future())
        self._groups.add(group)
        self._spawn(group, replica=False, avoid=avoid)
        try:
            return await group.future
        finally:
            self._groups.discard(group)
            for ref in group.refs:
                if ref.atask is not None and not ref.atask.done():
                    ref.atask.cancel()

    def _spawn(self, group: ReplicaGroup, replica: bool, avoid: frozenset[Site] = frozenset()) -> None:
        ref = Replica(replica, group)
        exclude = frozenset(r.att.site for r in group.refs
                            if r.att is not None and r.atask is not None and not r.atask.done())
        if replica:
            group.replicas += 1
            self.stats["replicas"] += 1
        group.refs.append(ref)
        ref.atask = asyncio.get_running_loop().create_task(
            self._attempt(group.task, ref, exclude, avoid))
        ref.atask.add_done_callback(lambda t, g=group, r=ref: self._attempt_done(g, r, t))  # type: ignore[misc]  # a lambda with bound defaults

    def _attempt_done(self, group: ReplicaGroup, ref: Replica,
                      atask: asyncio.Task[Any]) -> None:
        if group.future.done():
            return
        if atask.cancelled():
            if ref.loser:
                return
            result = TaskResult(ok=False, failure=FailureKind.CANCELED)
        elif atask.exception() is not None:
            exc = atask.exception()
            result = TaskResult(ok=False, message=str(exc), failure=FailureKind.WORKER)
        else:
            result = atask.result()
        alive = [r for r in group.refs if r is not ref and r.atask is not None
                 and not r.atask.done() and not r.loser]
        winner = group.winner is not None and ref.att is group.winner
        if result.ok or winner or not alive:
            group.future.set_result(result)
            for r in alive:
                self._cancel_loser(group, r)
        # else: this copy failed before becoming active while others still compete

    def attempt_queued(self, att: SiteAttempt) -> None:
        """``att`` was submitted and waits in its site's queue (replication watches it)."""
        if att.ref is None:
            return
        self._queued.add(att)
        if self._sweeper is None and not self.closed:
            self._sweeper = self.clock.call_later(self.replication_sweep, self._sweep)

    def _sweep(self) -> None:
        """Swift's replication sweeper: replicate jobs queued too long."""
        self._sweeper = None
        now = self.clock.now()
        threshold = max(self.replication_min_queue_time, 3.0 * self.queue_stats.mean)
        for att in sorted(self._queued, key=_submitted_order):
            ref = att.ref
            group = ref.group  # type: ignore[union-attr]  # a queued attempt has its replica
            if group.winner is not None or group.future.done():
                continue
            if group.replicas >= self.replication_limit:
                continue
            if att.submitted_at is None or now - att.submitted_at <= threshold:
                continue
            if any(r.att is None and r.atask is not None and not r.atask.done()
                   for r in group.refs):
                continue  # a replica is still waiting for a site
            busy = {r.att.site for r in group.refs if r.att is not None and not r.loser}
            if all(s in busy for s in self._sites_for(group.task)):
                continue  # no other site could take a replica
            self._spawn(group, replica=True)
        if self._queued and not self.closed:
            self._sweeper = self.clock.call_later(self.replication_sweep, self._sweep)

    def attempt_active(self, att: SiteAttempt) -> None:
        """``att`` became active: replicas lose, the walltime watch starts."""
        ref = att.ref
        if ref is None:
            return
        self._queued.discard(att)
        group = ref.group
        task = att.task
        if task.maxwalltime and task.maxwalltime > 0:
            limit = 2.0 * task.maxwalltime
            att.walltime_timer = self.clock.call_later(limit, self._kill_walltime, att, limit)
        if group.winner is None:
            group.winner = att
            if ref.replica:
                self.stats["replica_wins"] += 1
            losers = []
            for r in group.refs:
                if r is ref or r.atask is None or r.atask.done() or r.loser:
                    continue
                if r.att is not None:
                    losers.append((r.att.site, r.att.queue_time() or 0.0))
                self._cancel_loser(group, r)
            if losers:
                self.policy.on_replica_active(att.site, att.queue_time() or 0.0, losers)
        elif group.winner is not att:
            self._cancel_loser(group, ref)

    def attempt_dequeued(self, att: SiteAttempt) -> None:
        """``att`` left its site's queue (active, or ended)."""
        self._queued.discard(att)

    def _cancel_loser(self, group: ReplicaGroup, ref: Replica) -> None:
        if ref.loser:
            return
        ref.loser = True
        att = ref.att
        if att is not None and not att.finished:
            self.stats["canceled"] += 1
            self.bus.emit("REPLICA_CANCEL", {"jobid": att.task.jobid, "taskid": att.taskid,
                                             "host": att.site.name})
            self.bus.emit("JOB_CANCELED", {"jobid": att.task.jobid})
        if ref.atask is not None:
            ref.atask.cancel()

    def _kill_walltime(self, att: SiteAttempt, limit: float) -> None:
        if att.finished or att.ref is None or att.ref.atask is None:
            return
        self.stats["walltime_kills"] += 1
        att.kill_reason = (f"Job {att.task.jobid} killed on {att.site.name}: active for more "
                           f"than twice its maxwalltime ({limit:g} s)")
        att.ref.atask.cancel()


def _app_key(task: Task) -> AppKey:
    """The key of a task's app set: the app's name for the usual one-command app (no
    tuple to build and hash on the hot path), every command's app for several."""
    return task.apps if task.more_commands else task.tr


def _runs_all(site: Site, apps: tuple[str, ...]) -> bool:
    """Whether ``site``'s catalogue lists every one of ``apps`` (None lists any)."""
    listed = site.apps
    return listed is None or "ALL" in listed or all(tr in listed for tr in apps)


def _unavailable(apps: tuple[str, ...], sites: Sequence[Site]) -> str:
    """Why no site can take a job of ``apps``: the first app no site has (Swift's message),
    or, for a job of several commands, that no one site has them all."""
    for tr in apps:
        if not any(_runs_all(s, (tr,)) for s in sites):
            return f'The application "{tr}" is not available on any of the sites'
    names = ", ".join(f'"{tr}"' for tr in dict.fromkeys(apps))
    return f"The applications {names} are not available together on any one site"


def _submitted_order(att: SiteAttempt) -> tuple[float, str]:
    return (att.submitted_at if att.submitted_at is not None else math.inf, att.taskid)




def _positive(value: Any, name: str, low: float = 1) -> float:
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise SchedulerError(f"{name}: expected a number, got {value!r}") from None
    if n < low:
        raise SchedulerError(f"{name}: must be at least {low:g}, got {value!r}")
    return n
