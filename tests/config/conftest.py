"""Shared helpers: the test data folder, and an environment without the user's files."""

from __future__ import annotations

import os
import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data"


@pytest.fixture
def data() -> pathlib.Path:
    return DATA


@pytest.fixture
def clean_env(tmp_path) -> dict[str, str]:
    """An environment whose HOME has no ~/.swift/swift.conf and no SWIFT_SITE_CONF."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "USER": "alice", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
