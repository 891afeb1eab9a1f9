"""A real three-stage workflow for the memoization tests, run by real ``swiftnb run``
processes: stage 1 ``up`` (sed) per input, stage 2 ``combine`` (cat), stage 3
``summary`` (wc) with a script argument.  Each app is a shell script of the test's
directory that appends a line to ``counter`` (outside the workflow's files) before it
works, so a test counts what ran without trusting the events it also checks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]

SCRIPT = """
type file;
app (file o) up (file i) { up @i stdout=@o; }
app (file o) combine (file i[]) { combine @filenames(i) stdout=@o; }
app (file o) summary (file i, string tag) { PROFILE summary @i tag stdout=@o; }
string names[] = ["a", "b", "c"];
file ups[];
foreach n, k in names {
  file src <single_file_mapper; file=strcat("data/", n, ".txt")>;
  file u <single_file_mapper; file=strcat("out/up-", n, ".txt")>;
  u = up(src);
  ups[k] = u;
}
file all <"out/all.txt">;
all = combine(ups);
file s <"out/summary.txt">;
s = summary(all, arg("tag", "plain"));
"""

APPS = {
    # fails while the file "fail-up" exists (outside the workflow)
    "up": 'echo "up $1" >> "{d}/counter"; [ ! -e "{d}/fail-up" ] || exit 3; sed s/a/A/g "$1"',
    "combine": 'echo combine >> "{d}/counter"; cat "$@"',
    "summary": 'echo "summary $2" >> "{d}/counter"; printf "%s " "$2"; wc -c < "$1"',
}


@dataclass
class Ran:
    """One ``swiftnb run``: its process, and what its log and the counter say."""

    proc: subprocess.CompletedProcess[str]
    log: str
    ran: Counter[str]            # app -> calls that ran (from the counter file)

    @property
    def cached(self) -> int:
        return len(re.findall(r" JOB_CACHED ", self.log))

    @property
    def not_cached(self) -> list[str]:
        """The reasons of the JOB_NOT_CACHED lines."""
        return re.findall(r" JOB_NOT_CACHED jobid=\S+ tr=\S+ reason=(.*)", self.log)

    @property
    def restored(self) -> int:
        return len(re.findall(r" JOB_CACHED \S+ \S+ restored=true", self.log))


class Workflow:
    """The workflow in ``root``: its script, apps, inputs and swift.conf."""

    def __init__(self, root: Path, opt_out: str = "", conf_extra: str = "") -> None:
        self.root = root
        (root / "data").mkdir(parents=True, exist_ok=True)
        (root / "bin").mkdir(exist_ok=True)
        for name, body in APPS.items():
            self.write_app(name, body.format(d=root))
        for name in "abc":
            (root / "data" / f"{name}.txt").write_text(f"{name} banana\n")
        (root / "wf.swift").write_text(SCRIPT.replace("PROFILE", opt_out))
        apps = "\n".join(f'    app.{n} {{ executable: "{root}/bin/{n}.sh" }}' for n in APPS)
        (root / "swift.conf").write_text(
            f'sites: [local]\nsite.local {{\n    execution {{ type: "local" }}\n'
            f'    app.ALL {{ executable: "*" }}\n{apps}\n}}\n{conf_extra}\n')

    def write_app(self, name: str, body: str) -> None:
        path = self.root / "bin" / f"{name}.sh"
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)

    def counter(self) -> list[str]:
        path = self.root / "counter"
        return path.read_text().splitlines() if path.exists() else []

    def run(self, *options: str, args: tuple[str, ...] = (), timeout: float = 120) -> Ran:
        before = len(self.counter())
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        proc = subprocess.run([*SWIFTNB, "run", *options, "wf.swift", *args], cwd=self.root,
                              env=env, capture_output=True, text=True, timeout=timeout)
        logs = sorted(self.root.glob("run*/*.log"), key=os.path.getmtime)
        log = logs[-1].read_text() if logs else ""
        ran = Counter(line.split()[0] for line in self.counter()[before:])
        return Ran(proc, log, ran)

    def memo(self, *options: str, args: tuple[str, ...] = ()) -> Ran:
        """A run with memoization on; fails the test if the run failed."""
        r = self.run("-memoize", "true", *options, args=args)
        assert r.proc.returncode == 0, r.proc.stderr + r.log[-3000:]
        return r
