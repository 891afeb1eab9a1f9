"""What one task's batch job asks for, from the site's options and the app's.

A batch site (``execution.type: "slurm"``, ``"sge"``...) runs each task as one job of its
batch system.  The job's shape comes from two places:

* the site's ``execution.options``: ``jobQueue``, ``jobProject``, ``nodes``,
  ``tasksPerNode``, ``jobOptions`` (the batch system's own options), and the longest job
  the site takes (``maxJobTime``, ``maxWallTime`` or ``maxTime``: the shortest set);
* the app's definition (``app.NAME { maxWallTime: ..., options { ... } }``), which reaches
  the task as its profiles (``scheduling.apps.AppCatalogue.resolve``), as do the script's
  ``profile`` lines (which win).

What each app key does on a one-job-per-task site:

====================  =================================================================
``jobQueue``          the job's queue, over the site's (``queue`` is the same key)
``jobProject``        the job's project or account, over the site's (also ``project``)
``jobType``           ``single`` (default): the app runs once; ``mpi`` or ``multiple``:
                      the app runs as ``processes`` copies under the batch system's
                      launcher (``srun`` on Slurm; ``aprun`` on Cobalt and on PBS with
                      ``pbs.aprun``; ``mpiexec -n`` elsewhere)
``count``             single: the cores of its one process (tasks per node); mpi and
                      multiple: the number of processes
``mpi.processes``     mpi and multiple: the number of processes (over ``count``)
``mpi.ppn``           mpi and multiple: processes per node, so nodes = processes / ppn
                      rounded up; default the site's ``tasksPerNode`` if set, else all
                      processes on one node
anything else         a batch system option (``ppn``, ``depth``, ``pbs.*``, ``slurm.*``,
                      ``condor.*``...) merged over the site's ``jobOptions``, if the
                      site's batch system takes it (:meth:`LRM.check_options`)
====================  =================================================================

Keys other layers read pass untouched: ``maxwalltime`` (the task's walltime) and the
brokerage policy's requirements (``cores``, ``memory``...).  Another distribution's keys
(``docker.image``..., :func:`~swiftnb.scheduling.provider.foreign_option`) are left out of
the job, with a warning when the configuration is checked.  Every other key is refused
with the site's name: a key silently dropped would run the job somewhere the user did not
ask for.

Walltime: the task's (the app's ``maxWallTime`` or the script's ``maxwalltime``), else 10
minutes (Swift's default for a task); the batch system enforces it at its own
granularity (Slurm: whole minutes).  A task asking for longer than the site's longest
job is refused; the default is capped to it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from swiftnb.engine.task import Task
from swiftnb.execution.batch.lrm import LRM, hms
from swiftnb.execution.batch.optionvalues import truth
from swiftnb.scheduling.provider import foreign_option

__all__ = ["SiteJobs", "JobRequest", "JOB_TYPES", "DEFAULT_WALLTIME", "OTHER_LAYERS"]

#: a task's walltime when neither the app nor the script gives one (seconds)
DEFAULT_WALLTIME = 600
JOB_TYPES = ("single", "mpi", "multiple")
#: other spellings of the job keys (the script's Globus-style profile names)
_ALIASES = {"queue": "jobQueue", "project": "jobProject", "jobtype": "jobType"}
_WHOLE_NUMBERS = ("count", "mpi.processes", "mpi.ppn")
#: keys other layers read: the task's walltime, the brokerage policy's requirements
OTHER_LAYERS = frozenset({"maxwalltime", "maxWallTime", "cores", "coreCount", "memory",
                          "ramCount", "architecture", "gpu"})


@dataclass(frozen=True, slots=True)
class JobRequest:
    """One task's job: what the batch system is asked for, and the launcher (if any)
    that runs the app's copies (``("srun", "--ntasks=4")``; empty: the app runs once)."""

    walltime: int
    nodes: int
    tasks_per_node: int
    queue: str | None
    project: str | None
    options: Mapping[str, str]
    launch: tuple[str, ...] = ()


