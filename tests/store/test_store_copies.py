"""What makes memoization cheap in the store: lookups of many keys in one query (the
latest successful call of each, buffered calls included), copies of outputs made in
batches with one transaction, an output changed since its call not copied, and the
digest table read once; why calls run found for a batch in two queries."""

from __future__ import annotations

import os

import pytest

from swiftnb.store import FileRecord, RunStore
from swiftnb.store.copies import COPY_BATCH, OutputCopies
from swiftnb.store.db import LOOKUP_CHUNK
from swiftnb.store.digests import file_digest
from tests.store.helpers import call, digest

pytestmark = pytest.mark.timeout(60)


def test_lookup_many_gives_the_latest_successful_call_of_each_key(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        for i in range(LOOKUP_CHUNK + 10):  # more keys than one query takes
            store.record_call(call("r1", f"old-{i}", f"sha256:k{i}"))
        store.record_call(call("r2", "new-3", "sha256:k3"))
        store.record_call(call("r2", "failed-4", "sha256:k4", decision="failed"))
        store.record_call(call("r2", "failed-only", "sha256:kf", decision="failed"))
        store.flush()
        store.record_call(call("r3", "buffered-5", "sha256:k5"))  # not yet written
        keys = [f"sha256:k{i}" for i in range(LOOKUP_CHUNK + 10)] + ["sha256:kf", "sha256:no"]
        found = store.lookup_many(keys)
    assert set(found) == set(keys) - {"sha256:kf", "sha256:no"}
    assert found["sha256:k3"].jobid == "new-3"
    assert found["sha256:k4"].jobid == "old-4"
    assert found["sha256:k5"].jobid == "buffered-5"
    assert found[f"sha256:k{LOOKUP_CHUNK + 9}"].jobid == f"old-{LOOKUP_CHUNK + 9}"


def test_copies_wait_for_a_batch_and_skip_an_output_changed_since(tmp_path):
    outs = []
    for i in range(COPY_BATCH + 1):
        path = tmp_path / f"out{i}.txt"
        path.write_text(f"output {i}\n")
        outs.append((str(path), file_digest(str(path))))
    with RunStore.open(tmp_path / "st") as store:
        copies = OutputCopies(store.objects)
        for path, dig in outs[:3]:
            copies.add(path, dig, os.stat(path))
        copies.keep()
        assert store.objects.used() == 0  # not due yet: fewer than a batch, and young
        with open(outs[1][0], "a") as fh:
            fh.write("changed after the call\n")
        for path, dig in outs[3:]:
            copies.add(path, dig, os.stat(path))
        copies.keep()  # a batch is due
        kept = [dig in store.objects for _, dig in outs]
        assert kept == [True, False] + [True] * (COPY_BATCH - 1)
        os.unlink(outs[0][0])
        assert store.objects.restore(outs[0][1], outs[0][0])
        assert open(outs[0][0]).read() == "output 0\n"


def test_keep_many_is_one_transaction_and_counts_the_bytes(tmp_path):
    paths = []
    for i in range(20):
        path = tmp_path / f"o{i}"
        path.write_bytes(bytes([i]) * 10)
        paths.append((str(path), file_digest(str(path))))
    with RunStore.open(tmp_path / "st", object_limit=150) as store:
        writes = []
        real = store.objects._db.write
        store.objects._db.write = lambda body: (writes.append(body), real(body))[1]
        assert store.objects.keep_many(paths[:10] + [paths[0]]) == [True] * 11
        assert len(writes) == 1
        assert store.objects.used() == 100
        store.objects.keep_many(paths[10:])  # 200 > 150: the least recently used go
        assert store.objects.used() <= 150


def test_the_digest_table_is_read_once_not_once_a_file(tmp_path):
    files = []
    for i in range(50):
        path = tmp_path / f"in{i}"
        path.write_text(str(i))
        files.append(str(path))
    with RunStore.open(tmp_path / "st") as store:
        first = [store.digests.digest(p) for p in files]
        store.flush()
    with RunStore.open(tmp_path / "st") as store:
        reads = []
        real = store.digests._db.read
        store.digests._db.read = lambda sql, params=(): (reads.append(sql), real(sql, params))[1]
        assert [store.digests.measure(p) for p in files] == [
            (d, os.path.getsize(p)) for d, p in zip(first, files)]
        assert store.digests.reads == 0 and len(reads) == 1


def test_why_a_call_runs_is_asked_for_a_batch_in_two_queries(tmp_path):
    out = [f"/o/{i}" for i in range(LOOKUP_CHUNK + 5)]  # more paths than one query takes
    with RunStore.open(tmp_path / "st") as store:
        for i, path in enumerate(out):
            store.record_call(call("r1", f"a{i}", f"sha256:a{i}", key_parts={"app": "1"},
                                   outputs=[FileRecord(path, digest("1"), 1)]))
        store.record_call(call("r2", "b0", "sha256:b0", key_parts={"app": "2"},
                               outputs=[FileRecord(out[0], digest("2"), 1)]))
        store.record_call(call("r2", "f1", "sha256:a1", decision="failed",
                               outputs=[FileRecord(out[1], digest("3"), 1)]))
        reads = []
        real = store._db.read
        store._db.read = lambda sql, params=(): (reads.append(sql), real(sql, params))[1]
        decisions = store.last_decisions(["sha256:a1", "sha256:a2", "sha256:none"])
        producers = store.latest_producers([*out, "/o/never"])  # buffered calls flushed
    assert decisions == {"sha256:a1": "failed", "sha256:a2": "ran"}
    assert producers[out[0]][1] == {"app": "2"}  # the latest that made it
    assert producers[out[1]][1] == {"app": "1"}  # a failed call made nothing
    assert producers[out[0]][0] > producers[out[1]][0]
    assert set(producers) == set(out) and len(reads) == 1 + 2
