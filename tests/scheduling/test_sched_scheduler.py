"""The Scheduler: throttles from the event stream, live changes, replication, clustering,
reproducibility, cancellation, configuration."""

import asyncio
import textwrap

import pytest

from grid import Grid, max_concurrency, task_hosts
from swiftnb.engine.task import Task, TaskResult
from swiftnb.events import EventBus
from swiftnb.scheduling.clustering import ClusteringSettings
from swiftnb.scheduling.provider import Job, Provider, ProviderState, swift_job_dir

SITE = {"slots": 6, "queueTime": "exp:10", "taskDuration": "uniform:20:60",
        "failureProbability": 0.05, "submitTime": "exp:2", "stageInTime": 3}


def _check_parallel_limits(grid):
    """Each admission (CONTACT_SELECTED) happened with the site under its current limit."""
    limit = {name: init for name, (_mx, init) in grid.initial_limits.items()}
    cap = {name: mx for name, (mx, _init) in grid.initial_limits.items()}
    hosts = task_hosts(grid.events)
    held = {s.name: 0 for s in grid.sites}
    live = set()
    admissions = 0
    for e in grid.events:
        if e.kind == "THROTTLE" and e["host"] in limit:
            if e["name"] == "parallelTasks":
                limit[e["host"]] = e["new"]
            elif e["name"] == "maxParallelTasks":
                cap[e["host"]] = e["new"]
        elif e.kind == "CONTACT_SELECTED":
            host = e["host"]
            assert held[host] + 1 <= min(limit[host], cap[host]), (e.time, host, held[host])
            admissions += 1
        elif e.kind == "JOB_TASK":
            held[hosts[e["taskid"]]] += 1
            live.add(e["taskid"])
        elif e.kind == "TASK_STATUS_CHANGE" and e["status"] in (5, 6, 7) and e["taskid"] in live:
            live.discard(e["taskid"])
            held[hosts[e["taskid"]]] -= 1
    return admissions


def test_throttles_are_never_exceeded(tmp_path):
    grid = Grid({f"s{i}": {**SITE, "seed": i} for i in range(4)}, seed=5,
                max_parallel=8, initial_parallel=2, base_dir=str(tmp_path),
                job_submit_throttle=3, host_job_submit_throttle=1,
                file_transfers_throttle=2)
    results = asyncio.run(grid.run(150, retries=3, inputs=["in.txt"]))
    assert sum(r.ok for r in results) >= 145
    submitting = max_concurrency(grid.events, 8, per_host=False)
    assert submitting[None] == 3          # reached, never exceeded
    per_host = max_concurrency(grid.events, 8, per_host=True)
    assert max(per_host.values()) == 1
    staging = max_concurrency(grid.events, 16, per_host=False)
    assert staging[None] == 2              # fileTransfersThrottle, held during stage-in
    slots = max_concurrency(grid.events, None, per_host=True)
    assert max(slots.values()) <= 8
    assert max(slots.values()) > 2         # the limit grew from initialParallelTasks
    assert _check_parallel_limits(grid) == len(grid.kinds("JOB_TASK"))
    grown = [e for e in grid.kinds("THROTTLE") if e["name"] == "parallelTasks"]
    assert grown and all(e["new"] <= 8 for e in grown)


