"""Fixtures shared by the whole suite: the test sshd (tests/sshd.py), session-scoped and
started on first use, and an empty HOME for tests of the SSH layer."""

from gridengine import gridengine  # noqa: F401  (pytest fixture)
from slurm import slurm  # noqa: F401  (pytest fixture)
from sshd import no_personal_ssh, sshd  # noqa: F401  (pytest fixtures)
