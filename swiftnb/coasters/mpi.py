"""MPI apps on coaster workers (User Guide 19.3.2, "MPICH/Coasters").

An app with ``mpi.processes`` (and ``mpi.ppn``, processes per slot, default 1; or
``jobType: "MPI"`` with ``count``) runs as one task that holds ``ceil(processes / ppn)`` slots of one
worker: the service gives it a worker with that many slots free, the worker counts them
busy until it ends, and the app starts under MPICH's Hydra as ``mpiexec -launcher fork
-n PROCESSES APP ARGS``, so its ranks run on the worker's node (``fork``: never on other
nodes of the block's allocation, which other tasks hold) and see ``PMI_RANK`` and
``PMI_SIZE``.  ``mpiexec`` must be MPICH's, on the node's ``PATH`` (as in Swift).

Swift 0.96 could also spread one MPI task over several workers (Hydra's manual launcher,
one proxy per worker); here a task's slots are on one worker, so its ``mpi.ppn`` splits
the processes into slots and a task asking for more slots than a worker has
(``tasksPerNode``) fails at once, saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["MpiShape", "mpi_shape", "launch_spec", "slots_problem"]

#: the launcher an MPI task's command starts under (MPICH's Hydra)
MPIEXEC = ("mpiexec", "-launcher", "fork")


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
    """The job spec that runs the app's ``shape.processes`` ranks under mpiexec, holding
    ``shape.slots`` slots of its worker."""
    return {**spec, "executable": MPIEXEC[0],
            "args": [*MPIEXEC[1:], "-n", str(shape.processes), str(spec["executable"]),
                     *spec.get("args", [])],
            "slots": shape.slots}


def slots_problem(site: str, tr: str, shape: MpiShape, per_worker: int) -> str | None:
    """Why a task of ``shape`` cannot run on workers of ``per_worker`` slots, or None."""
    if shape.slots <= per_worker:
        return None
    return (f"site {site}: app {tr} needs {shape.slots} slots of one worker "
            f"({shape.processes} MPI processes, mpi.ppn "
            f"{math.ceil(shape.processes / shape.slots)} per slot), and its workers have "
            f"tasksPerNode {per_worker}: raise tasksPerNode or mpi.ppn")
