"""The log readers under hostile input, and logs that hold several runs.

Each hostile case runs the real ``swiftnb timings`` in a subprocess under an address
space limit (RLIMIT_AS): a reader that does not stream with bounded memory dies of
MemoryError (a traceback) or takes the machine's memory; a bounded one refuses the
input with one line naming the file and exit code 2, or reads the log part of it.
"""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.logs.frame import LogFrame
from tests.logs._helpers import log_text

#: room for Python, numpy, pandas and a small log; far below what the inputs expand to
LIMIT = 450 << 20
MB = 1 << 20
RECORD = b"2016-01-25 01:08:24,537+0000 INFO  Loader RUN_START\n"


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def swiftnb(*args: str | os.PathLike[str], cwd: Path | None = None,
            limit: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=240,
                          preexec_fn=_limited if limit else None)


def assert_refused(r: subprocess.CompletedProcess, path: str | os.PathLike[str],
                   why: str) -> None:
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and line.startswith(f"swiftnb: {path}")
    assert "not a Swift log" in line and why in line, line


def test_a_device_is_refused():
    assert_refused(swiftnb("timings", "/dev/zero"), "/dev/zero", "not a regular file")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "swift.log"
    os.mkfifo(fifo)
    assert_refused(swiftnb("timings", fifo), fifo, "not a regular file")


def _write_gzip(path: Path, head: bytes, filler: bytes, mb: int) -> None:
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(head)
        block = filler * (MB // len(filler))
        for _ in range(mb):
            fh.write(block)


def test_a_gzip_bomb_of_zeros_is_refused(tmp_path):
    bomb = tmp_path / "swift.log.gz"
    _write_gzip(bomb, b"", b"\x00", 2048)  # 2 GB of zeros, 2 MB on disk
    assert bomb.stat().st_size < 4 * MB
    assert_refused(swiftnb("timings", bomb), bomb, "NUL byte")


def test_a_gzip_bomb_of_blank_lines_after_a_record_is_refused(tmp_path):
    bomb = tmp_path / "swift.log.gz"
    _write_gzip(bomb, RECORD, b"\n", 2048)
    assert_refused(swiftnb("timings", bomb), bomb, "expands more than")


def test_a_gzip_bomb_of_a_repeated_record_is_refused(tmp_path):
    bomb = tmp_path / "swift.log.gz"
    _write_gzip(bomb, b"", RECORD, 512)
    assert_refused(swiftnb("timings", bomb), bomb, "expands more than")


def test_a_file_of_one_endless_line_is_refused(tmp_path):
    path = tmp_path / "swift.log"
    with open(path, "wb") as fh:
        for _ in range(80):
            fh.write(b"x" * MB)
    assert_refused(swiftnb("timings", path), path, "no line starts with a time stamp")


def test_an_endless_line_in_a_log_is_skipped_with_a_warning(tmp_path):
    text = log_text("stampede-exp-020").encode()
    path = tmp_path / "swift.log"
    with open(path, "wb") as fh:
        fh.write(text)
        for _ in range(120):
            fh.write(b"y" * MB)
        fh.write(b"\n")
        fh.write(text[:2000].rsplit(b"\n", 1)[0] + b"\n")
    r = swiftnb("timings", path, "--run", "1")
    assert r.returncode == 0, r.stderr[-2000:]
    line = text.count(b"\n") + 1
    assert f"swiftnb: warning: {path}:{line}: 1 line(s) longer than 1 MiB skipped" in r.stderr
    assert "run run020: success" in r.stdout


def test_a_log_with_binary_garbage_is_refused(tmp_path):
    path = tmp_path / "swift.log"
    path.write_bytes(RECORD + b"\x00" * 4096 + RECORD)
    assert_refused(swiftnb("timings", path), path, "NUL byte")
    assert_refused(swiftnb("plot-log", path), path, "NUL byte")


# -- several runs in one log ------------------------------------------------------------
SCRIPT = """type file;
app (file o) greet(string s) { echo s stdout=@o; }
file f<"out.txt">;
f = greet("hi");
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    """A real log of two runs: ``swiftnb run -logfile same.log`` twice."""
    work = tmp_path_factory.mktemp("tworuns")
    (work / "greet.swift").write_text(SCRIPT)
    for _ in range(2):
        r = swiftnb("run", "-logfile", "same.log", "greet.swift", cwd=work, limit=False)
        assert r.returncode == 0, r.stderr
    return work / "same.log"


def test_two_runs_in_one_log_are_told_apart(two_runs):
    frame = LogFrame.read(two_runs)
    runs = frame.runs()
    assert [r.run["run_id"] for r in runs] == ["run001", "run002"]
    assert [r.run["njobs"] for r in runs] == [1, 1]
    assert all(r.run["outcome"] == "success" for r in runs)
    assert sum(len(r.events) for r in runs) == len(frame.events)


def test_timings_of_two_runs_says_so_and_reports_each(two_runs):
    r = swiftnb("timings", two_runs)
    assert r.returncode == 0, r.stderr
    assert f"{two_runs} holds 2 runs appended to one file" in r.stderr
    assert "run run001: success" in r.stdout and "run run002: success" in r.stdout
    assert r.stdout.count("jobs 1 (succeeded 1") == 2
    one = swiftnb("timings", two_runs, "--run", "run002", "--format", "csv")
    assert one.returncode == 0 and "holds 2 runs" not in one.stderr
    assert "run002" in one.stdout and "run001" not in one.stdout
    both = swiftnb("timings", two_runs, "--format", "csv")
    assert both.stdout.splitlines()[0].startswith("run,timing,")
    missing = swiftnb("timings", two_runs, "--run", "3")
    assert missing.returncode == 1 and "no run '3'" in missing.stderr


def test_plot_log_of_two_runs_asks_for_one(two_runs, tmp_path):
    r = swiftnb("plot-log", two_runs, "-o", tmp_path / "r.html")
    assert r.returncode == 1 and "--run" in r.stderr
    r = swiftnb("plot-log", two_runs, "--run", "2", "-o", tmp_path / "r.html", limit=False)
    assert r.returncode == 0, r.stderr
    assert "1 jobs" in r.stdout


def test_a_swiftk_log_concatenated_twice_is_two_runs(tmp_path):
    text = log_text("stampede-exp-017")
    path = tmp_path / "swift.log"
    path.write_text(text + text)
    one = tmp_path / "one.log"
    one.write_text(text)
    alone = LogFrame.read(one).run
    runs = LogFrame.read(path).runs()
    assert len(runs) == 2
    for run in runs:
        assert run.run["run_id"] == "run017"
        for key in ("njobs", "ntasks", "nblocks", "nworkers", "start", "finish", "outcome"):
            assert run.run[key] == alone[key], key
