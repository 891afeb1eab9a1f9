"""The failed attempts a run records itself: ``handle.failures``, ``handle.on_failure``,
``handle.retry``.  Real runs on the local site, with apps that really fail."""

from __future__ import annotations

import asyncio
import time

import pytest

from swiftnb.attempts import Failure
from swiftnb.config import load_config_text
from swiftnb import runner
from swiftnb.runner import start_run

pytestmark = pytest.mark.timeout(60)

EXIT3 = """type file;
app (file o) bad () {
  sh "-c" "echo broken >&2; exit 3" stdout=@o;
}
file x <"x.txt">;
x = bad();
"""

MISSING = """type file;
app (file o) show (string p) {
  cat p stdout=@o;
}
file a <"a.txt">;
a = show("%s");
"""

# one call fails at once; the other waits until the test opens the gate, so the run is
# still going when the failed call is retried
GATED = """type file;
app (file o) bad () {
  sh "-c" "exit 3" stdout=@o;
}
app (file o) wait (string gate) {
  sh "-c" "while [ ! -e \\"$0\\" ]; do sleep 0.05; done; echo open" gate stdout=@o;
}
file x <"x.txt">;
file y <"y.txt">;
x = bad();
y = wait("%s");
"""


def run(coro, timeout: float = 50):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def start(source: str, tmp_path, conf: str = "") -> object:
    return start_run(source, config=load_config_text(conf, cwd=str(tmp_path)),
                     base_dir=str(tmp_path))


def test_a_failed_attempt_is_recorded_with_task_result_site_time_and_source(tmp_path):
    seen: list[Failure] = []

    async def main():
        handle = start(EXIT3, tmp_path, "executionRetries: 1")
        unsubscribe = handle.on_failure(seen.append)
        t0 = time.time()
        await handle
        unsubscribe()
        return handle, t0, time.time()

    handle, t0, t1 = run(main())
    assert handle.ok is False
    failures = handle.failures
    assert len(failures) == 2                         # the attempt and its one retry
    assert seen == failures                           # told of each, in order
    first, second = failures
    assert [f.id for f in failures] == [1, 2] and handle.failure(2) is second
    assert first.jobid == second.jobid
    assert [f.task.attempt for f in failures] == [0, 1]
    assert first.task.tr == "sh" and first.argv == ["sh", "-c", "echo broken >&2; exit 3"]
    assert first.exit_code == 3 and first.result.ok is False
    assert first.site == "local" and first.result.site == "local"
    assert "broken" in first.stderr_tail
    assert first.source == "<string>:3:3"             # the app's command line in the script
    assert t0 <= first.time <= second.time <= t1
    assert "exit code 3" in repr(first)
    # the run's executor is not touched: the engine submits through the recorder
    assert "submit" not in vars(handle.executor)


def test_an_observer_that_comes_late_reads_the_list_and_can_leave(tmp_path):
    async def main():
        handle = start(EXIT3, tmp_path)
        await handle
        late: list[Failure] = []
        unsubscribe = handle.on_failure(late.append)
        unsubscribe()
        unsubscribe()                                 # twice is harmless
        return handle, late

    handle, late = run(main())
    assert len(handle.failures) == 1 and late == []
    with pytest.raises(KeyError):
        handle.failure(2)


def test_retry_after_the_run_goes_through_a_fresh_executor_and_records_the_outputs(tmp_path):
    missing = tmp_path / "missing.txt"

    async def main():
        handle = start(MISSING % missing, tmp_path)
        await handle
        failure = handle.failures[0]
        again = await handle.retry(failure)           # not fixed yet: fails again
        missing.write_text("now it exists\n")
        fixed = await handle.retry(failure.id)        # by id, once the cause is fixed
        return handle, failure, again, fixed

    handle, failure, again, fixed = run(main())
    assert handle.ok is False and handle.exit_code == 2   # the run's outcome stays
    assert again.ok is False and again.exit_code == 1 and "No such file" in again.stderr_tail
    assert fixed.ok and fixed.site == "local"
    assert failure.retries == [again, fixed]
    assert len(handle.failures) == 1                  # a retry is not a new failure
    assert (tmp_path / "a.txt").read_text() == "now it exists\n"
    # each retry was a new attempt, with its own JOB_START in the run's stream
    starts = [e for e in handle.event_list
              if e.kind == "JOB_START" and e["jobid"] == failure.jobid]
    assert len(starts) == 3
    # the restart log the failed run left behind now has the output: -resume skips it
    lines = open(handle.restart.path, encoding="utf-8").read().splitlines()
    assert any(line.endswith("a.txt") for line in lines if not line.startswith("#"))


def test_retry_while_the_run_goes_uses_the_run_executor(tmp_path, monkeypatch):
    gate = tmp_path / "gate"
    conf = "lazyErrors: true"

    async def main():
        handle = start(GATED % gate, tmp_path, conf)

        def no_fresh_executor(*_a, **_k):
            raise AssertionError("a live run's retry must use the run's executor")

        monkeypatch.setattr(runner, "build_run_executor", no_fresh_executor)
        retried: list[asyncio.Task] = []
        loop = asyncio.get_running_loop()
        handle.on_failure(lambda f: retried.append(loop.create_task(handle.retry(f))))
        for _ in range(400):
            if retried:
                break
            await asyncio.sleep(0.05)
        result = await retried[0]
        running = not handle.done
        gate.write_text("")
        await handle
        return handle, result, running

    handle, result, running = run(main())
    assert running, "the retry ended while the run was still going"
    # lazyErrors: the run fails in the end; the retry failed again (same cause)
    assert handle.ok is False and result.ok is False and result.exit_code == 3
    failure = handle.failures[0]
    assert failure.retries == [result] and len(handle.failures) == 1
    assert (tmp_path / "y.txt").read_text() == "open\n"
    # the retry is one more attempt of the job in the run's stream and its log file
    starts = [e for e in handle.event_list
              if e.kind == "JOB_START" and e["jobid"] == failure.jobid]
    assert len(starts) == 2
    log = open(handle.log_path, encoding="utf-8").read()
    assert log.count(f"JOB_START jobid={failure.jobid}") == 2


def test_a_failure_of_another_run_is_refused(tmp_path):
    async def main():
        one = start(EXIT3, tmp_path / "one")
        two = start(EXIT3, tmp_path / "two")
        await one
        await two
        with pytest.raises(ValueError):
            await two.retry(one.failures[0])
        return one, two

    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    one, two = run(main())
    assert len(one.failures) == len(two.failures) == 1


def test_canceled_attempts_are_not_failures(tmp_path):
    pidfile = tmp_path / "pid"
    src = ('type file;\napp (file o) sleeper(string p) { sh "-c" "echo $$ > \\"$0\\"; '
           'exec sleep 60" p stdout=@o; }\nfile z <"z.txt"> = sleeper("%s");' % pidfile)

    async def main():
        handle = start(src, tmp_path)
        for _ in range(600):
            if pidfile.exists() and pidfile.read_text().strip():
                break
            await asyncio.sleep(0.05)
        handle.cancel()
        await asyncio.wait_for(handle, 30)
        return handle

    handle = run(main())
    assert handle.status() == "canceled"
    assert handle.failures == []
