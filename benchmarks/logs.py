"""Log reader and writer speed.

Reader: the four real Swift 0.96 logs of tests/data/aimes concatenated to ~100 MB in a
temporary directory, read with ``read_log`` in a child process (so its peak memory is
its own): MB/s (wall and CPU time: the machine may be shared) and peak RSS.  Target:
>= 20 MB/s.  Measured in the same run: the reader with only its general (regular
expression) front end, and a baseline per-line Python parser (one regex match per line,
a dict per record, no table) over the first 20 MB.

Writer: the events of a 10k-task coaster run through ``LogWriter`` (events/s), against
a baseline that only formats a fixed f-string per event and writes it.

Issue 30 (``--calls N``, default 100,000): the log of ``foreach i in [1:N] { f[i] =
echo(i); }`` on the local site, written through ``LogWriter`` from the events the engine
and the local provider emit (in the order a real run emits them: calls announced in waves
of maxForeachThreads, then run two at a time), once as the full Swift/K log and once as
the compact log (``-compactLogging``).  Printed: bytes per call (goal <= 600) against the
full log; ``swiftnb timings`` of each log (``LogFrame.scan``) in a child process (CPU MB/s, goal >= 100,
and peak memory, goal <= 2x the file) with this tree and, if ``--base DIR`` names a
worktree of the code before (``git worktree add /tmp/base HEAD``), with that code on
its own full log in the same run; ``swiftnb plot-log`` of the compact log; and what
the raw extraction of the timing lines costs by a tuned pure-Python path (one regular
expression over the bytes, fixed-width heads, selected tags) and, if importable, by
polars and by pyarrow.compute (lines as a binary array, ``extract_regex``,
``dictionary_encode``), against ``read_log``.  ``--keep DIR`` keeps the two logs (and
reads them again next time: delete them after a change of the writer).

Run: ``.venv/bin/python benchmarks/logs.py [--mb 100] [--calls 100000] [--base DIR]
[--keep DIR] [--polars DIR] [--pyarrow DIR] [--only-echo]``.
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


def echo_run_events(n: int, t0: float = 1795935291.0, per_second: float = 800.0,
                    wave: int = 16384):
    """The events of a run of ``n`` echo calls on the local site (see the docstring)."""
    from swiftnb.events import Event

    yield Event(t0, "RUN_START", {}, "INFO", "Loader")
    t, dt = t0 + 0.3, 1.0 / per_second
    started = announced = 0
    while started < n:
        while announced < n and announced - started < wave:
            announced += 1
            jobid = f"echo-{announced:08x}"
            yield Event(t, "JOB_INIT", {"jobid": jobid, "tr": "echo"})
            yield Event(t, "PROCEDURE", {"line": 2, "thread": f"R-{announced}", "name": "echo"})
            yield Event(t, "JOB_SITE_SELECT", {"jobid": jobid})
            t += dt / 20
        started += 1
        jobid, thread = f"echo-{started:08x}", f"R-{started}"
        taskid, jdir = f"urn:{thread}-1795935291696", f"echo-run001/jobs/e/{jobid}"
        yield Event(t, "THREAD_ASSOCIATION", {"jobid": jobid, "thread": thread, "host": "local",
                                              "replicationGroup": None})
        yield Event(t, "JOB_START", {"jobid": jobid, "tr": "echo", "arguments": [str(started)],
                                     "tmpdir": jdir, "host": "local"})
        yield Event(t, "JOB_TASK", {"jobid": jobid, "taskid": taskid, "exec": "echo",
                                    "dir": jdir, "args": str(started)})
        for status in (8, 1, 2):  # the local site reports these within a millisecond or so
            yield Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": status})
            t += dt / 10
        t += dt * 0.7
        yield Event(t, "TASK_STATUS_CHANGE", {"taskid": taskid, "status": 7})
        yield Event(t, "JOB_END", {"jobid": jobid})
        yield Event(t, "PROCEDURE_END", {"line": 2, "thread": thread, "name": "echo"})
        yield Event(t, "END_SUCCESS", {"thread": thread, "tr": "echo"})
    yield Event(t, "RUN_SUCCESS", {}, "INFO", "Loader")


WRITE_ECHO = r"""
import sys
sys.path.insert(0, sys.argv[4])
from logs import echo_run_events
from swiftnb.logs.writer import LogWriter
options = {"compact": True} if sys.argv[3] == "compact" else {}
with LogWriter(sys.argv[2], flush_interval=-1, **options) as writer:
    writer.write_header(run_id="run001", arguments=["echo.swift"], cwd="/tmp", time=1795935290.0)
    for event in echo_run_events(int(sys.argv[1])):
        writer.write(event)
