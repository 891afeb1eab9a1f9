"""The coaster block planner (box packing), as pure functions.

Why pure: the planner decides how many pilot blocks to request and what shape they take,
which is slow to observe on a real cluster and easy to get subtly wrong.  Keeping it free
of I/O and clocks lets the tests check hand-computed schedules and properties, and lets
the service (``service.py``) stay a thin loop that applies the decisions.

It follows Swift 0.96's ``BlockQueueProcessor`` and ``OverallocatedJobDurationMetric``
(seed 000 sections 0.5-0.6, reference 6.4), including its integer arithmetic, so that the
same queue and settings give the same blocks as Swift:

* a task's *size* is ``walltime ** p`` and a block's is ``width * height ** p`` with
  ``p = parallelism``: ``p = 1`` packs tasks tightly by time, ``p = 0`` counts tasks
  (maximum parallelism); the default 0.01 is close to counting;
* ``overallocated(t) = int(t * ((L - H) * exp(-t * D) + H))`` is the block height wanted
  for tasks of walltime ``t`` (``L``/``H`` the low/high overallocation, ``D`` the decay);
* ``newBlocks = ceil((slots - blocks) * allocationStepSize)``; the queued work ``tsum``
  is split among them (``spread`` linear, or ``exponentialSpread``), smallest first;
* each block: height = the overallocation of its longest task, made a multiple of that
  walltime, capped at ``maxtime - reserve``; width = capacity / height ** p rounded up to
  the granularity (``nodeGranularity * jobsPerNode``) and capped at ``maxNodes *
  jobsPerNode``; then the tasks that fit its area are committed to it.

One deliberate difference: Swift could commit to a block a task longer than the block
(the commit loop only compared areas); here a task is committed only if its walltime fits
the block's height, so a committed task can always run in its block.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from swiftnb.coasters.settings import CoasterSettings, format_hms

__all__ = [
    "BlockPlan",
    "BlockView",
    "overallocated",
    "job_size",
    "desired_size",
    "area",
    "width_for",
    "round_past",
    "new_block_count",
    "block_target",
    "total_request",
    "admission_error",
    "allocate_blocks",
    "blocks_to_suspend",
    "block_deadline",
]


def overallocated(walltime: int, s: CoasterSettings) -> int:
    """Block height (s) wanted for tasks of ``walltime`` s: decays from L x to H x."""
    wt = int(walltime)
    lo, hi, decay = s.low_overallocation, s.high_overallocation, s.overallocation_decay_factor
    return int(wt * ((lo - hi) * math.exp(-wt * decay) + hi))


def job_size(walltime: float, p: float) -> float:
    """A task's size in block-area units: ``walltime ** p``."""
    size: float = float(int(walltime)) ** p
    return size


def desired_size(walltime: float, s: CoasterSettings) -> float:
    """The area a task asks for: its overallocated height ``** p``."""
    size: float = float(overallocated(int(walltime), s)) ** s.parallelism
    return size


def area(width: int, height: int, p: float) -> float:
    """A block's capacity: ``width * height ** p``."""
    capacity: float = width * float(height) ** p
    return capacity


def width_for(size: int, height: int, p: float) -> int:
    """Cores needed for capacity ``size`` at ``height``: ``int(size / height ** p)``."""
    return int(size / float(height) ** p)


def round_past(v: int, g: int) -> int:
    """Swift's ``round``: the next multiple of ``g`` strictly above ``v - v % g``.

    Note that it always moves up (``round_past(6, 2) == 8``): Swift's planner rounded
    that way and its block widths and heights depend on it.
    """
    return v - v % g + g


def new_block_count(slots: int, current_blocks: int, step: float) -> int:
    """``ceil((slots - blocks) * allocationStepSize)``, never negative."""
    return max(0, math.ceil((slots - current_blocks) * step))


