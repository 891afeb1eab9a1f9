"""Coasters: Swift's pilot-job layer (blocks of workers that run many short tasks).

``planner`` decides the blocks (pure functions), ``service`` queues tasks, runs the
planner and dispatches tasks to connected workers, ``blocks`` starts blocks through a
block provider chosen by ``jobManager``, ``worker`` is the stdlib-only program a block
runs, and ``provider.CoasterProvider`` is the scheduler-facing Provider.
"""

from swiftnb.coasters.settings import CoasterConfigError, CoasterSettings

__all__ = ["CoasterConfigError", "CoasterSettings"]
