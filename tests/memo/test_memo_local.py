"""Memoized calls on the local site, re-running a real three-stage workflow
(tests/memo/workflow.py) after each kind of change: only what the change reaches runs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from workflow import Workflow

pytestmark = pytest.mark.timeout(300)

ALL = Counter({"up": 3, "combine": 1, "summary": 1})


@pytest.fixture
def wf(tmp_path):
    flow = Workflow(tmp_path)
    first = flow.memo()
    assert first.ran == ALL and first.cached == 0
    assert set(first.not_cached) == {"no earlier call"}
    return flow


def test_nothing_changed_nothing_runs(wf):
    again = wf.memo()
    assert again.ran == Counter() and again.cached == 5
    assert (wf.root / "out" / "summary.txt").read_text().startswith("plain ")


def test_a_touched_input_runs_nothing(wf):
    later = time.time() + 5
    os.utime(wf.root / "data" / "a.txt", (later, later))
    again = wf.memo()
    assert again.ran == Counter() and again.cached == 5


def test_a_changed_input_runs_only_its_downstream(wf):
    (wf.root / "data" / "b.txt").write_text("b cabana\n")
    again = wf.memo()
    assert again.ran == ALL - Counter({"up": 2})
    assert again.cached == 2
    assert again.not_cached == ["input changed: data/b.txt", "input changed: out/up-b.txt",
                                "input changed: out/all.txt"]
    assert "up data/b.txt" in wf.counter()[-3:]


def test_a_new_script_argument_runs_only_the_calls_that_use_it(wf):
    again = wf.memo(args=("-tag=fresh",))
    assert again.ran == Counter({"summary": 1}) and again.cached == 4
    assert again.not_cached == ["argument changed"]
    assert (wf.root / "out" / "summary.txt").read_text().startswith("fresh ")


def test_a_deleted_output_is_restored_from_the_content_store(wf):
    (wf.root / "out" / "up-a.txt").unlink()
    again = wf.memo()
    assert again.ran == Counter() and again.cached == 5 and again.restored == 1
    assert (wf.root / "out" / "up-a.txt").read_text() == "A bAnAnA\n"


def test_a_deleted_output_not_kept_runs_its_call_and_nothing_else(tmp_path):
    flow = Workflow(tmp_path)
    assert flow.memo("-memoizeCacheSize", "0").ran == ALL
    assert not [p for p in (tmp_path / ".swiftnb" / "objects").rglob("*") if p.is_file()]
    (tmp_path / "out" / "up-a.txt").unlink()
    again = flow.memo("-memoizeCacheSize", "0")
    assert again.ran == Counter({"up": 1}) and again.cached == 4
    assert again.not_cached == ["output missing: out/up-a.txt"]


def test_a_failed_call_runs_next_time(tmp_path):
    flow = Workflow(tmp_path)
    (tmp_path / "fail-up").write_text("")
    failed = flow.run("-memoize", "true")
    assert failed.proc.returncode == 2
    assert failed.ran == Counter({"up": 3})
    (tmp_path / "fail-up").unlink()
    again = flow.memo()
    assert again.ran == ALL and again.cached == 0
    assert again.not_cached.count("earlier call failed") == 3


def test_an_opted_out_app_always_runs(tmp_path):
    flow = Workflow(tmp_path, opt_out='profile "memoize" = "false";')
    assert flow.memo().ran == ALL
    again = flow.memo()
    assert again.ran == Counter({"summary": 1}) and again.cached == 4
    assert again.not_cached == ["opted out (memoize: false)"]


def test_an_app_opted_out_in_swift_conf_always_runs(tmp_path):
    flow = Workflow(tmp_path, conf_extra="site.local.app.combine.memoize: false")
    assert flow.memo().ran == ALL
    again = flow.memo()
    # its output is the same again: what reads it is reused
    assert again.ran == Counter({"combine": 1}) and again.cached == 4
    assert again.not_cached == ["opted out (memoize: false)"]


def test_an_edited_executable_runs_its_calls(wf):
    wf.write_app("combine", f'echo combine >> "{wf.root}/counter"; cat "$@"  # edited')
    again = wf.memo()
    assert again.ran == Counter({"combine": 1}) and again.cached == 4
    assert again.not_cached == [f"app changed: {wf.root}/bin/combine.sh"]


def test_memoize_false_runs_everything(wf):
    again = wf.run("-memoize", "false")
    assert again.proc.returncode == 0, again.proc.stderr
    assert again.ran == ALL and again.cached == 0 and again.not_cached == []
    assert " JOB_NOT_CACHED " not in again.log


def test_resume_comes_first_with_memoize_on(tmp_path):
    flow = Workflow(tmp_path)
    flow.write_app("combine", "exit 4")
    failed = flow.run("-memoize", "true")
    assert failed.proc.returncode == 2 and failed.ran == Counter({"up": 3})
    [rlog] = tmp_path.glob("run001/*.rlog")
    flow.write_app("combine", f'echo combine >> "{tmp_path}/counter"; cat "$@"')
    resumed = flow.memo("-resume", str(rlog))
    assert resumed.ran == Counter({"combine": 1, "summary": 1})
    assert resumed.log.count(" JOB_RESTARTED ") == 3 and resumed.cached == 0


def test_a_corrupt_store_warns_and_the_run_completes_unmemoized(tmp_path):
    flow = Workflow(tmp_path)
    store = tmp_path / ".swiftnb"
    store.mkdir()
    garbage = b"this is not a database\n" * 20
    (store / "store.sqlite").write_bytes(garbage)
    r = flow.memo()
    assert r.ran == ALL
    assert "Warning: run store" in r.proc.stderr and "without memoization" in r.proc.stderr
    assert (store / "store.sqlite").read_bytes() == garbage
    assert " JOB_NOT_CACHED " not in r.log


def test_the_log_reader_reads_the_memo_lines_back(wf):
    from swiftnb.logs import read_log

    wf.memo()
    [*_, log] = sorted(wf.root.glob("run*/*.log"), key=os.path.getmtime)
    frame = read_log(str(log))
    cached = frame[frame["kind"] == "JOB_CACHED"]
    assert len(cached) == 5
    assert set(cached["restored"]) == {"false"}
    assert all(str(r).startswith("same as ") for r in cached["reason"])


def test_an_input_whose_name_is_not_utf8_is_remembered(tmp_path):
    """SQLite keeps text as UTF-8: a file name that is not (os carries its bytes as
    surrogates) once made the store's insert raise, ending the run as an internal
    error.  It is now recorded, and the next run reuses the call."""
    os.mkdir(tmp_path / "in")
    with open(os.path.join(os.fsencode(tmp_path), b"in", b"x\xff.txt"), "wb") as fh:
        fh.write(b"data\n")
    (tmp_path / "w.swift").write_text(
        'type file;\napp (file o) c(file i) { cat @i stdout=@o; }\n'
        'file ins[] <filesys_mapper; location="in", pattern="*.txt">;\n'
        'foreach f, k in ins { file o <single_file_mapper; file=strcat("o", k, ".txt")>;'
        ' o = c(f); }\n')
    swiftnb = os.path.join(os.path.dirname(sys.executable), "swiftnb")
    finals = []
    for _ in range(2):
        done = subprocess.run([swiftnb, "run", "-memoize", "true", "w.swift"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        finals.append([line for line in (done.stdout + done.stderr).splitlines()
                       if "Final status" in line])
    assert "Finished successfully:1" in finals[0][0]
    assert "Cached:1" in finals[1][0] and "Finished successfully" not in finals[1][0]
