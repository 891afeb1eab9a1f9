"""A synthetic coaster run as an event stream (what the emitters of the brief send)."""

from __future__ import annotations

from swiftnb.events import Event, EventBus

T0 = 1700000000.0


def coaster_run(bus: EventBus, clock: list[float], *, njobs: int = 6, fail_first: bool = True) -> None:
    """Emit a run: config, jobs through a coaster block, one failed attempt + retry."""

    def at(t: float) -> None:
        clock[0] = T0 + t

    at(0.0)
    bus.emit("CONFIG", text="[D] etc/swift.conf\n{\n\tsites: [local]\n}")
    bus.emit("RUN_START", {})
    bus.emit("TRACE", text="SwiftScript trace: starting, 6")
    block = "1122-4110110-000000"
    for j in range(njobs):
        jobid = f"sleep-{j:04d}abcd"
        at(0.1 + j * 0.01)
        bus.emit("PROCEDURE", {"line": 3, "thread": f"R-2-{j}", "name": "remote_driver"})
        bus.emit("JOB_INIT", {"jobid": jobid, "tr": "sleep"})
        bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
        bus.emit("THREAD_ASSOCIATION", {"jobid": jobid, "thread": f"R-2-{j}", "host": "local",
                                        "replicationGroup": None})
        bus.emit("JOB_START", {"jobid": jobid, "tr": "sleep", "arguments": ["1", "two words"],
                               "tmpdir": f"run001/jobs/s/{jobid}", "host": "local"})
        bus.emit("JOB_TASK", {"jobid": jobid, "taskid": f"urn:R-2-{j}-1700000000{j:03d}",
                              "exec": "/bin/bash", "dir": f"run001/jobs/s/{jobid}",
                              "args": "_swiftwrap.staging -e sleep -out stdout.txt -a 1"})
        bus.emit("TASK_STATUS_CHANGE", {"taskid": f"urn:R-2-{j}-1700000000{j:03d}", "status": 8})
    at(1.0)
    bus.emit("BLOCK_REQUESTED", {"id": block, "cores": 4, "coresPerWorker": 1, "walltime": 540})
    for j in range(njobs):
        bus.emit("TASK_STATUS_CHANGE", {"taskid": f"urn:R-2-{j}-1700000000{j:03d}", "status": 1})
    at(5.0)
    bus.emit("BLOCK_ACTIVE", {"id": block})
    at(6.5)
    bus.emit("WORKER_ACTIVE", {"blockid": block, "id": "000000", "node": "node-a", "cores": 4})
    for j in range(njobs):
        taskid = f"urn:R-2-{j}-1700000000{j:03d}"
        jobid = f"sleep-{j:04d}abcd"
        at(7.0 + j)
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 16,
                                        "workerid": f"{block}:000000"})
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 2,
                                        "workerid": f"{block}:000000"})
        at(9.0 + j)
        if fail_first and j == 0:
            bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 5,
                                            "message": "Exit code 1"})
            bus.emit("APPLICATION_EXCEPTION", {"jobid": jobid,
                                               "message": "Exit code 1\nstderr.txt: boom"})
            retry = f"urn:R-2-{j}-1700000009{j:03d}"
            bus.emit("JOB_SITE_SELECT", {"jobid": jobid})
            bus.emit("JOB_TASK", {"jobid": jobid, "taskid": retry, "exec": "/bin/bash",
                                  "dir": f"run001/jobs/s/{jobid}", "args": "-a 1"})
            for status in (8, 1):
                bus.emit("TASK_STATUS_CHANGE", {"taskid": retry, "status": status})
            at(12.0)
            for status in (16, 2):
                bus.emit("TASK_STATUS_CHANGE", {"taskid": retry, "status": status,
                                                "workerid": f"{block}:000000"})
            taskid = retry
            at(14.0)
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 17})
        bus.emit("TASK_STATUS_CHANGE", {"taskid": taskid, "status": 7})
        bus.emit("JOB_END", {"jobid": jobid})
        bus.emit("END_SUCCESS", {"thread": f"R-2-{j}", "tr": "sleep"})
        bus.emit("PROCEDURE_END", {"line": 3, "thread": f"R-2-{j}", "name": "remote_driver"})
    at(20.0)
    bus.emit("BLOCK_SHUTDOWN", {"id": block})
    bus.emit("BLOCK_UTILIZATION", {"id": block, "u": 81.5})
    bus.emit("WORKER_LOST", {"blockid": block, "id": "000000"})
    bus.emit("WORKER_SHUTDOWN", {"blockid": block, "id": "000000"})
    at(21.0)
    bus.emit("BLOCK_DONE", {"id": block})
    bus.emit("RUN_SUCCESS", {})


def record(**kwargs) -> list[Event]:
    clock = [T0]
    bus = EventBus(clock=lambda: clock[0])
    events: list[Event] = []
    bus.subscribe(events.append)
    coaster_run(bus, clock, **kwargs)
    return events
