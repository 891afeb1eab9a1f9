"""Large arrays without apps (issue 30, row 2): what a foreach that fills an array, one
that reads it, a reduction, string and struct arrays cost the engine.

Each variant is a Swift script run by ``swiftnb run -ui none`` in a subprocess of its
own (so the figures are the whole command, imports and exit included), measured by
``os.wait4``: wall time, CPU time (user + system) and peak RSS.  The goal (2 s and
200 MB) is for the 2,000,000-element fill-and-read script; the other variants are
printed beside it for reference.  With ``--baseline DIR`` (a checkout of the code before
a change, e.g. ``git -C /work/main worktree add /tmp/base HEAD``) each variant also runs
with ``PYTHONPATH=DIR``, alternately with this tree, and the ratios this/baseline are
printed: the machine may be shared, so only a ratio from the same run is meaningful.

    python benchmarks/arrays.py [--n 2000000] [--repeat 1] [--baseline DIR] [--only NAME]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_WALL = 2.0
GOAL_RSS_MB = 200.0

#: name -> (script template, the share of --n it uses)
VARIANTS: dict[str, tuple[str, float]] = {
    # the script: a foreach filling an array, a foreach reading it
    "fill-read": ("""
int a[];
foreach i in [0:{last}] {{ a[i] = i * 2; }}
int b[];
foreach v, i in a {{ b[i] = v + 1; }}
trace(length(b));
""", 1.0),
    # one array filled, then a whole-array reduction (sum reads every element)
    "fill-sum": ("""
int a[];
foreach i in [0:{last}] {{ a[i] = i %% 1000; }}
trace(sum(a));
""", 1.0),
    # element reads by index from a second loop (a[i] lookups, not iteration)
    "index-read": ("""
int a[];
foreach i in [0:{last}] {{ a[i] = i; }}
int c[];
foreach j in [0:{last}] {{ c[j] = a[{last} - j] + 1; }}
trace(length(c));
""", 1.0),
    # string elements made by strcat/toString
    "strings": ("""
string s[];
foreach i in [0:{last}] {{ s[i] = strcat("item-", toString(i)); }}
trace(length(s));
""", 1.0),
    # a running sum with iterate: one step at a time, each waiting on the last
    "iterate-prefix": ("""
int p[];
p[0] = 0;
iterate j {{ p[j + 1] = p[j] + j; }} until (j >= {last});
trace(p[{last}]);
""", 0.1),
    # an array of structs, members assigned one by one
    "structs": ("""
type Point {{ int x; int y; string label; }}
Point pts[];
foreach i in [0:{last}] {{ pts[i].x = i; pts[i].y = i * 2; pts[i].label = "p"; }}
trace(length(pts));
""", 0.25),
}


@dataclass
class Figures:
    wall: float
    cpu: float
    rss_mb: float
    output: str


def run_once(script: Path, pythonpath: str | None, workdir: Path) -> Figures:
    """One ``swiftnb run`` of ``script`` in a subprocess, measured by wait4."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    else:
        env.pop("PYTHONPATH", None)
    cmd = [sys.executable, "-c", "from swiftnb.cli import console; console()",
           "run", "-ui", "none", str(script)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{script.name} failed ({proc.returncode}):\n{out}")
    trace = [ln for ln in out.splitlines() if ln.startswith("SwiftScript trace")]
    return Figures(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
                   trace[-1] if trace else "")


def best(runs: list[Figures]) -> Figures:
    """The fastest of the repeats (least disturbed by other work), its own RSS."""
    return min(runs, key=lambda r: r.cpu)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2_000_000, help="elements (default 2,000,000)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each, best kept")
    ap.add_argument("--baseline", help="a checkout of the code before the change")
    ap.add_argument("--only", action="append", choices=sorted(VARIANTS),
                    help="run only this variant (repeatable)")
    args = ap.parse_args()
    names = args.only or list(VARIANTS)
    here = str(ROOT)
    with tempfile.TemporaryDirectory(prefix="swiftnb-arrays-") as tmp:
        work = Path(tmp)
        print(f"{'variant':15} {'n':>9} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7}"
              + ("  base wall  base cpu  base RSS  wall x  cpu x  RSS x" if args.baseline else ""))
        for name in names:
            text, share = VARIANTS[name]
            n = max(2, int(args.n * share))
            script = work / f"{name}.swift"
            script.write_text(text.format(last=n - 1))
            ours: list[Figures] = []
            base: list[Figures] = []
            for _ in range(args.repeat):
                ours.append(run_once(script, here, work))
                if args.baseline:
                    base.append(run_once(script, args.baseline, work))
            o = best(ours)
            line = f"{name:15} {n:9,} {o.wall:7.2f} {o.cpu:7.2f} {o.rss_mb:7.0f}"
            if base:
                b = best(base)
                if b.output != o.output:
                    raise SystemExit(f"{name}: outputs differ: {o.output!r} vs {b.output!r}")
                line += (f"  {b.wall:9.2f} {b.cpu:9.2f} {b.rss_mb:9.0f}"
                         f"  {o.wall / b.wall:6.2f} {o.cpu / b.cpu:6.2f} {o.rss_mb / b.rss_mb:6.2f}")
            print(line, flush=True)
            if name == "fill-read" and n == 2_000_000:
                print(f"{'':15} {'goal':>9} {GOAL_WALL:7.2f} {'':7} {GOAL_RSS_MB:7.0f}", flush=True)


if __name__ == "__main__":
    main()
