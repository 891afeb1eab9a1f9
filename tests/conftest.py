"""Fixtures shared by the whole suite: only the test sshd (tests/sshd.py), session-scoped
and started on first use."""

from sshd import sshd  # noqa: F401  (pytest fixture)
