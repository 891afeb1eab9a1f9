"""Benchmark (issue 16, "Speed side by side"): swiftnb against its peers, whole processes.

The same workloads, each run as a whole process (start-up and shut-down included) by
swiftnb and by the tools people would otherwise use, on this machine, in interleaved
rounds (A, B, C, A, B, C, ...):

* ``bag``: N independent ``echo i`` tasks (default 2,000), each writing ``out/i.txt``:
  the real ``swiftnb`` command on the default local site; the same script on a local
  coaster block site (``jobManager: "local:local"``, one block of 2 workers);
  ``xargs -P 2`` running ``sh -c 'echo i > out/i.txt'``; Parsl ``bash_app`` on a
  ThreadPoolExecutor (2 threads) and on a HighThroughputExecutor (2 workers, local
  provider), one Python process that imports parsl, loads the config, submits the N apps
  and waits for them.
* ``chain``: H dependent hops of ``cat`` (default 200), each reading the previous file
  and writing the next: swiftnb (``c[i] = cat(c[i-1])`` in a foreach), a shell loop
  (``cat c/$((i-1)).txt > c/$i.txt``), Parsl on both executors, each ``bash_app`` taking
  the previous one's output ``DataFuture`` as its input.
* ``one``: a single app (the bag with N = 1), i.e. what start-up costs each tool.

Every run gets a directory of its own under a temporary root (on /dev/shm when it
exists, so the disk does not take part; ``--disk`` puts it in the temporary directory of
the disk instead, ``$TMPDIR`` or /var/tmp, where users' files live), and its output files are checked (count and
contents) before its time counts: a failed run is reported, never measured.

Figures: for each tool, the median wall time, the rate (tasks/s, or ms per hop) and the
median CPU time of the whole process tree (user + system, children included); then the
ratios the issue's table names, each the median of the ratios taken within a round (two
runs of one round saw the same load), beside the issue's target, and the same ratio of
CPU times (the steadier figure when other processes share the cores).  A last line gives
the chain per hop with each tool's start-up (its one-app time) taken out, since the
issue's figure counts start-up in; the end line says how much CPU other processes used
while the benchmark ran.

Parsl is a benchmark-only extra (``pip install -e '.[bench]'``; ``make bench`` does
it).  Without it the Parsl rows are skipped, with the reason, and the rest still runs.
HTEX is given ``strategy_period=0.2``: with Parsl's default (5 s) its first block of
workers starts only at the first strategy tick, 5 s after ``parsl.load``.

Run: ``.venv/bin/python benchmarks/peers.py [--quick] [--rounds R] [--tasks N]
[--hops H] [--parsl-python PY] [--swiftnb CMD] [--disk] [--keep]``.  ``--quick`` is N = 300,
H = 50, 3 rounds (under a minute); the default is N = 2000, H = 200, 5 rounds.
"""

from __future__ import annotations

import argparse
import ctypes
import enum
import glob
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
#: ``--disk``: a directory on the disk (not a tmpfs), where users' files live
DISK = os.environ.get("TMPDIR") or "/var/tmp"
SEED = "chain seed 42\n"
RUN_TIMEOUT = 600.0  # seconds a single run may take before it counts as failed

BAG_SWIFT = """\
type file;
app (file o) echo (int i) {
    echo i stdout=@o;
}
file f[] <simple_mapper; prefix="out/", suffix=".txt", padding=0>;
foreach i in [1:{n}] {
    f[i] = echo(i);
}
"""

CHAIN_SWIFT = """\
type file;
app (file o) cat (file i) {
    cat @i stdout=@o;
}
file c[] <simple_mapper; prefix="c/", suffix=".txt", padding=0>;
file seed <"c/0.txt">;
c[1] = cat(seed);
foreach i in [2:{n}] {
    c[i] = cat(c[i-1]);
}
"""

# one block of 2 single-slot workers; the scheduler may hand the site 4 tasks at once
# (2 running and, with the default prefetch, one waiting on each worker)
COASTER_CONF = """\
sites: coast
site.coast {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, maxNodesPerJob: 2, tasksPerNode: 1 }
    }
    app.ALL { executable: "*" }
    workDirectory: "swiftwork"
    maxParallelTasks: 4
    initialParallelTasks: 4
}
"""

