"""Run store speed: what memoization costs per call.

(a) ``record_call`` of N calls (two inputs, one output each) into a fresh store,
batched by the store (256 calls or 1 s a transaction), in calls/s; and against a
baseline measured in the same run: the first 5,000 of those calls into another fresh
store with a flush after each call (one transaction a call, what batching avoids),
compared with the same 5,000 batched.

(b) the memoized re-run of an unchanged N-call workflow: per call, the digest of its
input file (a cache hit: the file is not read) and ``lookup`` of its key, in a store
opened afresh (so the digests come from the database, as in a new process) and again
warm (from memory), and with ``lookup_many`` of 500 keys a query (what a memoized run
does), in microseconds per call, against a baseline: ``os.stat`` of the
file and a dict lookup (the floor of any stat-based check).  Target: the whole re-run
of 100,000 calls under 10 s, so well under 50 us a call.

Run: ``.venv/bin/python benchmarks/store.py [--calls 100000]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from swiftnb.store import CallRecord, FileRecord, RunRecord, RunStore  # noqa: E402
from swiftnb.store.db import LOOKUP_CHUNK  # noqa: E402

BASELINE_CALLS = 5_000


def calls(n: int, inputs: list[str], digests: list[str]) -> list[CallRecord]:
    return [CallRecord(run_id="run001", jobid=f"cat-{i}", key=f"sha256:{i:064x}", app="cat",
                       command=["cat", inputs[i]], site="local", started=1e9 + i,
                       ended=1e9 + i + 0.5, exit_code=0, decision="ran", reason="",
                       key_parts={"app": "sha256:a", "args": "sha256:b",
                                  f"input:{inputs[i]}": digests[i]},
                       inputs=[FileRecord(inputs[i], digests[i], 8),
                               FileRecord("/w/params.txt", "sha256:" + "0" * 64, 100)],
                       outputs=[FileRecord(f"/w/out/{i}.txt", "sha256:" + "1" * 64, 8)])
            for i in range(n)]


def record_into(directory: Path, records: list[CallRecord], flush_each: bool) -> float:
    """Seconds to record ``records`` into a fresh store (a flush after each, or batched)."""
    with RunStore.open(directory) as store:
        t = time.perf_counter()
        for call in records:
            store.record_call(call)
            if flush_each:
                store.flush()
        store.flush()
        return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100_000)
    n = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        t = time.perf_counter()
        inputs = []
        for i in range(n):
            path = data / f"in{i}.txt"
            path.write_bytes(f"{i:07d}\n".encode())
            inputs.append(str(path))
        print(f"store benchmark: {n} calls ({n} input files made in "
              f"{time.perf_counter() - t:.1f} s)")

        # the first run: every input read once, every call recorded
        with RunStore.open(Path(tmp) / "st") as store:
            t = time.perf_counter()
            digests = [store.digests.digest(p) for p in inputs]
            first_digest = time.perf_counter() - t
            store.flush()
            records = calls(n, inputs, digests)
            store.begin_run(RunRecord("run001", "bench.swift", started=time.time()))
            t = time.perf_counter()
            for record in records:
                store.record_call(record)
            store.flush()
            record_s = time.perf_counter() - t
            store.end_run("run001", "success", time.time(), {"ran": n})
        few = records[:BASELINE_CALLS]
        base_s = record_into(Path(tmp) / "base", few, flush_each=True)
        batched_s = record_into(Path(tmp) / "batched", few, flush_each=False)
        print(f"(a) record_call: {n / record_s:,.0f} calls/s ({record_s:.2f} s for {n}); "
              f"first {len(few)}: batched {len(few) / batched_s:,.0f} calls/s, one "
              f"transaction a call {len(few) / base_s:,.0f} calls/s: "
              f"ratio {base_s / batched_s:.1f}x")
        print(f"    first digests (files read): {first_digest / n * 1e6:.1f} us a file")

        # the re-run: digest hits and lookups
        size = os.path.getsize(Path(tmp) / "st" / "store.sqlite")
        with RunStore.open(Path(tmp) / "st") as store:
            keys = [r.key for r in records]
            for label in ("cold (new process)", "warm (in memory)"):
                t = time.perf_counter()
                for path, key in zip(inputs, keys):
                    store.digests.digest(path)
                    if store.lookup(key) is None:
                        raise SystemExit(f"lookup missed {key}")
                elapsed = time.perf_counter() - t
                print(f"(b) lookup + digest hit, {label}: {elapsed / n * 1e6:.1f} us a call, "
                      f"{elapsed:.2f} s for {n} calls; files read again: {store.digests.reads}")
            t = time.perf_counter()
            for start in range(0, n, LOOKUP_CHUNK):
                for path in inputs[start:start + LOOKUP_CHUNK]:
                    store.digests.digest(path)
                chunk = keys[start:start + LOOKUP_CHUNK]
                if len(store.lookup_many(chunk)) != len(chunk):
                    raise SystemExit("lookup_many missed keys")
            elapsed = time.perf_counter() - t
            print(f"(b) lookup_many of {LOOKUP_CHUNK} keys + digest hits (what a memoized "
                  f"run asks): {elapsed / n * 1e6:.1f} us a call, {elapsed:.2f} s for {n} calls")
        floor: dict[str, str] = dict(zip(inputs, digests))
        t = time.perf_counter()
        for path in inputs:
            os.stat(path)
            floor.get(path)
        base = time.perf_counter() - t
        print(f"    baseline os.stat + dict: {base / n * 1e6:.1f} us a call; "
              f"store size {size / 1e6:.1f} MB ({size / n:.0f} B a call)")


if __name__ == "__main__":
    main()
