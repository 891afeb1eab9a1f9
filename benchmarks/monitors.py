"""Benchmark (issue 29): what ``swiftnb run -tui`` costs the run it watches.

The 2,000-call local bag (``foreach i in [1:N] { f[i] = echo(i); }``, as
benchmarks/local.py runs it, ``maxParallelTasks`` = cores) through the ``swiftnb run``
command, in a real terminal (a pty of 80x24 whose output a thread reads as a terminal
would), once with the terminal monitor (``-tui``) and once without (the ticker), the two
alternating, ROUNDS rounds each.  Printed: each round's wall-clock seconds (from the
command's start to its exit) and CPU seconds (the command and the apps it ran, from
``wait4``: the figure that other work on the machine does not move), the medians, and
the ratios with/without (1.00: no cost).

Run: ``.venv/bin/python benchmarks/monitors.py [N [ROUNDS]]`` (default 2000 calls, 3
rounds).
"""

from __future__ import annotations

import fcntl
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


def run_in_terminal(argv: list[str], cwd: str, timeout: float = 900) -> tuple[Measured, int]:
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
    env = {**os.environ, "TERM": "xterm-256color"}
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


def one_run(n: int, cores: int, tui: bool) -> Measured:
    workdir = tempfile.mkdtemp(prefix="swiftnb-bench-monitor-")
    try:
        with open(os.path.join(workdir, "bag.swift"), "w") as fh:
            fh.write(SCRIPT.format(n=n))
        with open(os.path.join(workdir, "swift.conf"), "w") as fh:
            fh.write(CONF.format(cores=cores))
        argv = [SWIFTNB, "run", "-config", "swift.conf", *(["-tui"] if tui else []),
                "bag.swift"]
        measured, code = run_in_terminal(argv, workdir)
        if code != 0:
            raise SystemExit(f"{' '.join(argv)}: exit code {code}")
        made = len(os.listdir(os.path.join(workdir, "out")))
        if made != n:
            raise SystemExit(f"{' '.join(argv)}: {made} of {n} outputs")
        return measured
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    cores = os.cpu_count() or 1
    print(f"monitors: bag of {n} echo calls, maxParallelTasks {cores}, a pty of 80x24, "
          f"{rounds} rounds")
    one_run(20, cores, tui=True)   # warm the file cache and the imports
    runs: dict[bool, list[Measured]] = {False: [], True: []}
    for r in range(rounds):
        for tui in (False, True):
            m = one_run(n, cores, tui)
            runs[tui].append(m)
            print(f"  round {r + 1}: {'-tui   ' if tui else 'ticker '} {m.seconds:7.2f} s, "
                  f"CPU {m.cpu:6.2f} s ({m.received} bytes to the terminal)", flush=True)
    for what in ("seconds", "cpu"):
        without = statistics.median(getattr(m, what) for m in runs[False])
        with_tui = statistics.median(getattr(m, what) for m in runs[True])
        name = "wall clock" if what == "seconds" else "CPU"
        print(f"{name}: median without -tui {without:.2f} s, with -tui {with_tui:.2f} s, "
              f"ratio with/without {with_tui / without:.3f}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {cores} cores")


if __name__ == "__main__":
    main()