SHELL_CHAIN = 'i=1; while [ $i -le {n} ]; do cat c/$((i-1)).txt > c/$i.txt; i=$((i+1)); done'

PARSL_SCRIPT = """\
import os
import sys

import parsl
from parsl.app.app import bash_app
from parsl.config import Config
from parsl.data_provider.files import File


@bash_app
def echo(i, outputs=()):
    return f"echo {i} > {outputs[0]}"


@bash_app
def cat(inputs=(), outputs=()):
    return f"cat {inputs[0]} > {outputs[0]}"


def config(kind):
    if kind == "tpe":
        from parsl.executors import ThreadPoolExecutor
        return Config(executors=[ThreadPoolExecutor(label="tpe", max_threads=2)],
                      usage_tracking=0)
    from parsl.executors import HighThroughputExecutor
    from parsl.providers import LocalProvider
    htex = HighThroughputExecutor(label="htex", max_workers_per_node=2, cores_per_worker=1,
                                  address="127.0.0.1",
                                  provider=LocalProvider(init_blocks=1, min_blocks=1,
                                                         max_blocks=1))
    return Config(executors=[htex], strategy_period=0.2, usage_tracking=0)


def bag(n):
    os.makedirs("out")
    futures = [echo(i, outputs=[File(os.path.abspath(f"out/{i}.txt"))])
               for i in range(1, n + 1)]
    for f in futures:
        f.result()


def chain(n):
    last = File(os.path.abspath("c/0.txt"))
    for i in range(1, n + 1):
        last = cat(inputs=[last], outputs=[File(os.path.abspath(f"c/{i}.txt"))]).outputs[0]
    last.result()


kind, workload, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
parsl.load(config(kind))
try:
    (bag if workload == "bag" else chain)(n)
finally:
    parsl.dfk().cleanup()
"""


class Workload(enum.Enum):
    """What is run: N independent tasks, a chain of H hops, or one app (start-up)."""

    BAG = "bag"
    CHAIN = "chain"
    ONE = "one"


class Failure(enum.Enum):
    """Why a run does not count."""

    EXIT = "exited non-zero"
    TIMEOUT = "timed out"
    OUTPUT = "wrong or missing output"
    NOT_RUN = "could not start"


