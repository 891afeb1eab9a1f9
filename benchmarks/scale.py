"""Benchmark (issue 30): what a call costs at scale, each figure beside its goal.

Measures only (other work reduces these figures); whole ``swiftnb`` processes, each one's
peak RSS from ``wait4`` (its own and its waited-for children's largest), on tmpfs
(/dev/shm) and on the disk (``$TMPDIR`` or /var/tmp), since users' files live on disks:

* ``calls``: N ``echo`` calls (default 100,000) on the default local site, or on the
  sites of ``--config FILE`` (``--coaster``: a local coaster block of 2 workers,
  ``jobManager: "local:local"``; docs/coasters.md): wall time, peak RSS and RSS per
  call, the run directory's bytes per call besides the log (allocated blocks: what the
  disk gives it, and apparent bytes), the log's bytes per call, anything left in the
  work directory, the run's ``-info`` records (one a call with alwaysTransferWrapperLog,
  coaster sites too) and the console ticker's lines with the longest gap between two
  (live: at most its 30 s ``force_every``).  Goals (issue 30, for 1,000,000 calls on a coaster block): RSS at most
  0.5 KB per call, run directory at most 300 bytes per call besides the log, log at most
  600 bytes per call.
* ``arrays``: M array elements (default 2,000,000: two arrays of M/2) computed with no
  apps: wall and peak RSS.  Goals: 2 s, 200 MB.
* ``timings``: ``swiftnb timings`` of the calls' log: MB/s and peak RSS against the
  file's size.  Goals: at least 100 MB/s, memory at most 2x the file.
* ``bag``: the 2,000-call bag, whole processes, swiftnb's default local site against
  Parsl's ThreadPoolExecutor (benchmarks/peers.py's commands and checks, interleaved
  rounds; the ratio is the median of the ratios within a round).  Goal: at least 2x.
  Parsl comes from ``--parsl-python`` (a Python with parsl installed; default this one);
  without it the row says so.

Run: ``.venv/bin/python benchmarks/scale.py [--calls N] [--arrays M] [--coaster |
--config FILE] [--where tmpfs,disk] [--parts calls,arrays,timings,bag] [--rounds R]
[--parsl-python PY]``.  A million calls on a coaster block:
``benchmarks/scale.py --calls 1000000 --coaster --where disk --parts calls,timings``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import peers  # noqa: E402  (the bag's commands, checks and round runner)
from workloads import COASTER_CONF  # noqa: E402  (benchmarks/workloads.py)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

CALLS_SWIFT = """type file;
app (file o) echo (int i) {{ echo i stdout=@o; }}
file f[] <simple_mapper; location="out", prefix="f", suffix=".txt">;
foreach i in [1:{n}] {{ f[i] = echo(i); }}
"""

ARRAYS_SWIFT = """int a[]; int b[];
foreach i in [1:{n}] {{ a[i] = i * 3 + 1; b[i] = a[i] %% 7; }}
trace(length(b));
"""


PLACES = {"tmpfs": "/dev/shm", "disk": os.environ.get("TMPDIR") or "/var/tmp"}


@dataclass(frozen=True)
class Process:
    """A whole process's wall seconds and peak RSS (bytes)."""

    wall: float
    peak_rss: int
    output: str


def measured(argv: list[str], cwd: Path, stdout: int | None = None) -> Process:
    """Run ``argv`` to its end; its wall time and peak RSS (wait4's, in KiB on Linux)."""
    log = cwd / "scale-output.txt"
    with open(log, "w") as out:
        began = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL,
                                stdout=stdout if stdout is not None else out,
                                stderr=subprocess.STDOUT if stdout is None else out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - began
        proc.returncode = os.waitstatus_to_exitcode(status)
    text = log.read_text(errors="replace")
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}):\n{text[-3000:]}")
    return Process(wall, usage.ru_maxrss * 1024, text)


def tree_bytes(root: Path, skip: set[Path]) -> tuple[int, int, int]:
    """(allocated bytes, apparent bytes, files) under ``root``, ``skip`` left out."""
    allocated = apparent = files = 0
    for folder, dirs, names in os.walk(root):
        for name in names + dirs:
            path = Path(folder, name)
            if path in skip:
                continue
            st = path.lstat()
            allocated += st.st_blocks * 512
            apparent += st.st_size
            files += 1
    return allocated, apparent, files


