"""`swiftnb timings` and `swiftnb plot-log` as a user runs them (real subprocesses)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from ._helpers import DATA, durations, log_text

SMALL = DATA / "stampede-exp-020" / "swift.log.bz2"


def swiftnb(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """The real command in a subprocess (slow: imports pandas and bokeh each time)."""
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


def inproc(*args: str) -> subprocess.CompletedProcess:
    """The same command line through swiftnb.cli.main in this process."""
    import contextlib
    import io

    from swiftnb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        from swiftnb.logs import cli as logs_cli

        name, rest = args[0], [str(a) for a in args[1:]]
        fn = {"timings": logs_cli.timings_main, "plot-log": logs_cli.plot_log_main}.get(name)
        code = fn(rest, out, err) if fn else main([name, *rest])
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def test_timings_table():
    r = swiftnb("timings", SMALL)
    assert r.returncode == 0, r.stderr
    assert "run run020: success" in r.stdout
    assert "jobs 8 (succeeded 8, failed 0), tasks 8" in r.stdout
    for name in ("TTC", "Tss", "Tse", "Tw", "Te", "Tsi", "Tso", "Tq", "Ta", "Tb", "Twe"):
        assert f"\n{name} " in r.stdout


def test_timings_aimes_reproduces_durations_json(tmp_path):
    out = tmp_path / "durations.json"
    r = inproc("timings", SMALL, "--format", "aimes", "--offset", "18000", "-o", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == durations("stampede-exp-020")
    # without the offset: true UTC
    r = inproc("timings", SMALL, "--format", "aimes")
    doc = json.loads(r.stdout)
    assert doc["Session"]["states"]["start"] == 1453694014


def test_timings_csv_and_json():
    r = inproc("timings", SMALL, "--format", "csv")
    lines = r.stdout.splitlines()
    assert lines[0] == "timing,entity,id,start,end,duration"
    assert sum(1 for line in lines if line.startswith("Te,task,")) == 8
    r = inproc("timings", SMALL, "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["run"]["njobs"] == 8 and doc["run"]["run_id"] == "run020"
    assert {s["timing"] for s in doc["summary"]} >= {"TTC", "Te", "Tq"}


def test_errors_are_one_line_for_people(tmp_path):
    r = swiftnb("timings", tmp_path / "nope.log")
    assert r.returncode == 4
    assert r.stderr.strip() == f"swiftnb: log file not found: {tmp_path / 'nope.log'}"
    junk = tmp_path / "junk.log"
    junk.write_bytes(b"\x00\x01binary\nnot a log\n")
    r = inproc("timings", junk)
    assert r.returncode == 2 and "not a Swift log" in r.stderr
    assert "Traceback" not in r.stderr
    r = inproc("timings", SMALL, "--format", "xml")
    assert r.returncode == 1 and "invalid choice" in r.stderr
    r = inproc("plot-log")
    assert r.returncode == 1 and "required" in r.stderr


def test_truncated_log_warns_and_still_reports(tmp_path):
    text = log_text("stampede-exp-020")
    cut = tmp_path / "cut.log"
    cut.write_text(text[: len(text) * 2 // 3])
    r = inproc("timings", cut)
    assert r.returncode == 0
    assert "swiftnb: warning:" in r.stderr and "middle of a line" in r.stderr
    assert "incomplete" in r.stdout  # no "Swift finished" line
    assert "Traceback" not in r.stderr


def test_plot_log_writes_an_offline_report(tmp_path):
    r = swiftnb("plot-log", SMALL, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    report = tmp_path / "report-swift.html"
    assert f"wrote {report.name}" in r.stdout
    html = report.read_text()
    assert not re.search(r"<(script|link)[^>]*(src|href)=[\"']?https?:", html)  # offline
    assert "Bokeh" in html and len(html) > 500_000  # BokehJS inlined
    assert "run020" in html
    r = inproc("plot-log", SMALL, "-o", tmp_path / "sub" / "r.html", "--title", "exp 20")
    assert r.returncode == 0 and (tmp_path / "sub" / "r.html").exists()


@pytest.mark.parametrize("fn", ["task_timeline", "block_timeline", "state_counts",
                                "timing_histograms", "jobs_per_site", "site_scores"])
def test_each_plot_is_a_layout(fn, frames):
    from bokeh.model import Model

    from swiftnb.logs import plots

    for lf in frames:
        layout = getattr(plots, fn)(lf)
        assert isinstance(layout, Model)


@pytest.fixture(scope="module")
def frames():
    """A Swift/K log, a synthetic coaster run with a retry, and an empty run."""
    from .synthetic import record

    from swiftnb.logs.frame import LogFrame

    return [LogFrame.read(SMALL), LogFrame.from_events(record()), LogFrame.from_events([])]


def test_a_run_directory_stands_for_its_log(tmp_path):
    import shutil

    run = tmp_path / "run020"
    run.mkdir()
    shutil.copy(SMALL, run / "bag_of_tasks-run020.log.bz2")
    r = inproc("timings", run)
    assert r.returncode == 0 and "run run020: success" in r.stdout
    shutil.copy(SMALL, run / "other.log.bz2")
    r = inproc("timings", run)
    assert r.returncode == 1 and "expected one log" in r.stderr
