"""Scheduling that adapts by default (issue 14, item 10).

With the default policy and throttles (maxParallelTasks = initialParallelTasks = 2, an
effectively infinite score), a failing site must lose its share and a retry must avoid
the site that failed it, while slow, recovering and mostly-working sites keep theirs and
an app only one site has still gets every retry there.  The runs are real ``swiftnb run``
commands on ``sim`` sites (virtual time: simulated hours take about a second), seeded, and
the share of each site is counted from the run's log (one THREAD_ASSOCIATION per attempt).
"""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from grid import Grid
from swiftnb.scheduling.policy import Policy

pytestmark = pytest.mark.timeout(300)

SWIFTNB = str(Path(sys.executable).with_name("swiftnb"))

WORK = """\
type file;
app (file o) work (int i) {
  work i stdout=@o;
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:%d] {
  f[i] = work(i);
}
"""

_ATTEMPT = re.compile(r"^(\S+ \S+?),(\d{3})\S* .*THREAD_ASSOCIATION jobid=(\S+) thread=\S+ "
                      r"host=(\w+)", re.M)


@dataclass(frozen=True)
class Attempt:
    time: float     # seconds of simulated time since the run's first attempt
    jobid: str
    host: str


@dataclass
class Outcome:
    returncode: int
    output: str
    log: str
    attempts: list[Attempt]
    dir: Path

    def starts(self, jobs: str = "") -> Counter[str]:
        return Counter(a.host for a in self.attempts if a.jobid.startswith(jobs))

    def share(self, host: str, jobs: str = "") -> float:
        starts = self.starts(jobs)
        return starts[host] / sum(starts.values())

    def by_job(self) -> dict[str, list[Attempt]]:
        jobs: dict[str, list[Attempt]] = defaultdict(list)
        for a in self.attempts:
            jobs[a.jobid].append(a)
        return jobs

    def site_sets(self, host: str) -> list[str]:
        return re.findall(rf"SITE_SET host={host} set=(\w+) reason=(.*)", self.log)


