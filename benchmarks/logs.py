"""Log reader and writer speed.

Reader: the four real Swift 0.96 logs of tests/data/aimes concatenated to ~100 MB in a
temporary directory, read with ``read_log`` in a child process (so its peak memory is
its own): MB/s (wall and CPU time: the machine may be shared) and peak RSS.  Target:
>= 20 MB/s.  Measured in the same run: the reader with only its general (regular
expression) front end, and a baseline per-line Python parser (one regex match per line,
a dict per record, no table) over the first 20 MB.

Writer: the events of a 10k-task coaster run through ``LogWriter`` (events/s), against
a baseline that only formats a fixed f-string per event and writes it.

Run: ``.venv/bin/python benchmarks/logs.py [--mb 100]``.
"""

from __future__ import annotations

import argparse
import bz2
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "aimes"

CHILD = r"""
import resource, sys, time
import swiftnb.logs.reader as reader
from swiftnb.logs.reader import read_log
reader.USE_FAST_FRONT = sys.argv[2] == "fast"
import pandas, numpy  # imported before measuring the baseline RSS
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
c = time.process_time()
frame = read_log(sys.argv[1])
elapsed = time.perf_counter() - t
cpu = time.process_time() - c
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(elapsed, cpu, len(frame), base, peak)
"""


def build_log(directory: str, target_mb: float) -> Path:
    texts = [bz2.decompress((DATA / d / "swift.log.bz2").read_bytes())
             for d in sorted(os.listdir(DATA)) if (DATA / d / "swift.log.bz2").exists()]
    one = b"".join(texts)
    path = Path(directory) / "big.log"
    with open(path, "wb") as fh:
        written = 0
        while written < target_mb * 1e6:
            fh.write(one)
            written += len(one)
    return path


def naive_parse(path: Path, limit: int) -> tuple[float, int]:
    """The baseline: one regex per line in a Python loop."""
    pattern = re.compile(r"^(\S+ \S+),(\d{3})(\S*) (\w+) +(\S+) ?(.*)$")
    t = time.perf_counter()
    records = []
    done = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            done += len(line)
            m = pattern.match(line)
            if m:
                records.append(dict(zip(("date", "ms", "tz", "level", "logger", "msg"),
                                        m.groups())))
                fields = dict(kv.split("=", 1) for kv in m.group(6).split() if "=" in kv)
                records[-1].update(fields)
            elif records:
                records[-1]["msg"] += "\n" + line
            if done >= limit:
                break
    return time.perf_counter() - t, done


def bench_writer(n_tasks: int) -> tuple[float, float, int]:
    sys.path.insert(0, str(ROOT / "tests" / "logs"))
    from synthetic import record

    from swiftnb.logs.writer import LogWriter

    events = []
    while len(events) < n_tasks * 12:
        events.extend(record(njobs=200, fail_first=False))
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        writer = LogWriter(os.path.join(tmp, "swift.log"))
        for event in events:
            writer.write(event)
        writer.close()
        ours = time.perf_counter() - t
        t = time.perf_counter()
        with open(os.path.join(tmp, "plain.log"), "w", buffering=1 << 20) as fh:
            for event in events:
                fh.write(f"{event.time} {event.kind} {event.fields}\n")
        base = time.perf_counter() - t
    return ours, base, len(events)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = build_log(tmp, args.mb)
        size = path.stat().st_size
        out = subprocess.run([sys.executable, "-c", CHILD, str(path), "fast"],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        elapsed, cpu, rows, base_kb, peak_kb = out.stdout.split()
        general = subprocess.run([sys.executable, "-c", CHILD, str(path), "regex"],
                                 capture_output=True, text=True, check=True, cwd=ROOT)
        g_elapsed, g_cpu = (float(x) for x in general.stdout.split()[:2])
        elapsed, cpu = float(elapsed), float(cpu)
        mbps = size / 1e6 / elapsed
        cpu_mbps = size / 1e6 / cpu
        c = time.process_time()
        naive_s, naive_bytes = naive_parse(path, 20_000_000)
        naive_cpu = time.process_time() - c
        naive_mbps = naive_bytes / 1e6 / naive_s
        naive_cpu_mbps = naive_bytes / 1e6 / naive_cpu
    print(f"read_log: {size / 1e6:.1f} MB, {int(rows)} records in {elapsed:.2f} s "
          f"= {mbps:.1f} MB/s wall, {cpu_mbps:.1f} MB/s of CPU time (target >= 20)")
    if elapsed > 1.5 * cpu:
        print(f"  (the machine is busy: wall {elapsed:.1f} s for {cpu:.1f} s of CPU; "
              f"load average {os.getloadavg()[0]:.1f})")
    print(f"  peak memory of the read: {(int(peak_kb) - int(base_kb)) / 1024:.0f} MB above "
          f"{int(base_kb) / 1024:.0f} MB after imports "
          f"({(int(peak_kb) - int(base_kb)) / 1024 / (size / 1e6):.1f}x the file)")
    print(f"  the general (regular expression) front end alone: {size / 1e6 / g_elapsed:.1f} "
          f"MB/s wall, {size / 1e6 / g_cpu:.1f} MB/s CPU; array front end "
          f"{g_cpu / cpu:.2f}x faster (CPU)")
    print(f"  baseline per-line Python parser: {naive_mbps:.1f} MB/s wall, "
          f"{naive_cpu_mbps:.1f} MB/s CPU; ratio {cpu_mbps / naive_cpu_mbps:.2f}x (CPU)")
    ours, base, n = bench_writer(10_000)
    print(f"LogWriter: {n} events in {ours:.2f} s = {n / ours / 1e3:.0f}k events/s; "
          f"baseline f-string write {n / base / 1e3:.0f}k events/s; ratio {base / ours:.2f}")
    print(f"  (this process peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")
    return 0 if max(mbps, cpu_mbps) >= 20 else 1


if __name__ == "__main__":
    sys.exit(main())
