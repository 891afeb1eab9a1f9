"""One MPI task over the slots of several workers (issue 25; User Guide 19.3.2).

The service side, against workers that speak the protocol from this test (so that each
message the service sends is seen): a passive service, whose workers join one block.
The real MPICH runs are in test_mpi_blocks.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from coaster_services import Recorder, passive_service, until
from swiftnb.coasters import planner
from swiftnb.coasters.mpi import MpiShape, launch_spec, slots_problem, spread_spec
from swiftnb.coasters.settings import CoasterSettings
from swiftnb.remote.worker import PROTOCOL_VERSION

pytestmark = pytest.mark.timeout(60)

BLOCK = "1129-0000000-000000"


class ProtocolWorker:
    """A worker of ``cores`` slots on ``node``: says hello, keeps what the service sends."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.got: list[dict[str, Any]] = []
        self._reading = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def join(cls, service: Any, wid: str, node: str, cores: int = 2) -> ProtocolWorker:
        reader, writer = await asyncio.open_connection(service.host, service.port)
        hello = {"op": "hello", "version": PROTOCOL_VERSION, "secret": service.secret,
                 "block": BLOCK, "id": wid, "cores": cores, "node": node, "pid": 1}
        writer.write((json.dumps(hello) + "\n").encode())
        worker = cls(reader, writer)
        await until(lambda: any(m["op"] == "welcome" for m in worker.got), "welcome")
        return worker

    async def _read(self) -> None:
        while line := await self.reader.readline():
            self.got.append(json.loads(line))

    def runs(self) -> list[dict[str, Any]]:
        return [m for m in self.got if m["op"] == "run"]

    def say(self, message: dict[str, Any]) -> None:
        self.writer.write((json.dumps(message) + "\n").encode())

    def done(self, n: int, ok: bool = True, **result: Any) -> None:
        self.say({"op": "active", "n": n, "pid": 1})
        self.say({"op": "done", "n": n, "result": {"ok": ok, **result}})

    async def close(self) -> None:
        self.writer.close()
        self._reading.cancel()


def _mpi(processes: int) -> dict[str, Any]:
    return launch_spec({"executable": "/bin/hello", "args": ["x"], "jobid": "mpi"},
                       MpiShape(processes, processes))


def _single(n: int) -> dict[str, Any]:
    return {"executable": "/bin/true", "args": [], "jobid": f"s{n}"}


async def _an_mpi_task_holds_slots_of_two_workers_and_gives_them_back(tmp_path: Path) -> None:
    service, events = passive_service(tmp_path, tasksPerNode=2)
    await service.start()
    try:
        a = await ProtocolWorker.join(service, "000000", "nodeA")
        b = await ProtocolWorker.join(service, "000001", "nodeB")
        report = Recorder()
        mpi = service.submit("t-mpi", 60, _mpi(4), report)
        await until(lambda: len(a.runs() + b.runs()) == 1, "the MPI task sent")
        head, helper = (a, b) if a.runs() else (b, a)
        run = head.runs()[0]
        args = run["spec"]["args"]
        assert args[:2] == ["-hosts", f"{'nodeA' if head is a else 'nodeB'}:2,"
                            f"{'nodeB' if head is a else 'nodeA'}:2"]
        assert args[2:] == ["-n", "4", "/bin/hello", "x"]
        assert run["spec"]["slots"] == 2  # the head's share; the helper holds the rest
        # every slot is held: a one-slot task waits, on either worker
        single = service.submit("t-1", 60, _single(1), Recorder())
        await asyncio.sleep(0.3)
        assert helper.runs() == [] and len(head.runs()) == 1
        head.done(run["n"])
        assert (await asyncio.wait_for(mpi, 10)).ok
        await until(lambda: len(a.runs() + b.runs()) == 2, "the single task sent")
        target = a if a.runs()[-1:] and a.runs()[-1]["spec"]["jobid"] == "s1" else b
        target.done(target.runs()[-1]["n"])
        assert (await asyncio.wait_for(single, 10)).ok
        notes = [e.text or "" for e in events if e.kind == "PLANNER"]
        head_id, helper_id = ("000000", "000001") if head is a else ("000001", "000000")
        assert (f"MPI task t-mpi spans {BLOCK}:{head_id} (2 slot(s)), "
                f"{BLOCK}:{helper_id} (2 slot(s))") in notes, notes
        await a.close()
        await b.close()
    finally:
        await service.shutdown()


