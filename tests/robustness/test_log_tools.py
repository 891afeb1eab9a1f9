"""`swiftnb timings` / `plot-log` on files that are not (whole) Swift logs: one clear
line, no traceback."""

from __future__ import annotations

import bz2

import pytest

from robusthelp import swiftnb

pytestmark = pytest.mark.timeout(60)

LOG = "".join(
    f"2026-11-22 10:00:{i:02d},000+0000 INFO  swift JOB_INIT jobid=echo-{i} tr=echo\n"
    for i in range(50))


@pytest.mark.parametrize("name,data,says", [
    ("script.swift", b"type file;\n", "not a Swift log"),
    ("empty.log", b"", "the log holds no records"),
    ("binary.log", b"\xff\xfe\x00\x01garbage", "not a Swift log"),
    ("fake.log.bz2", b"type file;\n", "not a Swift log"),
    ("trunc.log.bz2", bz2.compress(LOG.encode())[:40], "compressed file is truncated"),
])
def test_timings_on_bad_files(tmp_path, write, name, data, says):
    write(name, data)
    r = swiftnb("timings", name, cwd=tmp_path)
    assert r.returncode != 0 and says in r.stderr, r.stderr


def test_plot_log_and_timings_on_missing_or_truncated(tmp_path, write):
    r = swiftnb("timings", "nothere.log", cwd=tmp_path)
    assert r.returncode == 4 and "log file not found: nothere.log" in r.stderr
    write("t.log.bz2", bz2.compress(LOG.encode())[:40])
    r = swiftnb("plot-log", "t.log.bz2", "-o", "r.html", cwd=tmp_path)
    assert r.returncode != 0 and "compressed file is truncated" in r.stderr
