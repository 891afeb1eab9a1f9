"""Fixtures of the log tests (shared data and helpers in _helpers.py)."""

from __future__ import annotations

import pytest

from ._helpers import DATA, EXPERIMENTS


@pytest.fixture(scope="session")
def aimes_logs():
    """Read every real log once per session (the 2048-task one takes a second)."""
    from swiftnb.logs.frame import LogFrame

    return {name: LogFrame.read(DATA / name / "swift.log.bz2") for name in EXPERIMENTS}