@dataclass(frozen=True)
class Command:
    """One whole process to time: its argv, extra environment, and what to prepare."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)  # relative path -> text


@dataclass(frozen=True)
class Contender:
    """A tool doing one workload: builds its command for a size."""

    workload: Workload
    name: str
    build: Callable[[int], Command]
    parsl: bool = False
    verify: Callable[[str], str | None] | None = None  # beyond the workload's outputs


@dataclass(frozen=True)
class Sample:
    """One verified run: wall seconds and CPU seconds of the whole process tree."""

    wall: float
    cpu: float


@dataclass
class Tally:
    """A contender's samples by round (None: that round's run failed)."""

    contender: Contender
    samples: list[Sample | None] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s is not None]


@dataclass(frozen=True)
class Tools:
    """The commands this run uses."""

    swiftnb: str
    parsl_python: str | None  # None: Parsl is skipped


# ---------------------------------------------------------------- contenders' commands

def swiftnb_run(tools: Tools, script: str, conf: str | None, n: int) -> Command:
    files = {"bench.swift": script.replace("{n}", str(n))}
    argv = [tools.swiftnb, "run"]
    if conf is not None:
        files["swift.conf"] = conf
        argv += ["-config", "swift.conf"]
    return Command(argv + ["bench.swift"], files=files)


def parsl_run(tools: Tools, kind: str, workload: Workload, n: int) -> Command:
    assert tools.parsl_python is not None
    bindir = os.path.dirname(tools.parsl_python)  # process_worker_pool.py, interchange.py
    return Command([tools.parsl_python, "parsl_peer.py", kind, workload.value, str(n)],
                   env={"PATH": bindir + os.pathsep + os.environ.get("PATH", "")},
                   files={"parsl_peer.py": PARSL_SCRIPT})


def xargs_bag(n: int) -> Command:
    script = f"mkdir out && seq 1 {n} | xargs -P 2 -I{{}} sh -c 'echo {{}} > out/{{}}.txt'"
    return Command(["sh", "-c", script])


def shell_chain(n: int) -> Command:
    return Command(["sh", "-c", SHELL_CHAIN.replace("{n}", str(n))])


def sh_one(n: int) -> Command:
    return Command(["sh", "-c", f"mkdir out && echo {n} > out/{n}.txt"])


def contenders(tools: Tools) -> list[Contender]:
    """Every (workload, tool) pair, in the order each round runs them."""
    local = partial(swiftnb_run, tools, BAG_SWIFT, None)
    BAG, CHAIN, ONE = Workload.BAG, Workload.CHAIN, Workload.ONE
    return [
        Contender(BAG, "swiftnb local", local),
        Contender(BAG, "swiftnb coaster", partial(swiftnb_run, tools, BAG_SWIFT,
                                                    COASTER_CONF), verify=two_workers),
        Contender(BAG, "xargs -P 2", xargs_bag),
        Contender(BAG, "Parsl TPE", partial(parsl_run, tools, "tpe", BAG), parsl=True),
        Contender(BAG, "Parsl HTEX", partial(parsl_run, tools, "htex", BAG), parsl=True),
        Contender(CHAIN, "swiftnb local", partial(swiftnb_run, tools, CHAIN_SWIFT, None)),
        Contender(CHAIN, "shell loop", shell_chain),
        Contender(CHAIN, "Parsl TPE", partial(parsl_run, tools, "tpe", CHAIN), parsl=True),
        Contender(CHAIN, "Parsl HTEX", partial(parsl_run, tools, "htex", CHAIN),
                  parsl=True),
        Contender(ONE, "swiftnb local", local),
        Contender(ONE, "sh", sh_one),
        Contender(ONE, "Parsl TPE", partial(parsl_run, tools, "tpe", BAG), parsl=True),
    ]


# ---------------------------------------------------------------- checking outputs

def check_bag(workdir: str, n: int) -> str | None:
    """None when out/ holds exactly 1.txt .. n.txt, each with its number."""
    out = os.path.join(workdir, "out")
    names = set(os.listdir(out)) if os.path.isdir(out) else set()
    if len(names) != n:
        return f"{len(names)} files in out/, expected {n}"
    for i in range(1, n + 1):
        path = os.path.join(out, f"{i}.txt")
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        expected = f"{i}\n"
        if text != expected:
            return f"{path} holds {text[:40]!r}, expected {expected!r}"
    return None


def check_chain(workdir: str, n: int) -> str | None:
    """None when c/1.txt .. c/n.txt all hold the seed."""
    for i in range(1, n + 1):
        path = os.path.join(workdir, "c", f"{i}.txt")
        try:
            with open(path) as fh:
                text = fh.read()
        except OSError as exc:
            return f"{path}: {exc.strerror}"
        if text != SEED:
            return f"{path} holds {text[:40]!r}, expected the seed {SEED!r}"
    return None


def two_workers(workdir: str) -> str | None:
    """None when the run's log shows the coaster block's 2 workers connecting."""
    logs = glob.glob(os.path.join(workdir, "run*", "*.log"))
    seen = 0
    for path in logs:
        with open(path, errors="replace") as fh:
            seen += sum(" WORKER_ACTIVE " in line for line in fh)
    return None if seen == 2 else f"{seen} WORKER_ACTIVE events in {logs}, expected 2"


# ---------------------------------------------------------------- running one process

def become_subreaper() -> bool:
    """Make orphaned descendants (workers a tool leaves behind) our children (Linux).

    Then their CPU is counted when reaped, and none outlives its run to load the next."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def my_children() -> list[int]:
    """Pids whose parent is this process (orphans re-parented to us)."""
    me, found = os.getpid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == me:
            found.append(int(entry))
    return found


