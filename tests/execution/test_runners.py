"""Runner threads: results and exceptions reach the loop, threads are reused, none is
ever waited for behind another call."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from swiftnb.execution.runners import Runners

pytestmark = pytest.mark.timeout(30)


def test_results_and_exceptions_reach_the_awaiting_task():
    runners = Runners("t")

    def boom():
        raise ValueError("from the thread")

    async def main():
        assert await runners.call(lambda a, b: a + b, 2, 3) == 5
        with pytest.raises(ValueError, match="from the thread"):
            await runners.call(boom)
        assert await runners.call(threading.current_thread) is not threading.current_thread()

    asyncio.run(main())
    runners.shutdown()


def test_sequential_calls_reuse_one_thread_and_concurrent_calls_get_their_own():
    runners = Runners("t")

    async def main():
        names = {await runners.call(lambda: threading.current_thread().name) for _ in range(20)}
        assert len(names) == 1
        barrier = threading.Barrier(5, timeout=10)  # five calls that can only end together
        await asyncio.gather(*(runners.call(barrier.wait) for _ in range(5)))
        assert runners._threads == 5

    asyncio.run(main())
    runners.shutdown()


def test_at_the_limit_calls_wait_for_a_free_thread():
    runners = Runners("t", limit=2)
    running = []
    lock = threading.Lock()

    def work():
        with lock:
            running.append(1)
            peak = len(running)
        time.sleep(0.05)
        with lock:
            running.pop()
        return peak

    async def main():
        return await asyncio.gather(*(runners.call(work) for _ in range(6)))

    peaks = asyncio.run(main())
    assert max(peaks) <= 2 and runners._threads == 2
    runners.shutdown()


def test_a_canceled_call_still_runs_to_its_end_and_is_dropped():
    runners = Runners("t")
    done = threading.Event()

    def slow():
        time.sleep(0.1)
        done.set()
        return "late"

    async def main():
        future = runners.call(slow)
        future.cancel()
        await asyncio.sleep(0.3)  # the result arrives for a canceled future: no error

    asyncio.run(main())
    assert done.is_set()
    runners.shutdown()
    with pytest.raises(RuntimeError):
        asyncio.run(_call_after_shutdown(runners))


async def _call_after_shutdown(runners):
    await runners.call(lambda: None)