def test_changing_throttles_mid_run_takes_effect():
    grid = Grid({"a": {"slots": 20, "taskDuration": 30, "seed": 1},
                 "b": {"slots": 20, "taskDuration": 30, "seed": 2}},
                site_limits={"a": (2, 2), "b": (2, 2)}, seed=1)
    sched = grid.sched

    async def main():
        async def operator():
            await grid.clock.sleep(100)
            sched.set_throttle("maxParallelTasks", 6, site="a")
            sched.set_throttle("initialParallelTasks", 6, site="a")
            await grid.clock.sleep(200)
            sched.set_throttle("maxParallelTasks", 1)  # every site
            sched.set_throttle("jobSubmitThrottle", "off")

        op = asyncio.ensure_future(operator())
        results = await grid.run(80)
        await op
        return results

    results = asyncio.run(main())
    assert all(r.ok for r in results)
    changes = [(e["name"], e["host"], e["old"], e["new"]) for e in grid.kinds("THROTTLE")
               if e["name"] != "parallelTasks"]
    assert ("maxParallelTasks", "a", 2, 6) in changes
    assert ("initialParallelTasks", "a", 2, 6) in changes
    assert ("maxParallelTasks", "b", 2, 1) in changes
    assert ("jobSubmitThrottle", None, 4, "off") in changes

    def peak(t0, t1, host):
        held, best, hosts = 0, 0, task_hosts(grid.events)
        live = set()
        for e in grid.events:
            if e.kind == "JOB_TASK" and hosts[e["taskid"]] == host:
                live.add(e["taskid"])
                held += 1
            elif e.kind == "TASK_STATUS_CHANGE" and e["status"] == 7 and e["taskid"] in live:
                live.discard(e["taskid"])
                held -= 1
            if t0 <= e.time < t1:
                best = max(best, held)
        return best

    assert peak(0, 100, "a") == 2
    assert peak(100, 300, "a") == 6
    assert peak(340, 10_000, "a") == 1 and peak(340, 10_000, "b") == 1
    assert _check_parallel_limits(grid)


def test_bad_throttle_names_and_values():
    grid = Grid({"a": {}})
    from swiftnb.scheduling.scheduler import SchedulerError

    with pytest.raises(SchedulerError, match="did you mean jobSubmitThrottle"):
        grid.sched.set_throttle("jobSubmitThrotle", 3)
    with pytest.raises(SchedulerError, match="unknown site 'b'"):
        grid.sched.set_throttle("maxParallelTasks", 3, site="b")
    with pytest.raises(ValueError, match="at least 1"):
        grid.sched.set_throttle("hostJobSubmitThrottle", 0)
    assert grid.sched.throttles()["sites"]["a"]["parallelTasks"] == 2
    grid.sched.set_throttle("throttle.host.submit", 5)  # the swift.properties name
    assert grid.sched.throttles()["sites"]["a"]["hostJobSubmitThrottle"] == 5


def test_slow_queue_site_triggers_replication_and_the_replica_wins():
    grid = Grid({"slow": {"slots": 50, "queueTime": 5000, "taskDuration": 10, "seed": 1},
                 "fast": {"slots": 50, "queueTime": 5, "taskDuration": 10, "seed": 2}},
                site_limits={"slow": (10, 10), "fast": (10, 10)}, seed=3,
                replication_enabled=True, replication_min_queue_time=30, replication_limit=2)
    results = asyncio.run(grid.run(20))
    assert all(r.ok for r in results)
    assert {r.site for r in results} == {"fast"}
    starts = grid.kinds("REPLICA_START")
    cancels = grid.kinds("REPLICA_CANCEL")
    assert starts and {e["host"] for e in starts} == {"fast"}
    assert len(cancels) == len(starts) and {e["host"] for e in cancels} == {"slow"}
    assert len(grid.kinds("JOB_CANCELED")) == len(cancels)
    canceled_ids = {e["taskid"] for e in cancels}
    status6 = {e["taskid"] for e in grid.kinds("TASK_STATUS_CHANGE") if e["status"] == 6}
    assert canceled_ids == status6
    groups = {e["replicationGroup"] for e in grid.kinds("THREAD_ASSOCIATION")}
    assert None not in groups
    # replicas only after replicationMinQueueTime
    assert min(e.time for e in starts) > 30
    assert grid.clock.now() < 200  # nobody waited for the slow queue
    assert grid.sched.stats["replica_wins"] == len(starts)


def test_replication_kills_jobs_over_twice_their_walltime():
    grid = Grid({"a": {"slots": 4, "taskDuration": 100, "seed": 1}}, seed=1,
                replication_enabled=True)
    results = asyncio.run(grid.run(2, maxwalltime=20.0))
    assert not any(r.ok for r in results)
    assert all("twice its maxwalltime (40 s)" in r.message for r in results)
    failures = [e for e in grid.kinds("TASK_STATUS_CHANGE") if e["status"] == 5]
    assert len(failures) == 2 and all(e.time == pytest.approx(40.0) for e in failures)


