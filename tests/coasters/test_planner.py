"""The block planner against hand-computed schedules (seed 000 0.5, reference 6.4).

Every expected figure below was worked out by hand from the formulas in planner.py's
docstring; the comments show the arithmetic.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from swiftnb.coasters.planner import (
    BlockView,
    admission_error,
    allocate_blocks,
    block_deadline,
    block_target,
    blocks_to_suspend,
    new_block_count,
    overallocated,
    round_past,
    total_request,
)
from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings


def shapes(plans):
    return [(p.workers, p.walltime, p.start, p.count) for p in plans]


def test_reference_worked_example_two_rounds():
    # 6 jobs of 60 s, maxJobs 2, tasksPerNode 2, maxNodesPerJob 2, maxJobTime 10 min:
    # tsum = int(6 * 568^0.01) = 6, chunk = ceil(2 * 0.1) = 1, h = min(round(568, 60) = 600,
    # 600 - 60) = 540, width = min(round(int(6 / 540^0.01) = 5, 2) = 6, 4) = 4, and the
    # area 4 * 540^0.01 = 4.26 takes 4 jobs.  Observed: BLOCK_REQUESTED cores=4 walltime=540.
    s = CoasterSettings.from_options(
        {"maxJobs": 2, "tasksPerNode": 2, "maxNodesPerJob": 2, "maxJobTime": "00:10:00"})
    assert overallocated(60, s) == 568
    assert total_request([60] * 6, s) == 6
    assert shapes(allocate_blocks([60] * 6, 0, s)) == [(4, 540, 0, 4)]
    # next round, one block exists: the 2 left get width round(int(2/1.065) = 1, 2) = 2
    assert shapes(allocate_blocks([60] * 2, 1, s)) == [(2, 540, 0, 2)]


def test_round_past_always_moves_up():
    assert [round_past(v, 2) for v in (5, 6, 7)] == [6, 8, 8]
    assert round_past(568, 60) == 600 and round_past(0, 4) == 4


def test_new_block_count_uses_free_slots_and_step():
    assert new_block_count(20, 0, 0.1) == 2
    assert new_block_count(20, 19, 0.1) == 1
    assert new_block_count(20, 20, 0.1) == 0
    assert new_block_count(2, 0, 0.1) == 1
    assert new_block_count(10, 3, 1.0) == 7


def test_equal_blocks_with_spread_zero():
    # 100 x 60 s, chunk = ceil(20 * 0.2) = 4, tsum = int(100 * 1.0655) = 106, each target
    # ceil(26.5) = 27: width round(int(27 / 600^.01) = 25, 1) = 26, 28 % 26 != 0 so
    # h = 600 + 60 = 660, area 26 * 660^.01 = 27.7 -> 27 jobs per block, 19 left for the last.
    s = CoasterSettings(slots=20, allocation_step_size=0.2, spread=0)
    assert shapes(allocate_blocks([60] * 100, 0, s)) == [
        (26, 660, 0, 27), (26, 660, 27, 27), (26, 660, 54, 27), (26, 660, 81, 19)]


def test_spread_blocks_grow_from_small_to_large():
    # spread 0.9: median 26.5, targets ceil(2.65 + 47.7 k / 3) = 3, 19, 35, 51
    s = CoasterSettings(slots=20, allocation_step_size=0.2, spread=0.9)
    assert [block_target(k, 4, 106, s) for k in range(4)] == [3, 19, 35, 51]
    assert shapes(allocate_blocks([60] * 100, 0, s)) == [
        (3, 660, 0, 3), (18, 660, 3, 19), (33, 660, 22, 35), (48, 660, 57, 43)]


def test_exponential_spread():
    # x = 2: e = int(log2(106)) = 6; targets 2^(6k // 4) = 1, 2, 8, 16
    s = CoasterSettings(slots=20, allocation_step_size=0.2, exponential_spread=2)
    assert [block_target(k, 4, 106, s) for k in range(4)] == [1, 2, 8, 16]
    assert [p.target for p in allocate_blocks([60] * 100, 0, s)] == [1, 2, 8, 16]


def test_overallocation_for_short_and_long_tasks():
    s = CoasterSettings()
    assert overallocated(1, s) == 9          # int(1 * (9 e^-0.001 + 1)) = int(9.99)
    assert overallocated(3600, s) == 4485    # 3600 * (9 e^-3.6 + 1)
    assert overallocated(100000, s) == 100000
    # a 1 s task: h = round(9, 1) = 10; a 1 h task: h = round(4485, 3600) = 7200
    assert shapes(allocate_blocks([1], 0, s)) == [(1, 10, 0, 1)]
    assert shapes(allocate_blocks([3600], 0, s)) == [(1, 7200, 0, 1)]


def test_node_granularity():
    # nodeGranularity 4: widths are multiples of 4 workers; targets 1 and 10
    s = CoasterSettings(node_granularity=4)
    plans = allocate_blocks([60] * 10, 0, s)
    assert shapes(plans) == [(4, 600, 0, 4), (12, 660, 4, 6)]
    assert [p.nodes(s.jobs_per_node) for p in plans] == [4, 12]


def test_maxtime_caps_height():
    # maxJobTime 5 min, reserve 60: h = min(round(914, 100) = 1000, 240) = 240
    s = CoasterSettings(maxtime=300)
    assert shapes(allocate_blocks([100] * 3, 0, s)) == [(1, 240, 0, 1), (3, 240, 1, 2)]


def test_parallelism_extremes():
    # p = 0: every task has size 1 (maximum parallelism): width round(10, 1) = 11.
    # p = 1: size = walltime (tight packing): width round(int(5680 / 600), 1) = 10.
    tasks = [60] * 10
    wide = CoasterSettings(slots=1, allocation_step_size=1, parallelism=0)
    tight = CoasterSettings(slots=1, allocation_step_size=1, parallelism=1)
    assert shapes(allocate_blocks(tasks, 0, wide)) == [(11, 660, 0, 10)]
    assert shapes(allocate_blocks(tasks, 0, tight)) == [(10, 660, 0, 10)]
    # no overallocation (L = H = 1), p = 1: h = round(600, 600) = 1200, tsum = 2 * 600,
    # width round(int(1200 / 1200), 1) = 2, 1 % 2 != 0 so h = 1200 + 600 = 1800
    tight1 = CoasterSettings(slots=1, allocation_step_size=1, parallelism=1, low_overallocation=1)
    assert shapes(allocate_blocks([600, 600], 0, tight1)) == [(2, 1800, 0, 2)]


def test_no_free_slots_no_blocks():
    s = CoasterSettings(slots=2)
    assert allocate_blocks([60] * 5, 2, s) == []
    assert allocate_blocks([], 0, s) == []


def test_admission_error_text():
    s = CoasterSettings.from_options({"maxJobTime": "00:05:00"})
    assert admission_error(600, s) == "Task walltime > maxJobTime - reserve (00:10:00 > 00:04:00)"
    assert admission_error(240, s) is None


def test_block_removal_keeps_smallest_blocks_that_cover_the_need():
    blocks = [BlockView("a", 10, 0), BlockView("b", 3, 0), BlockView("c", 5, 0),
              BlockView("d", 1, 95)]
    # needed 4: sorted d(1) b(3) c(5) a(10); d is used recently; after d+b = 4 >= 4 the
    # rest (c, a) are idle long enough and get suspended
    assert blocks_to_suspend(blocks, 4, now=100, delay=30) == ["c", "a"]
    # nothing needed: every block idle for more than the delay
    assert blocks_to_suspend(blocks, 0, now=100, delay=30) == ["b", "c", "a"]
    assert blocks_to_suspend(blocks, 100, now=100, delay=30) == []
    assert block_deadline(0, 540, 100, 120) == 220
    assert block_deadline(0, 540, 500, 120) == 540


def test_settings_keys_and_errors():
    s = CoasterSettings.from_options({"maxJobs": "3", "maxJobTime": "01:00:00", "spread": 0.5,
                                      "jobQueue": "normal"})
    assert (s.slots, s.maxtime, s.spread) == (3, 3600, 0.5)
    assert CoasterSettings.from_options({"maxJobTime": "10"}).maxtime == 600
    assert CoasterSettings.from_options({"maxJobTime": "1:30"}).maxtime == 5400
    with pytest.raises(CoasterConfigError, match="'execution.options.maxJob'; did you mean 'maxJobs'"):
        CoasterSettings.from_options({"maxJob": 2})
    with pytest.raises(CoasterConfigError, match="expected an integer from -2147483648"):
        CoasterSettings.from_options({"maxJobs": "many"})
    with pytest.raises(CoasterConfigError, match="expected an integer from -2147483648"):
        CoasterSettings.from_options({"maxJobs": 99999999999})
    with pytest.raises(CoasterConfigError, match="expected a number from"):
        CoasterSettings.from_options({"lowOverallocation": 1e308})
    with pytest.raises(CoasterConfigError, match="allocationStepSize"):
        CoasterSettings.from_options({"allocationStepSize": 0})


# -- properties ---------------------------------------------------------------------


@st.composite
def planner_cases(draw):
    reserve = draw(st.integers(0, 120))
    maxtime = draw(st.integers(reserve + 1, 200000))
    s = CoasterSettings(
        slots=draw(st.integers(1, 40)),
        jobs_per_node=draw(st.integers(1, 8)),
        node_granularity=draw(st.integers(1, 6)),
        max_nodes=draw(st.integers(1, 200)),
        allocation_step_size=draw(st.floats(0.01, 1.0)),
        low_overallocation=draw(st.floats(1.0, 20.0)),
        high_overallocation=draw(st.floats(1.0, 3.0)),
        overallocation_decay_factor=draw(st.floats(0.0, 0.01)),
        spread=draw(st.floats(0.0, 1.0)),
        exponential_spread=draw(st.sampled_from([0, 0, 2, 3, 1.5])),
        reserve=reserve,
        maxtime=maxtime,
        parallelism=draw(st.floats(0.0, 1.0)),
    )
    walltimes = sorted(draw(st.lists(st.integers(1, maxtime - reserve), min_size=1, max_size=120)))
    current = draw(st.integers(0, s.slots))
    return s, walltimes, current


@hsettings(max_examples=150, deadline=None)
@given(planner_cases())
def test_planner_properties(case):
    s, walltimes, current = case
    plans = allocate_blocks(walltimes, current, s)
    # slots never exceeded
    assert current + len(plans) <= s.slots
    assert len(plans) <= new_block_count(s.slots, current, s.allocation_step_size)
    expected_start = 0
    for p in plans:
        # committed ranges are consecutive, non-empty, inside the queue
        assert p.start == expected_start and p.count >= 1
        expected_start += p.count
        assert expected_start <= len(walltimes)
        # no committed task exceeds its block's walltime; blocks within maxtime - reserve
        assert 1 <= p.walltime <= s.maxtime - s.reserve
        assert max(walltimes[p.start:p.start + p.count]) <= p.walltime
        # widths respect granularity and maxnodes
        assert 1 <= p.workers <= s.max_nodes * s.jobs_per_node
        assert p.workers % s.jobs_per_node == 0
        nodes = p.workers // s.jobs_per_node
        assert nodes % s.node_granularity == 0 or nodes == s.max_nodes


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)), max_size=12),
       st.floats(0, 200), st.floats(0, 60))
def test_suspension_properties(raw, needed, delay):
    now = 100.0
    blocks = [BlockView(str(i), size, last) for i, (size, last) in enumerate(raw)]
    chosen = set(blocks_to_suspend(blocks, needed, now, delay))
    kept = [b for b in blocks if b.id not in chosen]
    # only blocks idle longer than the delay are suspended
    assert all(now - b.last_used > delay for b in blocks if b.id in chosen)
    # what is kept still covers the need, unless even everything could not
    total = sum(b.size_left for b in blocks)
    if total >= needed and all(now - b.last_used > delay for b in blocks):
        assert sum(b.size_left for b in kept) + 1e-9 >= min(needed, total) or not chosen


# -- the dispatch queue -------------------------------------------------------------


@hsettings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 50), max_size=60), st.lists(st.integers(0, 60), max_size=30))
def test_walltime_queue_pops_the_longest_task_that_fits(walltimes, limits):
    from swiftnb.coasters.servicerecords import CoasterJob
    from swiftnb.coasters.walltimes import WalltimeQueue

    q = WalltimeQueue(0.01)
    model = []
    for n, w in enumerate(walltimes):
        job = CoasterJob(f"t{n}", w, {}, lambda *a, **k: None, None, n=n)  # type: ignore[arg-type]
        q.push(job)
        model.append((w, n))
    for limit in limits:
        fitting = [(w, n) for w, n in model if w <= limit]
        job = q.pop_fitting(limit)
        if not fitting:
            assert job is None
            continue
        # the longest that fits; among equals the first submitted
        best = max(fitting, key=lambda wn: (wn[0], -wn[1]))
        assert (job.walltime, job.n) == best
        model.remove(best)
    assert len(q) == len(model)
    assert q.walltimes() == sorted(w for w, _ in model)


def test_service_addresses():
    assert CoasterSettings().bind_address == "127.0.0.1"
    assert CoasterSettings().contact_host == "127.0.0.1"
    s = CoasterSettings.from_options({"internalHostName": "10.0.0.5"})
    assert (s.bind_address, s.contact_host) == ("10.0.0.5", "10.0.0.5")
    s = CoasterSettings.from_options({"listenAddress": "0.0.0.0", "internalHostName": "head"})
    assert (s.bind_address, s.contact_host) == ("0.0.0.0", "head")


def test_prefetch_option():
    assert CoasterSettings().prefetch is None
    assert CoasterSettings.from_options({"prefetch": "auto"}).prefetch is None
    assert CoasterSettings.from_options({"prefetch": 2}).prefetch == 2
    with pytest.raises(CoasterConfigError, match="prefetch"):
        CoasterSettings.from_options({"prefetch": -1})
