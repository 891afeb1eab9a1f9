"""Tail mode: a log read while it is written gives the same table as read whole."""

from __future__ import annotations

import asyncio

import pandas as pd
from .synthetic import record

from swiftnb.events import EventBus
from swiftnb.logs.reader import concat_frames, read_log
from swiftnb.logs.tail import LogFollower, afollow_log, follow_log, tail_to_bus
from swiftnb.logs.writer import LogWriter


def _concat(frames):
    return concat_frames(frames)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert set(a.columns) == set(b.columns)
    cols = [c for c in ("line", "time", "kind", "level", "logger", "tag", "text", "jobid",
                        "taskid", "status", "workerid", "id") if c in b]
    pd.testing.assert_frame_equal(a[cols].astype(object), b[cols].astype(object))


def test_follower_pieces_equal_whole_read(tmp_path):
    events = record()
    path = tmp_path / "swift.log"
    writer = LogWriter(path, flush_interval=0)
    follower = LogFollower(path)
    frames = [follower.poll()]  # file does not exist yet: nothing, no error
    for i, event in enumerate(events):
        writer.write(event)
        if i % 7 == 0:
            writer.flush()
            frames.append(follower.poll())
    writer.close()
    frames.append(follower.poll())
    frames.append(follower.poll())  # idle poll releases the held-back record
    assert follower.finished
    _same(_concat(frames), read_log(path))


def test_continuation_lines_split_across_polls(tmp_path):
    path = tmp_path / "swift.log"
    head = "2016-01-25 03:53:34,836+0000 DEBUG Loader SWIFT_CONFIGURATION \n[D] a\n"
    path.write_text(head)
    follower = LogFollower(path)
    assert len(follower.poll()) == 0  # the only record may still grow
    with open(path, "a") as fh:
        fh.write("{\n\tx: 1\n}\n2016-01-25 03:53:36,048+0000 INFO  Loader RUN_START\n")
    frame = follower.poll()
    assert frame["kind"].tolist() == ["CONFIG"]
    assert frame["text"].iloc[0] == "[D] a\n{\n\tx: 1\n}"
    with open(path, "a") as fh:
        fh.write("2016-01-25 03:53:37,000+0000 INFO  Loader Swift finished with no errors\n")
    rest = follower.poll(final=True)
    assert rest["kind"].tolist() == ["RUN_START", "RUN_SUCCESS"]
    assert rest["line"].tolist() == [6, 7]
    assert follower.finished


def test_generator_stops_at_run_end(tmp_path):
    path = tmp_path / "swift.log"
    with LogWriter(path) as writer:
        for event in record():
            writer.write(event)
    frames = list(follow_log(path, interval=0.01, idle_timeout=5))
    _same(_concat(frames), read_log(path))


def test_async_follower_feeds_a_bus_while_the_log_grows(tmp_path):
    events = record()
    path = tmp_path / "swift.log"

    async def produce():
        writer = LogWriter(path, flush_interval=0)
        for i, event in enumerate(events):
            writer.write(event)
            if i % 20 == 0:
                await asyncio.sleep(0.02)
        writer.close()

    async def main():
        bus = EventBus()
        seen = []
        bus.subscribe(seen.append)
        producer = asyncio.ensure_future(produce())
        count = await asyncio.wait_for(tail_to_bus(path, bus, interval=0.01, idle_timeout=10),
                                       timeout=30)
        await producer
        return count, seen

    count, seen = asyncio.run(main())
    assert count == len(events) == len(seen)
    assert [e.kind for e in seen] == [e.kind for e in events]
    assert seen[-1].kind == "RUN_SUCCESS"


def test_follower_reads_past_the_run_end_until_the_writer_is_done(tmp_path):
    """The final status line comes after ``Swift finished``: a follower that has seen the
    run end still reads on until the writer is done (here ``stop``, as a caller watching
    the writer's process says it), so the line written meanwhile is not lost."""
    path = tmp_path / "swift.log"
    path.write_text("2016-01-25 03:53:36,048+0000 INFO  Loader RUN_START\n"
                    "2016-01-25 03:53:37,000+0000 INFO  Loader Swift finished with no errors\n")
    final = ("2016-01-25 03:53:37,001+0000 INFO  RuntimeStats$ProgressTicker   "
             "Finished successfully:6\n")
    asked = []

    def writer_done() -> bool:  # the writer adds its last line, then is done
        asked.append(True)
        if len(asked) == 2:
            with open(path, "a") as fh:
                fh.write(final)
        return len(asked) > 3

    frames = list(follow_log(path, interval=0.01, idle_timeout=30, settle=30,
                             stop=writer_done))
    live = _concat(frames)
    assert live["kind"].tolist()[-2:] == ["RUN_SUCCESS", "PROGRESS"]
    _same(live, read_log(path))


def test_follower_ends_once_the_finished_log_is_quiet(tmp_path):
    """Without ``stop``, a finished log that no longer grows ends the follow after
    ``settle`` seconds."""
    path = tmp_path / "swift.log"
    with LogWriter(path) as writer:
        for event in record():
            writer.write(event)

    async def main():
        return [f async for f in afollow_log(path, interval=0.01, settle=0.05)]

    frames = asyncio.run(asyncio.wait_for(main(), timeout=30))
    _same(_concat(frames), read_log(path))


def test_async_follower_idle_timeout_on_unfinished_log(tmp_path):
    path = tmp_path / "swift.log"
    path.write_text("2016-01-25 03:53:36,048+0000 INFO  Loader RUN_START\n")

    async def main():
        return [f async for f in afollow_log(path, interval=0.01, idle_timeout=0.1)]

    frames = asyncio.run(asyncio.wait_for(main(), timeout=10))
    assert _concat(frames)["kind"].tolist() == ["RUN_START"]


def test_tail_a_real_run_in_another_process(tmp_path):
    """`swiftnb run` in a subprocess; the follower reads its log while it runs."""
    import subprocess
    import sys

    from swiftnb.logs.frame import LogFrame

    (tmp_path / "slow.swift").write_text(
        'type file;\n'
        'app (file o) nap (int i) { sh "-c" "sleep 0.3; echo $0" i stdout=@o; }\n'
        'file outs[] <simple_mapper; prefix="nap", suffix=".txt">;\n'
        'foreach i in [0:5] { outs[i] = nap(i); }\n')
    proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "slow.swift"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        log = tmp_path / "run001" / "slow-run001.log"
        # the writer is done when its process is: the follower reads until then, however
        # long the final status line takes after "Swift finished" on a loaded machine
        frames = list(follow_log(log, interval=0.05, idle_timeout=60, settle=120,
                                 stop=lambda: proc.poll() is not None))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err.decode()
    assert len(frames) >= 1
    live = concat_frames(frames)
    _same(live, read_log(log))
    run = LogFrame(live).run
    assert run["njobs"] == 6 and run["tasks_completed"] == 6 and run["outcome"] == "success"
