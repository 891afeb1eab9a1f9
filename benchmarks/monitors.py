"""Benchmark (issue 29): what ``swiftnb run -tui`` costs the run it watches.

The 2,000-call local bag (``foreach i in [1:N] { f[i] = echo(i); }``, as
benchmarks/local.py runs it, ``maxParallelTasks`` = cores) through the ``swiftnb run``
command, in a real terminal (a pty of 80x24 whose output a thread reads as a terminal
would), once with the terminal monitor (``-tui``) and once without (the ticker), the two
alternating, ROUNDS rounds each.  Printed: each round's wall-clock seconds (from the
command's start to its exit) and CPU seconds (the command and the apps it ran, from
``wait4``: the figure that other work on the machine moves least), the medians with
their spread (lowest-highest), the ratios with/without (1.00: no cost), and the
round-to-round noise (the spread of the runs without the monitor, as a share of their
median) to read the ratio against.

``--baseline DIR`` adds a third arm: ``-tui`` run with ``PYTHONPATH=DIR`` (a git worktree
of an older commit: ``git worktree add /tmp/base HEAD``), to compare two monitors in one
run on a machine whose load moves.

Then the cost of one redraw to the run's event loop, measured in this process: the
events of one such run, read back from its log, are fed to a
:class:`~swiftnb.monitor.tui.TerminalMonitor` drawing to a pty whose other end a thread
reads; every 1 % of the events a redraw is forced and timed (what the loop waits for:
building the frame and handing it over).

Run: ``.venv/bin/python benchmarks/monitors.py [N [ROUNDS]] [--baseline DIR]`` (default
2000 calls, 5 rounds); ``--redraw LOG``: only the redraw cost, for the events of LOG.
"""

from __future__ import annotations

import asyncio
import fcntl
import glob
import os
import pty
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from typing import NamedTuple

HERE = os.path.dirname(os.path.abspath(__file__))
SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")

SCRIPT = """\
type file;
app (file o) echo (int i) {{
    echo i stdout=@filename(o);
}}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:{n}] {{
    f[i] = echo(i);
}}
"""

CONF = """\
site.local {{
  execution {{ type: local }}
  filesystem {{ type: local }}
  workDirectory: "swiftwork"
  maxParallelTasks: {cores}
  app.ALL {{ executable: "*" }}
}}
sites: [local]
"""


class Measured(NamedTuple):
    seconds: float      # wall clock
    cpu: float          # user + system seconds of the command and its children
    received: int       # bytes the terminal received