def reap_leftovers(grace: float = 10.0) -> int:
    """Wait (up to grace seconds) for processes a run left behind, then end them.

    Returns how many had to be killed."""
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid == 0:
            time.sleep(0.05)
    killed = 0
    for pid in my_children():
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            killed += 1
        except (ProcessLookupError, ChildProcessError):
            pass
    return killed


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_one(command: Command, workdir: str, check: Callable[[str], str | None],
            ) -> tuple[Sample | None, str]:
    """Runs the command in workdir; (sample, "") when its outputs check out."""
    for rel, text in command.files.items():
        with open(os.path.join(workdir, rel), "w") as fh:
            fh.write(text)
    env = {**os.environ, **command.env}
    log_path = os.path.join(workdir, "peers-output.txt")
    cpu0 = children_cpu()
    with open(log_path, "w") as log:
        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(command.argv, cwd=workdir, env=env,
                                    stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT)
        except OSError as exc:
            return None, f"{Failure.NOT_RUN.value}: {command.argv[0]}: {exc.strerror}"
        # a blocking wait, the time limit kept by a timer: Popen.wait(timeout) polls with
        # sleeps growing to 50 ms, which added up to 50 ms to every run it timed
        timed_out = threading.Event()

        def overdue() -> None:
            timed_out.set()
            proc.kill()

        watchdog = threading.Timer(RUN_TIMEOUT, overdue)
        watchdog.start()
        try:
            returncode = proc.wait()
        finally:
            watchdog.cancel()
        wall = time.perf_counter() - t0
        code: int | None = None if timed_out.is_set() else returncode
    killed = reap_leftovers()
    cpu = children_cpu() - cpu0
    if code is None:
        return None, f"{Failure.TIMEOUT.value} after {RUN_TIMEOUT:.0f} s{tail(log_path)}"
    if code != 0:
        return None, f"{Failure.EXIT.value} ({code}){tail(log_path)}"
    problem = check(workdir)
    if problem is not None:
        return None, f"{Failure.OUTPUT.value}: {problem}{tail(log_path)}"
    note = f"{killed} leftover process(es) killed after the run" if killed else ""
    return Sample(wall, cpu), note


def tail(path: str, lines: int = 6) -> str:
    with open(path, errors="replace") as fh:
        last = fh.read().splitlines()[-lines:]
    return "".join(f"\n      | {line}" for line in last)


# ---------------------------------------------------------------- finding the tools

def find_swiftnb(given: str | None) -> str:
    if given:
        return given
    beside = os.path.join(os.path.dirname(sys.executable), "swiftnb")
    if os.path.exists(beside):
        return beside
    return shutil.which("swiftnb") or os.path.join(ROOT, ".venv", "bin", "swiftnb")


