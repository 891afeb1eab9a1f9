"""Launchers: how a batch job runs one command on each of its nodes.

A coaster block is one batch job over ``nodes`` nodes that must start one worker per
node; the batch system gives the job's script a single shell on the first node, and how
to reach the others differs per system and site.  A launcher turns "run this command on
every node" into that script's line: ``srun`` (Slurm), ``mpiexec`` (MPICH/Hydra and
Intel MPI's ``-ppn``), ``aprun`` (Cray ALPS, PBS with ``pbs.aprun``), ``ssh`` to each
host of the job's node file (PBS, SGE, LSF, Cobalt), or ``plain`` (one node: the command
itself).

Each copy learns its index among the job's copies through ``SWIFTNB_WORKER_INDEX`` (the
launchers that spawn copies themselves set it) or the launcher's own rank variable
(``SLURM_PROCID``, ``PMI_RANK``, ``ALPS_APP_PE``), which ``worker.py --id auto`` reads.
"""

from __future__ import annotations

import abc
import shlex
from typing import ClassVar

__all__ = ["Launcher", "PlainLauncher", "SrunLauncher", "MpiexecLauncher", "AprunLauncher",
           "SSHLauncher", "launcher_for", "LAUNCHERS", "NODE_FILES"]


class Launcher(abc.ABC):
    """Runs a shell command once on each node of a batch job."""

    name: ClassVar[str]

    @abc.abstractmethod
    def command(self, command: str, nodes: int) -> str:
        """The job script's line that runs ``command`` (a shell command line) on each of
        the job's ``nodes`` nodes and waits for all of them."""


class PlainLauncher(Launcher):
    """No launcher: the job's own node runs every copy (one for a one-node job; ``nodes``
    copies side by side for a batch system that gives one node, or processes on a login
    node for ``ssh-cl:local``)."""

    name = "plain"

    def command(self, command: str, nodes: int) -> str:
        if nodes <= 1:
            return f"SWIFTNB_WORKER_INDEX=0 sh -c {shlex.quote(command)}"
        return (f"_i=0; while [ $_i -lt {nodes} ]; do SWIFTNB_WORKER_INDEX=$_i sh -c "
                f"{shlex.quote(command)} & _i=$((_i+1)); done; wait")


class SrunLauncher(Launcher):
    """Slurm's ``srun``: one task per node inside the job's allocation."""

    name = "srun"

    def command(self, command: str, nodes: int) -> str:
        return (f"srun --nodes={nodes} --ntasks={nodes} --ntasks-per-node=1 --overlap "
                f"sh -c {shlex.quote(command)}")


class MpiexecLauncher(Launcher):
    """``mpiexec -n N -ppn 1`` (MPICH/Hydra, Intel MPI): one process per node."""

    name = "mpiexec"

    def command(self, command: str, nodes: int) -> str:
        return f"mpiexec -n {nodes} -ppn 1 sh -c {shlex.quote(command)}"


class AprunLauncher(Launcher):
    """Cray ALPS ``aprun -n N -N 1``: one processing element per node, with ``-d DEPTH``
    cores for it when jobOptions ``depth`` says so (as CoG's PBS provider ran aprun)."""

    name = "aprun"

    def __init__(self, depth: int | None = None) -> None:
        self.depth = depth

    def command(self, command: str, nodes: int) -> str:
        depth = f" -d {self.depth}" if self.depth else ""
        return f"aprun -n {nodes} -N 1{depth} sh -c {shlex.quote(command)}"


#: where batch systems list a job's hosts, one per line (a host repeated per slot)
NODE_FILES = ("PBS_NODEFILE", "PE_HOSTFILE", "COBALT_NODEFILE", "LSB_DJOB_HOSTFILE")


class SSHLauncher(Launcher):
    """``ssh`` to each distinct host of the job's node file (PBS_NODEFILE, SGE's
    PE_HOSTFILE, COBALT_NODEFILE, LSB_DJOB_HOSTFILE; without one, this host only), with
    BatchMode so that a node without keys fails at once instead of asking.  A one-node
    job runs its copy in its own shell (no login, no keys needed)."""

    name = "ssh"

    def command(self, command: str, nodes: int) -> str:
        if nodes <= 1:  # the job's own node: nothing to log in to
            return PlainLauncher().command(command, 1)
        files = " ".join(f'"${{{v}:-}}"' for v in NODE_FILES)
        # the remote shell gets the command quoted once more: it unquotes it into sh -c
        return (
            f"_cmd={shlex.quote(shlex.quote(command))}; "
            f"_hosts=$(for f in {files}; do [ -n \"$f\" ] && [ -r \"$f\" ] && "
            "awk '{print $1}' \"$f\" && break; done | awk '!seen[$0]++'); "
            '[ -n "$_hosts" ] || _hosts=$(hostname); _i=0; '
            'for _h in $_hosts; do '
            'ssh -o BatchMode=yes "$_h" "cd \\"$PWD\\" && SWIFTNB_WORKER_INDEX=$_i exec sh -c $_cmd" & '
            '_i=$((_i+1)); done; wait')


LAUNCHERS: dict[str, type[Launcher]] = {
    cls.name: cls for cls in (PlainLauncher, SrunLauncher, MpiexecLauncher, AprunLauncher,
                              SSHLauncher)
}

#: the launcher a batch system's blocks use unless the site names one (``launcher``)
_DEFAULTS = {"slurm": "srun", "pbs": "ssh", "moab": "ssh", "sge": "ssh", "lsf": "ssh",
             "cobalt": "aprun", "condor": "plain", "local": "plain", "fork": "plain"}


def launcher_for(lrm: str, name: str | None = None, *, depth: int | None = None) -> Launcher:
    """The launcher ``name`` (``srun``, ``mpiexec``, ``aprun``, ``ssh``, ``plain``), else
    the usual one for batch system ``lrm``; ``depth`` (jobOptions ``depth``) is aprun's
    ``-d``.  ValueError names the known ones."""
    chosen = name or _DEFAULTS.get(lrm, "plain")
    cls = LAUNCHERS.get(chosen)
    if cls is None:
        raise ValueError(f"no launcher called '{chosen}' (one of {', '.join(sorted(LAUNCHERS))})")
    if cls is AprunLauncher:
        return AprunLauncher(depth)
    return cls()
