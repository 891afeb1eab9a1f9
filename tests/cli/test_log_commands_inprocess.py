"""`swiftnb timings` / `plot-log` through cli.main in this process write to the streams
of the moment (pytest's capture, a notebook's, a tee), not to those of import time."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import swiftnb.logs.cli  # noqa: F401  imported before any test swaps sys.stdout
from swiftnb import cli

pytestmark = pytest.mark.timeout(120)

SMALL = Path(__file__).resolve().parents[1] / "data" / "aimes" / "stampede-exp-020" / "swift.log.bz2"


def test_timings_writes_to_the_current_stdout(capsys):
    assert cli.main(["timings", str(SMALL), "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("jobid") or "," in out.splitlines()[0], out[:200]
    assert len(out.splitlines()) >= 9  # a header and the 8 jobs of the run


def test_errors_go_to_the_current_stderr(capsys, tmp_path):
    assert cli.main(["timings", str(tmp_path / "missing.log")]) != 0
    out, err = capsys.readouterr()
    assert "missing.log" in err and out == ""


def test_plot_log_reports_on_the_current_stdout(tmp_path, monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stdout", stream)
    report = tmp_path / "r.html"
    assert cli.main(["plot-log", str(SMALL), "-o", str(report)]) == 0
    assert f"wrote {report}" in stream.getvalue()
    assert report.stat().st_size > 0


def test_a_closed_pipe_under_capture_is_no_traceback(monkeypatch, capsys):
    from swiftnb.logs import cli as logs_cli

    def broken(argv, out=None, err=None):
        raise BrokenPipeError

    monkeypatch.setattr(logs_cli, "timings_main", broken)
    assert logs_cli.main("timings", []) == 0
