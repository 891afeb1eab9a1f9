"""Between the engine and the sites: throttles, site scores, selection policies, retries, replication.

Public API: :func:`build_executor` (Config -> Scheduler), :class:`Scheduler` (the
engine's Executor over many sites; ``set_throttle`` for live changes), :class:`Site`,
:class:`Policy` (write your own), :func:`make_policy`, :class:`VirtualClock`.
See docs/scheduling.md.
"""

import importlib
from typing import Any

#: public name -> the module of this package that defines it (imported on first use: a
#: run with one local site never loads the multi-site scheduler and its policies)
_EXPORTS = {
    "build_executor": "build", "register_provider": "build",
    "RealClock": "clock", "VirtualClock": "clock",
    "POLICIES": "policies", "make_policy": "policies", "Policy": "policy",
    "THROTTLE_NAMES": "scheduler", "Scheduler": "scheduler", "SchedulerError": "errors",
    "Site": "sites",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:  # the lazily imported export
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
