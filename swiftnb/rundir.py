"""Run ids and run directories, as Swift's ``swiftrun`` made them.

Every ``swiftnb run`` gets a run directory ``runNNN`` in the current directory (three
digits, from ``run001``, next = highest existing + 1; created with ``mkdir`` so two runs
started at once never share one).  ``-runid X`` names the run, and its directory ``X``.
Inside it (docs/running.md):

* ``SCRIPT-RUNID.log``  the Swift-format log (``-logfile`` overrides), the name Swift's
  Loader gives it without the ``bin/swift`` wrapper (reference 5.1), kept in the run
  directory so that runs do not litter the working directory;
* ``SCRIPT-RUNID.0.rlog``  the restart log while the run is going; deleted on success;
* ``swift.out``  a copy of everything the run printed (stdout and stderr), as
  ``bin/swift`` tee'd it.

Job directories live under the site work directory (``swiftwork/SCRIPT-RUNID/jobs``), as
in Swift; ``SCRIPT-RUNID`` is :attr:`RunDir.site_run`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

__all__ = ["RunDir", "make_run_dir", "next_run_number", "script_stem"]

_RUN_RE = re.compile(r"^run(\d{3,})$")


def script_stem(script: str) -> str:
    """``path/to/foo.swift`` -> ``foo``."""
    name = os.path.basename(script)
    return name[:-6] if name.endswith(".swift") else os.path.splitext(name)[0] or name


def next_run_number(parent: str) -> int:
    """1 + the highest ``runNNN`` in ``parent`` (1 when there is none)."""
    highest = 0
    try:
        names = os.listdir(parent)
    except FileNotFoundError:
        names = []
    for name in names:
        m = _RUN_RE.match(name)
        if m:
            highest = max(highest, int(m.group(1)))
    return highest + 1


@dataclass(frozen=True)
class RunDir:
    """Where one run keeps its files."""

    runid: str
    path: str            # absolute run directory
    script: str          # the script path as given
    stem: str            # script name without .swift
    log_file: str        # absolute path of the Swift-format log
    restart_file: str    # absolute path of the restart log of this run

    @property
    def site_run(self) -> str:
        """``SCRIPT-RUNID``: the run's directory inside each site's work directory."""
        return f"{self.stem}-{self.runid}"

    @property
    def out_file(self) -> str:
        return os.path.join(self.path, "swift.out")


def make_run_dir(
    script: str,
    *,
    cwd: str | None = None,
    runid: str | None = None,
    logfile: str | None = None,
) -> RunDir:
    """Create the run directory (``runNNN`` unless ``runid`` is given) and name its files."""
    base = os.path.abspath(cwd or os.getcwd())
    stem = script_stem(script)
    if runid:
        path = os.path.join(base, runid)
        os.makedirs(path, exist_ok=True)
    else:
        n = next_run_number(base)
        while True:
            runid = f"run{n:03d}"
            path = os.path.join(base, runid)
            try:
                os.mkdir(path)
                break
            except FileExistsError:
                n += 1
    log_file = os.path.abspath(os.path.join(base, logfile)) if logfile else os.path.join(
        path, f"{stem}-{runid}.log")
    restart_file = os.path.join(path, f"{stem}-{runid}.0.rlog")
    return RunDir(runid=runid, path=path, script=script, stem=stem, log_file=log_file,
                  restart_file=restart_file)
