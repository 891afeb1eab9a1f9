"""A process recording calls into a store: ``python -m tests.store.writer DIR RUN N``.

After each flush it prints how many calls are committed, so a test can kill it at a
known point."""

from __future__ import annotations

import sys

from swiftnb.store import FileRecord, RunRecord, RunStore
from tests.store.helpers import call, digest


def main(directory: str, run_id: str, count: int, flush_every: int) -> None:
    with RunStore.open(directory) as store:
        store.begin_run(RunRecord(run_id, "w.swift", started=1.0))
        for i in range(count):
            store.record_call(call(run_id, f"j{i}", f"sha256:{run_id}-{i}",
                                   outputs=[FileRecord(f"/o/{run_id}/{i}", digest("1"), i)]))
            if flush_every and (i + 1) % flush_every == 0:
                store.flush()
                print(i + 1, flush=True)
        store.end_run(run_id, "success", 2.0, {"ran": count})
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
