"""Benchmark (issues 7 and 15): what the live dashboard costs a run.

A Swift script of N app calls (default 10,000) runs through ``swiftnb.runner.start_run``
on 4 simulated sites (virtual time, one of them flaky), twice per repetition: without a
dashboard (the baseline) and with ``swiftnb.widgets.Dashboard(run)`` attached, in the
same process, alternating.  Every panel is on: header, progress (rate, ETA, per app),
task stream chart, sites and score chart, blocks, throttles, failures, dataflow graph,
run history.  Widgets send their messages to a recording comm (what a
kernel would hand to the browser), so the figures include building every message.

Figures printed: wall and CPU seconds of each (best of the repetitions), the ratios
dashboard / baseline, the events of the run, the dashboard's flushes and panel renders,
and the comm messages sent to the front end (opens at creation, updates, bokeh patches).
The imports of ipywidgets/bokeh and a first dashboard, and a small warm-up run of each
kind, are done before measuring (a notebook has them loaded once); the one-time import
cost is printed apart.  On a shared machine wall time is noisy (other processes, the
disk the sim sites write their outputs to): CPU time is the steadier figure, and the
dashboard's own CPU (building it plus its flushes) over the baseline's CPU is the
steadiest; all three ratios are printed, the goal being under 1.2.

Run: ``.venv/bin/python benchmarks/dashboard.py [N] [REPEATS]``.
"""

from __future__ import annotations

import asyncio
import gc
import os
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import comm  # noqa: E402
from comm import DummyComm  # noqa: E402

MESSAGES: Counter = Counter()
SCRATCH = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


class CountingComm(DummyComm):
    """A comm that counts what it would publish to the front end."""

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys):
        method = (data or {}).get("method", "") if msg_type == "comm_msg" else ""
        MESSAGES[f"{msg_type}:{method}" if method else msg_type] += 1


comm.create_comm = lambda *a, **k: CountingComm(*a, **k)

CONF = """
sites: [s1, s2, s3, flaky]
site.s1 { execution { type: "sim", options { slots: 32, taskDuration: "uniform:20:40", seed: 1 } }
          maxParallelTasks: 64, initialParallelTasks: 8 }
site.s2 { execution { type: "sim", options { slots: 32, queueTime: "exp:10",
                      taskDuration: "uniform:20:40", seed: 2 } }
          maxParallelTasks: 64, initialParallelTasks: 8 }
site.s3 { execution { type: "sim", options { slots: 16, taskDuration: 30, speed: 0.5, seed: 3 } }
          maxParallelTasks: 32, initialParallelTasks: 8 }
site.flaky { execution { type: "sim", options { slots: 32, taskDuration: 30,
                         failureProbability: 0.2, seed: 4 } }
          maxParallelTasks: 64, initialParallelTasks: 8 }
lazyErrors: true
executionRetries: 2
siteSelectionOptions { seed: 3 }
"""

SCRIPT = """type file;
app (file o) work (int i) {
  work i stdout=@o;
}
file f[] <simple_mapper; prefix="simout/f", suffix=".txt">;
foreach i in [1:%d] {
  f[i] = work(i);
}
"""


async def one(n: int, with_dashboard: bool) -> dict:
    from swiftnb.config import load_config_text
    from swiftnb.runner import start_run

    # the sim sites write each task's output: in memory where there is a tmpfs, so that
    # the disk's latency (a third of the run on an overlay file system) is not measured
    with tempfile.TemporaryDirectory(dir=SCRATCH) as tmp:
        config = load_config_text(CONF, cwd=tmp)
        MESSAGES.clear()
        gc.collect()   # the previous run's garbage is not this run's cost
        wall0, cpu0 = time.perf_counter(), time.process_time()
        handle = start_run(SCRIPT % n, config=config, base_dir=tmp, log=False)
        dash = None
        if with_dashboard:
            from swiftnb.widgets import Dashboard

            c0 = time.process_time()
            dash = Dashboard(handle)
            build = time.process_time() - c0
        await handle
        if dash is not None:
            dash.stop()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        out = {"wall": wall, "cpu": cpu, "events": len(handle.event_list), "ok": handle.ok,
               "messages": dict(MESSAGES)}
        if dash is not None:
            out["flushes"] = dash.feed.flushes
            out["busy"] = dash.feed.busy
            out["build"] = build
            out["renders"] = {type(p).__name__: dash.feed.renders_of(p) for p in dash.panels}
        return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    t0 = time.perf_counter()
    import swiftnb.runner  # noqa: F401
    from swiftnb.events import EventBus
    from swiftnb.widgets import Dashboard

    Dashboard(bus=EventBus(), start=False)
    warm = time.perf_counter() - t0
    asyncio.run(one(200, False))   # warm-up: parser, engine and provider code paths
    asyncio.run(one(200, True))
    base, dash = [], []
    for _ in range(repeats):
        base.append(asyncio.run(one(n, False)))
        dash.append(asyncio.run(one(n, True)))
    b = min(base, key=lambda r: r["wall"])
    d = min(dash, key=lambda r: r["wall"])
    bc = min(r["cpu"] for r in base)
    dc = min(r["cpu"] for r in dash)
    msgs = d["messages"]
    total = sum(msgs.values())
    print(f"dashboard benchmark: {n} app calls on 4 sim sites, best of {repeats}")
    print(f"  one-time imports + first dashboard: {warm:.2f} s")
    print(f"  baseline (no dashboard): wall {b['wall']:.2f} s, cpu {bc:.2f} s, "
          f"{b['events']} events")
    print(f"  with dashboard:          wall {d['wall']:.2f} s, cpu {dc:.2f} s, "
          f"{d['events']} events")
    own = (d["busy"] + d["build"]) / bc
    print(f"  ratio dashboard/baseline: wall {d['wall'] / b['wall']:.3f}, cpu {dc / bc:.3f}, "
          f"own cost {1 + own:.3f} (1 + dashboard CPU / baseline CPU)")
    print(f"  CPU building the dashboard (widgets, bokeh figures): {d['build']:.2f} s")
    print(f"  CPU inside the dashboard's flushes: {d['busy']:.2f} s "
          f"({100 * d['busy'] / dc:.1f}% of the run's CPU)")
    print(f"  flushes {d['flushes']}, renders per panel {d['renders']}")
    print(f"  comm messages to the front end: {total} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(msgs.items()))}); "
          f"{total / max(1, d['events']):.4f} per event, "
          f"{total / max(1e-9, d['wall']):.0f} per second")


if __name__ == "__main__":
    main()