"""

TIMINGS_CHILD = r"""
import io, resource, sys, time
import numpy, pandas  # imported before the baseline RSS
from swiftnb.logs.cli import timings_main
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
c = time.process_time()
code = timings_main(sys.argv[1:], out=io.StringIO(), err=sys.stderr)
cpu = time.process_time() - c
print(cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base, code)
"""

PLOT_CHILD = TIMINGS_CHILD.replace("timings_main", "plot_log_main")

RAW_SCAN = re.compile(
    rb"\n(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})[^ \n]* (?:DEBUG swift|INFO  swift|INFO  Execute) "
    rb"(JOB_INIT|JOB_TASK|JOB_END|TASK_STATUS_CHANGE|THREAD_ASSOCIATION|JOB_START|END_SUCCESS"
    rb"|END_FAILURE) (?:jobid|taskid|thread)=(\S+)(?: status=(\d+))?")


def raw_scan_python(path: Path) -> tuple[float, int]:
    """The tuned pure-Python extraction: the bytes, one regex pass, stamps and keys
    interned by factorizing (CPU seconds, rows)."""
    import numpy as np
    import pandas as pd

    c = time.process_time()
    data = b"\n" + path.read_bytes()
    rows = RAW_SCAN.findall(data)
    del data
    table = np.empty((len(rows), 4), dtype=object)
    table[:] = rows
    stamps, stamp_codes = pd.factorize(table[:, 0])[1], None
    keys = pd.factorize(table[:, 2])[0]
    tags = pd.factorize(table[:, 1])[0]
    del stamps, stamp_codes, keys, tags
    return time.process_time() - c, len(rows)


POLARS_SCAN = r"""
import sys, time
import polars as pl
c = time.process_time()
df = pl.read_csv(sys.argv[1], has_header=False, separator="", quote_char=None,
                 new_columns=["l"], schema_overrides={"l": pl.String},
                 truncate_ragged_lines=True)
tags = ["JOB_INIT", "JOB_TASK", "JOB_END", "TASK_STATUS_CHANGE", "THREAD_ASSOCIATION",
        "JOB_START", "END_SUCCESS", "END_FAILURE"]
rec = df.lazy().with_columns(
    pl.col("l").str.extract(r"^\S+ \S+ \S+ +\S+ ([A-Z_]+) ", 1).alias("tag")
).filter(pl.col("tag").is_in(tags)).with_columns(
    pl.col("l").str.slice(0, 23).str.strptime(pl.Datetime("ms"), "%Y-%m-%d %H:%M:%S,%3f",
                                              strict=False).alias("t"),
    pl.col("l").str.extract(r" (?:jobid|taskid|thread)=(\S+)", 1).alias("key"),
    pl.col("l").str.extract(r" status=(\d+)", 1).alias("status"),
).select("t", "tag", "key", "status").collect()
print(time.process_time() - c, len(rec))
"""


PYARROW_SCAN = r"""
import sys, time
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
c = time.process_time()
data = open(sys.argv[1], "rb").read()
newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
offsets = np.concatenate(([0], newlines + 1)).astype(np.int64)
lines = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(newlines),
                                         [None, pa.py_buffer(offsets), pa.py_buffer(data)])
rec = pc.extract_regex(lines,
    r"^(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\S*) (?:DEBUG swift|INFO  swift"
    r"|INFO  Execute) (?P<tag>JOB_INIT|JOB_TASK|JOB_END|TASK_STATUS_CHANGE|THREAD_ASSOCIATION"
    r"|JOB_START|END_SUCCESS|END_FAILURE) (?:jobid|taskid|thread)=(?P<key>\S+)")
