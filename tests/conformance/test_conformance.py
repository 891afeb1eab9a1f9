"""Runs every ``tests/conformance/<group>/NNN-name.swift`` end to end through the real
``swiftnb run`` command (see README.md in this folder for the file format)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cases import CASES, case_argv, case_id, check_run, copy_case, selected_params, start_all


def _run_case(script: Path, base: Path) -> tuple[Path, subprocess.CompletedProcess]:
    work = copy_case(script, base)
    env = dict(os.environ)
    env.pop("SWIFT_SITE_CONF", None)
    proc = subprocess.run(case_argv(script, work), cwd=work, capture_output=True, text=True,
                          timeout=50, env=env)
    return work, proc


@pytest.fixture(scope="session")
def case_runs(request, tmp_path_factory):
    """Start every selected case at once on a small thread pool (each is a subprocess
    that mostly waits for its own start-up), so the group takes a fraction of the
    serial time; each test then checks its own result."""
    scripts = selected_params(request, "script", __file__)
    jobs = [(s, tmp_path_factory.mktemp(s.stem)) for s in scripts]
    pool, futures = start_all(_run_case, jobs, max(2, (os.cpu_count() or 2) * 2))
    yield {job[0]: future for job, future in futures.items()}
    pool.shutdown(wait=False, cancel_futures=True)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("script", CASES, ids=[case_id(p) for p in CASES])
def test_case(script: Path, case_runs, tmp_path: Path) -> None:
    future = case_runs.get(script)
    work, proc = future.result() if future is not None else _run_case(script, tmp_path)
    check_run(script, work, proc)
