"""An app's ``options`` on a coaster site: what a task reads, what the blocks carry, and
what has no effect here.

Swift 0.94-0.96 sent a coaster pool's ``globus`` profiles that were no coaster setting
to the block jobs its service submitted (the service's settings kept them as attributes
of every block job): the OSG Connect tutorial's ``condor.+AccountingGroup`` became a
``+AccountingGroup`` line of each block's submit file.  sites.xml conversion puts such
profiles in the pool's ``app.ALL.options``, so here:

* ``mpi.processes``, ``mpi.ppn``, ``jobType`` (``single``, ``mpi``) and ``count`` belong to
  the task (an MPI app holds several worker slots at once: :mod:`swiftnb.coasters.mpi`);
  ``maxwalltime`` and the brokerage keys are read by other layers;
* a key of ``app.ALL`` (the site's or the global one) that the site's batch system takes
  as a job option goes to every block job, under the site's own ``jobOptions``;
* anything else has no effect on this site and is a warning naming it and saying why:
  a batch option of one app (a block serves every app), a key the batch system has no
  meaning for, any batch option on ``local:local`` blocks (processes here) or on a
  ``coaster-persistent`` site (the running service submits its own blocks), another
  Swift distribution's provider keys (``docker.image`` of Parallel Works' pools), a
  ``jobType`` other than single or mpi (a Condor job type of CoG's provider).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from swiftnb.scheduling.provider import foreign_option

if TYPE_CHECKING:
    from swiftnb.execution.batch.lrm import LRM

__all__ = ["AppOption", "TASK_KEYS", "OTHER_LAYERS", "block_job_options", "app_options_of",
           "mpi_problems"]

#: keys a coaster task reads itself (MPI apps; ``jobtype`` is the Globus spelling)
TASK_KEYS = frozenset({"jobType", "jobtype", "count", "mpi.processes", "mpi.ppn"})
#: keys other layers read: the task's walltime, the brokerage policy's requirements
OTHER_LAYERS = frozenset({"maxwalltime", "maxWallTime", "cores", "coreCount", "memory",
                          "ramCount", "architecture", "gpu"})
#: job types a coaster task runs (CoG's ``MPI`` is accepted in any case)
_JOB_TYPES = ("single", "mpi")


@dataclass(frozen=True)
class AppOption:
    """One key of an app definition's ``options`` on a site: ``path`` is the app
    (``app.ALL``, ``site.osg.app.ALL``, ``app.sim``), ``place`` where it was written."""

    path: str
    key: str
    value: str
    place: str = ""

    @property
    def every_app(self) -> bool:
        return self.path.endswith("app.ALL")

    @property
    def name(self) -> str:
        return f"{self.path}.options.{self.key}"

    def said(self, text: str) -> str:
        return f"{self.place}: {text}" if self.place else text


def block_job_options(options: Iterable[AppOption], *, site: str, blocks: str,
                      lrm: type[LRM] | None,
                      warn: Callable[[str], None]) -> tuple[dict[str, str], list[str]]:
    """(the block jobs' options taken from ``app.ALL``, problems that cannot work).

    ``blocks`` says what the site's blocks are, for the warnings (``jobManager
    "local:condor"``); ``lrm`` is None when they are no batch jobs of this run's.  Later
    options win (give the global ``app.ALL`` first, the site's after)."""
    given = list(options)
    carried: dict[str, str] = {}
    problems: list[str] = []
    counted = _mpi_counts(given)
    for option in given:
        why = _no_effect(option, site, blocks, lrm)
        if why is None and option.key == "count" and option.path not in counted:
            why = ("a coaster task of type single takes one slot; with jobType \"MPI\" (and "
                   "no mpi.processes) count is its number of MPI processes")
        if why is not None:
            warn(option.said(f"{option.name} has no effect on site {site}: {why}; ignored"))
            continue
        if option.key in TASK_KEYS or option.key in OTHER_LAYERS:
            continue
        assert lrm is not None
        bad = lrm.check_options({option.key: option.value}, f"{option.path}.options")
        if bad:
            problems.append(option.said("; ".join(bad)))
            continue
        carried[option.key] = option.value
    return carried, problems


def _mpi_counts(options: list[AppOption]) -> set[str]:
    """The apps whose ``count`` is their number of MPI processes (jobType mpi, no
    mpi.processes)."""
    mpi = {o.path for o in options if o.key in ("jobType", "jobtype") and o.value.lower() == "mpi"}
    return mpi - {o.path for o in options if o.key == "mpi.processes"}


#: an app's queue and project keys, and the site option that gives the blocks theirs
_BLOCK_KEYS = {"jobQueue": "jobQueue", "queue": "jobQueue", "jobProject": "jobProject",
               "project": "jobProject"}


def _no_effect(option: AppOption, site: str, blocks: str, lrm: type[LRM] | None) -> str | None:
    """Why ``option`` does nothing on this coaster site, or None if something reads it."""
    key = option.key
    foreign = foreign_option(key)
    if foreign is not None:
        return foreign
    if key in OTHER_LAYERS:
        return None
    if key in ("jobType", "jobtype"):
        if option.value.lower() in _JOB_TYPES:
            return None
        return (f"job type {option.value!r} is a batch job type, and the site's tasks run on "
                f"its blocks' workers (a coaster task is of type single or mpi)")
    if key in TASK_KEYS:
        return None
    if key in _BLOCK_KEYS:
        return (f"a coaster site's blocks take theirs from "
                f"site.{site}.execution.options.{_BLOCK_KEYS[key]}")
    if key.lower() == "tasksperworker":
        return ("it is swift.properties' name for tasksPerNode, which a sites.xml pool gives "
                "as globus jobsPerNode (swift.conf: execution.options.tasksPerNode)")
    if lrm is None:
        return f"it would be an option of a batch job, and {blocks} submits none"
    ignored = lrm.ignored_options({key: option.value}, "")
    if ignored:
        meaning = ignored[key].split(" has no meaning for ", 1)[-1]
        return f"it has no meaning for {meaning}, whose jobs are this site's blocks"
    if not option.every_app:
        return ("a batch job option of one app, and a coaster block serves every app of its "
                "site; give it in app.ALL or execution.options.jobOptions")
    return None


def app_options_of(apps: Iterable[tuple[str, Mapping[str, str]]],
                   place: Callable[[str], str]) -> list[AppOption]:
    """The AppOptions of ``(path, flat options)`` pairs, ``place(name)`` giving where each
    key was written."""
    return [AppOption(path, key, str(value), place(f"{path}.options.{key}"))
            for path, flat in apps for key, value in flat.items()]


def mpi_problems(options: Iterable[AppOption], *, site: str, per_block: int | None,
                 warn: Callable[[str], None]) -> list[str]:
    """MPI keys of an app that cannot be read (problems, each with its line); an app
    whose MPI tasks need more slots than a block of ``per_block`` has (None: the
    workers say their own) is a warning: its tasks fail, the rest of the run goes on."""
    from swiftnb.coasters.mpi import mpi_shape, slots_problem

    by_app: dict[str, list[AppOption]] = {}
    for option in options:
        if option.key in TASK_KEYS:
            by_app.setdefault(option.path, []).append(option)
    problems = []
    for path, keys in by_app.items():
        tr = path.rsplit(".", 1)[-1]
        try:
            shape = mpi_shape({o.key: o.value for o in keys}, tr)
        except ValueError as exc:
            problems.append(keys[0].said(f"{path}.options: {exc}"))
            continue
        too_wide = (slots_problem(site, tr, shape, per_block)
                    if shape is not None and per_block is not None else None)
        if too_wide is not None:
            warn(keys[0].said(f"{too_wide}; its tasks will fail"))
    return problems
