"""swiftnb.runner: a run as a background task on the caller's loop, and its handle."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from swiftnb import lang
from swiftnb.runner import RunSetupError, prepare_run, start_run

pytestmark = pytest.mark.timeout(60)

WORKFLOW = """\
type file;
app (file o) greet(string s) { echo s stdout=@o; }
file f <"hello.txt">;
f = greet(arg("who", "world"));
int[] sq;
foreach i in [1:3] { sq[i] = i * i; }
trace("done", sq[3]);
"""


def test_start_run_returns_at_once_and_awaits(tmp_path, capsys):
    async def main():
        run = start_run(WORKFLOW, base_dir=str(tmp_path), args={"who": "notebook"})
        assert not run.done and run.ok is None and run.status() == "running"
        outcome = await run
        return run, outcome

    run, outcome = asyncio.run(main())
    assert outcome.ok and run.ok and run.exit_code == 0 and run.status() == "ok"
    assert run.values == {"f": "hello.txt", "sq": {1: 1, 2: 4, 3: 9}}
    assert run.outputs == ["hello.txt"]
    assert (tmp_path / "hello.txt").read_text() == "notebook\n"
    assert "SwiftScript trace: done, 9" in capsys.readouterr().out
    events = run.events
    kinds = list(events["kind"])
    assert kinds[0] == "RUN_START" and kinds[-1] == "RUN_SUCCESS"
    assert "JOB_START" in kinds
    timings = run.timings()
    assert set(timings["timing"]) >= {"TTC", "Te"}
    report = run.report()
    assert report == os.path.join(run.run_dir.path, "report.html")
    assert "<html" in open(report, encoding="utf-8").read().lower()
    log = open(run.log_path, encoding="utf-8").read()
    assert "Swift finished with no errors" in log
    assert run.run_dir.path == str(tmp_path / "run001")


def test_wait_outside_a_loop_and_failures(tmp_path):
    run = prepare_run('app (file o) bad() { sh "-c" "exit 4" stdout=@o; }\n'
                      'type file;\nfile x <"x.txt"> = bad();', base_dir=str(tmp_path),
                      runid="failing")
    run.wait(timeout=30)
    assert run.done and run.ok is False and run.exit_code == 2
    assert "exit code of 4" in run.errors[0]
    assert run.run_dir.runid == "failing"
    assert os.path.exists(run.restart.path), "a failed run keeps its restart log"


def test_cancel_kills_the_apps_and_logs_it(tmp_path):
    pidfile = tmp_path / "pid"
    src = ('type file;\napp (file o) sleeper(string p) { sh "-c" "echo $$ > \\"$0\\"; '
           'exec sleep 60" p stdout=@o; }\nfile z <"z.txt"> = sleeper("%s");' % pidfile)

    async def main():
        run = start_run(src, base_dir=str(tmp_path))
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.05)
        run.cancel()
        await asyncio.wait_for(run, 30)
        return run

    run = asyncio.run(main())
    pid = int(pidfile.read_text())
    assert run.ok is False and run.status() == "canceled"
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the app survived cancel()")
    assert "Execution canceled by the user" in open(run.log_path, encoding="utf-8").read()


def test_setup_errors_are_messages(tmp_path):
    with pytest.raises(RunSetupError, match="nosuchsite"):
        prepare_run('trace(1);', base_dir=str(tmp_path), sites="nosuchsite")
    with pytest.raises(RunSetupError, match="no such file"):
        prepare_run('trace(1);', base_dir=str(tmp_path), config_file="missing.conf")
    with pytest.raises(lang.CompileError) as info:
        prepare_run('trace(1 +);', base_dir=str(tmp_path))
    assert "1:" in info.value.render()


def test_seed_gives_top_level_values(tmp_path, capsys):
    """Run(seed=...): the values of names the program declares without assigning them
    (the kernel's session declares earlier cells' variables that way)."""
    from swiftnb.kernel.session import SwiftSession

    s = SwiftSession(str(tmp_path))
    cell = s.compile_cell("trace(n + 1, w[1]);", {"n": 41, "w": ["a", "b"]})
    run = prepare_run(cell.checked, base_dir=str(tmp_path), seed=cell.seed, log=False)
    run.wait(timeout=30)
    assert run.ok, run.errors
    assert "SwiftScript trace: 42, b" in capsys.readouterr().out
