"""Swift/K 0.96's score arithmetic (reference 6.1), by hand-computed values."""

import math

import pytest

from swiftnb.scheduling.sites import (
    B, MINWEIGHT, ScoreFactors, Site, initial_score, job_throttle_for, tscore,
)


def test_tscore_range_and_zero():
    assert tscore(0) == pytest.approx(1.0)
    assert B == pytest.approx(2.9317, abs=1e-4)
    assert tscore(1e9) == pytest.approx(100.0, rel=1e-6)
    assert tscore(-1e9) == pytest.approx(0.01, rel=1e-6)
    # exp(B * atan(0.2 * 5)) = exp(2.9317 * pi/4)
    assert tscore(5) == pytest.approx(math.exp(B * math.pi / 4))


@pytest.mark.parametrize("init,mx", [(2, 2), (2, 10), (5, 10), (3, 100), (10, 10), (1, 1)])
def test_initial_score_gives_initial_parallel_tasks(init, mx):
    site = Site("s", None, max_parallel_tasks=mx, initial_parallel_tasks=init)
    assert site.limit == init
    assert site.job_throttle == pytest.approx((mx - 1) / 100)


def test_defaults_allow_two_jobs():
    # the schema defaults (2, 2): every site runs exactly 2 jobs at once
    site = Site("s", None)
    assert site.limit == 2
    site.score += 1000
    site.refresh_limit()
    assert site.limit == 2


def test_limit_grows_with_score_and_is_capped():
    site = Site("s", None, max_parallel_tasks=20, initial_parallel_tasks=2)
    seen = [site.limit]
    for _ in range(400):
        site.score += 0.2
        site.refresh_limit()
        seen.append(site.limit)
    assert seen == sorted(seen)
    assert seen[-1] == 17  # score 82: tscore 83.6, maxLoad 16.9 (the approach is slow)
    site.score = 1e6
    site.refresh_limit()
    assert site.limit == 20


def test_no_max_parallel_tasks_uses_site_score_throttling_factor():
    site = Site("s", None, max_parallel_tasks=None, initial_parallel_tasks=None)
    assert site.job_throttle == 0.2
    assert site.max_load == pytest.approx(1.2)
    assert site.limit == 2


def test_initial_greater_than_max_is_an_error():
    with pytest.raises(ValueError, match="initialParallelTasks"):
        initial_score(5, 3)
    assert job_throttle_for(101) == 1.0


def test_delay_mode_back_off():
    site = Site("s", None, delay_base=2.0)
    site.score = -1
    site.last_used = 100.0
    assert site.permitted_at() == pytest.approx(100.2)
    site.score = MINWEIGHT
    assert site.permitted_at() == pytest.approx(100 + 102.4)
    site.score = 0.5
    assert site.permitted_at() == -math.inf


def test_submission_time_delta():
    f = ScoreFactors()
    assert f.submission_delta(0.1) == pytest.approx(0.0)
    assert f.submission_delta(20.0) == pytest.approx(-0.1)
    assert f.submission_delta(10.05) == pytest.approx(-0.05)
