"""Runs every ``tests/conformance/<group>/NNN-name.swift`` end to end through the real
``swiftnb run`` command (see README.md in this folder for the file format)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
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


def _run_case(script: Path, base: Path) -> tuple[Path, subprocess.CompletedProcess]:
    work = base / script.parent.name
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
    return work, proc


@pytest.fixture(scope="session")
def case_runs(request, tmp_path_factory):
    """Start every selected case at once on a small thread pool (each is a subprocess
    that mostly waits for its own start-up), so the group takes a fraction of the
    serial time; each test then checks its own result."""
    selected = [item.callspec.params["script"] for item in request.session.items
                if getattr(item, "callspec", None) is not None
                and "script" in item.callspec.params]
    pool = ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2) * 2))
    futures = {s: pool.submit(_run_case, s, tmp_path_factory.mktemp(s.stem)) for s in selected}
    yield futures
    pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("script", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_case(script: Path, case_runs, tmp_path: Path) -> None:
    future = case_runs.get(script)
    work, proc = future.result() if future is not None else _run_case(script, tmp_path)
    name = script.stem
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
