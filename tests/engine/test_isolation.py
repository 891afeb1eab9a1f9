"""Two runs in one event loop (two ``%%swift`` cells running in the background) must not
share engine state: each run has its own callback queue, so aborting one neither drops
nor runs the other's pending statements."""

from __future__ import annotations

import asyncio
import io
import sys

from swiftnb.engine import values as V
from swiftnb.engine.run import Run, RunSettings
from swiftnb.events import EventBus
from swiftnb.lang.parser import parse

from engine_support import SubprocessTestExecutor

# a long chain of dependent cells: its drain is handed back to the loop in slices, so
# the run has callbacks queued while other work runs between the slices
CHAIN = """
type file;
app (file o) zero() {{ "PY" "-c" "print(0)" stdout=@o; }}
file z <"zero.txt">;
z = zero();
int a[];
a[0] = readData(z);
foreach i in [1:{n}] {{ a[i] = a[i - 1] + 1; }}
trace("last", a[{n}]);
""".replace("PY", sys.executable)

SLOW_FAIL = f"""
type file;
app (file o) slow(int s) {{ "{sys.executable}" "-c" "import time, sys; time.sleep(0.05 * int(sys.argv[1]))" s stdout=@o; }}
app (file o) bad() {{ "{sys.executable}" "-c" "import sys; sys.exit(3)" stdout=@o; }}
file f[] <simple_mapper; prefix="slow", suffix=".out">;
foreach i in [0:3] {{ f[i] = slow(i); }}
file b <"bad.out">;
b = bad();
"""


def _make(src: str, tmp_path, name: str) -> tuple[Run, io.StringIO, list]:
    out = io.StringIO()
    bus = EventBus()
    events: list = []
    bus.subscribe(events.append)
    (tmp_path / name).mkdir(exist_ok=True)
    r = Run(parse(src, f"{name}.swift"), SubprocessTestExecutor(), bus=bus,
            settings=RunSettings(), base_dir=str(tmp_path / name),
            run_dir=str(tmp_path / name / "run001"), runid="run001", stdout=out)
    return r, out, events


def _quiet(main):
    old = sys.stderr
    sys.stderr = io.StringIO()
    try:
        return asyncio.run(main())
    finally:
        sys.stderr = old


def test_cancelling_one_run_keeps_the_other_runs_pending_statements(tmp_path) -> None:
    n = 60000
    # a's apps outlast b's first slice, so a is still running when it is cancelled
    # (its unused input bad.out need not exist: that alone fails nothing)
    a, _, _ = _make(SLOW_FAIL.replace("b = bad();", "").replace("0.05 *", "20 *"),
                    tmp_path, "a")
    b, b_out, _ = _make(CHAIN.format(n=n), tmp_path, "b")

    async def main():
        ta = asyncio.ensure_future(a.execute())
        tb = asyncio.ensure_future(b.execute())
        # wait until b has statements queued between two slices, then cancel a
        for _ in range(100000):
            await asyncio.sleep(0)
            if b.tramp.ready or tb.done():
                break
        assert b.tramp.ready, "b never had queued callbacks between slices"
        a.cancel()
        return await asyncio.wait_for(asyncio.gather(ta, tb), 60)

    oa, ob = _quiet(main)
    assert not oa.ok
    assert ob.ok, ob.errors
    assert b.values["a"][n] == n
    assert b_out.getvalue().strip() == f"SwiftScript trace: last, {n}"
    # outside any run, the default queue is untouched and empty
    assert V.pending_callbacks() == 0


def test_a_failing_run_does_not_disturb_a_concurrent_one(tmp_path) -> None:
    n = 80000
    a, _, _ = _make(SLOW_FAIL, tmp_path, "a")
    b, b_out, _ = _make(CHAIN.format(n=n), tmp_path, "b")

    async def main():
        return await asyncio.wait_for(asyncio.gather(a.execute(), b.execute()), 60)

    oa, ob = _quiet(main)
    assert not oa.ok and oa.exit_code == 2
    assert any("bad" in e or "exit code" in e for e in oa.errors), oa.errors
    assert ob.ok, ob.errors
    assert b.values["a"][n] == n
    assert b_out.getvalue().strip() == f"SwiftScript trace: last, {n}"


def test_two_runs_complete_concurrently_with_interleaved_traces(tmp_path) -> None:
    src = """
type file;
app (file o) echo(string s) {{ "{py}" "-c" "import sys; print(sys.argv[1])" s stdout=@o; }}
file f[] <simple_mapper; prefix="e", suffix=".out">;
int v[];
foreach i in [0:5] {{
  f[i] = echo(strcat("{tag}", i));
  v[i] = i * {k};
  trace("{tag}", i, readData(f[i]));
}}
trace("{tag} total", sum(v));
""".replace("sum(v)", "v[5]")
    a, a_out, a_ev = _make(src.format(py=sys.executable, tag="A", k=10), tmp_path, "a")
    b, b_out, b_ev = _make(src.format(py=sys.executable, tag="B", k=100), tmp_path, "b")

    async def main():
        return await asyncio.wait_for(asyncio.gather(a.execute(), b.execute()), 60)

    oa, ob = _quiet(main)
    assert oa.ok, oa.errors
    assert ob.ok, ob.errors
    assert a.values["v"] == {i: i * 10 for i in range(6)}
    assert b.values["v"] == {i: i * 100 for i in range(6)}
    for tag, out, k in (("A", a_out, 10), ("B", b_out, 100)):
        lines = out.getvalue().splitlines()
        assert sorted(lines) == sorted(
            [f"SwiftScript trace: {tag}, {i}, {tag}{i}" for i in range(6)]
            + [f"SwiftScript trace: {tag} total, {5 * k}"]), lines
    assert sum(1 for e in a_ev if e.kind == "JOB_END") == 6
    assert sum(1 for e in b_ev if e.kind == "JOB_END") == 6