def _swiftnb(tmp_path: Path, conf: str, script: str) -> Outcome:
    (tmp_path / "swift.conf").write_text(conf)
    (tmp_path / "work.swift").write_text(script)
    proc = subprocess.run([SWIFTNB, "run", "-config", "swift.conf", "work.swift"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=240)
    logs = list(tmp_path.glob("run001/*.log"))
    assert logs, proc.stdout + proc.stderr
    log = logs[0].read_text()
    raw = [(datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").timestamp() + int(ms) / 1000,
            jobid, host) for stamp, ms, jobid, host in _ATTEMPT.findall(log)]
    t0 = raw[0][0]
    attempts = [Attempt(t - t0, jobid, host) for t, jobid, host in raw]
    return Outcome(proc.returncode, proc.stdout + proc.stderr, log, attempts, tmp_path)


#: every random choice of the scheduler seeded (the sim sites seed their own draws)
SEEDED = "executionRetries: 5\nsiteSelectionOptions { seed: 5 }\n"


def _sim(name: str, seed: int, options: str = "", apps: str = "") -> str:
    """A sim site with Swift's default throttles (no maxParallelTasks, no initial...)."""
    return (f'site.{name} {{ execution {{ type: "sim", options {{ taskDuration: 10, '
            f'seed: {seed}{", " + options if options else ""} }} }} {apps} }}\n')


def _no_retry_on_the_site_that_just_failed(outcome: Outcome, jobs: str = "") -> None:
    for jobid, attempts in outcome.by_job().items():
        if jobid.startswith(jobs):
            hosts = [a.host for a in attempts]
            assert all(a != b for a, b in zip(hosts, hosts[1:])), (jobid, hosts)


def test_a_site_failing_90_percent_loses_its_share_and_the_run_succeeds(tmp_path):
    """The issue's run: 3 sites, one failing 90%, 400 tasks, 5 retries, all defaults."""
    conf = ("sites: [good1, good2, flaky]\n" + _sim("good1", 1) + _sim("good2", 2)
            + _sim("flaky", 3, "failureProbability: 0.9") + SEEDED)
    outcome = _swiftnb(tmp_path, conf, WORK % 400)
    assert outcome.returncode == 0, outcome.output
    assert len(list((tmp_path / "out").iterdir())) == 400
    assert outcome.share("flaky") < 0.20, outcome.starts()
    _no_retry_on_the_site_that_just_failed(outcome)
    banned = outcome.site_sets("flaky")
    assert banned and banned[0][0] == "banned" and "failure debt" in banned[0][1], banned


def test_slow_and_mostly_working_sites_keep_their_share(tmp_path):
    """Only failures count: a slow site is never banned and keeps both its slots busy; a
    site failing 15% of its jobs gets as many as a good one; the 90% one loses its share."""
    slow_cycle = 25 + 60 + 60  # submitTime + queueTime + taskDuration, each a constant
    conf = ("sites: [good, slow, transient, flaky]\n" + _sim("good", 1)
            + _sim("slow", 2, "submitTime: 25, queueTime: 60").replace(
                "taskDuration: 10", "taskDuration: 60")
            + _sim("transient", 3, "failureProbability: 0.15")
            + _sim("flaky", 4, "failureProbability: 0.9") + SEEDED)
    outcome = _swiftnb(tmp_path, conf, WORK % 400)
    assert outcome.returncode == 0, outcome.output
    starts = outcome.starts()
    assert outcome.share("flaky") < 0.20, starts
    # slow: no back-off ever, and both slots refilled as soon as they freed while jobs waited
    assert outcome.site_sets("slow") == []
    last_placement = outcome.attempts[-1].time
    assert starts["slow"] >= 2 * (last_placement // slow_cycle), (starts, last_placement)
    # transient: it did fail (and retries went elsewhere), yet it kept a good site's share
    assert "failed with an exit code of 1" in outcome.log
    transient_failed = [a for a in outcome.by_job().values()
                        if len(a) > 1 and a[0].host == "transient"]
    assert transient_failed
    assert starts["transient"] >= 0.9 * starts["good"], starts
    _no_retry_on_the_site_that_just_failed(outcome)


def test_a_site_that_recovers_regains_its_share(tmp_path):
    """Down for the first 600 s (refusing every job), then fine: next to nothing while down,
    its full third once the debt is paid off."""
    conf = ("sites: [good1, good2, back]\n" + _sim("good1", 1) + _sim("good2", 2)
            + _sim("back", 3, 'outages: "0+600"') + SEEDED)
    outcome = _swiftnb(tmp_path, conf, WORK % 1500)
    assert outcome.returncode == 0, outcome.output

    def share(t0: float, t1: float) -> float:
        window = Counter(a.host for a in outcome.attempts if t0 <= a.time < t1)
        return window["back"] / sum(window.values())

    assert share(0, 600) < 0.05
    end = outcome.attempts[-1].time
    assert end > 2000
    assert share(1800, end) > 0.30  # a fair third
    sets = outcome.site_sets("back")
    assert [s for s, _ in sets] == ["banned", "candidate"], sets
    assert sets[1][1] == "failure debt paid off"


def test_an_app_only_the_failing_site_has_gets_every_retry_there(tmp_path):
    """`only` exists on the flaky site alone: all its attempts go there without the
    back-off (nothing else could run them), while `work` avoids the flaky site."""
    flaky_apps = 'app.work { executable: "work" }\n  app.only { executable: "only" }'
    conf = ("sites: [good1, good2, flaky]\n"
            + _sim("good1", 1, apps='app.work { executable: "work" }')
            + _sim("good2", 2, apps='app.work { executable: "work" }')
            + _sim("flaky", 3, "failureProbability: 0.6", apps=flaky_apps)
            + SEEDED)
    script = (WORK % 300) + """\
app (file o) only (int i) {
  only i stdout=@o;
}
file g[] <simple_mapper; prefix="out/g", suffix=".txt">;
foreach i in [1:12] {
  g[i] = only(i);
}
"""
    outcome = _swiftnb(tmp_path, conf, script)
    only = {j: a for j, a in outcome.by_job().items() if j.startswith("only-")}
    assert len(only) == 12
    assert {a.host for attempts in only.values() for a in attempts} == {"flaky"}
    assert any(len(attempts) > 1 for attempts in only.values())
    # every job stopped early only because it succeeded: its retries were all made
    succeeded = len(list((tmp_path / "out").glob("g*.txt")))
    assert succeeded >= sum(len(attempts) < 6 for attempts in only.values())
    # and none waited for the failing site's back-off (102.4 s once in full debt)
    gaps = [b.time - a.time for attempts in only.values()
            for a, b in zip(attempts, attempts[1:])]
    assert max(gaps) < 102.4, gaps
    # ... though the site was in debt for `work`, which went elsewhere
    assert outcome.site_sets("flaky")[0][0] == "banned"
    assert outcome.share("flaky", jobs="work-") < 0.20, outcome.starts("work-")
    _no_retry_on_the_site_that_just_failed(outcome, jobs="work-")


class _NeverOther(Policy):
    """Refuses the site named "other" for ever (a filter no retry can pass)."""

    name = "never-other"

    def select(self, task, sites):
        return next((s for s in sites if s.name != "other"), None)


def test_retry_memory_is_per_job_and_ends_with_the_job():
    # a site that always fails and a good one: every retry goes to the good one
    grid = Grid({"bad": {"failureProbability": 1.0, "taskDuration": 5},
                 "good": {"taskDuration": 50}}, max_parallel=2, initial_parallel=2, seed=3)
    results = asyncio.run(grid.run(40, retries=1))
    assert all(r.ok for r in results), [r.message for r in results if not r.ok]
    assert grid.sched.state()["retrying"] == 0  # forgotten at each job's JOB_END

    # the only other site is refused by the policy for ever: the retry takes the
    # failing site again instead of failing with "no site can take job"
    grid = Grid({"bad": {"failureProbability": 1.0}, "other": {}}, max_parallel=2,
                initial_parallel=2, policy=_NeverOther())

    async def run_and_count() -> tuple[list[str], int]:
        task = grid.task(0)
        task.attempt = 0
        first = await grid.sched.submit(task)
        task.attempt = 1
        second = await grid.sched.submit(task)
        remembered = grid.sched.state()["retrying"]
        await grid.sched.close()
        return [first.site, second.site], remembered

    hosts, remembered = asyncio.run(run_and_count())
    assert hosts == ["bad", "bad"]
    assert remembered == 1  # no JOB_END yet: still remembered until the job ends