@dataclass
class Row:
    """One printed line: what, the figure, the goal and whether it is met."""

    what: str
    figure: str
    goal: str = ""
    met: bool | None = None

    def show(self) -> str:
        mark = "" if self.met is None else ("  ok" if self.met else "  MISSED")
        return f"  {self.what:<44s} {self.figure:>22s}   {self.goal}{mark}"


def calls(base: Path, n: int, conf: str | None) -> tuple[list[Row], Path]:
    work = base / "calls"
    work.mkdir()
    (work / "wf.swift").write_text(CALLS_SWIFT.format(n=n))
    # the compact log: a million-call run is what it is for (docs/logs.md)
    argv = [*SWIFTNB, "run", "-compactLogging", "-runid", "run001"]
    if conf is not None:
        (work / "sites.conf").write_text(conf)
        argv += ["-config", "sites.conf"]
    done = measured([*argv, "wf.swift"], work)
    made = len(os.listdir(work / "out"))
    if made != n:
        sys.exit(f"calls: {made} outputs, not {n}")
    run_dir = work / "run001"
    log = run_dir / "wf-run001.log"
    allocated, apparent, files = tree_bytes(run_dir, {log})
    left = tree_bytes(work / "swiftwork", set()) if (work / "swiftwork").exists() else (0, 0, 0)
    rss_kb = done.peak_rss / n / 1024
    rows = [
        Row(f"{n:,} echo calls: wall", f"{done.wall:.1f} s ({n / done.wall:,.0f}/s)"),
        Row("peak RSS", f"{done.peak_rss / 1e6:.0f} MB"),
        Row("peak RSS per call", f"{rss_kb:.2f} KB", "<= 0.5 KB", rss_kb <= 0.5),
        Row("run directory per call besides the log", f"{allocated / n:.0f} B allocated",
            "<= 300 B", allocated / n <= 300),
        Row("  (apparent bytes; files)", f"{apparent / n:.0f} B; {files:,}"),
        Row("log per call", f"{log.stat().st_size / n:.0f} B", "<= 600 B",
            log.stat().st_size / n <= 600),
        Row("left in the work directory", f"{left[2]} files, {left[0]:,} B"),
        Row("-info records (jobs-info)", f"{info_records(run_dir / 'wf-run001.d'):,}"),
        ticker_row(done.output),
    ]
    return rows, log


def info_records(info_dir: Path) -> int:
    """The run's ``-info`` records (alwaysTransferWrapperLog: one per call), as the
    dashboard reads them."""
    from swiftnb.execution.joblog import RECORDS_FILE, records

    path = info_dir / RECORDS_FILE
    return sum(1 for _ in records(str(path))) if path.exists() else 0


def ticker_row(output: str) -> Row:
    """The console ticker's lines and the longest time between two of them: a ticker
    that stayed live prints at least every ``force_every`` (30 s)."""
    stamps = []
    for line in output.splitlines():
        if line.startswith(("Progress: ", "Final status: ")):
            text = line.split(": ", 1)[1].split("  ", 1)[0]
            with contextlib.suppress(ValueError):
                stamps.append(datetime.strptime(text, "%a, %d %b %Y %H:%M:%S%z").timestamp())
    gap = max((b - a for a, b in zip(stamps, stamps[1:])), default=0.0)
    return Row("ticker lines; longest gap between two", f"{len(stamps):,}; {gap:.0f} s",
               "<= 30 s", gap <= 30 if stamps else None)