async def _slots_are_taken_all_or_nothing_and_single_tasks_go_meanwhile(tmp_path: Path) -> None:
    service, _ = passive_service(tmp_path, tasksPerNode=2)
    await service.start()
    try:
        a = await ProtocolWorker.join(service, "000000", "nodeA")
        b = await ProtocolWorker.join(service, "000001", "nodeB")
        singles = [service.submit(f"t-{i}", 60, _single(i), Recorder()) for i in range(3)]
        await until(lambda: len(a.runs() + b.runs()) == 3, "three single tasks sent")
        mpi = service.submit("t-mpi", 60, _mpi(4), Recorder())
        fourth = service.submit("t-3", 60, _single(3), Recorder())
        await until(lambda: len(a.runs() + b.runs()) == 4, "the fourth single task sent")
        assert all(m["spec"]["jobid"].startswith("s") for m in a.runs() + b.runs())
        for worker in (a, b):
            for m in worker.runs():
                worker.done(m["n"])
        await asyncio.wait_for(asyncio.gather(*singles, fourth), 10)
        await until(lambda: any(m["spec"]["jobid"] == "mpi" for m in a.runs() + b.runs()),
                    "the MPI task sent once every slot is idle")
        head = next(w for w in (a, b) if w.runs()[-1]["spec"]["jobid"] == "mpi")
        head.done(head.runs()[-1]["n"])
        assert (await asyncio.wait_for(mpi, 10)).ok
        await a.close()
        await b.close()
    finally:
        await service.shutdown()


async def _a_lost_helper_ends_the_mpi_task_and_fails_it(tmp_path: Path) -> None:
    service, _ = passive_service(tmp_path, tasksPerNode=2, workerRetries=0)
    await service.start()
    try:
        a = await ProtocolWorker.join(service, "000000", "nodeA")
        b = await ProtocolWorker.join(service, "000001", "nodeB")
        report = Recorder()
        mpi = service.submit("t-mpi", 60, _mpi(4), report)
        await until(lambda: len(a.runs() + b.runs()) == 1, "the MPI task sent")
        head, helper = (a, b) if a.runs() else (b, a)
        n = head.runs()[0]["n"]
        await helper.close()
        await until(lambda: {"op": "cancel", "n": n} in head.got, "the head told to end it")
        head.say({"op": "done", "n": n, "result": {"ok": False, "message": "Canceled"}})
        result = await asyncio.wait_for(mpi, 10)
        assert not result.ok
        assert "Worker lost" in result.message and "held 2 slot(s) of the MPI task" in \
            result.message, result.message
        await head.close()
    finally:
        await service.shutdown()


def test_an_mpi_task_holds_slots_of_two_workers_and_gives_them_back(tmp_path):
    asyncio.run(_an_mpi_task_holds_slots_of_two_workers_and_gives_them_back(tmp_path))


def test_slots_are_taken_all_or_nothing_and_single_tasks_go_meanwhile(tmp_path):
    """Three of four slots busy: the 4-slot task holds none of them (no deadlock with
    the one-slot tasks), one-slot tasks take the free slot; it starts once all are idle."""
    asyncio.run(_slots_are_taken_all_or_nothing_and_single_tasks_go_meanwhile(tmp_path))


def test_a_lost_helper_ends_the_mpi_task_and_fails_it(tmp_path):
    asyncio.run(_a_lost_helper_ends_the_mpi_task_and_fails_it(tmp_path))


def test_spread_spec_names_each_node_with_its_ranks():
    spec = launch_spec({"executable": "/bin/app", "args": ["a"]}, MpiShape(5, 3))
    spread = spread_spec(spec, [("n1", 1), ("n2", 2)])
    assert spread["args"] == ["-hosts", "n1:2,n2:3", "-n", "5", "/bin/app", "a"]
    assert spread["slots"] == 1
    # all on one host (a local:local block): Hydra forks the ranks there
    same = spread_spec(spec, [("vm", 2), ("vm", 1)])
    assert same["args"][:4] == ["-launcher", "fork", "-hosts", "vm:4,vm:1"]


def test_a_task_wider_than_a_block_is_refused_saying_which_options():
    assert slots_problem("s", "p", MpiShape(4, 4), 4) is None
    text = slots_problem("s", "p", MpiShape(8, 8), 4)
    assert text is not None and "needs 8 worker slots at once" in text
    assert "raise maxNodesPerJob, tasksPerNode or mpi.ppn" in text


def test_the_planner_makes_blocks_as_wide_as_the_widest_task():
    s = CoasterSettings.from_options({"tasksPerNode": 2, "maxNodesPerJob": 3, "maxJobs": 1})
    narrow = planner.allocate_blocks([60], 0, s)
    assert narrow[0].workers == 2
    wide = planner.allocate_blocks([60], 0, s, min_width=3)
    assert wide[0].workers == 4            # a multiple of tasksPerNode
    capped = planner.allocate_blocks([60], 0, s, min_width=9)
    assert capped[0].workers == 6          # maxNodesPerJob x tasksPerNode
