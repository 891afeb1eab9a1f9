"""Every executor the engine is given answers ``app_executable(tr)``: the program the
configured site catalogue gives the app (memoization fingerprints an app by it), None
where no site lists it."""

from __future__ import annotations

from swiftnb.attempts import FailureLog, RecordingExecutor
from swiftnb.config import load_config_text
from swiftnb.engine.task import Task
from swiftnb.events import EventBus
from swiftnb.scheduling.apps import AppCatalogue
from swiftnb.scheduling.build import build_executor
from swiftnb.scheduling.scheduler import Scheduler
from swiftnb.scheduling.single import DryRunExecutor, SingleSiteExecutor

SITES = """
site.a { execution.type: "local", workDirectory: "a", maxParallelTasks: 4,
         initialParallelTasks: 1, app.sim1 { executable: "/opt/sim1" } }
site.b { execution.type: "local", workDirectory: "b",
         app.ALL { executable: "*" }, app.sim1 { executable: "/usr/bin/sim1-b" } }
app.tool { executable: "/bin/tool" }
"""


def _executor(tmp_path, text: str, **kwargs):
    config = load_config_text(text, cwd=str(tmp_path))
    return build_executor(config, EventBus(), site_run=str(tmp_path / "run001"), **kwargs)


def test_the_scheduler_names_the_first_listing_sites_program(tmp_path) -> None:
    ex = _executor(tmp_path, SITES + "sites: [a, b]\n")
    assert isinstance(ex, Scheduler)
    assert ex.app_executable("sim1") == "/opt/sim1"     # site a lists it first
    assert ex.app_executable("tool") == "/bin/tool"     # the global definition
    assert ex.app_executable("cat") == "cat"            # b's app.ALL: its own name


def test_the_scheduler_says_none_where_no_site_lists_the_app(tmp_path) -> None:
    ex = _executor(tmp_path, SITES + "sites: [a]\n")
    assert isinstance(ex, Scheduler)          # a starts low: its score grows its limit
    assert ex.app_executable("cat") is None
    assert RecordingExecutor(ex, FailureLog()).app_executable("cat") is None


def test_the_single_local_site_reads_its_catalogue(tmp_path) -> None:
    ex = _executor(tmp_path, SITES + "sites: [b]\n")
    assert isinstance(ex, SingleSiteExecutor)
    assert ex.app_executable("sim1") == "/usr/bin/sim1-b"
    assert ex.app_executable("echo") == "echo"
    recording = RecordingExecutor(ex, FailureLog())
    assert recording.app_executable("sim1") == "/usr/bin/sim1-b"


def test_a_dry_run_has_no_program() -> None:
    assert DryRunExecutor(EventBus()).app_executable("echo") is None


def test_filling_a_task_in_copies_it(tmp_path) -> None:
    config = load_config_text(SITES + "sites: [b]\n", cwd=str(tmp_path))
    apps = AppCatalogue(config)
    task = Task(jobid="sim1-x", tr="sim1", args=["1"], base_dir=str(tmp_path),
                run_dir=str(tmp_path))
    filled = apps.resolve("b", task)
    assert filled.executable == "/usr/bin/sim1-b" and task.executable is None
    assert apps.missing("a", Task(jobid="cat-x", tr="cat", args=[], base_dir="",
                                  run_dir="")) == "cat"