def block_target(slot: int, chunk: int, tsum: float, s: CoasterSettings) -> float:
    """Target capacity of the ``slot``-th of ``chunk`` new blocks (seed 000, figure 1).

    Linear spread: from ``median * (1 - spread)`` to ``median * (1 + spread)``; with
    ``exponentialSpread = x``: ``nodeGranularity * x ** (e * slot // chunk)``,
    ``e = int(log_x(tsum / nodeGranularity))``.
    """
    if chunk <= 0:
        return 0.0
    if s.exponential_spread:
        x = s.exponential_spread
        g = s.node_granularity
        exp = int(math.log(tsum / g) / math.log(x)) if tsum > 0 else 0
        if chunk == 1:
            return g * x ** exp
        return g * x ** (exp * slot // chunk)
    median = tsum / chunk
    lo = median * (1 - s.spread)
    hi = median * (1 + s.spread)
    if chunk == 1:
        return float(tsum)
    return float(math.ceil(lo + (hi - lo) * slot / (chunk - 1)))


def total_request(walltimes: Sequence[float], s: CoasterSettings) -> int:
    """``tsum``: the summed desired size of the holding queue (at least 1 if any)."""
    if not walltimes:
        return 0
    total = sum(desired_size(w, s) for w in walltimes)
    return int(max(total, 1.0))


def admission_error(walltime: float, s: CoasterSettings) -> str | None:
    """Swift's immediate failure for a task that can never fit a block, else None."""
    if walltime > s.max_block_walltime:
        return (f"Task walltime > maxJobTime - reserve "
                f"({format_hms(walltime)} > {format_hms(s.max_block_walltime)})")
    return None


@dataclass(frozen=True, slots=True)
class BlockPlan:
    """One block to request: ``workers`` task slots for ``walltime`` s, and the tasks
    (``start`` .. ``start + count`` of the sorted holding list) committed to it."""

    workers: int
    walltime: int
    start: int
    count: int
    target: float
    reason: str = field(compare=False, default="")

    def nodes(self, jobs_per_node: int) -> int:
        return -(-self.workers // jobs_per_node)


def _prefix_sums(walltimes: Sequence[int], p: float) -> list[int]:
    # Java accumulated these in an int: each addition truncates (sizes of ~1.04 each
    # count as 1), which is what makes "area ~ number of jobs" at p = 0.01.
    sums = [0]
    ps = 0
    for w in walltimes:
        ps = int(ps + job_size(w, p))
        sums.append(ps)
    return sums


def allocate_blocks(walltimes: Sequence[int], current_blocks: int, s: CoasterSettings,
                    tsum: int | None = None, min_width: int = 1) -> list[BlockPlan]:
    """New blocks for the holding queue ``walltimes`` (ascending), given ``current_blocks``.

    ``min_width``: slots every new block has at least (up to ``maxNodesPerJob x
    tasksPerNode``): an MPI task of that many slots must find them in one block.

    Returns the blocks in order; their committed ranges are consecutive and start at 0.
    """
    jobs = [int(w) for w in walltimes]
    n = len(jobs)
    if n == 0:
        return []
    if tsum is None:
        tsum = total_request(jobs, s)
    chunk = min(new_block_count(s.slots, current_blocks, s.allocation_step_size),
                max(0, s.slots - current_blocks))
    p = s.parallelism
    sums = _prefix_sums(jobs, p)
    granularity = s.node_granularity * s.jobs_per_node
    maxt = s.max_block_walltime
    plans: list[BlockPlan] = []
    last = 0
    i = 0
    slot = 0
    target = block_target(slot, chunk, tsum, s)
    while i < n and slot < chunk:
        granularity_fit = (i - last) % granularity == 0
        last_chunk = i == n - 1
        size_fit = not last_chunk and sums[i] - sums[last] > target
        if (granularity_fit and size_fit) or last_chunk:
            msz = int(target)
            lastwalltime = jobs[i]
            h0 = overallocated(lastwalltime, s)
            h = min(max(h0, round_past(h0, lastwalltime)) if lastwalltime > 0 else h0, maxt)
            h = max(h, 1)
            raw_width = width_for(msz, h, p)
            w = min(max(round_past(raw_width, granularity),
                        -(-min_width // granularity) * granularity), s.max_width)
            r = (i - last) % w
            if r != 0:
                h = min(h + lastwalltime, maxt)
            capacity = area(w, h, p)
            ii = last
            while ii < n and sums[ii + 1] - sums[last] <= capacity and jobs[ii] <= h:
                ii += 1
            count = ii - last
            reason = (
                f"block {slot + 1}/{chunk}: target size {target:g} of tsum {tsum}; "
                f"tasks {last}..{i} up to {lastwalltime}s; height {h}s "
                f"(overallocated {h0}s, cap maxJobTime - reserve = {maxt}s); "
                f"width {w} (capacity/height^p = {raw_width}, granularity {granularity}, "
                f"cap {s.max_width}); {count} task(s) committed")
            if count == 0:
                # Nothing fits this shape (cannot happen for admitted tasks, whose walltime
                # is at most maxtime - reserve): stop rather than request an empty block.
                break
            plans.append(BlockPlan(w, h, last, count, target, reason))
            i = ii - 1
            last = ii
            slot += 1
            target = block_target(slot, chunk, tsum, s)
        i += 1
    return plans


@dataclass(frozen=True, slots=True)
class BlockView:
    """What block removal needs to know of a live block."""

    id: str
    size_left: float
    last_used: float
    suspended: bool = False


def blocks_to_suspend(blocks: Sequence[BlockView], needed: float, now: float,
                      delay: float) -> list[str]:
    """Seed 000 section 0.6: keep the blocks with the least usable time left that cover
    the work still ``needed`` (queued + running size); suspend the others once they have
    been unused for ``delay`` s.  Suspended blocks take no new tasks and shut down when
    their last task ends.
    """
    out: list[str] = []
    total = 0.0
    for b in sorted(blocks, key=lambda b: b.size_left):
        if total >= needed and not b.suspended and now - b.last_used > delay:
            out.append(b.id)
        total += b.size_left
    return out


def block_deadline(started: float, walltime: float, last_activity: float,
                   max_idle: float) -> float:
    """When a running block is done: its walltime ends or it has idled ``max_idle`` s."""
    return min(started + walltime, last_activity + max_idle)
