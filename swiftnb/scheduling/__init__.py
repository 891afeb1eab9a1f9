"""Between the engine and the sites: throttles, site scores, selection policies, retries, replication.

Public API: :func:`build_executor` (Config -> Scheduler), :class:`Scheduler` (the
engine's Executor over many sites; ``set_throttle`` for live changes), :class:`Site`,
:class:`Policy` (write your own), :func:`make_policy`, :class:`VirtualClock`.
See docs/scheduling.md.
"""

from swiftnb.scheduling.build import build_executor, register_provider
from swiftnb.scheduling.clock import RealClock, VirtualClock
from swiftnb.scheduling.policies import POLICIES, make_policy
from swiftnb.scheduling.policy import Policy
from swiftnb.scheduling.scheduler import THROTTLE_NAMES, Scheduler, SchedulerError
from swiftnb.scheduling.sites import Site

__all__ = [
    "build_executor", "register_provider", "Scheduler", "SchedulerError", "Site", "Policy",
    "make_policy", "POLICIES", "VirtualClock", "RealClock", "THROTTLE_NAMES",
]