def parsl_version(python: str) -> tuple[str | None, str]:
    """(version, "") when python can import parsl, else (None, why not)."""
    try:
        proc = subprocess.run([python, "-c", "import parsl; print(parsl.__version__)"],
                              capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{python} did not run: {exc}"
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{python} cannot import parsl ({last})"
    return proc.stdout.strip(), ""


# ---------------------------------------------------------------- the rounds

def size_of(workload: Workload, tasks: int, hops: int) -> int:
    return {Workload.BAG: tasks, Workload.CHAIN: hops, Workload.ONE: 1}[workload]


def check(contender: Contender, n: int, workdir: str) -> str | None:
    """None when the run did what it was asked (outputs, and anything else it verifies)."""
    problem = (check_chain if contender.workload is Workload.CHAIN else check_bag)(workdir, n)
    if problem is None and contender.verify is not None:
        problem = contender.verify(workdir)
    return problem


def prepare(workload: Workload, workdir: str) -> None:
    os.makedirs(workdir)
    if workload is Workload.CHAIN:
        os.makedirs(os.path.join(workdir, "c"))
        with open(os.path.join(workdir, "c", "0.txt"), "w") as fh:
            fh.write(SEED)


def run_rounds(tallies: list[Tally], rounds: int, tasks: int, hops: int, root: str,
               keep: bool) -> None:
    """Run every contender ``rounds`` times, interleaved.  The runs' directories are
    removed after the last round, not after each run: on an ext4 without a journal (this
    machine's disk: ``/proc/fs/jbd2`` lists none) every file created skips the inodes of
    its group freed in the last 5 s (5 min while their table block is dirty), one
    buffer look-up each, so removing one run's 2,000 files made the next run's creates
    cost ~0.8 ms each, whichever tool came next (measured with perf: ext4's
    ``recently_deleted`` was 15% of a whole swiftnb run and of a Parsl one)."""
    finished: list[str] = []
    for r in range(rounds):
        for t in tallies:
            c = t.contender
            n = size_of(c.workload, tasks, hops)
            slug = f"r{r}-{c.workload.value}-{c.name.replace(' ', '_')}"
            workdir = os.path.join(root, slug)
            prepare(c.workload, workdir)
            sample, note = run_one(c.build(n), workdir, partial(check, c, n))
            t.samples.append(sample)
            shown = f"{sample.wall:6.2f} s" if sample else "FAILED"
            print(f"  round {r + 1}/{rounds}  {c.workload.value:5s} {c.name:16s} {shown}"
                  f"{'  ' + note if note else ''}", flush=True)
            if sample is None:
                t.failures.append(f"round {r + 1}: {note}")
            elif not keep:
                finished.append(workdir)
    for workdir in finished:
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------- the report

def print_tools(tallies: list[Tally], tasks: int, hops: int) -> None:
    print(f"\n{'workload':8s} {'tool':16s} {'median wall':>11s} {'rate':>15s} "
          f"{'CPU (tree)':>11s} {'CPU/unit':>9s}  runs ok")
    for t in tallies:
        c, ok = t.contender, t.ok()
        if not ok:
            print(f"{c.workload.value:8s} {c.name:16s} {'-':>11s} {'-':>15s} {'-':>11s} "
                  f"{'-':>9s}  0/{len(t.samples)}")
            continue
        wall = statistics.median(s.wall for s in ok)
        cpu = statistics.median(s.cpu for s in ok)
        _, rate = figure(c.workload, wall, tasks, hops)
        per_unit = cpu * 1000 / size_of(c.workload, tasks, hops)
        print(f"{c.workload.value:8s} {c.name:16s} {wall:9.2f} s {rate:>15s} "
              f"{cpu:9.2f} s {per_unit:6.2f} ms  {len(ok)}/{len(t.samples)}")


def key(workload: Workload, name: str) -> str:
    """How ROWS name a tally: "workload/tool"."""
    return f"{workload.value}/{name}"


@dataclass(frozen=True)
class Row:
    """A row of the issue's table: swiftnb's figure beside a peer's, and their ratio.

    The ratio is swiftnb's speed over the peer's (the peer's time / swiftnb's time)."""

    workload: str  # as the table words it
    ours: str  # tally key, "workload/tool"
    peer: str
    peer_label: str
    at_least: float | None = None  # the target for the ratio
    at_most: float | None = None  # ... or for swiftnb's own figure (ms/hop, s)
    note: str = ""


ROWS = [
    Row("bag, local site", "bag/swiftnb local", "bag/xargs -P 2", "xargs -P 2", at_least=0.75),
    Row("bag, local site", "bag/swiftnb local", "bag/Parsl TPE",
        "Parsl bash_app, ThreadPoolExecutor", at_least=2.0),
    Row("bag, local site", "bag/swiftnb local", "bag/Parsl HTEX",
        "Parsl bash_app, HighThroughputExecutor"),
    Row("bag, local coaster block", "bag/swiftnb coaster", "bag/swiftnb local",
        "swiftnb local site", at_least=1.2),
    Row("dependent chain", "chain/swiftnb local", "chain/shell loop", "shell loop",
        at_most=2.0),
    Row("dependent chain", "chain/swiftnb local", "chain/Parsl TPE",
        "Parsl ThreadPoolExecutor", at_least=3.0),
    Row("dependent chain", "chain/swiftnb local", "chain/Parsl HTEX",
        "Parsl HighThroughputExecutor"),
    Row("one app (start-up)", "one/swiftnb local", "one/sh", "sh", note="~0.3 s"),
    Row("one app (start-up)", "one/swiftnb local", "one/Parsl TPE", "Parsl ThreadPoolExecutor"),
]


def round_ratios(ours: Tally, peer: Tally, cpu: bool = False) -> list[float]:
    """The peer's time / ours (wall, or CPU), in each round where both runs counted."""
    def of(x: Sample) -> float:
        return x.cpu if cpu else x.wall
    return [of(p) / of(o) for o, p in zip(ours.samples, peer.samples)
            if o is not None and p is not None and of(o) > 0]


def figure(workload: Workload, wall: float, tasks: int, hops: int) -> tuple[float, str]:
    """A median wall time as the issue states it: (value, text)."""
    if workload is Workload.CHAIN:
        value = wall * 1000 / hops
        return value, f"{value:.2f} ms/hop"
    if workload is Workload.ONE:
        return wall, f"{wall:.3f} s"
    value = tasks / wall
    return value, f"{value:,.0f} tasks/s"


def target_text(row: Row, ratio: float, own: float) -> str:
    if row.at_least is not None:
        return f">= {row.at_least:g}x: {'met' if ratio >= row.at_least else 'not met'}"
    if row.at_most is not None:
        unit = "ms/hop" if row.ours.startswith(key(Workload.CHAIN, "")) else "s"
        return f"<= {row.at_most:g} {unit}: {'met' if own <= row.at_most else 'not met'}"
    return row.note


def print_rows(tallies: list[Tally], tasks: int, hops: int) -> None:
    """The issue's table, in Markdown, from this run's medians."""
    by_key = {key(t.contender.workload, t.contender.name): t for t in tallies}
    print("\n| workload | swiftnb | peer / limit | ratio now (per round) | target "
          "| CPU ratio |")
    print("| --- | --- | --- | --- | --- | --- |")
    for row in ROWS:
        ours, peer = by_key.get(row.ours), by_key.get(row.peer)
        if ours is None or peer is None or not ours.ok() or not peer.ok():
            why = "skipped" if ours is None or peer is None else "no counted run"
            print(f"| {row.workload} | | {row.peer_label}: {why} | | | |")
            continue
        workload = ours.contender.workload
        own, own_text = figure(workload, statistics.median(s.wall for s in ours.ok()),
                               tasks, hops)
        _, peer_text = figure(workload, statistics.median(s.wall for s in peer.ok()),
                              tasks, hops)
        ratios = round_ratios(ours, peer)
        now = statistics.median(ratios) if ratios else float("nan")
        rounds = ", ".join(f"{v:.2f}" for v in ratios)
        cpu = round_ratios(ours, peer, cpu=True)
        cpu_text = f"{statistics.median(cpu):.2f}x" if cpu else "-"
        print(f"| {row.workload} | {own_text} | {row.peer_label}: {peer_text} | "
              f"{now:.2f}x ({rounds}) | {target_text(row, now, own)} | {cpu_text} |")


#: the chain tools and the one-app run that measures each one's start-up
CHAIN_STARTS = [("swiftnb local", "swiftnb local"), ("shell loop", "sh"),
                ("Parsl TPE", "Parsl TPE")]


def print_chain_without_startup(tallies: list[Tally], hops: int) -> None:
    """The chain per hop with each tool's own start-up (its one-app median) taken out:
    what a hop itself costs, beside the issue's whole-process figure."""
    by_key = {key(t.contender.workload, t.contender.name): t for t in tallies}
    parts = []
    for chain_name, one_name in CHAIN_STARTS:
        chain = by_key.get(key(Workload.CHAIN, chain_name))
        one = by_key.get(key(Workload.ONE, one_name))
        if chain is None or one is None or not chain.ok() or not one.ok():
            continue
        wall = statistics.median(s.wall for s in chain.ok())
        start = statistics.median(s.wall for s in one.ok())
        parts.append(f"{chain_name} {(wall - start) * 1000 / hops:.2f}")
    if parts:
        print(f"\nchain, start-up taken out (ms/hop): {'; '.join(parts)}")


def machine_busy() -> float:
    """CPU seconds this machine has spent busy since boot (all processes)."""
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def filesystem_type(path: str) -> str:
    """The type of the file system holding ``path`` (tmpfs, ext4...), from /proc/mounts:
    the longest mount point that contains it; an ext4 without a journal says so (there
    every file created skips the inodes freed in the last minutes: see run_rounds)."""
    best, kind, device = "", "unknown", ""
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) >= 3 and (path + "/").startswith(fields[1].rstrip("/") + "/") \
                        and len(fields[1]) >= len(best):
                    best, kind, device = fields[1], fields[2], fields[0]
    except OSError:
        pass
    if kind == "ext4" and not glob.glob(f"/proc/fs/jbd2/{os.path.basename(device)}-*"):
        return "ext4, no journal"
    return kind


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime + children_cpu()


