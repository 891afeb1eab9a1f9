"""A local coaster site end to end: real worker processes, real app subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest

from swiftnb.scheduling.provider import RecordingReporter

pytestmark = pytest.mark.timeout(90)

#: two blocks of one worker with two task slots each
TWO_BLOCKS = {"maxJobs": 2, "maxNodesPerJob": 1, "tasksPerNode": 2, "allocationStepSize": 1,
              "planInterval": 0.1}


def test_500_tasks_through_two_blocks(make_site, tmp_path):
    site = make_site(TWO_BLOCKS)

    async def main():
        tasks = [site.task(i, stdout=f"out/{i}.txt", outputs=[f"out/{i}.txt"]) for i in range(500)]
        results = await asyncio.gather(*(site.run(t) for t in tasks))
        state = site.provider.service.state()
        await site.provider.shutdown()
        return results, state

    results, state = asyncio.run(main())
    assert all(r.ok for r in results), [r.message for r in results if not r.ok][:3]
    for i in (0, 123, 499):
        assert (tmp_path / "out" / f"{i}.txt").read_text() == f"{i}\n"
    requested = [e["id"] for e in site.kinds("BLOCK_REQUESTED")]
    assert len(requested) == 2
    assert all(e.fields == {"id": e["id"], "cores": 2, "coresPerWorker": 1, "walltime": e["walltime"]}
               for e in site.kinds("BLOCK_REQUESTED"))
    # every task went 8, 1, 16, 2, 17, 7 with the worker named on 16 and 2
    used_blocks = set()
    for jobid, seq in site.statuses.items():
        assert [s for s, _ in seq] == [8, 1, 16, 2, 17, 7], (jobid, seq)
        assert seq[2][1]["workerid"] == seq[3][1]["workerid"]
        used_blocks.add(seq[2][1]["workerid"].split(":")[0])
    assert used_blocks == set(requested)
    assert sum(b["tasks_done"] for b in state["blocks"]) == 500
    # echo takes milliseconds: automatic prefetch is on
    assert state["prefetch"] == 1 and state["mean_run_time"] < 0.5
    active = {(e["blockid"], e["id"]) for e in site.kinds("WORKER_ACTIVE")}
    assert {b for b, _ in active} == set(requested)
    # shutdown ends every block with the 0.96 sequence
    for kind in ("BLOCK_ACTIVE", "BLOCK_SHUTDOWN", "BLOCK_DONE"):
        assert sorted(e["id"] for e in site.kinds(kind)) == sorted(requested), kind
    assert {(e["blockid"], e["id"]) for e in site.kinds("WORKER_SHUTDOWN")} == active


@pytest.mark.parametrize("prefetch", [0, 1])
def test_killed_worker_loses_nothing(make_site, tmp_path, prefetch):
    site = make_site({**TWO_BLOCKS, "prefetch": prefetch})

    async def main():
        tasks = [site.task(i, tr="sh", args=["-c", f"sleep 0.6; echo {i}"],
                           stdout=f"out/{i}.txt", outputs=[f"out/{i}.txt"]) for i in range(16)]
        runs = [asyncio.ensure_future(site.run(t)) for t in tasks]
        provider = site.provider

        def running_on():  # the worker of a task whose app has started
            for seq in site.statuses.values():
                if seq and seq[-1][0] == 2:
                    return seq[-1][1]["workerid"]
            return None

        await site.wait_for(lambda: running_on() is not None)
        victim = next(w for w in provider.service.state()["workers"] if w["workerid"] == running_on())
        os.kill(victim["pid"], signal.SIGKILL)
        results = await asyncio.gather(*runs)
        await provider.shutdown()
        return victim, results

    victim, results = asyncio.run(main())
    assert all(r.ok for r in results), [r.message for r in results if not r.ok][:3]
    assert all((tmp_path / "out" / f"{i}.txt").read_text() == f"{i}\n" for i in range(16))
    lost = [e for e in site.kinds("WORKER_LOST") if e["blockid"] == victim["block"]]
    assert lost and lost[0]["id"] == victim["id"]
    # the tasks it ran were reported failed with the reason, then ran again elsewhere
    retried = [seq for seq in site.statuses.values() if any(s == 5 for s, _ in seq)]
    assert retried
    for seq in site.statuses.values():
        if seq not in retried:
            assert [s for s, _ in seq] == [8, 1, 16, 2, 17, 7]
    for seq in retried:
        codes = [s for s, _ in seq]
        failed = codes.index(5)
        message = seq[failed][1]["message"]
        assert "Worker lost" in message and victim["workerid"] in message
        assert codes[failed + 1:] == [1, 16, 2, 17, 7]
        assert seq[failed + 2][1]["workerid"] != victim["workerid"]
    # its block had no other worker: the LRM job ended prematurely
    assert [e["id"] for e in site.kinds("BLOCK_FAILED")] == [victim["block"]]


def test_blocks_suspended_and_shut_down_when_work_runs_out(make_site):
    site = make_site({**TWO_BLOCKS, "suspendDelay": 0.2})

    async def main():
        results = await asyncio.gather(*(site.run(site.task(i)) for i in range(6)))
        provider = site.provider
        await site.wait_for(lambda: len(site.kinds("BLOCK_DONE")) == 2)
        state = provider.service.state()
        await provider.shutdown()
        return results, state

    results, state = asyncio.run(main())
    assert all(r.ok for r in results)
    texts = [e.text for e in site.kinds("PLANNER")]
    ids = [e["id"] for e in site.kinds("BLOCK_REQUESTED")]
    for bid in ids:
        assert any(t.startswith(f"suspending block {bid}") for t in texts)
    assert sorted(e["id"] for e in site.kinds("BLOCK_SHUTDOWN")) == sorted(ids)
    assert sorted(e["id"] for e in site.kinds("BLOCK_DONE")) == sorted(ids)
    assert {b["state"] for b in state["blocks"]} == {"done"}
    assert not site.kinds("BLOCK_FAILED")
    # order of one block's end, as Swift 0.96 logged it (a block whose worker connected;
    # under load the other may be shut down before its worker got there)
    bid = site.kinds("WORKER_ACTIVE")[0]["blockid"]
    mine = [e.kind for e in site.events if bid in (e.get("id"), e.get("blockid"))
            and e.kind != "PLANNER"]
    assert mine[-5:] == ["BLOCK_SHUTDOWN", "BLOCK_UTILIZATION", "WORKER_LOST", "WORKER_SHUTDOWN",
                         "BLOCK_DONE"]


def test_idle_block_shuts_down_after_max_worker_idle_time(make_site):
    site = make_site({"maxJobs": 1, "tasksPerNode": 1, "maxWorkerIdleTime": 0.3,
                      "suspendDelay": 1000, "planInterval": 0.1})

    async def main():
        assert (await site.run(site.task(1))).ok
        await site.wait_for(lambda: site.kinds("BLOCK_DONE"))
        await site.provider.shutdown()

    asyncio.run(main())
    assert any("idle for more than 0.3s" in e.text for e in site.kinds("PLANNER"))
    assert not any(e.text.startswith("suspending") for e in site.kinds("PLANNER"))


def test_block_walltime_expiry_requeues_then_fails(make_site):
    # maxJobTime 3 s, reserve 1: a 1 s task gets a block of height min(10, 2) = 2 s that the
    # LRM kills after 3 s; a task that really runs 30 s is lost twice and then fails.
    site = make_site({"maxJobs": 1, "maxJobTime": "00:00:03", "reserve": 1, "workerRetries": 1,
                      "planInterval": 0.1})

    async def main():
        provider = site.provider
        await provider.start()
        spec = provider.spec(site.task(1, tr="sleep", args=["30"]))
        reports = []
        class Report(RecordingReporter):
            def status(self, status, *, message=None, workerid=None):
                reports.append((int(status), {k: v for k, v in (("message", message),
                                                                 ("workerid", workerid)) if v}))

        future = provider.service.submit("t1", 1, spec, Report())
        result = await asyncio.wait_for(future, 30)
        await provider.shutdown()
        return result, reports

    result, reports = asyncio.run(main())
    assert not result.ok and "block walltime expired" in result.message
    assert [s for s, _ in reports] == [1, 16, 2, 5, 1, 16, 2, 5]
    blocks = [e["id"] for e in site.kinds("BLOCK_REQUESTED")]
    assert [e["walltime"] for e in site.kinds("BLOCK_REQUESTED")] == [2, 2]
    # the first block's LRM job ended under it; the second may still be ending when the
    # service shuts down (then it is shut down normally)
    assert site.kinds("BLOCK_FAILED")[0]["id"] == blocks[0]
    ended = {e["id"] for e in site.kinds("BLOCK_FAILED") + site.kinds("BLOCK_DONE")}
    assert ended == set(blocks)


def test_admission_error_and_failed_app(make_site):
    site = make_site({"maxJobTime": "00:05:00", "planInterval": 0.1})

    async def main():
        long = await site.run(site.task(1))  # default walltime 10 min, as Swift observed
        failing = await site.run(site.task(2, tr="false", args=[], maxwalltime=60))
        await site.provider.shutdown()
        return long, failing

    long, failing = asyncio.run(main())
    assert not long.ok
    assert long.message == "Task walltime > maxJobTime - reserve (00:10:00 > 00:04:00)"
    assert [s for s, _ in site.statuses["echo-00001"]] == [8, 5]
    assert not failing.ok and failing.exit_code == 1
    assert "failed with an exit code of 1" in failing.message
    seq = site.statuses["false-00002"]
    assert [s for s, _ in seq] == [8, 1, 16, 2, 17, 5]
    assert "exit code of 1" in seq[-1][1]["message"]


def test_service_refuses_a_wrong_secret(make_site):
    site = make_site({"planInterval": 0.1})

    async def main():
        provider = site.provider
        await provider.start()
        service = provider.service
        assert service.host == "127.0.0.1"
        reader, writer = await asyncio.open_connection(service.host, service.port)
        hello = {"op": "hello", "version": 1, "secret": "guess", "block": "x", "id": "000000",
                 "cores": 1, "walltime": 10, "node": "n", "pid": 1}
        writer.write((json.dumps(hello) + "\n").encode())
        await writer.drain()
        reply = await asyncio.wait_for(reader.read(), 5)
        writer.close()
        await provider.shutdown()
        return reply

    assert asyncio.run(main()) == b""
    assert not site.kinds("WORKER_ACTIVE")


def test_cancel_kills_the_app(make_site, tmp_path):
    site = make_site({"planInterval": 0.1})

    async def main():
        provider = site.provider
        run = asyncio.ensure_future(site.run(site.task(1, tr="sh", args=["-c", "sleep 30"])))
        await site.wait_for(lambda: any(s == 2 for s, _ in site.statuses["sh-00001"]))
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
        await site.wait_for(lambda: provider.state().running == 0, timeout=10)
        # the slot is free again: a new task runs at once
        ok = await asyncio.wait_for(site.run(site.task(2)), 20)
        await provider.shutdown()
        return ok

    assert asyncio.run(main()).ok
    assert [s for s, _ in site.statuses["sh-00001"]][-1] == 6


def test_bad_job_manager_names_the_key():
    from swiftnb.coasters.provider import CoasterProvider
    from swiftnb.coasters.settings import CoasterConfigError

    with pytest.raises(CoasterConfigError, match="execution.jobManager"):
        CoasterProvider("c", {}, job_manager="local:pbs")


def test_seed_002_timings_from_our_log(make_site, tmp_path):
    frame_mod = pytest.importorskip("swiftnb.logs.frame")
    writer_mod = pytest.importorskip("swiftnb.logs.writer")
    site = make_site({**TWO_BLOCKS, "suspendDelay": 0.2})
    log = tmp_path / "swift.log"
    detach = writer_mod.LogWriter(str(log)).attach(site.bus)

    async def main():
        await asyncio.gather(*(site.run(site.task(i)) for i in range(8)))
        await site.wait_for(lambda: len(site.kinds("BLOCK_DONE")) == 2)
        await site.provider.shutdown()

    asyncio.run(main())
    detach()
    text = log.read_text()
    assert " INFO  RemoteLogHandler BLOCK_REQUESTED id=" in text and ", cores=2, coresPerWorker=1, walltime=" in text
    timings = frame_mod.LogFrame.read(str(log)).timings()
    got = set(timings["timing"])
    assert {"Tw", "Te", "Tq", "Ta", "Tb", "Twe"} <= got, got
    assert (timings["duration"] >= 0).all()


def test_site_from_swift_conf(tmp_path):
    config_mod = pytest.importorskip("swiftnb.config")
    from swiftnb.coasters import make_provider
    from swiftnb.coasters.provider import CoasterProvider

    conf = tmp_path / "swift.conf"
    conf.write_text("""
