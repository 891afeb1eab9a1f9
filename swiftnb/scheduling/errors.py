"""The error of a request the scheduling layer cannot honour.

Its own module so that a run with one local site (``single``), which never loads the
multi-site scheduler, can raise it too."""

from __future__ import annotations

from swiftnb.errors import SwiftnbError

__all__ = ["SchedulerError"]


class SchedulerError(SwiftnbError, ValueError):
    """A request the scheduler cannot honour (unknown site or throttle name, bad value)."""