# ---------------------------------------------------------------- main

def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="swiftnb against xargs, a shell loop and Parsl, "
                                            "whole processes, interleaved rounds")
    p.add_argument("--quick", action="store_true",
                   help="300 tasks, 50 hops, 3 rounds (under a minute)")
    p.add_argument("--rounds", type=int, help="rounds (default 5; --quick 3)")
    p.add_argument("--tasks", type=int, help="bag size (default 2000; --quick 300)")
    p.add_argument("--hops", type=int, help="chain length (default 200; --quick 50)")
    p.add_argument("--parsl-python", default=sys.executable,
                   help="the Python that runs Parsl (default: this one)")
    p.add_argument("--swiftnb", help="the swiftnb command (default: beside this Python)")
    p.add_argument("--keep", action="store_true", help="keep every run's directory")
    p.add_argument("--disk", action="store_true",
                   help=f"run on the disk ({DISK}) instead of /dev/shm")
    args = p.parse_args(argv)
    quick = args.quick
    args.rounds = args.rounds or (3 if quick else 5)
    args.tasks = args.tasks or (300 if quick else 2000)
    args.hops = args.hops or (50 if quick else 200)
    if min(args.rounds, args.tasks) < 1 or args.hops < 2:
        p.error("--rounds and --tasks must be at least 1, --hops at least 2")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    version, why = parsl_version(args.parsl_python)
    tools = Tools(find_swiftnb(args.swiftnb), args.parsl_python if version else None)
    if not os.path.exists(tools.swiftnb):
        print(f"no swiftnb command at {tools.swiftnb} (make install, or --swiftnb PATH)")
        return 1
    everyone = contenders(tools)
    chosen = [c for c in everyone if version or not c.parsl]
    subreaper = become_subreaper()
    print(f"peers: bag of {args.tasks} echo tasks, chain of {args.hops} cat hops, one app; "
          f"{args.rounds} interleaved rounds; {os.cpu_count()} cores; swiftnb: {tools.swiftnb}")
    print(f"Parsl {version} ({args.parsl_python})" if version else
          f"Parsl rows skipped: {why}; install it with "
          f"`.venv/bin/pip install -e '.[bench]'` (`make bench` does)")
    if not subreaper:
        print("(not a subreaper here: processes a tool leaves behind are not counted)")
    root = tempfile.mkdtemp(prefix="swiftnb-peers-", dir=DISK if args.disk else SCRATCH)
    print(f"runs in {root} ({filesystem_type(root)})", flush=True)
    tallies = [Tally(c) for c in chosen]
    busy0, own0, t0 = machine_busy(), own_cpu(), time.monotonic()
    try:
        run_rounds(tallies, args.rounds, args.tasks, args.hops, root, args.keep)
    finally:
        if not args.keep and not any(t.failures for t in tallies):
            shutil.rmtree(root, ignore_errors=True)
    elapsed, others = time.monotonic() - t0, (machine_busy() - busy0) - (own_cpu() - own0)
    print_tools(tallies, args.tasks, args.hops)
    print_rows(tallies, args.tasks, args.hops)
    print_chain_without_startup(tallies, args.hops)
    print(f"\nwall {elapsed:.0f} s; other processes on this machine used {max(others, 0):.0f} "
          f"CPU-s meanwhile ({max(others, 0) / elapsed:.2f} of {os.cpu_count()} cores)")
    failed = [f"{key(t.contender.workload, t.contender.name)} {f}" for t in tallies
              for f in t.failures]
    for line in failed:
        print(f"FAILED {line}")
    if failed or args.keep:
        print(f"run directories{' of the failed runs' if not args.keep else ''} kept in {root}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
