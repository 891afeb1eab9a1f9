"""Memoized calls on an SSH site (the test sshd) and on a coaster site (local:fork
blocks): the outputs' digests come back from the far side, and re-runs reuse, or run
only what a changed input reaches."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from workflow import SWIFTNB

pytestmark = pytest.mark.timeout(300)

SYSTEM_APPS = """
type file;
app (file o) up (file i) { sed "s/a/A/g" @i stdout=@o; }
app (file o) combine (file i[]) { cat @filenames(i) stdout=@o; }
app (file o) summary (file i) { wc "-c" @i stdout=@o; }
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
s = summary(all);
"""


def _prepare(root: Path, conf: str) -> None:
    (root / "data").mkdir(parents=True)
    for name in "abc":
        (root / "data" / f"{name}.txt").write_text(f"{name} banana\n")
    (root / "wf.swift").write_text(SYSTEM_APPS)
    (root / "swift.conf").write_text(conf)


def _run(root: Path, env: dict[str, str]) -> tuple[int, int, list[str]]:
    """(exit code, calls reused, reasons of the calls run) of one memoized run."""
    r = subprocess.run([*SWIFTNB, "run", "-memoize", "true", "wf.swift"], cwd=root,
                       env={**os.environ, **env, "PYTHONPATH": os.pathsep.join(sys.path)},
                       capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    log = sorted(root.glob("run*/*.log"), key=os.path.getmtime)[-1].read_text()
    return (r.returncode, len(re.findall(r" JOB_CACHED ", log)),
            re.findall(r" JOB_NOT_CACHED jobid=\S+ tr=\S+ reason=(.*)", log))


def _three_runs(root: Path, env: dict[str, str]) -> None:
    assert _run(root, env) == (0, 0, ["no earlier call"] * 5)
    assert _run(root, env) == (0, 5, [])
    (root / "data" / "c.txt").write_text("c cabana\n")
    assert _run(root, env) == (0, 2, ["input changed: data/c.txt",
                                      "input changed: out/up-c.txt",
                                      "input changed: out/all.txt"])
    assert (root / "out" / "up-c.txt").read_text() == "c cAbAnA\n"


def test_memoized_calls_on_an_ssh_site(sshd, tmp_path):
    _prepare(tmp_path, f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/memo-swiftwork"
    staging: "swift"
    app.ALL {{ executable: "*" }}
}}
""")
    _three_runs(tmp_path, sshd.env())


def test_memoized_calls_on_a_coaster_site(tmp_path):
    _prepare(tmp_path, f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "coaster", jobManager: "local:fork",
                 options {{ maxJobs: 1, tasksPerNode: 2, maxJobTime: "00:05:00" }} }}
    staging: "swift"
    workDirectory: "{tmp_path / 'work'}"
    app.ALL {{ executable: "*", maxWallTime: "00:01:00" }}
}}
""")
    _three_runs(tmp_path, {})


def test_memoized_calls_on_a_slurm_site(slurm, tmp_path):
    """Each call a batch job of the real Slurm: the digests come back with the result."""
    _prepare(tmp_path, f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "slurm", options {{ pollInterval: 0.5 }} }}
    staging: "swift"
    workDirectory: "{tmp_path / 'work'}"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
""")
    _three_runs(tmp_path, slurm.env())
