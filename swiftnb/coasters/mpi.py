"""MPI apps on coaster workers (User Guide 19.3.2, "MPICH/Coasters").

An app with ``mpi.processes`` (and ``mpi.ppn``, processes per slot, default 1; or
``jobType: "MPI"`` with ``count``) runs as one task that holds ``ceil(processes / ppn)``
worker slots, all at once or not at all.  On one worker with that many slots free it
starts under MPICH's Hydra as ``mpiexec -launcher fork -n PROCESSES APP ARGS`` (its ranks
on the worker's node).  When no worker has room, the service may take free slots of
several workers of one block (:func:`spread_spec`): ``mpiexec`` runs on the first of them
with ``-hosts NODE:RANKS,...`` naming the nodes of all of them, as Swift 0.96's
``Mpiexec2`` ran ``mpirun -hostfile`` on its first Cpu; with every part on one host (a
``local:local`` block) Hydra forks the ranks there (``-launcher fork``), else Hydra
reaches the other nodes its own way (ssh, or the batch system's launcher such as
Slurm's ``srun`` inside the block's allocation).  Ranks see ``PMI_RANK`` and
``PMI_SIZE``; ``mpiexec`` must be MPICH's, on the node's ``PATH`` (as in Swift).

A task asking for more slots than a block can have (``maxNodesPerJob x tasksPerNode``)
fails at once, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MpiShape", "mpi_shape", "launch_spec", "spread_spec", "slots_problem"]

#: MPICH's Hydra process manager, and its launcher for ranks on its own host
MPIEXEC = "mpiexec"
ON_THIS_HOST = ("-launcher", "fork")


@dataclass(frozen=True)
class MpiShape:
    """An MPI task: its processes and the worker slots they hold."""

    processes: int
    slots: int


def _whole(profiles: Mapping[str, str], key: str, tr: str) -> int | None:
    raw = profiles.get(key)
    if raw is None:
        return None
    text = str(raw).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"app {tr}'s {key} must be a whole number of at least 1 "
                         f"(got {raw!r})")
    return int(text)


def mpi_shape(profiles: Mapping[str, str], tr: str) -> MpiShape | None:
    """The task's MPI shape from its profiles, None for a plain task; ValueError names the
    key that cannot be read."""
    job_type = str(profiles.get("jobType") or profiles.get("jobtype") or "single").lower()
    processes = _whole(profiles, "mpi.processes", tr)
    if processes is None and job_type == "mpi":
        processes = _whole(profiles, "count", tr) or 1
    if processes is None:
        if "mpi.ppn" in profiles:
            raise ValueError(f"app {tr}'s mpi.ppn needs mpi.processes (the number of MPI "
                             "processes)")
        return None
    per_slot = min(_whole(profiles, "mpi.ppn", tr) or 1, processes)
    return MpiShape(processes, math.ceil(processes / per_slot))


def launch_spec(spec: dict[str, Any], shape: MpiShape) -> dict[str, Any]:
    """The job spec that runs the app's ``shape.processes`` ranks under mpiexec on one
    worker, holding ``shape.slots`` of its slots (``mpi`` keeps the app's own command
    line for :func:`spread_spec`)."""
    app = [str(spec["executable"]), *spec.get("args", [])]
    return {**spec, "executable": MPIEXEC,
            "args": [*ON_THIS_HOST, "-n", str(shape.processes), *app],
            "slots": shape.slots, "mpi": {"processes": shape.processes, "app": app}}


def spread_spec(spec: dict[str, Any], parts: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """``spec`` (from :func:`launch_spec`) run over worker slots on several workers:
    ``parts`` are (node, slots) of each, the first the worker that starts mpiexec.  Each
    node gets ``ceil(processes / slots)`` ranks a slot, the last what is left."""
    mpi = spec["mpi"]
    processes = int(mpi["processes"])
    per_slot = math.ceil(processes / sum(slots for _, slots in parts))
    hosts: list[str] = []
    left = processes
    for node, slots in parts:
        ranks = min(left, slots * per_slot)
        if ranks > 0:
            hosts.append(f"{node}:{ranks}")
        left -= ranks
    launcher = ON_THIS_HOST if len({node for node, _ in parts}) == 1 else ()
    return {**spec, "slots": parts[0][1],
            "args": [*launcher, "-hosts", ",".join(hosts), "-n", str(processes),
                     *mpi["app"]]}


def slots_problem(site: str, tr: str, shape: MpiShape, per_block: int) -> str | None:
    """Why a task of ``shape`` cannot run on blocks of ``per_block`` slots, or None."""
    if shape.slots <= per_block:
        return None
    return (f"site {site}: app {tr} needs {shape.slots} worker slots at once "
            f"({shape.processes} MPI processes, mpi.ppn "
            f"{math.ceil(shape.processes / shape.slots)} per slot), and its blocks have "
            f"{per_block} (maxNodesPerJob x tasksPerNode): raise maxNodesPerJob, "
            "tasksPerNode or mpi.ppn")
