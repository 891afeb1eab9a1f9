"""Reuses decided on the event loop from the calls of earlier runs held in memory
(swiftnb/store/known.py, StoreMemo.decide_now): real files, a real store, a real
asyncio loop; only the app's run is left out (its output is written by the test, as
the wrapper would, with the digest it would report)."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from swiftnb.engine.task import Task, TaskResult
from swiftnb.store import RunRecord, RunStore
from swiftnb.store.db import REUSED_BATCH_CALLS, ReusedCall
from swiftnb.store.digests import file_digest
from swiftnb.store.memo import StoreMemo

pytestmark = pytest.mark.timeout(120)

SCRIPT = "calls.swift"


def _tasks(root: str, tag: str, n: int = 4) -> list[Task]:
    """``n`` calls of ``cat data/iK.txt > out/fK.txt``."""
    return [Task(jobid=f"cat-{tag}{k}", tr="cat", args=[f"data/i{k}.txt"], base_dir=root,
                 run_dir=root, stdout=f"out/f{k}.txt", inputs=[f"data/i{k}.txt"],
                 outputs=[f"out/f{k}.txt"]) for k in range(n)]


def _inputs(root: str, n: int = 4) -> None:
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    os.makedirs(os.path.join(root, "out"), exist_ok=True)
    for k in range(n):
        with open(os.path.join(root, "data", f"i{k}.txt"), "w") as fh:
            fh.write(f"input {k}\n")


def _open_memo(root: str, run_id: str, script: str = SCRIPT) -> tuple[RunStore, StoreMemo]:
    store = RunStore.open(os.path.join(root, ".swiftnb"))
    store.begin_run(RunRecord(run_id, script))
    return store, StoreMemo(store, run_id, app_executable=lambda tr: "/bin/cat")


def _first_run(root: str, run_id: str = "run1") -> None:
    """Every call decided, "run" (the app's work done here), remembered."""
    store, memo = _open_memo(root, run_id)

    async def body() -> None:
        for task in _tasks(root, "a"):
            decision = await memo.decide(task)
            assert not decision.reuse
            out = os.path.join(root, task.outputs[0])
            with open(os.path.join(root, task.inputs[0])) as src, open(out, "w") as dst:
                dst.write(src.read())
            await memo.remember(task, TaskResult(ok=True, exit_code=0, site="local",
                                                 output_digests={task.outputs[0]: file_digest(out)}),
                                decision, 1.0, 2.0)

    asyncio.run(body())
    memo.close()
    store.end_run(run_id, "success", time.time(), dict(memo.counts))
    store.close()


def test_an_unchanged_call_is_reused_on_the_loop_without_the_worker(tmp_path):
    root = str(tmp_path)
    _inputs(root)
    _first_run(root)
    store, memo = _open_memo(root, "run2")

    async def body() -> list[bool]:
        await memo._known.loaded()
        # the app's parts of the key (its program's digest) are made once, in a thread
        first = await memo.decide(_tasks(root, "b")[0])
        rest = [memo.decide_now(task) for task in _tasks(root, "b")[1:]]
        return [first.reuse] + [d is not None and d.reuse for d in rest]

    assert asyncio.run(body()) == [True] * 4
    assert memo._worker._thread is None  # no request ever reached the worker thread
    memo.close()
    store.end_run("run2", "success", time.time(), dict(memo.counts))
    assert memo.counts == {"ran": 0, "cached": 4, "failed": 0}
    calls = {c.jobid: c for c in store.call_records()}
    store.close()
    for k in range(4):  # the reused call's row is the earlier one's, with its own run
        earlier, reused = calls[f"cat-a{k}"], calls[f"cat-b{k}"]
        assert reused.run_id == "run2" and reused.decision == "cached"
        assert reused.reason == f"same as cat-a{k} of run run1"
        assert (reused.key, reused.command, reused.key_parts, reused.inputs, reused.outputs) == (
            earlier.key, earlier.command, earlier.key_parts, earlier.inputs, earlier.outputs)


def test_the_loop_leaves_changed_files_and_other_scripts_to_the_worker(tmp_path):
    root = str(tmp_path)
    _inputs(root)
    _first_run(root)
    with open(os.path.join(root, "data", "i1.txt"), "w") as fh:
        fh.write("changed input\n")
    with open(os.path.join(root, "out", "f2.txt"), "w") as fh:  # in place: its kept link too
        fh.write("changed output\n")
    os.unlink(os.path.join(root, "out", "f3.txt"))
    store, memo = _open_memo(root, "run2")

    async def body() -> list[tuple[object, str]]:
        await memo._known.loaded()
        await memo.decide(_tasks(root, "b")[0])  # the app's parts, once
        found = []
        for task in _tasks(root, "b")[1:]:
            now = memo.decide_now(task)
            decision = await memo.decide(task)
            found.append((now, decision.reason))
        return found

    found = asyncio.run(body())
    memo.close()
    store.close()
    assert [now for now, _ in found] == [None, None, None]
    assert [reason for _, reason in found] == [
        "input changed: data/i1.txt", "output changed: out/f2.txt",
        "same as cat-a3 of run run1 (outputs restored)"]

    # another script's run finds none of them in memory, yet reuses them by the store
    store, memo = _open_memo(root, "run3", script="other.swift")

    async def other() -> tuple[object, bool]:
        await memo._known.loaded()
        await memo.decide(_tasks(root, "c")[0])
        task = _tasks(root, "c")[3]
        return memo.decide_now(task), (await memo.decide(task)).reuse

    assert asyncio.run(other()) == (None, True)
    memo.close()
    store.close()


def test_a_first_run_decides_on_the_loop_and_a_repeated_key_asks_the_worker(tmp_path):
    root = str(tmp_path)
    _inputs(root)
    store, memo = _open_memo(root, "run1")
    task, twin = _tasks(root, "a", 1)[0], _tasks(root, "z", 1)[0]  # the same key

    async def body() -> tuple[str, bool]:
        decision = await memo.decide(task)
        out = os.path.join(root, task.outputs[0])
        with open(out, "w") as fh:
            fh.write("input 0\n")
        await memo.remember(task, TaskResult(ok=True, exit_code=0, site="local",
                                             output_digests={task.outputs[0]: file_digest(out)}),
                            decision, 1.0, 2.0)
        return decision.reason, (await memo.decide(twin)).reuse

    reason, twin_reused = asyncio.run(body())
    memo.close()
    store.close()
    assert reason == "no earlier call"
    assert twin_reused  # the worker recorded the first call before it looked the twin up


def test_reused_rows_are_written_by_the_flushing_thread(tmp_path):
    root = str(tmp_path)
    _inputs(root, 1)
    _first_run_one = _tasks(root, "a", 1)[0]
    with RunStore.open(os.path.join(root, ".swiftnb")) as store:
        store.begin_run(RunRecord("run1", SCRIPT))
        from swiftnb.store.callrows import CallRow, files_text

        files: list[list[str | int]] = [["out", os.path.join(root, "out", "f0.txt"),
                                         "sha256:" + "0" * 64, 8]]
        store.record_row(CallRow("run1", _first_run_one.jobid, "sha256:" + "1" * 64, "cat",
                                 '["/bin/cat"]', "local", 1.0, 2.0, 0, "ran", "", "{}",
                                 files_text(files), files))
        store.flush()
        earlier = store.call_records()[0]
        for k in range(REUSED_BATCH_CALLS):  # a full buffer: the thread writes it, not this one
            store.record_reuse(ReusedCall("run2", f"cat-r{k}", 3.0, "same", 1))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with store._lock:
                if not store._buffer:
                    break
            time.sleep(0.01)
        with store._lock:
            assert not store._buffer
        calls = store.call_records("run2")
    assert len(calls) == REUSED_BATCH_CALLS
    assert {(c.decision, c.key, c.command[0], tuple(f.path for f in c.outputs))
            for c in calls} == {("cached", earlier.key, "/bin/cat",
                                 (os.path.join(root, "out", "f0.txt"),))}


def test_only_the_latest_runs_of_the_script_are_read(tmp_path):
    from swiftnb.store.callrows import CallRow
    from swiftnb.store.known import KNOWN_RUNS, KnownCalls

    with RunStore.open(tmp_path / ".swiftnb") as store:
        for number in range(KNOWN_RUNS + 2):  # each run's call has a key of its own
            run_id = f"run{number}"
            store.begin_run(RunRecord(run_id, SCRIPT, started=1000.0 + number))
            store.record_row(CallRow(run_id, f"cat-{number}", f"key-{number}", "cat", "[]",
                                     "local", 1.0, 2.0, 0, "ran", "", "{}", "[]", []))
        store.begin_run(RunRecord("other", "other.swift", started=5000.0))
        store.record_row(CallRow("other", "cat-o", "key-o", "cat", "[]", "local", 1.0, 2.0,
                                 0, "ran", "", "{}", "[]", []))
        store.flush()
        known = KnownCalls(store, SCRIPT, "now")
        known.wait(30)
        assert known.ready
        found = {f"key-{n}": known.get(f"key-{n}") for n in range(KNOWN_RUNS + 2)}
        assert known.get("key-o") is None
    latest = range(2, KNOWN_RUNS + 2)
    assert {key for key, call in found.items() if call is not None} == {f"key-{n}" for n in latest}
    assert [found[f"key-{n}"].jobid for n in latest] == [f"cat-{n}" for n in latest]
