"""A foreach of calls that end at once (``-dryrun``, ``-resume``, reused calls) gives the
event loop a turn every slice of iterations: the ticker, the dashboard and a Jupyter
kernel's messages wait at most one slice.  Before, an iteration ending while a slice had
yielded started the next slice itself, and the loop waited for ~80,000 calls."""

from __future__ import annotations

import asyncio
import io

import pytest

from swiftnb.engine import loops
from swiftnb.engine.run import Run, RunSettings
from swiftnb.events import Event, EventBus
from swiftnb.lang.parser import parse

from engine_support import SubprocessTestExecutor

pytestmark = pytest.mark.timeout(300)

CALLS = 30_000
BAG = f"""type file;
app (file o) echo (int i) {{ echo i stdout=@filename(o); }}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:{CALLS}] {{ f[i] = echo(i); }}
"""


def test_a_dry_run_gives_the_loop_a_turn_every_slice(tmp_path) -> None:
    inits = 0

    def count(e: Event) -> None:
        nonlocal inits
        if e.kind == "JOB_INIT":
            inits += 1

    bus = EventBus()
    bus.subscribe(count)
    steps: list[int] = []

    async def main() -> bool:
        run = Run(parse(BAG, "test.swift"), SubprocessTestExecutor(), bus=bus,
                  settings=RunSettings(dry_run=True), base_dir=str(tmp_path),
                  run_dir=str(tmp_path / "run001"), runid="run001", stdout=io.StringIO())
        execution = asyncio.ensure_future(run.execute())
        seen = 0
        while not execution.done():
            await asyncio.sleep(0)   # one turn of the loop: what ran since the last one
            steps.append(inits - seen)
            seen = inits
        return (await execution).ok

    assert asyncio.run(asyncio.wait_for(main(), 240))
    assert inits == CALLS
    assert sum(steps) == CALLS
    # a turn at least every slice (two: a slice may end just after a turn began)
    assert max(steps) <= 2 * loops._DRIVE_SLICE, max(steps)
