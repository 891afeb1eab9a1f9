"""The lean executor of a run on one local site takes the configured submit throttles,
and a local site that starts below its maximum (initialParallelTasks < maxParallelTasks)
gets the scheduler, whose score lets it grow as docs/sites.md says."""

from __future__ import annotations

from swiftnb.config import load_config_text
from swiftnb.events import EventBus
from swiftnb.scheduling.build import build_executor
from swiftnb.scheduling.scheduler import Scheduler
from swiftnb.scheduling.single import SingleSiteExecutor

LOCAL = 'site.local { execution.type: "local", workDirectory: "w"%s }\nsites: [local]\n'


def _executor(tmp_path, text: str):
    config = load_config_text(text, cwd=str(tmp_path))
    return build_executor(config, EventBus(), site_run=str(tmp_path / "run001"))


def test_single_local_site_takes_the_configured_submit_throttles(tmp_path) -> None:
    ex = _executor(tmp_path, "jobSubmitThrottle: 7\nhostJobSubmitThrottle: 3\n"
                   + LOCAL % "")
    assert isinstance(ex, SingleSiteExecutor)
    throttles = ex.throttles()
    assert throttles["jobSubmitThrottle"] == 7
    assert throttles["sites"]["local"]["hostJobSubmitThrottle"] == 3


def test_a_local_site_that_starts_low_gets_the_scheduler(tmp_path) -> None:
    ex = _executor(tmp_path, LOCAL % ", maxParallelTasks: 8, initialParallelTasks: 2")
    assert isinstance(ex, Scheduler)
    ex = _executor(tmp_path, LOCAL % ", maxParallelTasks: 8, initialParallelTasks: 8")
    assert isinstance(ex, SingleSiteExecutor)
