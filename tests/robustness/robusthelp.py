"""Helpers of the robustness tests: bad input through the real `swiftnb` command (a
subprocess per case, in a temp dir).  A module of its own (not conftest.py) so that
its name cannot clash with another test directory's conftest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest


def _env(cwd) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SWIFT_SITE_CONF", None)
    env["HOME"] = str(cwd)  # no ~/.swift/swift.conf of the developer's machine
    return env


def swiftnb(*args: str, cwd, timeout: float = 60) -> subprocess.CompletedProcess:
    """`swiftnb ARGS` to its end; a Python traceback on stderr fails the test at once."""
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                       capture_output=True, text=True, timeout=timeout, env=_env(cwd))
    assert "Traceback" not in r.stderr, r.stderr
    return r


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    """`swiftnb ARGS` through cli.main in this process, in tmp_path (for the cases that
    end before any app runs: quick, and the same code path as the command)."""
    def go(*args: str) -> Result:
        from swiftnb import cli as cli_mod

        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv("SWIFT_SITE_CONF", raising=False)
        capsys.readouterr()
        code = cli_mod.main(list(args))
        out, err = capsys.readouterr()
        assert "Traceback" not in err, err
        return Result(code, out, err)
    return go


def start(*args: str, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_env(cwd))


def wait_for(predicate, timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


@pytest.fixture
def write(tmp_path):
    def go(name: str, text: str | bytes) -> str:
        path = tmp_path / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
        return name
    return go


HELLO = """\
type file;
app (file o) greet(string s) { echo s stdout=@o; }
file out <"hello.txt">;
out = greet("hi");
"""

#: apps that record their pid in PIDDIR/<i>.pid, then sleep a long time
SLEEPERS = """\
type file;
app (file o) nap(string piddir, int i) {
    sh "-c" "echo $$ > $0/$1.pid; exec sleep 97" piddir i stdout=@o;
}
file o[] <simple_mapper; prefix="nap", suffix=".out">;
string piddir = arg("piddir");
foreach i in [0:3] { o[i] = nap(piddir, i); }
"""

__all__ = ["swiftnb", "start", "wait_for", "alive", "HELLO", "SLEEPERS", "signal"]
