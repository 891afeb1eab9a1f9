"""Why a batch job waits, in the batch system's code and in a sentence for a person.

A job that a batch system keeps pending is the commonest silent failure of a new
configuration: a block asking for 16 tasks per node on 8-CPU nodes waits for ever,
and the run shows nothing but ``Submitted``.  Slurm says why in a reason code (squeue's
``%r``), Grid Engine in ``qstat -j``'s scheduling info; this module turns each into a
``Waiting`` (swiftnb.scheduling.waiting), whose ``reason`` stays the batch system's own
word (to search its documentation for) and whose ``detail`` says what to change.  The WAITING event carries
both (docs/design.md, "Events").
"""

from __future__ import annotations

import re

from swiftnb.scheduling.waiting import Waiting

__all__ = ["slurm_waiting", "sge_waiting", "sge_scheduling_info"]


#: Slurm's reason codes (squeue(1), "JOB REASON CODES") and what they ask of a person
_SLURM: dict[str, str] = {
    "PartitionConfig": "the job asks for more than the partition allows (more CPUs, "
                       "nodes or time than it offers): lower tasksPerNode/ppn, nodes or "
                       "the walltime, or choose another partition",
    "Resources": "the nodes the job needs are busy; it starts when they are free",
    "Priority": "jobs of higher priority are ahead of it in the queue",
    "ReqNodeNotAvail": "a node the job needs is down, drained or reserved: ask the "
                       "administrators, or choose another partition",
    "PartitionNodeLimit": "the job asks for more nodes than the partition allows: "
                          "lower the nodes per block or choose another partition",
    "PartitionTimeLimit": "the job's walltime is over the partition's limit: lower "
                          "maxWalltime/maxTime or choose another partition",
    "PartitionDown": "the partition is down: ask the administrators or choose another",
    "PartitionInactive": "the partition is inactive: ask the administrators or choose "
                         "another",
    "QOSMaxCpuPerUserLimit": "your jobs together would use more CPUs than your QOS "
                             "allows; it starts when others end (or lower maxJobs)",
    "QOSMaxJobsPerUserLimit": "you have as many jobs running as your QOS allows; it "
                              "starts when others end",
    "QOSMaxWallDurationPerJobLimit": "the job's walltime is over your QOS's limit: "
                                     "lower it",
    "AssocGrpCpuLimit": "your account's CPUs are all in use; it starts when its other "
                        "jobs end",
    "AssocGrpJobsLimit": "your account has as many jobs as it may; it starts when "
                         "others end",
    "AssocMaxJobsLimit": "you have as many jobs as your association allows; it starts "
                         "when others end",
    "AssocGrpCPUMinutesLimit": "your account has used up its CPU minutes: ask for more "
                               "allocation",
    "Dependency": "the job waits for another job it depends on",
    "DependencyNeverSatisfied": "the job depends on a job that failed: it will never "
                                "run; cancel it",
    "JobHeldUser": "the job is held (scontrol release releases it)",
    "JobHeldAdmin": "an administrator holds the job",
    "BeginTime": "the job asked not to start before a later time",
    "Reservation": "the job waits for its advanced reservation",
    "NodeDown": "a node the job needs is down",
    "BadConstraints": "the job's constraints cannot be met by any node: check "
                      "jobOptions",
    "InvalidAccount": "the job's account (jobProject) is not valid: fix it",
    "InvalidQOS": "the job's QOS is not valid: fix it",
}


def slurm_waiting(reason: str, facts: str = "") -> Waiting | None:
    """The Waiting of a pending Slurm job whose squeue reason is ``reason``; ``facts``
    (what the job asks and the partition has) is added to the sentence.  None for
    ``None`` (no reason: about to start)."""
    code = reason.strip().strip("()")
    if not code or code == "None":
        return None
    sentence = _SLURM.get(code, f"Slurm keeps the job pending ({code}): see squeue(1), "
                                "JOB REASON CODES")
    if facts:
        sentence = f"{sentence.split(':', 1)[0]}: {facts}" + (
            f"; {sentence.split(':', 1)[1].strip()}" if ":" in sentence else "")
    return Waiting(code, sentence)


#: Grid Engine's scheduling info lines (sched_conf(5) schedd_job_info) -> a code and
#: what to do; the first that matches wins
_SGE: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r'cannot run in PE "([^"]+)" because it only offers (\d+) slots'),
     "pe-slots", 'the job asks for more slots than parallel environment "{0}" offers '
                 "({1} free now): lower tasksPerNode/ppn or choose another PE or queue"),
    (re.compile(r"cannot run in queue \"?([^\"\s]+)\"? because it exceeds limit"),
     "queue-limit", 'the job asks for more than queue "{0}" allows (a resource limit): '
                    "lower what it asks or choose another queue"),
    (re.compile(r"cannot run because it exceeds limit \"([^\"]+)\""),
     "resource-quota", 'the job exceeds resource quota "{0}": it starts when your other '
                       "jobs end, or lower what it asks"),
    (re.compile(r"cannot run in queue instance \"([^\"]+)\" because PE \"([^\"]+)\" is "
                r"not in pe list"),
     "pe-not-in-queue", 'queue "{0}" does not offer parallel environment "{1}": set '
                        "jobOptions.pe to one it offers"),
    (re.compile(r"cannot run because resources requested are not available for parallel "
                r"job"),
     "pe-resources", "the resources this parallel job asks for are not available: lower "
                     "what it asks"),
    (re.compile(r"has no permission for cluster queue \"([^\"]+)\""),
     "no-permission", 'you may not use queue "{0}": choose another queue'),
    (re.compile(r"queue instance \"([^\"]+)\" dropped because it is full"),
     "queue-full", 'queue "{0}" is full; the job starts when slots are free'),
    (re.compile(r"dropped because it is (?:temporarily not available|disabled)"),
     "queue-unavailable", "the queue is disabled or unavailable: ask the administrators"),
    (re.compile(r"job dropped because of job dependencies"),
     "dependency", "the job waits for another job it depends on"),
    (re.compile(r"is not allowed to run in any queue"),
     "no-queue", "no queue accepts the job as asked (resources, queue or PE): check "
                 "jobOptions, queue and tasksPerNode"),
]


def sge_scheduling_info(text: str) -> dict[str, list[str]]:
    """job number -> its ``scheduling info`` lines, from one ``qstat -j ID,ID...``."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    in_info = False
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "job_number":
            current = out.setdefault(value.strip(), [])
            in_info = False
        elif sep and key.strip() == "scheduling info" and current is not None:
            in_info = True
            if value.strip():
                current.append(value.strip())
        elif in_info and current is not None and line[:1].isspace() and line.strip():
            current.append(line.strip())
        elif line.strip():
            in_info = False
    return out


def sge_waiting(info: list[str]) -> Waiting | None:
    """The Waiting of a pending Grid Engine job from its scheduling info lines (None
    when the scheduler says nothing: it has not looked at the job yet)."""
    for line in info:
        for pattern, code, sentence in _SGE:
            match = pattern.search(line)
            if match is not None:
                return Waiting(code, sentence.format(*match.groups()))
    lines = [line for line in info if "turned off" not in line]
    if not lines:
        return None
    return Waiting("pending", f"Grid Engine keeps the job pending: {lines[0]}")
