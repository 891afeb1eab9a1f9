"""Helpers for end-to-end `swiftnb run` tests: a subprocess per run, in a temp dir."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def engine_ready() -> bool:
    try:
        from swiftnb import lang
        from swiftnb.engine import run as run_mod  # noqa: F401
    except ImportError:
        return False
    return hasattr(lang, "load") and hasattr(run_mod, "Run")


needs_engine = pytest.mark.skipif(not engine_ready(), reason="engine.Run / lang.load not built yet")


def run_swiftnb(*args: str, cwd, timeout: float = 60, env=None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("SWIFT_SITE_CONF", None)
    full_env["HOME"] = str(cwd)  # no ~/.swift/swift.conf from the developer's machine
    if env:
        full_env.update(env)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full_env)


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def run_in_process(*args: str, cwd, monkeypatch, capsys) -> Result:
    """`swiftnb run ARGS` through cli.main in this process (the parser is built once)."""
    from swiftnb import cli

    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(cwd))
    monkeypatch.delenv("SWIFT_SITE_CONF", raising=False)
    capsys.readouterr()
    code = cli.main(["run", *args])
    out, err = capsys.readouterr()
    return Result(code, out, err)
