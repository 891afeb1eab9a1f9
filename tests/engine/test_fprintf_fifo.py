"""fprintf to a named pipe (issue 24): nobody reading it is a clear error naming the
file, not an event loop blocked for ever; with a reader, the text arrives.  The real
``swiftnb run`` in a subprocess, so that a hang is a timeout, not a stuck test run."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)

WRITES = 'fprintf("pipe", "hello %s\\n", "there");\n'


def _run(cwd: Path) -> subprocess.CompletedProcess:
    (cwd / "s.swift").write_text(WRITES)
    env = dict(os.environ, HOME=str(cwd), SWIFTNB_NO_CACHE="1")
    env.pop("SWIFT_SITE_CONF", None)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "s.swift"], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env=env)


def test_fifo_nobody_reads(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    r = _run(tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "pipe" in r.stderr and "named pipe that nobody reads" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_fifo_with_a_reader(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    got: list[bytes] = []

    def read() -> None:
        with open(tmp_path / "pipe", "rb") as fh:  # waits for the run to open it
            got.append(fh.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    r = _run(tmp_path)
    reader.join(10)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert b"".join(got) == b"hello there\n"
