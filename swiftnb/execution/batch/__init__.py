"""Batch systems: LRM adapters, launchers, and the one-job-per-task batch provider.

``lrm`` defines the adapter contract (:class:`~swiftnb.execution.batch.lrm.LRM`) and the
status poller; one module per batch system implements it (``slurm``, ``sge``, ``pbs``,
``lsf``, ``condor``, ``cobalt``); ``launchers`` says how a job starts one process per
node.  Every adapter runs its commands through a :class:`~swiftnb.execution.shell.Shell`,
so the same code submits on this machine (``local:slurm``) and through a login node
(``ssh-cl:slurm``).
"""

from swiftnb.execution.batch.lrm import (LRM, JobState, JobStatus, JobPoller, Resources,
                                         lrm_class, lrm_names, register_lrm)

__all__ = ["LRM", "JobState", "JobStatus", "JobPoller", "Resources", "lrm_class", "lrm_names",
           "register_lrm"]
