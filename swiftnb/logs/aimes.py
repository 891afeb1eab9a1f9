"""The AIMES ``durations.json`` format (``swiftnb timings --format aimes``).

The AIMES experiments (seeds/002) analysed Swift 0.96 logs into per-entity state time
stamps.  This writes the same document from any log so that existing analysis scripts
keep working.  The rules of that analysis are kept: whole epoch seconds (milliseconds
truncated), each state the first matching line, a ``TASK_STATUS_CHANGE`` counted only
when the line ends at ``status=N`` (except 2 and 16, which carry ``workerid=``), no
stage in for a worker logged as ``<block>:-``, a retried job's later tasks carry no host.

One difference is deliberate: the original analysis read the log's UTC times as US
Eastern local time, so its epochs are 18,000 s late.  swiftnb reports true UTC; pass
``offset=18000`` to reproduce the original numbers.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from swiftnb.logs.frame import STATUS_NAMES, LogFrame

__all__ = ["durations", "AIMES_OFFSET"]

#: what the original analysis added to every epoch (UTC read as US Eastern)
AIMES_OFFSET = 18000


def _sec(value: Any, offset: int) -> int | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return int(math.floor(float(value))) + offset


def _str(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA:
        return None
    return str(value)


def _strip_urn(taskid: Any) -> Any:
    if isinstance(taskid, str) and taskid.startswith("urn:"):
        return taskid[4:]
    return taskid


def durations(log: LogFrame, *, offset: int = 0) -> dict[str, Any]:
    """The durations.json document of a run (``offset`` seconds added to every epoch)."""
    run = log.run
    jobs = log.jobs
    tasks = log._tasks(aimes=True)
    blocks = log.blocks
    workers = log.workers

    out_jobs: dict[str, Any] = {}
    for jobid, row in jobs.iterrows():
        out_jobs[str(jobid)] = {
            "states": {s: _sec(row.get(s), offset)
                       for s in ("init", "sselect", "start", "task", "end")},
            "host": _str(row.get("host")),
            "task_id": _str(_strip_urn(row.get("taskid"))),
        }

    out_tasks: dict[str, Any] = {}
    for taskid, row in tasks.iterrows():
        out_tasks[str(_strip_urn(taskid))] = {
            "states": {name: _sec(row.get(name), offset) for name in STATUS_NAMES.values()},
            "workerid": _str(row.get("workerid")),
            "host": _str(row.get("host")),
            "blockid": _str(row.get("blockid")),
            "jobid": _str(row.get("jobid")),
        }

    # tasks per worker, in task order; hosts of blocks from the jobs their tasks ran
    tasks_of: dict[str, list[str]] = {}
    host_of_block: dict[str, str] = {}
    job_host = jobs["host"] if "host" in jobs else pd.Series(dtype=object)
    for taskid, row in tasks.iterrows():
        wid = row.get("workerid")
        if isinstance(wid, str):
            tasks_of.setdefault(wid, []).append(str(_strip_urn(taskid)))
            host = job_host.get(row.get("jobid")) if row.get("jobid") is not None else None
            if isinstance(host, str):
                host_of_block.setdefault(str(row.get("blockid")), host)
    hosts = run.get("hosts") or []
    default_host = hosts[0] if len(hosts) == 1 else None

    out_blocks: dict[str, Any] = {}
    for bid, row in blocks.iterrows():
        nodes = row.get("nodes")
        wlist = row.get("workers")
        out_blocks[str(bid)] = {
            "states": {s: _sec(row.get(s), offset)
                       for s in ("requested", "active", "shutdown", "done")},
            "host": host_of_block.get(str(bid), default_host),
            "cores_per_worker": _str(row.get("coresPerWorker")),
            "utilization": _str(row.get("utilization")),
            "cores": _str(row.get("cores")),
            "nodes": list(nodes) if isinstance(nodes, list) else [],
            "workers": list(wlist) if isinstance(wlist, list) else [],
            "walltime": _str(row.get("walltime")),
        }

    out_workers: dict[str, Any] = {}
    for wid, row in workers.iterrows():
        block = _str(row.get("block"))
        out_workers[str(wid)] = {
            "node": _str(row.get("node")),
            "tasks": tasks_of.get(str(wid), []),
            "cores_node": _str(row.get("cores")),
            "states": {s: _sec(row.get(s), offset) for s in ("active", "lost", "shutdown")},
            "host": host_of_block.get(block or "", default_host),
            "block": block,
        }

    session = {
        "states": {"start": _sec(run.get("start"), offset),
                   "finish": _sec(run.get("finish"), offset)},
        "ntasks": len(out_tasks),
        "nblocks": len(out_blocks),
        "hosts": list(hosts),
        "tasks_failed": sum(1 for t in out_tasks.values() if t["states"]["failed"] is not None),
        "njobs": len(out_jobs),
        "tasks_completed": sum(1 for t in out_tasks.values()
                               if t["states"]["completed"] is not None),
        "ID": run.get("run_id"),
        "nworkers": len(out_workers),
    }
    return {"Blocks": out_blocks, "Workers": out_workers, "Session": session,
            "Jobs": out_jobs, "Tasks": out_tasks}
