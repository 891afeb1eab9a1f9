"""A throttle's queue taken and left by a waiter that awaits its turn itself (the single
site's waiting calls: one future each, no coroutine): served in order, a cancelled
waiter leaves the queue, and a slot granted just as its waiter was cancelled comes back."""

from __future__ import annotations

import asyncio

import pytest

from swiftnb.scheduling.throttles import Throttle


async def _wait_turn(throttle: Throttle, order: list[str], name: str) -> None:
    if not throttle.try_acquire():
        turn = throttle.queue()
        try:
            await turn
        except asyncio.CancelledError:
            throttle.withdraw(turn)
            raise
    order.append(name)


def test_turns_are_served_in_order_and_a_cancelled_waiter_leaves() -> None:
    async def main() -> None:
        throttle = Throttle("maxParallelTasks", 1)
        order: list[str] = []
        assert throttle.try_acquire()
        waiters = {name: asyncio.create_task(_wait_turn(throttle, order, name))
                   for name in ("a", "b", "c")}
        await asyncio.sleep(0)
        assert throttle.waiting == 3
        waiters["b"].cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiters["b"]
        assert throttle.waiting == 2
        throttle.release()
        await waiters["a"]
        throttle.release()
        await waiters["c"]
        assert order == ["a", "c"] and throttle.used == 1 and throttle.waiting == 0

    asyncio.run(asyncio.wait_for(main(), 10))


def test_a_turn_granted_as_its_waiter_is_cancelled_is_given_back() -> None:
    async def main() -> None:
        throttle = Throttle("maxParallelTasks", 1)
        order: list[str] = []
        assert throttle.try_acquire()
        waiter = asyncio.create_task(_wait_turn(throttle, order, "late"))
        await asyncio.sleep(0)
        throttle.release()          # grants the slot to the waiter's future...
        waiter.cancel()             # ...which is cancelled before it runs again
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert order == [] and throttle.used == 0 and throttle.waiting == 0
        assert throttle.try_acquire()

    asyncio.run(asyncio.wait_for(main(), 10))
