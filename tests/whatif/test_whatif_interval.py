"""The what-if interval (issue 28): p10-p90 as a prediction interval for the next run,
and each simulated run borrowing from logs of runs of about its size (real AIMES logs in
tests/data/aimes: Stampede alone, 8, 32, 256 and 2,048 tasks)."""

import os
import random

import numpy as np
import pandas as pd
import pytest

from swiftnb.forecast import Model, calibrate, whatif
from swiftnb.forecast.prediction import interval, summarize
from swiftnb.logs.frame import LogFrame

from aimes_runs import DATA, EXAMPLE, RUNS  # tests/whatif/aimes_runs.py


@pytest.fixture(scope="module")
def model():
    return calibrate([LogFrame.read(path) for path in RUNS.values()])


def _coverage(draws, trials, interval):
    """How often a new draw falls in the interval ``interval`` makes of ``draws`` others."""
    rng = random.Random(28)
    inside = 0
    for _ in range(trials):
        values = [rng.expovariate(1.0) for _ in range(draws)]
        low, high = interval(values)
        inside += low <= rng.expovariate(1.0) <= high
    return inside / trials


@pytest.mark.parametrize("draws", [10, 20])
def test_p10_p90_hold_the_next_run_eight_times_in_ten(draws):
    """Ten or twenty runs of a model; an eleventh of the same model falls inside their
    p10-p90 about 80% of the time.  Read at the usual ranks (numpy's and pandas' default)
    the same interval holds it far less often, the fewer the runs."""

    def usual(values):
        low, high = np.quantile(values, [0.1, 0.9])
        return low, high

    ours = _coverage(draws, 4000, interval)
    assert 0.77 <= ours <= 0.83
    assert _coverage(draws, 4000, usual) < ours - 0.04
    # the table of a prediction reads its interval so
    table = summarize(pd.DataFrame({"ok": 1.0, "TTC": [float(v) for v in range(1, 11)]}))
    assert (table.loc["TTC", "p10"], table.loc["TTC", "p90"]) == pytest.approx((1.1, 9.9))


def test_calibration_counts_each_runs_tasks(model, tmp_path):
    assert model.run_tasks == [32, 256, 2048, 8]
    model.save(tmp_path / "model.json")
    assert Model.load(tmp_path / "model.json").run_tasks == [32, 256, 2048, 8]


def test_a_draw_borrows_from_logs_of_about_the_predicted_size(model):
    """A log of twice or half the tasks weighs half: asked for 2,048 tasks, a draw takes
    the 2,048-task log's worker start-ups (one per block: 128) about 7 times in 8; asked
    for 8 tasks, the 8-task log's single block about 3 times in 4; asked for no size,
    each log alike."""
    site = model.sites["stampede"]
    blocks = {run: site.runs["block_startup"].count(run) for run in range(4)}
    assert blocks == {0: 2, 1: 16, 2: 128, 3: 1}

    def drawn_from(tasks):
        rng = random.Random(5)
        lengths = [len(model.resampled(rng, sites=1, tasks=tasks).sites["stampede"].block_startup)
                   for _ in range(400)]
        return {n: lengths.count(blocks[run]) / len(lengths) for run, n in
                zip(range(4), (32, 256, 2048, 8))}

    large, small, any_size = drawn_from(2048), drawn_from(8), drawn_from(None)
    assert large[2048] > 0.8 and large[8] < 0.02
    assert small[8] > 0.7 and small[2048] < 0.02
    assert all(0.18 < share < 0.32 for share in any_size.values())


def test_a_prediction_counts_the_scripts_calls_first(model):
    table = whatif(os.path.join(EXAMPLE, "bag_of_tasks.swift"), model,
                   config=os.path.join(EXAMPLE, "stampede.conf"),
                   args=["-N=40", "-sleep=900"], runs=2)
    assert table.attrs["per_run"].attrs["tasks"] == 40
    # 40 tasks: three blocks of 16 slots, one wave of sleep 900
    assert 950 < table.loc["TTC", "median"] < 1200


def test_queue_waits_drift_by_how_much_the_logs_around_the_moment_differ():
    """Four February logs, two a day: asked for the first day, a draw's queue waits are
    one log's scaled by the ratio of two neighbouring logs' levels (the same factor for
    all its blocks), never beyond the longest wait seen; asked for no moment, no drift."""
    names = ("stampede_gordon-exp-034", "stampede_gordon-exp-035",
             "stampede_gordon-exp-039", "stampede_gordon-exp-040")
    frames = [LogFrame.read(os.path.join(DATA, n, "swift.log.xz")) for n in names]
    model = calibrate(frames)
    site = model.sites["stampede"]
    longest, seen = max(site.block_queue), set(site.block_queue)
    rng = random.Random(11)
    at = float(frames[1].run["start"])
    drifted = 0
    for _ in range(200):
        waits = model.resampled(rng, at=at, sites=2).sites["stampede"].block_queue
        assert max(waits) <= longest
        drifted += not set(waits) <= seen
    # 034 and 035 (23 s and 28 s) weigh most; 039 and 040 (~28,000 s) two days away
    assert 0.2 < drifted / 200 < 0.9
    plain = [model.resampled(rng, sites=2).sites["stampede"].block_queue for _ in range(50)]
    assert all(set(waits) <= seen for waits in plain)


def test_a_drift_spreads_as_much_as_one_day_not_as_a_ratio_of_two():
    """The drift is the ratio of two logs' queue levels to the power 1/sqrt(2): the ratio
    of two independent draws has twice one draw's log-variance, the drift one draw's."""
    names = ("stampede_gordon-exp-034", "stampede_gordon-exp-035",
             "stampede_gordon-exp-039", "stampede_gordon-exp-040")
    model = calibrate([LogFrame.read(os.path.join(DATA, n, "swift.log.xz")) for n in names])
    site = model.sites["stampede"]
    waits, runs = site.block_queue, site.runs["block_queue"]
    levels = [max(float(np.median([w for w, r in zip(waits, runs) if r == run])), 1.0)
              for run in sorted(set(runs))]
    rng = random.Random(5)
    factors = [model._drift(waits, runs, rng, None, 86400.0) for _ in range(4000)]
    ratios = [a / b for a in levels for b in levels]
    assert all(min(abs(f ** 2 ** 0.5 - q) / q for q in ratios) < 1e-9 for f in factors)
    one_day = float(np.var(np.log(levels)))
    assert one_day > 1.0  # two quiet and two busy logs: the spread is real
    assert float(np.var(np.log(factors))) == pytest.approx(one_day, rel=0.15)
