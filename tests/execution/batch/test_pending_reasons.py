"""Why a batch job waits, from the real Slurm and Grid Engine (tests/slurm.py,
tests/gridengine.py): a job asking for more CPUs than the test node has (16 tasks on
8-CPU nodes, 16 slots of an 8-slot PE) pends for ever; the poller tells its waiting
callback the batch system's reason and a sentence that names the limit, once.  Then the
WAITING event through the log writer, the log reader and the ticker."""

from __future__ import annotations

import asyncio
import io
import re
import signal
import subprocess
import sys
import time

import pytest

from swiftnb.events import Event, EventBus
from swiftnb.execution.batch.lrm import LRM, JobPoller, JobState, JobStatus, Resources
from swiftnb.execution.batch.sge import GridEngine
from swiftnb.execution.batch.slurm import Slurm
from swiftnb.scheduling.waiting import Waiting, emit_waiting
from swiftnb.execution.shell import LocalShell
from swiftnb.logs.reader import read_log
from swiftnb.logs.ticker import ProgressTicker
from swiftnb.logs.writer import LogWriter

pytestmark = pytest.mark.timeout(120)


async def _told_why(lrm: LRM, res: Resources, polls: int = 4) -> tuple[list[JobStatus], int]:
    """Submit a job that cannot run; what the waiting callback heard over ``polls``
    more polls after the first reason, and how many polls that took."""
    job_id = await lrm.submit(lrm.script("sleep 1", res), res)
    heard: list[JobStatus] = []
    states: list[JobStatus] = []
    poller = JobPoller(lrm, interval=0.2, max_interval=0.5)
    poller.watch(job_id, lambda _id, status: states.append(status),
                 lambda _id, status: heard.append(status))
    try:
        for _ in range(150):  # 30 s at most for the scheduler to look at it
            if heard:
                break
            await asyncio.sleep(0.2)
        assert heard, f"no reason heard; states: {states}"
        first = poller.polls
        while poller.polls < first + polls:
            await asyncio.sleep(0.1)
    finally:
        await poller.close()
        await lrm.cancel([job_id])
    assert [s.state for s in states] == [JobState.PENDING]  # never ran
    return heard, poller.polls - first


@pytest.fixture
def slurm_here(slurm, monkeypatch, tmp_path):
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    return slurm


def test_slurm_says_the_job_asks_for_more_cpus_than_the_partition_has(slurm_here, tmp_path):
    res = Resources(name="too-wide", nodes=1, tasks_per_node=2 * slurm_here.cpus,
                    workdir=str(tmp_path), stdout=str(tmp_path / "o"), stderr=str(tmp_path / "e"))
    heard, polls = asyncio.run(_told_why(Slurm(LocalShell(), site="cluster"), res))
    assert polls >= 4
    assert len(heard) == 1, heard  # once per change, not once per poll
    waiting = heard[0].waiting
    assert waiting is not None and waiting.reason == "PartitionConfig"
    assert waiting.detail.startswith("the job asks for more than the partition allows")
    wide = 2 * slurm_here.cpus
    assert f"it asks for {wide} CPUs ({wide} tasks) on 1 node(s)" in waiting.detail
    assert f"partition {slurm_here.partition} has 1 node(s) of {slurm_here.cpus} CPUs" \
        in waiting.detail
    assert "lower tasksPerNode/ppn" in waiting.detail


def test_grid_engine_says_the_pe_offers_fewer_slots(gridengine, monkeypatch, tmp_path):
    for key, value in gridengine.env().items():
        monkeypatch.setenv(key, value)
    res = Resources(name="too-wide", nodes=1, tasks_per_node=2 * gridengine.slots,
                    options={"pe": gridengine.pe}, workdir=str(tmp_path),
                    stdout=str(tmp_path / "o"), stderr=str(tmp_path / "e"))
    heard, polls = asyncio.run(_told_why(GridEngine(LocalShell(), site="cluster"), res))
    assert polls >= 4
    # once per change: the free slots it quotes may change while other jobs of the
    # session end, the reason is told again only then
    assert len(heard) < polls and all(a.waiting != b.waiting
                                      for a, b in zip(heard, heard[1:])), heard
    waiting = heard[0].waiting
    assert waiting is not None and waiting.reason == "pe-slots"
    assert f'parallel environment "{gridengine.pe}"' in waiting.detail
    assert "lower tasksPerNode/ppn" in waiting.detail


