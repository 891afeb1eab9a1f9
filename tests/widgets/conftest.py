"""Fixtures of the widget tests (see widget_helpers.py)."""

from __future__ import annotations

import comm
import pytest

from widget_helpers import Browser


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Browser:
    b = Browser()
    monkeypatch.setattr(comm, "create_comm", b.create_comm)
    return b
