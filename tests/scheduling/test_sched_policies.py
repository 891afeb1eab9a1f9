"""Site selection on a simulated grid: bad sites lose work under every policy."""

import asyncio
from collections import Counter

import pytest

from grid import Grid, task_hosts
from swiftnb.scheduling.policy import Policy
from swiftnb.scheduling.policies import make_policy

GOOD = {"slots": 8, "queueTime": "exp:5", "taskDuration": "uniform:20:40",
        "failureProbability": 0.0}
BAD = {"slots": 8, "queueTime": "exp:5", "taskDuration": "uniform:20:40",
       "failureProbability": 0.9}


def _grid(policy, **kw):
    return Grid({"good1": {**GOOD, "seed": 1}, "bad": {**BAD, "seed": 2},
                 "good2": {**GOOD, "seed": 3}}, policy=policy, seed=7, **kw)


def _share(grid, host):
    hosts = Counter(task_hosts(grid.events).values())
    return hosts[host] / sum(hosts.values())


@pytest.mark.parametrize("policy,banned_set", [
    ("random", "banned"), ("best", "banned"), ("sitesets", "hibernated"),
    ("brokerage", "offline"),
])
def test_bad_site_is_shunned_and_most_work_goes_to_good_sites(policy, banned_set):
    grid = _grid(policy)
    results = asyncio.run(grid.run(300, retries=5))
    assert sum(r.ok for r in results) >= 295
    sets = [e for e in grid.kinds("SITE_SET") if e["host"] == "bad"]
    assert any(e["set"] == banned_set for e in sets), [e.fields for e in sets][:5]
    assert not any(e["host"] != "bad" and e["set"] == banned_set and "fail" in e["reason"]
                   for e in grid.kinds("SITE_SET"))
    share = _share(grid, "bad")
    assert share < 0.15, share
    done = Counter(r.site for r in results if r.ok)
    assert done["good1"] + done["good2"] >= 0.9 * sum(done.values())


def test_weighted_random_spreads_by_score_not_only_to_the_best():
    grid = Grid({"a": {**GOOD, "seed": 1}, "b": {**GOOD, "seed": 2}}, policy="random",
                seed=3, max_parallel=50, initial_parallel=50)
    asyncio.run(grid.run(200))
    hosts = Counter(task_hosts(grid.events).values())
    assert hosts["a"] > 40 and hosts["b"] > 40


def test_sitesets_transitions_are_events():
    grid = _grid("sitesets")
    asyncio.run(grid.run(200, retries=5))
    moves = {(e["set"]) for e in grid.kinds("SITE_SET")}
    assert {"candidate", "hibernated", "overloaded"} <= moves
    reasons = " | ".join(e["reason"] for e in grid.kinds("SITE_SET"))
    assert "job failed" in reasons and "max_jobs_per_site" in reasons


def test_sitesets_queue_time_hibernation():
    # replication off: a site whose jobs queue far longer than the mean is hibernated
    grid = Grid({"quick": {**GOOD, "queueTime": 5, "seed": 1},
                 "slow": {**GOOD, "queueTime": 600, "seed": 2}},
                policy=make_policy("sitesets", queue_time_constant=60), seed=1)
    asyncio.run(grid.run(60))
    slow = [e for e in grid.kinds("SITE_SET") if e["host"] == "slow" and e["set"] == "hibernated"]
    assert slow and "queueTimeThrottle" in slow[0]["reason"]


def test_brokerage_filters_route_jobs():
    grid = Grid({
        "cpu": {**GOOD, "arch": ["x86_64"], "maxMemory": 2000, "maxTime": 3600},
        "gpu": {**GOOD, "arch": ["x86_64"], "maxMemory": 4000,
                "gpu": {"vendor": ["nvidia"], "model": ["A100-SXM4"]}},
        "arm": {**GOOD, "arch": ["aarch64", "excl"], "maxMemory": 1000},
    }, policy="brokerage", seed=1)
    async def main():
        s = grid.sched
        gpu = [s.submit(grid.task(i, profiles={"gpu": "nvidia:model=.*A100.*"})) for i in range(6)]
        arm = [s.submit(grid.task(10 + i, profiles={"architecture": "aarch64"})) for i in range(6)]
        plain = [s.submit(grid.task(20 + i)) for i in range(12)]
        big = s.submit(grid.task(99, profiles={"memory": "8000"}))
        long = s.submit(grid.task(98, maxwalltime=7200.0, profiles={"gpu": "amd"}))
        out = await asyncio.gather(asyncio.gather(*gpu), asyncio.gather(*arm),
                                   asyncio.gather(*plain), big, long)
        await s.close()
        return out

    gpu, arm, plain, big, long = asyncio.run(main())
    assert {r.site for r in gpu} == {"gpu"}
    assert {r.site for r in arm} == {"arm"}
    assert "arm" not in {r.site for r in plain}
    assert not big.ok and "no site satisfies" in big.message and "memory" in big.message
    assert not long.ok and "GPU vendor amd" in long.message