def test_a_waiting_event_is_logged_read_back_and_printed_once(tmp_path):
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    out = io.StringIO()
    ticker = ProgressTicker(bus, stream=out, log=False)
    why = Waiting("PartitionConfig", "the job asks for more than the partition allows: "
                                     "it asks for 16 CPUs on 1 node(s)")
    for _ in range(3):  # the same reason again is not printed again
        emit_waiting(bus, "block", "1", "stampede", why, lrm="slurm", job="2")
    emit_waiting(bus, "task", "cat-1ab", "cluster", Waiting("Priority", "jobs ahead"))
    ticker.stop(final=False)
    printed = [line for line in out.getvalue().splitlines() if line.startswith("Waiting:")]
    assert printed == [
        "Waiting: block 1 (slurm job 2) pending: PartitionConfig - the job asks for more "
        "than the partition allows: it asks for 16 CPUs on 1 node(s)",
        "Waiting: task cat-1ab waits: Priority - jobs ahead"]
    log = tmp_path / "run.log"
    with LogWriter(str(log)) as writer:
        for event in events:
            writer.write(event)
    frame = read_log(str(log))
    rows = frame[frame["kind"] == "WAITING"]
    assert len(rows) == 4
    first = rows.iloc[0]
    assert (first["subject"], first["id"], first["site"], first["reason"], first["lrm"],
            first["job"]) == ("block", "1", "stampede", "PartitionConfig", "slurm", "2")
    assert first["detail"] == why.detail
    assert rows.iloc[3]["detail"] == "jobs ahead"


def test_a_run_whose_job_cannot_start_says_why_on_the_console(slurm, tmp_path):
    """A new user's run on a site asking for more than the node has: the console says
    why the job waits (not only ``Submitted:1``), once, then the run is interrupted."""
    (tmp_path / "wf.swift").write_text('app () nap () { sleep "1"; }\nnap();\n')
    (tmp_path / "swift.conf").write_text(f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "slurm", options {{ pollInterval: 0.5,
                 jobOptions {{ ppn: {2 * slurm.cpus} }} }} }}
    workDirectory: "{tmp_path / 'swiftwork'}"
    app.ALL {{ executable: "*" }}
}}
""")
    text = _interrupted_once_waiting(tmp_path, slurm.env())
    waits = [line for line in text.splitlines() if line.startswith("Waiting:")]
    assert len(waits) == 1, text
    assert re.fullmatch(r"Waiting: task sleep-\S+ \(slurm job \d+\) pending: PartitionConfig - "
                        r"the job asks for more than the partition allows.*"
                        rf"it asks for {2 * slurm.cpus} CPUs.*of {slurm.cpus} CPUs.*", waits[0])
    log = next(tmp_path.glob("run*/*.log")).read_text()
    assert re.search(r"WAITING subject=task id=sleep-\S+ site=cluster reason=PartitionConfig "
                     r"lrm=slurm job=\d+ expected=false detail=the job asks", log)


def test_a_coaster_block_slurm_keeps_pending_says_why(slurm, tmp_path):
    """A Stampede-like coaster site (16 tasks per node) on the 8-CPU test node: the
    block's job pends with PartitionConfig, and the console says so for the block."""
    (tmp_path / "wf.swift").write_text('app () nap () { sleep "1"; }\nnap();\n')
    (tmp_path / "swift.conf").write_text(f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "coaster", jobManager: "local:slurm",
                 options {{ maxJobs: 1, tasksPerNode: {2 * slurm.cpus}, maxNodesPerJob: 1,
                           maxJobTime: "00:10:00", jobQueue: "{slurm.partition}" }} }}
    staging: "swift"
    workDirectory: "{tmp_path / 'work'}"
    app.ALL {{ executable: "*", maxWallTime: "00:01:00" }}
}}
""")
    text = _interrupted_once_waiting(tmp_path, slurm.env())
    waits = [line for line in text.splitlines() if line.startswith("Waiting:")]
    assert len(waits) == 1, text
    assert re.fullmatch(r"Waiting: block \S+ \(slurm job \d+\) pending: PartitionConfig - "
                        rf"the job asks for more than the partition allows.*"
                        rf"of {slurm.cpus} CPUs.*", waits[0]), waits[0]


def _interrupted_once_waiting(tmp_path, env) -> str:
    """Run wf.swift until the console says why something waits, a few seconds more,
    then interrupt it; the console's text."""
    console = tmp_path / "console.txt"
    with open(console, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"],
                                cwd=tmp_path, env=env, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
        try:
            deadline = time.monotonic() + 90
            while "Waiting:" not in console.read_text():
                assert time.monotonic() < deadline, console.read_text()
                assert proc.poll() is None, console.read_text()
                time.sleep(0.2)
            time.sleep(3)  # several more polls: the reason is not printed again
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return console.read_text()
