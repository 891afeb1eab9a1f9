"""BatchWorker: many requests of the loop are handled as few batches by one thread, in
the order asked, each answered with its own result; an error of a batch is each of its
requests'; ``after`` runs after batches and while idle; close handles what is queued."""

from __future__ import annotations

import asyncio
import threading

import pytest

from swiftnb.store.batches import MAX_BATCH, BatchWorker

pytestmark = pytest.mark.timeout(60)


def test_many_requests_are_few_batches_answered_in_order():
    batches: list[list[int]] = []
    threads: set[str] = set()
    gate = threading.Event()

    def handle(items):
        gate.wait(10)  # the first batch holds the worker while the rest queue up
        threads.add(threading.current_thread().name)
        batches.append(list(items))
        return [i * 10 for i in items]

    worker: BatchWorker[int, int] = BatchWorker(handle, name="test-batches")

    async def main():
        first = asyncio.ensure_future(worker.submit(0))
        await asyncio.sleep(0.05)
        rest = [asyncio.ensure_future(worker.submit(i)) for i in range(1, 1201)]
        await asyncio.sleep(0.05)
        gate.set()
        return [await first, *await asyncio.gather(*rest)]

    try:
        results = asyncio.run(main())
    finally:
        worker.close()
    assert results == [i * 10 for i in range(1201)]
    assert [i for batch in batches for i in batch] == list(range(1201))
    assert batches[0] == [0] and max(len(b) for b in batches) == MAX_BATCH
    assert len(batches) == 1 + 3  # 1,200 queued: 500 + 500 + 200
    assert threads == {"test-batches"}


def test_an_error_of_a_batch_is_each_request_s_and_the_worker_goes_on():
    calls = []

    def handle(items):
        calls.append(list(items))
        if len(calls) == 1:
            raise OSError("disk gone")
        return ["ok"] * len(items)

    worker: BatchWorker[int, str] = BatchWorker(handle)

    async def main():
        with pytest.raises(OSError, match="disk gone"):
            await worker.submit(1)
        return await worker.submit(2)

    try:
        assert asyncio.run(main()) == "ok"
    finally:
        worker.close()


def test_after_runs_after_a_batch_and_while_idle_and_close_drains():
    ticks = threading.Semaphore(0)
    handled: list[int] = []
    worker: BatchWorker[int, None] = BatchWorker(
        lambda items: [handled.append(i) for i in items], after=ticks.release, tick=0.01)

    async def main():
        await worker.submit(7)

    asyncio.run(main())
    for _ in range(5):  # one after the batch, then more with nothing asked
        assert ticks.acquire(timeout=5)
    worker.close()
    assert handled == [7]
    with pytest.raises(RuntimeError):
        asyncio.run(main())


def test_posted_items_wait_for_the_next_batch_or_close_and_nobody_waits():
    batches: list[list[str]] = []

    def handle(items):
        batches.append(list(items))
        return list(items)

    worker: BatchWorker[str, str] = BatchWorker(handle, tick=60)

    async def main():
        worker.post("a")
        worker.post("b")
        return await worker.submit("c")

    assert asyncio.run(main()) == "c"
    assert [i for b in batches for i in b] == ["a", "b", "c"]
    worker.post("d")  # no tick for a minute: close handles it
    worker.close()
    assert batches[-1] == ["d"]
