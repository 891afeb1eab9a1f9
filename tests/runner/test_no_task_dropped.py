"""A background task that raises fails the run visibly, never dropped (issue 24).

The poll loop of a batch site, the submission of a coaster block: each is an asyncio task
nobody awaits.  Before, an exception in one was only logged at garbage collection ("Task
exception was never retrieved"): a broken poll loop left the run waiting forever for jobs
nobody watched any more, a broken block submission was dropped while its block was left
"requested".  Now each reaches its owner's failure path: the jobs of a broken poll loop
fail saying why, a block whose submission broke fails (and after a few, the tasks that
waited for one), and the run ends with exit code 2 naming the error.

Real runs: a ``pbslocal`` site against the FAKE PBS of ``tests/fakes`` (real processes
run as its jobs), a coaster site with ``local:local`` blocks (real worker processes); the
fault is a method monkeypatched to raise, the bug stand-in.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from swiftnb.coasters.blocks import _LocalBlock
from swiftnb.config import load_config_text
from swiftnb.execution.batch.pbs import PBS
from swiftnb.runner import start_run

pytestmark = pytest.mark.timeout(120)

FAKES = Path(__file__).resolve().parents[1] / "fakes"

ONE = """type file;
app (file o) greet () { echo "hello" stdout=@o; }
file o <"out.txt">;
o = greet();
"""

PBS_CONF = """
sites: [cluster]
lazyErrors: false
executionRetries: 1
site.cluster {
    execution { type: "pbslocal", options { pollInterval: 0.2, jobQueue: "batch" } }
    workDirectory: "%s"
    staging: "swift"
    app.ALL { executable: "*" }
}
"""

COASTER_CONF = """
sites: [pool]
lazyErrors: false
site.pool {
    execution { type: "coaster", jobManager: "local:local",
                options { maxJobs: 1, workerStartTimeout: 30 } }
    workDirectory: "%s"
    staging: "local"
    app.ALL { executable: "*" }
}
"""


class InjectedBug(RuntimeError):
    """The stand-in for a bug in a background task."""


async def _finish(source: str, conf: str, base: Path):
    handle = start_run(source, config=load_config_text(conf, cwd=str(base)),
                       base_dir=str(base))
    await asyncio.wait_for(_ended(handle), 90)  # a hang is a failure, not a timeout
    return handle


async def _ended(handle) -> None:
    await handle


def test_a_broken_batch_poll_loop_fails_its_jobs_and_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKES / 'bin' / 'pbs'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SWIFTNB_FAKE_LRM_DIR", str(tmp_path / "fake-lrm"))

    async def broken_status(self, ids):
        raise InjectedBug("qstat's answer could not be read")

    monkeypatch.setattr(PBS, "status", broken_status)
    handle = asyncio.run(_finish(ONE, PBS_CONF % (tmp_path / "swiftwork"), tmp_path))
    assert handle.ok is False and handle.exit_code == 2
    said = "\n".join(handle.errors)
    assert "swiftnb internal error polling" in said, said
    assert "InjectedBug: qstat's answer could not be read" in said, said
    assert not (tmp_path / "out.txt").exists()


def test_a_broken_block_submission_fails_the_block_and_the_run(tmp_path, monkeypatch):
    def broken_pids(self):
        raise InjectedBug("the block's processes could not be listed")

    monkeypatch.setattr(_LocalBlock, "pids", broken_pids)  # read after the block started
    handle = asyncio.run(_finish(ONE, COASTER_CONF % (tmp_path / "swiftwork"), tmp_path))
    assert handle.ok is False and handle.exit_code == 2
    said = "\n".join(handle.errors)
    assert "swiftnb internal error submitting block" in said, said
    assert "InjectedBug: the block's processes could not be listed" in said, said
    assert not (tmp_path / "out.txt").exists()