def test_without_replication_walltime_is_not_enforced():
    grid = Grid({"a": {"slots": 4, "taskDuration": 100, "seed": 1}}, seed=1)
    results = asyncio.run(grid.run(2, maxwalltime=20.0))
    assert all(r.ok for r in results)


def _fingerprint(seed, policy):
    grid = Grid({f"s{i}": {**SITE, "seed": i, "stageInTime": 0} for i in range(5)},
                policy=policy, seed=seed, max_parallel=6)
    asyncio.run(grid.run(120, retries=2))
    return [(round(e.time, 9), e.kind, tuple(sorted(e.fields.items(), key=str)))
            for e in grid.events]


@pytest.mark.parametrize("policy", ["random", "sitesets", "brokerage"])
def test_a_seeded_run_is_reproducible(policy):
    first = _fingerprint(11, policy)
    assert first == _fingerprint(11, policy)
    assert first != _fingerprint(12, policy)


def test_app_not_available_anywhere():
    grid = Grid({"a": {}})
    grid.sites[0].apps = frozenset({"other"})
    result = asyncio.run(grid.run(1))[0]
    assert not result.ok
    assert result.message == 'The application "sim" is not available on any of the sites'


def test_cancelling_a_submit_cancels_the_job():
    grid = Grid({"a": {"slots": 1, "taskDuration": 100}}, site_limits={"a": (1, 1)})

    async def main():
        job = asyncio.ensure_future(grid.sched.submit(grid.task(1)))
        waiting = asyncio.ensure_future(grid.sched.submit(grid.task(2)))
        await grid.clock.sleep(10)
        job.cancel()
        waiting.cancel()
        for j in (job, waiting):
            with pytest.raises(asyncio.CancelledError):
                await j
        after = await grid.sched.submit(grid.task(3))
        return after

    after = asyncio.run(main())
    assert after.ok
    statuses = [e["status"] for e in grid.kinds("TASK_STATUS_CHANGE")]
    assert statuses[:3] == [8, 1, 2] and 6 in statuses
    site = grid.sites[0]
    assert site.load == 0 and site.canceled == 1 and grid.sched._waiting == 0


def test_clustering_groups_short_jobs(tmp_path):
    grid = Grid({"a": {"slots": 4, "queueTime": 30, "taskDuration": 5, "seed": 1,
                       "writeOutputs": True}},
                base_dir=str(tmp_path), clustering=ClusteringSettings(True, 60.0, 4.0))
    results = asyncio.run(grid.run(20, maxwalltime=10.0, outputs=["o.txt"]))
    assert all(r.ok for r in results)
    taskids = {e["taskid"] for e in grid.kinds("JOB_TASK")}
    assert len(grid.kinds("JOB_TASK")) == 20
    assert len(taskids) == 2        # clusters of at most 2 x 60 s of walltime: 12 + 8
    assert len(grid.kinds("CONTACT_SELECTED")) == 2
    assert (tmp_path / "o.txt").exists()
    # one queue wait per cluster: the run takes 4 + 30 + 12 x 5 seconds, not 20 queue waits
    assert grid.clock.now() == pytest.approx(94.0)


def test_build_executor_from_swift_conf(tmp_path):
    from swiftnb.config import load_config
    from swiftnb.scheduling import build_executor

    conf = tmp_path / "swift.conf"
    conf.write_text(textwrap.dedent("""
        sites: [grid1, grid2]
        site.grid1 {
          execution { type: "sim", options { slots: 8, queueTime: "exp:20",
                      taskDuration: "uniform:30:90", failureProbability: 0.05, seed: 1 } }
          maxParallelTasks: 8
          initialParallelTasks: 4
        }
        site.grid2 {
          execution { type: "sim", options { slots: 2, taskDuration: 10, seed: 2 } }
          resources { maxMemory: 1000 }
        }
        siteSelectionPolicy: "brokerage"
        siteSelectionOptions { seed: 4, candidates: 1 }
        jobSubmitThrottle: 2
    """))
    config = load_config(str(conf))
    bus = EventBus()
    events = []
    bus.subscribe(events.append)
    sched = build_executor(config, bus)
    assert sched.clock.virtual and bus.clock == sched.clock.now
    assert sched.policy.name == "brokerage" and sched.policy.candidates == 1
    assert sched.job_submit.limit == 2
    assert [s.limit for s in sched.sites] == [4, 2]
    assert sched.sites[1].attributes["maxMemory"] == 1000

    async def main():
        tasks = [Task(f"j{i}", "sim", [], str(tmp_path), str(tmp_path / "run"),
                      profiles={"memory": "2000"} if i % 2 else {}) for i in range(30)]
        results = await asyncio.gather(*(sched.submit(t) for t in tasks))
        await sched.close()
        return results

    results = asyncio.run(main())
    assert sum(r.ok for r in results) >= 25
    assert {r.site for i, r in enumerate(results) if i % 2} == {"grid1"}
    assert events[-1].time - events[0].time > 60  # virtual seconds, in no wall time