@dataclass(frozen=True)
class SiteJobs:
    """A batch site's side of its jobs, and the rules that merge an app's options in."""

    site: str
    lrm: type[LRM]
    queue: str | None = None
    project: str | None = None
    nodes: int = 1
    tasks_per_node: int | None = None
    job_options: Mapping[str, str] = field(default_factory=dict)
    max_time: int | None = None        # seconds: the longest job the site takes
    max_time_key: str = "maxJobTime"   # the option that set it, for messages

    # -- checking ---------------------------------------------------------------------------
    def check_option(self, key: str, value: str, where: str = "options") -> str | None:
        """What is wrong with one app option on this site (``where.key ...``), or None."""
        name = _ALIASES.get(key, key)
        if name in OTHER_LAYERS or name in ("jobQueue", "jobProject"):
            return None
        if foreign_option(key) is not None:  # warned about when the site is built
            return None
        if name in _WHOLE_NUMBERS:
            if not value.strip().isdigit() or int(value) < 1:
                return f"{where}.{key} must be a whole number of at least 1 (got {value!r})"
            return None
        if name == "jobType":
            if value not in JOB_TYPES:
                return (f"{where}.{key} {value!r} is not a job type this site runs (one of "
                        f"{', '.join(JOB_TYPES)})")
            return None
        if name.startswith("mpi."):
            return (f"{where}.{key} has no meaning on a batch site (mpi.processes and "
                    "mpi.ppn do)")
        problems = self.lrm.check_options({key: value}, where)
        if problems:
            problems.append("an app's own keys are jobQueue, jobProject, jobType, count, "
                            "mpi.processes and mpi.ppn")
        return "; ".join(problems) if problems else None

    def check_options(self, options: Mapping[str, str], where: str = "options") -> list[str]:
        return [p for key, value in options.items()
                if (p := self.check_option(key, value, where)) is not None]

    # -- one task -----------------------------------------------------------------------------
    def request(self, task: Task) -> JobRequest:
        """The job of ``task``; ValueError names the site, the key and why not."""
        profiles = {_ALIASES.get(k, k): v for k, v in task.profiles.items()}
        problems = self.check_options(task.profiles, f"app {task.tr}'s options")
        if problems:
            raise ValueError(f"site {self.site} ({self.lrm.name}): " + "; ".join(problems))
        lrm_options = {k: v for k, v in profiles.items()
                       if k not in OTHER_LAYERS and k not in ("jobQueue", "jobProject",
                                                              "jobType", *_WHOLE_NUMBERS)
                       and foreign_option(k) is None}
        options = {**self.job_options, **lrm_options}
        job_type = profiles.get("jobType", "single")
        count = int(profiles.get("count", "1"))
        if job_type == "single":
            mpi = [k for k in ("mpi.processes", "mpi.ppn") if k in profiles]
            if mpi:
                raise ValueError(f"site {self.site}: app {task.tr}'s {mpi[0]} needs "
                                 "jobType \"mpi\" (or \"multiple\")")
            launch: tuple[str, ...] = ()
            nodes, per_node = self.nodes, count
            if "count" not in profiles:
                per_node = self.tasks_per_node or 1
        else:
            processes = int(profiles.get("mpi.processes", count))
            per_node = int(profiles.get("mpi.ppn") or self.tasks_per_node or processes)
            per_node = min(per_node, processes)
            nodes = math.ceil(processes / per_node)
            launch = self._launcher(processes, per_node, options)
        return JobRequest(self.walltime(task), nodes, per_node,
                          profiles.get("jobQueue") or self.queue,
                          profiles.get("jobProject") or self.project, options, launch)

    def walltime(self, task: Task) -> int:
        """Seconds the job may run (see the module docstring); ValueError if the task
        asks for more than the site takes."""
        if task.maxwalltime:
            asked = math.ceil(task.maxwalltime)
            if self.max_time is not None and asked > self.max_time:
                raise ValueError(
                    f"site {self.site}: app {task.tr}'s walltime {hms(asked)} is longer than "
                    f"the site's {self.max_time_key} {hms(self.max_time)}")
            return asked
        if self.max_time is not None:
            return min(DEFAULT_WALLTIME, self.max_time)
        return DEFAULT_WALLTIME

    def _launcher(self, processes: int, per_node: int,
                  options: Mapping[str, str]) -> tuple[str, ...]:
        name = self.lrm.name
        if name == "slurm":
            return ("srun", f"--ntasks={processes}")
        if name == "cobalt" or (name == "pbs" and truth(options.get("pbs.aprun")) is True):
            depth = ("-d", str(options["depth"])) if "depth" in options else ()
            return ("aprun", "-n", str(processes), "-N", str(per_node), *depth)
        return ("mpiexec", "-n", str(processes))
