"""``swiftnb history`` and ``swiftnb explain`` as a person runs them: the installed
command in a subprocess, its output, its exit code and one-line refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from swiftnb.store import RunRecord, RunStore
from tests.store.helpers import call
from tests.store.test_explain import TREE, WHY, chain

pytestmark = pytest.mark.timeout(120)

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


def swiftnb(cwd, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SWIFTNB, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def work(tmp_path):
    with RunStore.open(tmp_path / ".swiftnb") as store:
        store.begin_run(RunRecord("r1", "/w/chain.swift", started=1_800_000_000.0))
        chain(store, "r1", "1", "b")
        store.end_run("r1", "success", 1_800_000_009.0, {"ran": 3})
        store.begin_run(RunRecord("r2", "/w/chain.swift", started=1_800_086_400.0))
        chain(store, "r2", "2", "e", decisions=("ran", "ran", "cached"),
              t=1_800_000_000.0 + 86400)
        store.record_call(call("r2", "bad-4", "sha256:bad", decision="failed"))
        store.end_run("r2", "failure", 1_800_086_412.5, {"ran": 2, "cached": 1, "failed": 1})
    return tmp_path


def test_history_table_and_json(work):
    done = swiftnb(work, "history")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["RUN", "SCRIPT", "STARTED", "DURATION", "STATUS", "RAN",
                                "CACHED", "FAILED"]
    assert [line.split()[:2] + line.split()[4:] for line in lines[1:]] == [
        ["r1", "chain.swift", "9.0s", "success", "3", "0", "0"],
        ["r2", "chain.swift", "12.5s", "failure", "2", "1", "1"]]
    done = swiftnb(work, "history", "-format", "json", "-store", ".swiftnb")
    runs = json.loads(done.stdout)
    assert [(r["run_id"], r["status"], r["counts"]) for r in runs] == [
        ("r1", "success", {"ran": 3}), ("r2", "failure", {"ran": 2, "cached": 1, "failed": 1})]


def test_explain_and_why(work):
    done = swiftnb(work, "explain", "/w/d.txt", "-why")
    assert done.returncode == 0, done.stderr
    assert done.stdout == WHY + "\n"
    done = swiftnb(work.parent, "explain", "--store", str(work / ".swiftnb"), "--why", "/w/d.txt")
    assert done.stdout == WHY + "\n"
    done = swiftnb(work, "explain", "/w/d.txt")
    assert "why:" not in done.stdout and done.stdout.splitlines()[0] == TREE.splitlines()[0]


def test_refusals_are_one_line_and_exit_1(work, tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    for args in (("history",), ("explain", "x.txt")):
        done = swiftnb(empty, *args)
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and "no run store in" in done.stderr
        assert not (empty / ".swiftnb").exists()
    done = swiftnb(work, "explain", "/w/a.txt")
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("swiftnb: /w/a.txt: no recorded call produced this file")
    (work / ".swiftnb" / "store.sqlite").write_bytes(b"garbage" * 100)
    done = swiftnb(work, "history")
    assert done.returncode == 1 and "move it aside" in done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    done = swiftnb(work, "history", "-format", "xml")
    assert done.returncode == 1 and "invalid choice" in done.stderr