def test_a_user_policy_through_the_interface():
    class Cheapest(Policy):
        name = "cheapest"
        finished = 0

        def select(self, task, sites):
            return min(sites, key=lambda s: s.attributes.get("cost", 0))

        def on_finished(self, site, task, ok, message, queue_time):
            Cheapest.finished += 1

    grid = Grid({"dear": GOOD, "cheap": GOOD}, policy=Cheapest(), max_parallel=4,
                initial_parallel=4)
    grid.sites[0].attributes["cost"] = 10
    grid.sites[1].attributes["cost"] = 1
    asyncio.run(grid.run(20))
    picks = [e["host"] for e in grid.kinds("CONTACT_SELECTED")]
    # the cheap site first, the dear one only when the cheap one is at its limit
    assert picks[:5] == ["cheap"] * 4 + ["dear"]
    assert Cheapest.finished == 20


def test_unknown_policy_suggests_the_nearest():
    with pytest.raises(ValueError, match='did you mean "sitesets"'):
        make_policy("sitset")


def test_brokerage_prefers_sites_holding_the_input_data():
    grid = Grid({"near": {**GOOD, "localData": ["/data/run7/"]}, "far": GOOD},
                policy=make_policy("brokerage", select="best"), seed=1, max_parallel=50,
                initial_parallel=50)
    asyncio.run(grid.run(10, inputs=["/data/run7/a.dat", "/data/run7/b.dat"]))
    picks = [e["host"] for e in grid.kinds("CONTACT_SELECTED")]
    # data weight (2 + 2) / 2 = 2 outweighs the queue term until "near" has work queued
    assert picks[0] == "near" and picks.count("near") > picks.count("far")


def test_sitesets_initially_hibernated_site_gets_a_chance_only_when_needed():
    grid = Grid({"main": {**GOOD, "seed": 1}, "spare": {**GOOD, "seed": 2}},
                policy=make_policy("sitesets", hibernated=["spare"]), seed=1,
                site_limits={"main": (2, 2), "spare": (2, 2)})
    asyncio.run(grid.run(6))
    sets = [(e["host"], e["set"], e["reason"]) for e in grid.kinds("SITE_SET")]
    assert sets[0] == ("spare", "hibernated", "initially hibernated")
    assert ("spare", "candidate", "no candidate sites; new chance") in sets
    picks = [e["host"] for e in grid.kinds("CONTACT_SELECTED")]
    assert picks[:3] == ["main", "main", "spare"]


def test_delay_base_back_off_grows_between_uses_of_a_failing_site():
    # (initialParallelTasks == maxParallelTasks would be an infinite score: never banned)
    grid = Grid({"bad": {"failureProbability": 1.0, "taskDuration": 1}}, seed=1,
                site_limits={"bad": (4, 1)})
    result = asyncio.run(grid.run(1, retries=12))[0]
    assert not result.ok
    picks = [e.time for e in grid.kinds("CONTACT_SELECTED")]
    assert len(picks) == 13
    gaps = [b - a for a, b in zip(picks, picks[1:])]
    # each failure costs ~0.6 of score; once negative, the next use waits 0.1 s * 2^-score
    assert gaps[-1] > 20 * gaps[2] and gaps[-1] > 10
    assert gaps[4:] == sorted(gaps[4:])
    site = grid.sites[0]
    assert site.score < -5


def test_sitesets_with_replication_hibernates_the_slow_queue_site():
    grid = Grid({"slow": {"slots": 50, "queueTime": 5000, "taskDuration": 10, "seed": 1},
                 "fast": {"slots": 50, "queueTime": 5, "taskDuration": 10, "seed": 2}},
                site_limits={"slow": (10, 10), "fast": (10, 10)}, seed=3,
                policy=make_policy("sitesets", queue_time_constant=30),
                replication_enabled=True, replication_min_queue_time=100)
    results = asyncio.run(grid.run(20))
    assert all(r.ok and r.site == "fast" for r in results)
    slow = [e for e in grid.kinds("SITE_SET") if e["host"] == "slow" and e["set"] == "hibernated"]
    assert slow and "replica queued" in slow[0]["reason"]