def run_in_terminal(argv: list[str], cwd: str, timeout: float = 900,
                    env: dict[str, str] | None = None) -> tuple[Measured, int]:
    """Run ``argv`` with a pty of 80x24 as its terminal; what it cost, and its exit code."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    received = [0]

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            received[0] += len(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "TERM": "xterm-256color", **(env or {})}
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdin=slave, stdout=slave, stderr=slave,
                            env=env, start_new_session=True)
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - t0
    killer.cancel()
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    os.close(slave)
    reader.join(timeout=10)
    os.close(master)
    return Measured(elapsed, usage.ru_utime + usage.ru_stime, received[0]), code


def one_run(n: int, cores: int, tui: bool, pythonpath: str | None = None,
            keep_log: str | None = None) -> Measured:
    """One run of the bag; ``keep_log``: copy its log there."""
    workdir = tempfile.mkdtemp(prefix="swiftnb-bench-monitor-")
    try:
        with open(os.path.join(workdir, "bag.swift"), "w") as fh:
            fh.write(SCRIPT.format(n=n))
        with open(os.path.join(workdir, "swift.conf"), "w") as fh:
            fh.write(CONF.format(cores=cores))
        argv = [SWIFTNB, "run", "-config", "swift.conf", *(["-tui"] if tui else []),
                "bag.swift"]
        measured, code = run_in_terminal(
            argv, workdir, env=None if pythonpath is None else {"PYTHONPATH": pythonpath})
        if code != 0:
            raise SystemExit(f"{' '.join(argv)}: exit code {code}")
        made = len(os.listdir(os.path.join(workdir, "out")))
        if made != n:
            raise SystemExit(f"{' '.join(argv)}: {made} of {n} outputs")
        if keep_log is not None:
            shutil.copy(glob.glob(os.path.join(workdir, "run*", "*.log"))[0], keep_log)
        return measured
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def redraw_cost(log: str) -> tuple[list[float], float, int]:
    """Seconds each forced redraw held the event loop, while a real run's events (read
    back from ``log``) pour into a monitor on a pty of 80x24; and the CPU seconds of the
    whole (folding every event, the redraws, the painter thread), and the events."""
    from swiftnb.events import EventBus
    from swiftnb.logs.reader import read_log, to_events
    from swiftnb.monitor.tui import TerminalMonitor

    events = [e for e in to_events(read_log(log)) if e.kind != "CONFIG"]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))

    # the terminal's side is another process, as in a run (a thread here would take
    # turns at the interpreter lock with the loop being measured)
    reader = subprocess.Popen(["cat"], stdin=master, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    held: list[float] = []
    terminal = os.fdopen(slave, "w", encoding="utf-8")

    async def feed() -> None:
        bus = EventBus()
        monitor = TerminalMonitor(bus, None, terminal=terminal, keyboard=None)
        monitor.open(asyncio.get_running_loop())
        step = max(1, len(events) // 100)
        for i, event in enumerate(events):
            bus.publish(event)
            if i % step == 0:
                t0 = time.perf_counter()
                monitor._redraw(force=True)
                held.append(time.perf_counter() - t0)
                await asyncio.sleep(0.002)   # the painter writes meanwhile, as in a run
        monitor.close()

    cpu = time.process_time()
    asyncio.run(feed())
    cpu = time.process_time() - cpu
    terminal.close()
    os.close(master)
    reader.wait(timeout=60)
    return held, cpu, len(events)


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}-{max(values):.2f})"


def print_redraw_cost(log: str) -> None:
    held, cpu, events = redraw_cost(log)
    print(f"one redraw holds the event loop: median {1e3 * statistics.median(held):.2f} ms, "
          f"90th percentile {1e3 * statistics.quantiles(held, n=10)[-1]:.2f} ms, "
          f"most {1e3 * max(held):.2f} ms ({len(held)} redraws); the monitor's CPU for "
          f"{events} events and them: {cpu:.3f} s")


def main() -> None:
    if sys.argv[1:2] == ["--redraw"]:
        print_redraw_cost(sys.argv[2])
        return
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    baseline = None
    if "--baseline" in sys.argv:
        baseline = sys.argv[sys.argv.index("--baseline") + 1]
        args.remove(baseline)
    n = int(args[0]) if len(args) > 0 else 2000
    rounds = int(args[1]) if len(args) > 1 else 5
    cores = os.cpu_count() or 1
    print(f"monitors: bag of {n} echo calls, maxParallelTasks {cores}, a pty of 80x24, "
          f"{rounds} rounds" + (f", baseline -tui from {baseline}" if baseline else ""))
    log = os.path.join(tempfile.mkdtemp(prefix="swiftnb-bench-monitor-log-"), "bag.log")
    one_run(n, cores, tui=False, keep_log=log)   # warm the file cache; a log to replay
    arms: list[tuple[str, bool, str | None]] = [("ticker", False, None), ("-tui", True, None)]
    if baseline:
        arms.append(("-tui (baseline)", True, baseline))
    runs: dict[str, list[Measured]] = {name: [] for name, _, _ in arms}
    for r in range(rounds):
        for name, tui, path in arms:
            m = one_run(n, cores, tui, pythonpath=path)
            runs[name].append(m)
            print(f"  round {r + 1}: {name:16} {m.seconds:7.2f} s, CPU {m.cpu:6.2f} s "
                  f"({m.received} bytes to the terminal)", flush=True)
    for what, label in (("seconds", "wall clock"), ("cpu", "CPU")):
        without = [getattr(m, what) for m in runs["ticker"]]
        base = statistics.median(without)
        noise = (max(without) - min(without)) / base
        print(f"{label}: ticker {_spread(without)}, round-to-round spread "
              f"{100 * noise:.0f} % of the median")
        for name, _, _ in arms[1:]:
            values = [getattr(m, what) for m in runs[name]]
            print(f"  {name}: {_spread(values)}, ratio with/without "
                  f"{statistics.median(values) / base:.3f}")
    for name, path in [("-tui", None), *([("-tui (baseline)", baseline)] if baseline else [])]:
        env = {**os.environ, **({"PYTHONPATH": path} if path else {})}
        done = subprocess.run([sys.executable, os.path.abspath(__file__), "--redraw", log],
                              env=env, capture_output=True, text=True, timeout=600)
        print(f"{name}: {done.stdout.strip() or done.stderr.strip()}")
    shutil.rmtree(os.path.dirname(log), ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {cores} cores")


if __name__ == "__main__":
    main()