rec = rec.filter(rec.is_valid())
keys = pc.dictionary_encode(pc.struct_field(rec, "key"))
tags = pc.dictionary_encode(pc.struct_field(rec, "tag"))
print(time.process_time() - c, len(rec))
"""


def bench_echo_run(calls: int, base: str | None, polars_dir: str | None,
                   pyarrow_dir: str | None, keep: str | None) -> None:
    """Issue 30's figures: log size per call, timings and plot-log on a large run's log.
    ``keep``: a directory where the two logs are kept and, when there, read again (the
    writer's format changed since: delete them)."""
    here = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or scratch
        logs = {}
        for mode in ("full", "compact"):
            logs[mode] = Path(tmp) / f"echo-{calls}-{mode}.log"
            if logs[mode].exists():
                continue
            subprocess.run([sys.executable, "-c", WRITE_ECHO, str(calls), str(logs[mode]), mode,
                            here], check=True, cwd=ROOT, timeout=3600)
        size = {mode: path.stat().st_size for mode, path in logs.items()}
        print(f"echo run of {calls:,} calls: full Swift/K log {size['full'] / calls:.0f} B/call, "
              f"compact log {size['compact'] / calls:.0f} B/call (goal <= 600: "
              f"{size['compact'] / calls / 600:.2f}x the goal; {size['compact'] / size['full']:.2f}"
              f"x the full log)")
        runs = [("this tree, compact log", str(ROOT), logs["compact"]),
                ("this tree, full log", str(ROOT), logs["full"])]
        if base:
            runs += [("baseline code, compact log", base, logs["compact"]),
                     ("baseline code, full log", base, logs["full"])]
        cpu_of = {}
        for label, tree, path in runs:
            out = subprocess.run([sys.executable, "-c", TIMINGS_CHILD, str(path)], check=True,
                                 capture_output=True, text=True, cwd=tree, timeout=3600,
                                 env={**os.environ, "PYTHONPATH": tree})
            cpu, peak_kb, _ = out.stdout.split()
            mb = path.stat().st_size / 1e6
            cpu_of[label] = float(cpu)
            print(f"  swiftnb timings, {label}: {float(cpu):.2f} s CPU = {mb / float(cpu):.1f} MB/s "
                  f"(goal >= 100: {mb / float(cpu) / 100:.2f}x), peak memory "
                  f"{int(peak_kb) / 1024:.0f} MB = {int(peak_kb) * 1024 / 1e6 / mb:.1f}x the file "
                  f"(goal <= 2x)")
        if base:
            for mode in ("full", "compact"):
                ratio = cpu_of[f"this tree, {mode} log"] / cpu_of[f"baseline code, {mode} log"]
                print(f"  {mode} log: this tree / baseline code = {ratio:.2f}x the CPU")
        report = Path(tmp) / "r.html"
        out = subprocess.run([sys.executable, "-c", PLOT_CHILD, str(logs["compact"]), "-o",
                              str(report)], capture_output=True, text=True, cwd=ROOT,
                             timeout=3600)
        if out.returncode == 0:
            cpu, peak_kb, _ = out.stdout.split()
            print(f"  swiftnb plot-log, compact log: {float(cpu):.1f} s CPU, peak memory "
                  f"{int(peak_kb) / 1024:.0f} MB, report {report.stat().st_size / 1e6:.1f} MB")
        else:
            print(f"  swiftnb plot-log failed: {out.stderr[-300:]}")
        raw_cpu, rows = raw_scan_python(logs["compact"])
        mb = size["compact"] / 1e6
        print(f"  extraction of the timing lines only, compact log: tuned pure Python "
              f"{raw_cpu:.2f} s CPU = {mb / raw_cpu:.0f} MB/s ({rows:,} rows)")
        for label, script, where, missing in (
                ("polars", POLARS_SCAN, polars_dir,
                 "not installed (pip install polars to measure it)"),
                ("pyarrow.compute (lines as a binary array, extract_regex, dictionary_encode)",
                 PYARROW_SCAN, pyarrow_dir,
                 "not installed (pip install --target DIR pyarrow; --pyarrow DIR)")):
            measured = other_scan(script, where, logs["compact"])
            if measured is None:
                print(f"  {label.split()[0]}: {missing}")
                continue
            o_cpu, o_rows = measured
            print(f"  the same by {label}: {o_cpu:.2f} s CPU = {mb / o_cpu:.0f} MB/s "
                  f"({o_rows:,} rows); pure Python / {label.split()[0]} = {raw_cpu / o_cpu:.2f}")


def other_scan(script: str, where: str | None, log: Path) -> tuple[float, int] | None:
    """CPU seconds and rows of another library's extraction of the timing lines (its
    ``script`` run with ``where`` on the path); None when it is not installed."""
    env = dict(os.environ)
    if where:
        env["PYTHONPATH"] = where
    out = subprocess.run([sys.executable, "-c", script, str(log)],
                         capture_output=True, text=True, cwd=ROOT, timeout=3600, env=env)
    if out.returncode != 0:
        return None
    cpu, rows = out.stdout.split()
    return float(cpu), int(rows)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=100.0)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--base", help="a worktree of the code before, for the baseline")
    parser.add_argument("--polars", help="a directory polars is installed in (pip --target)")
    parser.add_argument("--pyarrow", help="a directory pyarrow is installed in (pip --target)")
    parser.add_argument("--keep", help="a directory to keep the echo run's logs in (and "
                                       "read them from when they are there)")
    parser.add_argument("--only-echo", action="store_true", help="only issue 30's figures")
    args = parser.parse_args()
    if args.calls:
        bench_echo_run(args.calls, args.base, args.polars, args.pyarrow, args.keep)
    if args.only_echo:
        return 0
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
