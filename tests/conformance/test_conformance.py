"""Runs every ``tests/conformance/<group>/NNN-name.swift`` end to end through the real
``swiftnb run`` command (see README.md in this folder for the file format)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SWIFTNB = ROOT / ".venv" / "bin" / "swiftnb"
if not SWIFTNB.exists():  # installed elsewhere (CI venv on PATH)
    SWIFTNB = Path(shutil.which("swiftnb") or SWIFTNB)

CASES = sorted(HERE.glob("*/[0-9]*.swift"))


def _expected_exit(script: Path) -> int | None:
    """None means "any non-zero"."""
    code_file = script.with_suffix(".exitcode")
    if code_file.exists():
        return int(code_file.read_text().strip())
    if "THIS-SCRIPT-SHOULD-FAIL" in script.read_text(errors="replace"):
        return None
    return 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("script", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_case(script: Path, tmp_path: Path) -> None:
    work = tmp_path / script.parent.name
    shutil.copytree(script.parent, work, ignore=shutil.ignore_patterns("__pycache__", "run[0-9]*"))
    name = script.stem
    args_file = work / f"{name}.args"
    args = args_file.read_text().split() if args_file.exists() else []
    env = dict(os.environ)
    env.pop("SWIFT_SITE_CONF", None)
    proc = subprocess.run(
        [str(SWIFTNB), "run", f"{name}.swift", *args],
        cwd=work, capture_output=True, text=True, timeout=50, env=env,
    )
    detail = f"\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    want = _expected_exit(script)
    if want is None:
        assert proc.returncode != 0, "script should fail but exited 0" + detail
    else:
        assert proc.returncode == want, f"exit {proc.returncode}, expected {want}" + detail
    out_expected = script.with_suffix(".stdout.expected")
    if out_expected.exists():
        want_lines = sorted(out_expected.read_text().splitlines())
        got_lines = sorted(proc.stdout.splitlines())
        assert got_lines == want_lines, "stdout differs" + detail
    file_expected = script.with_suffix(".out.expected")
    if file_expected.exists():
        produced = work / f"{name}.out"
        assert produced.exists(), f"{name}.out was not produced" + detail
        assert produced.read_text() == file_expected.read_text(), f"{name}.out differs" + detail
    check = work / f"{name}.check.sh"
    if check.exists():
        res = subprocess.run(["bash", check.name], cwd=work, capture_output=True, text=True,
                             timeout=30)
        assert res.returncode == 0, f"{check.name} failed:\n{res.stdout}{res.stderr}" + detail