sites: coast
site.coast {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 3, tasksPerNode: 2, maxNodesPerJob: 4, maxJobTime: "00:20:00",
                  lowOverallocation: 5 }
    }
    workDirectory: "work"
}
""")
    config = config_mod.load_config(str(conf), cwd=str(tmp_path))
    site = config.sites["coast"]

    from swiftnb.events import EventBus
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock

    provider = make_provider(site, BuildContext(config, EventBus(), RealClock(),
                                                site_run="hello-run001"))
    assert isinstance(provider, CoasterProvider)
    s = provider.settings
    assert (s.slots, s.jobs_per_node, s.max_nodes, s.maxtime, s.low_overallocation,
            s.reserve) == (3, 2, 4, 1200, 5.0, 60)
    assert provider.work_dir == "work" and provider.job_manager == "local:local"


def test_blocks_that_never_start_fail_the_queue_with_the_reason(make_site, tmp_path):
    from swiftnb.coasters.blocks import LocalBlockProvider

    broken = tmp_path / "broken_worker.py"
    broken.write_text("import sys\nprint('worker cannot start: no such module', file=sys.stderr)\nsys.exit(1)\n")
    site = make_site({"maxJobs": 1, "planInterval": 0.05},
                     block_provider=LocalBlockProvider(worker_script=str(broken)))

    async def main():
        result = await asyncio.wait_for(site.run(site.task(1)), 30)
        await site.provider.shutdown()
        return result

    result = asyncio.run(main())
    assert not result.ok
    assert "failed to start 3 times in a row" in result.message
    assert "worker cannot start: no such module" in result.message
    assert len(site.kinds("BLOCK_FAILED")) == 3
    assert [s for s, _ in site.statuses["echo-00001"]] == [8, 1, 5]


def test_dispatch_takes_queued_first_then_the_longest_fitting(make_site):
    # one slot, block height min(round(overallocated(50), 50), 120 - 60) = 60 s.  The planner
    # commits only the 10 s task to the block (area 60^0.01 ~ 1 task); the worker takes the
    # committed task first, then the longest holding task that fits: 50 s, then 30 s.
    site = make_site({"maxJobs": 1, "tasksPerNode": 1, "maxNodesPerJob": 1,
                      "maxJobTime": "00:02:00", "planInterval": 0.1})
    order = []

    async def main():
        runs = []
        for i, wt in enumerate((10, 50, 30)):
            task = site.task(i, maxwalltime=wt)
            runs.append(site.run(task))
        site.bus.subscribe(lambda e: order.append(e["taskid"])
                           if e.kind == "TASK_STATUS_CHANGE" and e["status"] == 16 else None)
        results = await asyncio.gather(*runs)
        await site.provider.shutdown()
        return results

    results = asyncio.run(main())
    assert all(r.ok for r in results)
    walltime_of = {e["taskid"]: int(e.get("jobid", "").split("-")[-1]) for e in site.kinds("JOB_TASK")}
    assert [(10, 50, 30)[walltime_of[t]] for t in order] == [10, 50, 30]
    assert site.kinds("BLOCK_REQUESTED")[0]["walltime"] == 60



def test_shipped_worker_runs_from_a_plain_directory(make_site, tmp_path):
    # what a remote block does: copy the far side's zipapp to a node and run its worker
    # with a Python that cannot see swiftnb (-I -S: isolated, no site-packages at all)
    import shutil
    import sys

    from swiftnb.coasters.blocks import LocalBlockProvider
    from swiftnb.remote.payload import payload_file

    ship = tmp_path / "ship"
    ship.mkdir()
    shipped = ship / "_swiftremote.pyz"
    shutil.copy(payload_file(), shipped)
    python = tmp_path / "python-isolated"
    # the provider runs `PYTHON WORKER_SCRIPT ARGS`: the script's place is the zipapp's
    # `worker` command
    python.write_text(f'#!/bin/sh\ncd /\nshift\nexec "{sys.executable}" -I -S "{shipped}" worker "$@"\n')
    python.chmod(0o755)
    provider = LocalBlockProvider(python=str(python), worker_script=str(shipped),
                                  wrapper_path=str(shipped))
    site = make_site({"planInterval": 0.1}, block_provider=provider)

    async def main():
        results = await asyncio.gather(*(site.run(site.task(i, stdout=f"o{i}.txt")) for i in range(4)))
        await site.provider.shutdown()
        return results

    results = asyncio.run(main())
    assert all(r.ok for r in results), results
    assert (tmp_path / "o3.txt").read_text() == "3\n"
    assert site.kinds("WORKER_ACTIVE")


def test_cancel_a_queued_task_never_runs_it(make_site):
    site = make_site({"maxJobs": 1, "tasksPerNode": 1, "maxNodesPerJob": 1, "planInterval": 0.1})

    async def main():
        provider = site.provider
        first = asyncio.ensure_future(site.run(site.task(1, tr="sh", args=["-c", "sleep 0.5"])))
        second = asyncio.ensure_future(site.run(site.task(2)))
        await site.wait_for(lambda: any(s == 2 for s, _ in site.statuses["sh-00001"]))
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        assert provider.state().queued == 0
        ok = await first
        await provider.shutdown()
        return ok

    assert asyncio.run(main()).ok
    assert [s for s, _ in site.statuses["echo-00002"]] == [8, 1, 6]


def test_worker_logging_options(tmp_path):
    from swiftnb.coasters.provider import CoasterProvider, worker_log_dir

    assert worker_log_dir({}) is None
    assert worker_log_dir({"workerLoggingLevel": "NONE"}) is None
    logs = tmp_path / "wlogs"
    options = {"workerLoggingLevel": "DEBUG", "workerLoggingDirectory": str(logs)}
    assert worker_log_dir(options) == str(logs)
    provider = CoasterProvider("c", options)
    assert provider.log_dir == str(logs) and provider._block_provider.log_dir == str(logs)


def test_prefetch_keeps_statuses_and_cancels_waiting_tasks(make_site):
    site = make_site({"maxJobs": 1, "tasksPerNode": 1, "maxNodesPerJob": 1, "prefetch": 1,
                      "planInterval": 0.1})

    async def main():
        provider = site.provider
        first = asyncio.ensure_future(site.run(site.task(0, tr="sh", args=["-c", "sleep 0.5"])))
        await site.wait_for(lambda: any(s == 2 for s, _ in site.statuses["sh-00000"]))
        waiting = asyncio.ensure_future(site.run(site.task(1)))
        # sent ahead to the busy worker (prefetch 1), not begun: no 16 yet
        await site.wait_for(lambda: provider.state().running == 2)
        assert [s for s, _ in site.statuses["echo-00001"]] == [8, 1]
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        rest = await asyncio.gather(*(site.run(site.task(i)) for i in range(2, 12)))
        state = provider.service.state()
        await provider.shutdown()
        return await first, rest, state

    first, rest, state = asyncio.run(main())
    assert first.ok and all(r.ok for r in rest)
    assert [s for s, _ in site.statuses["echo-00001"]] == [8, 1, 6]
    for i in range(2, 12):
        assert [s for s, _ in site.statuses[f"echo-{i:05d}"]] == [8, 1, 16, 2, 17, 7]
    assert all(0 <= b["utilization"] <= 100 for b in state["blocks"])


def test_local_blocks_are_capped(make_site):
    from swiftnb.coasters.blocks import LocalBlockProvider

    site = make_site({"maxJobs": 1, "allocationStepSize": 1, "planInterval": 0.1},
                     block_provider=LocalBlockProvider(max_workers=2))

    async def main():
        results = await asyncio.gather(*(site.run(site.task(i)) for i in range(30)))
        # the tasks may all end before the second worker has connected: wait for it
        await site.wait_for(lambda: len(site.kinds("WORKER_ACTIVE")) >= 2)
        await site.provider.shutdown()
        return results

    results = asyncio.run(main())
    assert all(r.ok for r in results)
    assert site.kinds("BLOCK_REQUESTED")[0]["cores"] > 2  # planned wider than allowed
    assert len(site.kinds("WORKER_ACTIVE")) == 2
    assert any("workers planned, 2 started" in (e.text or "") for e in site.kinds("WARNING"))


def test_block_provider_for_serves_local_blocks_only():
    """``block_provider_for`` makes the registered ``local:`` block providers; batch-job
    blocks (``local:slurm``, ``ssh-cl:pbs``) come from the site's configuration instead
    (tests/coasters/test_cluster_config.py)."""
    from swiftnb.coasters.blocks import LocalBlockProvider, block_provider_for
    from swiftnb.coasters.settings import CoasterConfigError

    for job_manager in (None, "local", "local:local"):
        assert isinstance(block_provider_for(job_manager), LocalBlockProvider)
    with pytest.raises(CoasterConfigError, match="no block provider for it here"):
        block_provider_for("ssh-cl:pbs")