def arrays(base: Path, m: int) -> list[Row]:
    work = base / "arrays"
    work.mkdir()
    (work / "arrays.swift").write_text(ARRAYS_SWIFT.format(n=m // 2))
    done = measured([*SWIFTNB, "run", "arrays.swift"], work)
    if f"SwiftScript trace: {m // 2}" not in done.output:
        sys.exit(f"arrays: unexpected output\n{done.output[-2000:]}")
    return [Row(f"{m:,} array elements, no apps: wall", f"{done.wall:.2f} s", "<= 2 s",
                done.wall <= 2.0),
            Row("peak RSS", f"{done.peak_rss / 1e6:.0f} MB", "<= 200 MB",
                done.peak_rss <= 200e6)]


def timings(base: Path, log: Path) -> list[Row]:
    size = log.stat().st_size
    done = measured([*SWIFTNB, "timings", str(log), "--format", "csv"], base,
                    stdout=subprocess.DEVNULL)
    rate = size / 1e6 / done.wall
    return [Row(f"swiftnb timings of the {size / 1e6:.0f} MB log", f"{rate:.1f} MB/s "
                f"({done.wall:.1f} s)", ">= 100 MB/s", rate >= 100),
            Row("its peak RSS / the file's size", f"{done.peak_rss / size:.2f}x "
                f"({done.peak_rss / 1e6:.0f} MB)", "<= 2x", done.peak_rss <= 2 * size)]


def bag(base: Path, rounds: int, tasks: int, parsl_python: str) -> list[Row]:
    version, why = peers.parsl_version(parsl_python)
    if not version:
        return [Row(f"{tasks:,}-call bag vs Parsl TPE", "not measured", why)]
    tools = peers.Tools(peers.find_swiftnb(None), parsl_python)
    local = peers.Contender(peers.Workload.BAG, "swiftnb local",
                            partial(peers.swiftnb_run, tools, peers.BAG_SWIFT, None))
    tpe = peers.Contender(peers.Workload.BAG, "Parsl TPE",
                          partial(peers.parsl_run, tools, "tpe", peers.Workload.BAG),
                          parsl=True)
    tallies = [peers.Tally(local), peers.Tally(tpe)]
    root = base / "bag"
    root.mkdir()
    peers.run_rounds(tallies, rounds, tasks, 0, str(root), keep=False)
    ratios = peers.round_ratios(tallies[0], tallies[1])
    cpu = peers.round_ratios(tallies[0], tallies[1], cpu=True)
    if not ratios:
        return [Row(f"{tasks:,}-call bag vs Parsl TPE", "failed",
                    "; ".join(tallies[0].failures + tallies[1].failures))]
    ratio = statistics.median(ratios)
    return [Row(f"{tasks:,}-call bag: Parsl TPE wall / swiftnb's", f"{ratio:.2f}x",
                ">= 2x", ratio >= 2.0),
            Row("  (CPU time ratio)", f"{statistics.median(cpu):.2f}x")]


def main() -> int:
    p = argparse.ArgumentParser(description="issue 30's table: a call's costs at scale")
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--arrays", type=int, default=2_000_000, help="array elements")
    p.add_argument("--config", help="a swift.conf naming the sites of the calls' run")
    p.add_argument("--coaster", action="store_true",
                   help="the calls on a local coaster block (local:local, 2 workers)")
    p.add_argument("--where", default="tmpfs,disk")
    p.add_argument("--parts", default="calls,arrays,timings,bag")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the bag")
    p.add_argument("--tasks", type=int, default=2000, help="calls of the bag")
    p.add_argument("--parsl-python", default=sys.executable)
    args = p.parse_args()
    conf = (Path(args.config).read_text() if args.config else
            COASTER_CONF if args.coaster else None)
    parts = set(args.parts.split(","))
    peers.become_subreaper()  # what a tool leaves behind is ended between runs
    for place in args.where.split(","):
        where = PLACES[place]
        base = Path(tempfile.mkdtemp(prefix="swiftnb-scale-", dir=where))
        print(f"{place}: {base} ({peers.filesystem_type(str(base))}); "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
        try:
            log = None
            if "calls" in parts or "timings" in parts:
                rows, log = calls(base, args.calls, conf)
                if "calls" in parts:
                    print("\n".join(r.show() for r in rows), flush=True)
            if "arrays" in parts:
                print("\n".join(r.show() for r in arrays(base, args.arrays)), flush=True)
            if "timings" in parts and log is not None:
                print("\n".join(r.show() for r in timings(base, log)), flush=True)
            if "bag" in parts:
                print("\n".join(r.show() for r in bag(base, args.rounds, args.tasks,
                                                      args.parsl_python)), flush=True)
        finally:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
