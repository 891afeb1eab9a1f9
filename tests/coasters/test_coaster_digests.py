"""Task.digest_outputs through a coaster block: the worker's wrapper digests each
declared output where it ends up and the service returns them in
TaskResult.output_digests (tests/execution/test_output_digests.py: the other sites)."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

pytestmark = pytest.mark.timeout(120)

ONE_BLOCK = {"maxJobs": 1, "maxNodesPerJob": 1, "tasksPerNode": 2, "allocationStepSize": 1,
             "planInterval": 0.1}


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_a_coaster_worker_returns_the_digests_of_file_and_directory_outputs(make_site, tmp_path):
    site = make_site(ONE_BLOCK)

    async def main():
        task = site.task(1, tr="sh", args=["-c", "echo one > a.txt; mkdir d; printf x > d/f"],
                         outputs=["a.txt", "d"], digest_outputs=True)
        plain = site.task(2, tr="sh", args=["-c", "echo two > b.txt"], outputs=["b.txt"])
        results = await asyncio.gather(site.run(task), site.run(plain))
        await site.provider.shutdown()
        return results

    asked, plain = asyncio.run(main())
    assert asked.ok and plain.ok, (asked.message, plain.message)
    assert asked.output_digests == {"a.txt": _sha(b"one\n"),
                                    "d": _sha(f"f\t{_sha(b'x')}\n".encode())}
    assert plain.output_digests == {}