def test_events_become_swift_log_lines():
    from swiftnb.logs.writer import format_message

    grid = Grid({"a": {**SITE, "failureProbability": 1.0}}, seed=1,
                replication_enabled=False)
    asyncio.run(grid.run(3))
    lines = [format_message(e)[2] for e in grid.events]
    assert any(line.startswith("CONTACT_SELECTED host=a, score=") for line in lines)
    assert any(line.startswith("THREAD_ASSOCIATION jobid=job-0 thread=R host=a "
                               "replicationGroup=null") for line in lines)
    assert any(line.startswith("TASK_STATUS_CHANGE taskid=urn:R-") and " status=5 " in line
               for line in lines)


def test_max_submit_rate_paces_submissions():
    grid = Grid({"a": {"slots": 50, "taskDuration": 10}}, site_limits={"a": (50, 50)},
                job_submit_throttle="off", host_job_submit_throttle="off")
    grid.sched.set_throttle("maxSubmitRate", 2, site="a")
    asyncio.run(grid.run(10))
    starts = [e.time for e in grid.kinds("TASK_STATUS_CHANGE") if e["status"] == 8]
    assert starts == pytest.approx([0.5 * i for i in range(10)])
    assert ("maxSubmitRate", "a", "off", 2) in [
        (e["name"], e["host"], e["old"], e["new"]) for e in grid.kinds("THROTTLE")]


class _MkdirProvider(Provider):
    """A real provider that prepares job directories (file operations), then finishes."""

    def __init__(self, name, root, clock):
        self.name = name
        self.root = root
        self.clock = clock
        self.inside = 0
        self.peak = 0

    async def start(self):
        pass

    async def shutdown(self):
        pass

    def state(self):
        return ProviderState(site=self.name, type="mkdir")

    def prepare(self, task):
        return Job(task, swift_job_dir("run", task.jobid, task.attempt))

    async def execute(self, job, report):
        task = job.task
        report.status(1)
        for part in ("in", "out"):
            async with report.file_operation():
                self.inside += 1
                self.peak = max(self.peak, self.inside)
                (self.root / task.jobid / part).mkdir(parents=True)
                await self.clock.sleep(1)
                self.inside -= 1
        report.status(2)
        return TaskResult(ok=True)


def test_file_operations_throttle_holds_for_providers_that_stage(tmp_path):
    from swiftnb.scheduling.clock import VirtualClock
    from swiftnb.scheduling.scheduler import Scheduler
    from swiftnb.scheduling.sites import Site

    clock = VirtualClock(start=0.0)
    bus = EventBus(clock=clock.now)
    providers = [_MkdirProvider(f"p{i}", tmp_path, clock) for i in range(3)]
    sched = Scheduler([Site(p.name, p, max_parallel_tasks=10, initial_parallel_tasks=10)
                       for p in providers], bus, clock=clock, file_operations_throttle=3,
                      host_job_submit_throttle="off", job_submit_throttle="off")

    async def main():
        tasks = [Task(f"j{i}", "mk", [], str(tmp_path), str(tmp_path)) for i in range(24)]
        results = await asyncio.gather(*(sched.submit(t) for t in tasks))
        await sched.close()
        return results

    results = asyncio.run(main())
    assert all(r.ok for r in results)
    assert sum(1 for _ in tmp_path.glob("j*/out")) == 24
    assert sched.file_operations.peak == 3
    assert sum(p.peak for p in providers) >= 3
    assert clock.now() == pytest.approx(16.0)  # 48 operations of 1 s, 3 at a time
