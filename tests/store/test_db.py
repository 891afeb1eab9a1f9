"""RunStore: what goes in comes out, lookups see only calls that worked, the buffer is
seen before it is written, and the frames carry the records."""

from __future__ import annotations

import os
import stat
import time

import pandas as pd
import pytest

from swiftnb.store import FileRecord, RunRecord, RunStore
from tests.store.helpers import call, digest

pytestmark = pytest.mark.timeout(60)


def test_records_round_trip_through_a_reopened_store(tmp_path):
    run = RunRecord("run001", "/w/a.swift", ["-n=3"], "sha256:cfg", "/w", 1_800_000_000.0,
                    None, "running", {})
    made = call("run001", "cat-1", "sha256:k1", command=["cat", "a b.txt"],
                key_parts={"app": "sha256:a", "input:/w/a": digest("1")},
                inputs=[FileRecord("/w/a", digest("1"), 5)],
                outputs=[FileRecord("/w/b", digest("2"), 7)])
    with RunStore.open(tmp_path / "st") as store:
        store.begin_run(run)
        store.record_call(made)
        store.end_run("run001", "success", 1_800_000_010.0, {"ran": 1})
    assert stat.S_IMODE(os.stat(tmp_path / "st").st_mode) == 0o700
    with RunStore.open(tmp_path / "st", create=False) as store:
        assert store.lookup("sha256:k1") == made
        [back] = store.run_records()
        assert back == RunRecord("run001", "/w/a.swift", ["-n=3"], "sha256:cfg", "/w",
                                 1_800_000_000.0, 1_800_000_010.0, "success", {"ran": 1})
        assert store.producer("/w/b") == made
        assert store.producer("/w/b", digest("9")) is None
        assert store.producer("/w/a") is None
        runs, calls, files = store.runs(), store.calls(), store.files()
    assert list(runs["run_id"]) == ["run001"]
    assert runs["started"][0] == pd.Timestamp(1_800_000_000, unit="s", tz="UTC")
    assert calls["exit_code"].tolist() == [0] and calls["command"][0] == ["cat", "a b.txt"]
    assert files[["role", "path", "size"]].values.tolist() == [["in", "/w/a", 5],
                                                              ["out", "/w/b", 7]]


def test_lookup_never_returns_a_failed_call_and_prefers_the_latest(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        store.record_call(call("r1", "j1", "sha256:k", outputs=[FileRecord("/o", digest("1"), 1)]))
        store.record_call(call("r2", "j2", "sha256:k", decision="failed"))
        assert store.lookup("sha256:k").jobid == "j1"  # from the buffer
        store.flush()
        assert store.lookup("sha256:k").jobid == "j1"  # from the database
        store.record_call(call("r3", "j3", "sha256:k", decision="cached"))
        store.flush()
        assert store.lookup("sha256:k").jobid == "j3"
        store.record_call(call("r4", "j4", "sha256:only-failed", decision="failed"))
        assert store.lookup("sha256:only-failed") is None
        store.flush()
        assert store.lookup("sha256:only-failed") is None
        assert store.lookup("sha256:never") is None


def test_previous_call_is_of_an_earlier_run(tmp_path):
    out = [FileRecord("/o", digest("1"), 1)]
    with RunStore.open(tmp_path / "st") as store:
        store.record_call(call("r1", "j1", "sha256:a", outputs=out))
        store.record_call(call("r2", "j2", "sha256:b", outputs=out))
        assert store.previous_call(["/o"]).run_id == "r2"
        assert store.previous_call(["/o"], before_run="r2").run_id == "r1"
        assert store.previous_call(["/o"], before_run="r1") is None
        assert store.previous_call(["/x", "/o"], before_run="r-new").run_id == "r2"
        assert store.previous_call([]) is None


def test_a_batch_is_written_after_a_second_without_a_flush(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        store.record_call(call("r1", "j1", "sha256:k"))
        with RunStore.open(tmp_path / "st") as other:
            assert other.lookup("sha256:k") is None  # still in the first one's buffer
            for _ in range(100):
                if other.lookup("sha256:k") is not None:
                    break
                time.sleep(0.05)
            assert other.lookup("sha256:k").jobid == "j1"


def test_module_functions_read_the_current_directory_store(tmp_path, monkeypatch):
    import swiftnb

    monkeypatch.chdir(tmp_path)
    with RunStore.open(".swiftnb") as store:
        store.begin_run(RunRecord("r1", "a.swift", started=1.0))
        store.record_call(call("r1", "j1", "sha256:k"))
    assert swiftnb.store.runs()["run_id"].tolist() == ["r1"]
    assert swiftnb.store.calls(run_id="r1")["jobid"].tolist() == ["j1"]
    assert swiftnb.store.calls(run_id="other").empty
    assert swiftnb.store.files().empty
