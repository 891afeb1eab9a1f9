"""The job wrapper: one app invocation in its own job directory (Swift's ``_swiftwrap``).

Why this package is stdlib-only: it is shipped, inside the zipapp ``_swiftremote.pyz``
(:mod:`swiftnb.remote.payload`), to whatever Python an SSH host or a cluster node has, and
runs there as ``python3 -I _swiftremote.pyz wrap`` or inside the coaster worker.  It must
not import anything of swiftnb outside ``swiftnb.remote``.  ``swiftnb.remote.wrapper`` is
its public face; the modules here are one concept each: spec.py (the job spec and result
TypedDicts, failure kinds, the job-directory layout), names.py, files.py, cdm.py,
digests.py, spares.py, report.py, jobbase.py / staging.py / job.py (the Job), processes.py
(containment), sequence.py (a job of several commands), main.py (run alone).

A job is described by a plain JSON-able *spec* (see :func:`spec_from_task`), so that it can
cross a socket as it is.  The wrapper

1. creates the job directory ``WORKDIR/SITE_RUN/jobs/<first letter of jobid>/<jobid>``
   (``WORKDIR`` is the site ``workDirectory``, ``swiftwork`` under the base directory by
   default; ``SITE_RUN`` is ``SCRIPT-RUNID``; retries get ``<jobid>-<attempt>`` so every
   attempt has its own workspace, as Guide 5.1 requires),
2. stages inputs in at their :func:`job_name` (an absolute ``/d/f`` as ``__root__/d/f``)
   so that no app can write to the user's file: a copy of its own for a file up to
   1 MiB (and every input when the site has a ``scratch`` directory), else a link to
   the site run's copy (``SITE_RUN/shared/...``, made once, again when an app changed
   it); a ``stdin=`` that is no input gets a copy beside the job directory; it
   pre-creates the directories of the outputs in the job directory,
3. runs the argv list (never a shell string) with the job directory as working directory
   and stdin/stdout/stderr redirected; every mapped file the app may write is named by
   its :func:`job_name`, inside the job directory (``..`` as ``__parent__``, an absolute
   path under ``__root__``), in whatever argument word it stands (:func:`job_args`);
   an app body of several commands (the spec's ``commands``: those after the first,
   Swift/K trunk) runs as one process, sequence.py as a process of its own
   (:func:`run_commands`), which runs them in order, each with its own redirections,
   and stops at the first that fails, whose exit code becomes the job's,
4. on exit 0 with every declared output present, moves the outputs to their mapped
   places with ``os.replace`` (atomic; a copy to a temporary name first across file
   systems, a name within NAME_MAX), so a mapped path never holds a partial file,
   whether relative or absolute, and a failed app leaves the previous content in
   place.  An output is a regular file of its own: one the app left as a symbolic link
   to a regular file or as a second hard link is replaced by a copy of the data first;
   a dangling link, a link to a directory or a device, a pipe fail the call naming
   it (no output is moved then).  A job directory or base directory removed while the
   app ran is a ``stage-out`` failure naming it, not the app's.  With them every file
   matching the spec's ``output_globs`` (dynamic outputs: an app that makes an array of
   files whose number only it knows; none is required); otherwise builds Swift's
   failure text (reference 2.6)::

       Exception in echo:
           Arguments: [a, b]
           Host: local
           Directory: script-run001/jobs/e/echo-k0qzzmvr
           stderr.txt: <tail of stderr>
           stdout.txt: <tail of stdout>
       Caused by: Application /bin/echo failed with an exit code of 1

   followed by ``\tat script.swift:LINE:COL`` (the call's position) when the spec
   carries ``source``;

5. removes the job directory unless ``keep`` (keepSiteDir) is set.

The result dict: ``ok``, ``exit_code``, ``message`` (the text above), ``cause`` (its last
line), ``stdout_tail``, ``stderr_tail``, ``site``, ``directory``, ``kind`` (None when ok,
else one of the ``KIND_*`` strings: what kind of failure, for retries and site scores),
``retryable`` and ``canceled`` (older flags, derived from ``kind``), ``staged_out`` (on
success: the base_dir-relative paths moved to base_dir, in the order moved; a remote site
runs the wrapper with base_dir = its ``shared/`` directory and fetches exactly these) and
``cdm_actions`` (what the CDM directives did, one line each, as ``_swiftwrap``'s info file
told).

Collective data management (User Guide 20): the spec's ``cdm`` maps an input or output
path to ``[POLICY, *args]``.  DIRECT ``DIR``: an input is read from ``DIR/path`` (not
staged to base_dir; copied or linked to a run copy as any input, never linked to the
file itself), an output written through a link to ``DIR/path`` and left there (a link
the app left there is made a regular file); LOCAL ``TOOL DIR
[args]``: an input copied from ``DIR/path`` into the job directory by ``cp`` or ``dd``;
BROADCAST ``DIR``: an input copied once per node into ``DIR/path`` (kept while size and
mtime match) and linked; GATHER ``DIR``: an output moved to ``DIR/path`` on the site
instead of base_dir.  Such outputs are not in ``staged_out`` (they are not fetched back).
As in ``_swiftwrap``, an existing ``DIR/path`` from an earlier run satisfies a DIRECT
output's check: the wrapper never deletes files on the shared file system.

Blocking callers use :func:`run_job`; an asyncio caller uses :func:`prepare`, starts
the app itself (``job.start(environment)``: no Popen, see ``spawn.py``; or Popen with
``job.popen_kwargs()``) and calls ``job.finish(returncode)``.
"""
