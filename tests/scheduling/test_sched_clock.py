"""The virtual clock: jumps only when the running loop is idle, inside an existing loop."""

import asyncio

import pytest

from swiftnb.scheduling.clock import RealClock, VirtualClock
from swiftnb.scheduling.throttles import Throttle, parse_throttle


def test_sleeps_wake_in_order_and_time_jumps():
    async def main():
        clock = VirtualClock(start=1000.0)
        order = []

        async def sleeper(name, delay):
            await clock.sleep(delay)
            order.append((name, clock.now()))

        await asyncio.gather(sleeper("c", 300), sleeper("a", 5), sleeper("b", 60))
        return order, clock

    order, clock = asyncio.run(main())
    assert order == [("a", 1005.0), ("b", 1060.0), ("c", 1300.0)]
    assert clock.elapsed() == 300.0


def test_clock_waits_while_the_loop_has_work():
    """Work that is ready (callbacks, coroutine steps) runs before time moves."""

    async def main():
        clock = VirtualClock(start=0.0)
        seen = []

        async def busy():
            for _ in range(50):
                seen.append(clock.now())
                await asyncio.sleep(0)

        async def sleeper():
            await clock.sleep(10)
            seen.append(("woke", clock.now()))

        await asyncio.gather(sleeper(), busy())
        return seen

    seen = asyncio.run(main())
    assert seen[:50] == [0.0] * 50
    assert seen[-1] == ("woke", 10.0)


def test_cancelled_sleep_and_timer():
    async def main():
        clock = VirtualClock(start=0.0)
        fired = []
        handle = clock.call_later(5, fired.append, "no")
        clock.call_later(7, fired.append, "yes")
        handle.cancel()
        task = asyncio.ensure_future(clock.sleep(100))
        await clock.sleep(10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await clock.sleep(1)
        return fired, clock.now()

    fired, now = asyncio.run(main())
    assert fired == ["yes"]
    assert now == 11.0


def test_real_clock_sleeps_for_real():
    async def main():
        clock = RealClock()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        await clock.sleep(0.05)
        return loop.time() - t0

    assert asyncio.run(main()) >= 0.04


def test_throttle_fifo_and_live_limit_change():
    async def main():
        changes = []
        th = Throttle("t", 1, on_change=lambda t, o, n: changes.append((o, n)))
        log = []

        async def user(i):
            async with th.slot():
                log.append(("in", i, th.used))
                await asyncio.sleep(0)
                await asyncio.sleep(0)
                log.append(("out", i))

        tasks = [asyncio.ensure_future(user(i)) for i in range(4)]
        await asyncio.sleep(0)
        th.set_limit(3)
        await asyncio.gather(*tasks)
        return log, th, changes

    log, th, changes = asyncio.run(main())
    assert [x[1] for x in log if x[0] == "in"] == [0, 1, 2, 3]
    assert th.peak == 3 and th.used == 0
    assert changes == [(1.0, 3.0)]


def test_parse_throttle_refuses_nan():
    with pytest.raises(ValueError, match="at least 1"):
        parse_throttle("nan", "jobSubmitThrottle")
    with pytest.raises(ValueError, match="at least 1"):
        parse_throttle(float("nan"))


def test_parse_throttle():
    assert parse_throttle("off") == float("inf")
    assert parse_throttle(4) == 4.0
    with pytest.raises(ValueError, match="at least 1"):
        parse_throttle(0, "jobSubmitThrottle")
    with pytest.raises(ValueError, match="jobSubmitThrottle"):
        parse_throttle("lots", "jobSubmitThrottle")


def test_clock_survives_a_new_event_loop():
    clock = VirtualClock(start=0.0)

    async def leave_a_timer():
        clock.call_later(1000, lambda: None)  # still pending when this loop ends

    async def sleep_a_bit():
        await clock.sleep(5)
        return clock.now()

    asyncio.run(leave_a_timer())
    assert asyncio.run(sleep_a_bit()) == 5.0


def test_simulated_grid_runs_beside_real_time_work_in_the_same_loop():
    """Like a notebook: the kernel's loop keeps doing real-time chores during a sim run."""
    from grid import Grid

    async def main():
        beats = []

        async def heartbeat():
            while True:
                beats.append(1)
                await asyncio.sleep(0.005)

        hb = asyncio.ensure_future(heartbeat())
        grid = Grid({"a": {"slots": 8, "queueTime": "exp:30", "taskDuration": 60, "seed": 1},
                     "b": {"slots": 8, "queueTime": "exp:30", "taskDuration": 60, "seed": 2}},
                    seed=1)
        results = await asyncio.wait_for(grid.run(100), timeout=60)
        hb.cancel()
        return results, grid.clock.elapsed(), len(beats)

    results, elapsed, beats = asyncio.run(main())
    assert all(r.ok for r in results)
    assert elapsed > 600      # many simulated minutes...
    assert beats >= 1         # ...while the loop's own real-time work went on
