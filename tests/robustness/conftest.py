"""Fixtures of the robustness tests (helpers in robusthelp.py)."""

from robusthelp import cli, write  # noqa: F401  (pytest fixtures)
