"""Two processes write one store at once; a writer killed with SIGKILL mid-batch leaves
a store that opens and holds every batch it committed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from swiftnb.store import RunStore

pytestmark = pytest.mark.timeout(180)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def writer(directory, run_id: str, count: int, flush_every: int = 0) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.store.writer", str(directory),
                             run_id, str(count), str(flush_every)],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True)


def test_two_processes_record_two_thousand_calls_each(tmp_path):
    store_dir = tmp_path / "st"
    procs = [writer(store_dir, run, 2000) for run in ("ra", "rb")]
    for proc in procs:
        out, _ = proc.communicate(timeout=150)
        assert proc.returncode == 0 and out.strip() == "done"
    with RunStore.open(store_dir) as store:
        for run in ("ra", "rb"):
            calls = store.calls(run)
            assert sorted(calls["jobid"]) == sorted(f"j{i}" for i in range(2000))
            assert store.lookup(f"sha256:{run}-1999").outputs[0].path == f"/o/{run}/1999"
        assert store.runs()["status"].tolist() == ["success", "success"]
        assert len(store.files()) == 4000


def test_a_killed_writer_leaves_every_committed_batch(tmp_path):
    store_dir = tmp_path / "st"
    proc = writer(store_dir, "rk", 1_000_000, flush_every=100)
    committed = 0
    assert proc.stdout is not None
    for line in proc.stdout:
        committed = int(line)
        if committed >= 1000:
            break
    os.kill(proc.pid, signal.SIGKILL)  # it is now recording the next batches
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    with RunStore.open(store_dir) as store:
        found = len(store.calls("rk"))
        assert found >= committed
        assert store.lookup(f"sha256:rk-{committed - 1}") is not None
        [run] = store.run_records()
        assert run.status == "running"


OPEN = ("import sys\n"
        "from swiftnb.store import RunStore\n"
        "with RunStore.open(sys.argv[1]) as store:\n"
        "    print(len(store.run_records()))\n")


def test_processes_that_create_one_store_at_once_all_open_it(tmp_path):
    """Creating the database and switching it to WAL take locks sqlite does not wait
    for: eight processes starting in one new directory must all open it."""
    for round_ in range(6):
        store_dir = tmp_path / f"st{round_}"
        procs = [subprocess.Popen([sys.executable, "-c", OPEN, str(store_dir)], cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(8)]
        results = [proc.communicate(timeout=60) for proc in procs]
        assert [(proc.returncode, out.strip()) for proc, (out, _) in zip(procs, results)] \
            == [(0, "0")] * 8, [err for _, err in results if err]
