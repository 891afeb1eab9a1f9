"""Globus profiles of a coaster pool are block job options (issue 25).

Swift 0.94-0.96 sent a coaster pool's globus profiles that were no coaster setting to the
block jobs its service submitted.  The files in tests/data/configs25/ have the shapes real
users published (each says where from); before this change each was refused with "has no
effect on site ... only batch sites run an app as a job of its own".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
DATA = Path(__file__).resolve().parent.parent / "data" / "configs25"
FAKES = Path(__file__).resolve().parent.parent / "fakes"
SCRIPT = """
type file;
app (file o) cat (file i) { cat @i stdout=@o; }
file inp <"in.txt">;
file out <"out.txt">;
out = cat(inp);
"""


def _swiftnb(cwd: Path, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SWIFTNB, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=150)


def _copy(tmp_path: Path, name: str, **marks: str) -> Path:
    text = (DATA / name).read_text()
    for mark, value in marks.items():
        text = text.replace(mark, value)
    target = tmp_path / name
    target.write_text(text)
    return target


def test_osg_connect_sites_xml_loads_with_its_job_type_named_as_ignored(tmp_path):
    _copy(tmp_path, "osg-connect-sites.xml", WORKDIR=str(tmp_path / "work"))
    (tmp_path / "tc.data").write_text("osg cat /bin/cat null null null\n")
    r = _swiftnb(tmp_path, "check-config", "-sites.file", "osg-connect-sites.xml",
                 "-tc.file", "tc.data")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout + r.stderr
    assert ("osg-connect-sites.xml:18: site.osg.app.ALL.options.jobType has no effect on "
            "site osg: job type 'nonshared' is a batch job type") in out
    assert "AccountingGroup has no effect" not in out  # it goes to the blocks


def test_globus_genomics_sites_xml_loads_and_names_tasks_per_worker(tmp_path):
    _copy(tmp_path, "globus-genomics-sites.xml")
    r = _swiftnb(tmp_path, "check-config", "-sites.file", "globus-genomics-sites.xml")
    assert r.returncode == 0, r.stderr + r.stdout
    out = r.stdout + r.stderr
    assert ("globus-genomics-sites.xml:6: site.gg.app.ALL.options.tasksPerWorker has no "
            "effect on site gg: it is swift.properties' name for tasksPerNode") in out
    assert "+Tenant has no effect" not in out


def test_parallel_works_docker_image_is_a_warning(tmp_path):
    _copy(tmp_path, "parallelworks-persistent.conf")
    r = _swiftnb(tmp_path, "check-config", "-config", "parallelworks-persistent.conf")
    assert r.returncode == 0, r.stderr + r.stdout
    assert ("parallelworks-persistent.conf:8: site.pw.app.ALL.options.docker.image has no "
            "effect on site pw: this build of swiftnb ignores it") in r.stdout + r.stderr


@pytest.mark.parametrize("jm, app, expected", [
    # local:local blocks are processes: a batch option does nothing
    ("local:local", "ALL", 'jobManager "local:local" submits none'),
    # one app's batch option: a block serves every app
    ("local:condor", "cat", "a coaster block serves every app"),
    # a PBS key on HTCondor blocks
    ("local:condor", "ALL", "it has no meaning for condor"),
])
def test_batch_options_with_no_effect_on_a_coaster_site_are_warnings(tmp_path, jm, app,
                                                                      expected):
    key = '"pbs.aprun": true' if expected.endswith("condor") else '"condor.+Project": "\\"x\\""'
    (tmp_path / "swift.conf").write_text(f"""
sites: c
site.c {{
    execution {{ type: "coaster", jobManager: "{jm}", options {{ maxJobs: 1 }} }}
    workDirectory: "{tmp_path}/work"
    app.{app} {{ executable: "*", options {{ {key} }} }}
}}
""")
    r = _swiftnb(tmp_path, "check-config", "-config", "swift.conf")
    assert r.returncode == 0, r.stderr + r.stdout
    assert "has no effect on site c" in r.stdout + r.stderr and expected in r.stdout + r.stderr


def test_a_condor_attribute_that_cannot_be_written_is_refused(tmp_path):
    (tmp_path / "swift.conf").write_text(f"""
sites: c
site.c {{
    execution {{ type: "coaster", jobManager: "local:condor" }}
    workDirectory: "{tmp_path}/work"
    app.ALL {{ executable: "*", options {{ "condor.bad name": "1" }} }}
}}
""")
    r = _swiftnb(tmp_path, "check-config", "-config", "swift.conf")
    assert r.returncode == 1
    assert "swift.conf:6: site.c.app.ALL.options.condor.bad name" in r.stdout + r.stderr


def test_the_block_submit_file_carries_the_pools_condor_attribute(tmp_path):
    """The OSG Connect pool runs through the FAKE HTCondor (tests/fakes: condor cannot run
    here); its block's submit description has the pool's +AccountingGroup line."""
    from fakes import fakelrm

    work = tmp_path / "work"
    _copy(tmp_path, "osg-connect-sites.xml", WORKDIR=str(work))
    (tmp_path / "tc.data").write_text("osg cat /bin/cat null null null\n")
    (tmp_path / "in.txt").write_text("payload\n")
    (tmp_path / "wf.swift").write_text(SCRIPT)
    state = tmp_path / "fake-lrm"
    env = {**os.environ,
           "PATH": f"{FAKES / 'bin' / 'condor'}{os.pathsep}{os.environ.get('PATH', '')}",
           fakelrm.ENV_DIR: str(state), fakelrm.ENV_PYTHON: sys.executable}
    try:
        r = _swiftnb(tmp_path, "run", "-sites.file", "osg-connect-sites.xml", "-tc.file",
                     "tc.data", "-keepSiteDir", "true", "wf.swift", env=env)
    finally:
        fakelrm.stop_all(state)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.txt").read_text() == "payload\n"
    descriptions = list(work.glob("*/blocks/*.sub"))
    assert descriptions, list(work.rglob("*"))
    text = descriptions[0].read_text()
    assert '+AccountingGroup = "group_friends.$USER"' in text.splitlines(), text


def test_docker_image_is_a_warning_on_a_local_site_too(tmp_path):
    (tmp_path / "swift.conf").write_text(f"""
sites: l
site.l {{
    execution {{ type: "local" }}
    workDirectory: "{tmp_path}/work"
    app.ALL {{ executable: "*", options {{ docker.image: "ubuntu:22.04" }} }}
}}
""")
    r = _swiftnb(tmp_path, "check-config", "-config", "swift.conf")
    assert r.returncode == 0, r.stderr + r.stdout
    assert ("swift.conf:6: site.l.app.ALL.options.docker.image has no effect on site l: "
            "this build of swiftnb ignores it") in r.stdout + r.stderr


def test_slurm_blocks_carry_the_sites_app_all_slurm_option(tmp_path, slurm):
    """A real Slurm (tests/slurm.py): the block's job has the app.ALL option (Slurm shows
    the job's comment)."""
    work = tmp_path / "work"
    (tmp_path / "swift.conf").write_text(f"""
sites: [cluster]
lazyErrors: false
site.cluster {{
    execution {{ type: "coaster", jobManager: "local:slurm",
                 options {{ maxJobs: 1, tasksPerNode: 1, maxNodesPerJob: 1,
                           maxJobTime: "00:10:00", jobQueue: "{slurm.partition}" }} }}
    staging: "swift"
    workDirectory: "{work}"
    app.ALL {{ executable: "*", maxWallTime: "00:01:00",
               options {{ slurm.comment: "swiftnb-issue-25" }} }}
}}
""")
    (tmp_path / "in.txt").write_text("payload\n")
    (tmp_path / "wf.swift").write_text(SCRIPT)
    r = _swiftnb(tmp_path, "run", "-config", "swift.conf", "wf.swift", env=slurm.env())
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.txt").read_text() == "payload\n"
    log = next(tmp_path.glob("run*/*.log")).read_text()
    job = re.search(r"block \S+ is slurm job (\d+)", log)
    assert job, log
    shown = subprocess.run(["scontrol", "show", "job", job.group(1)], env=slurm.env(),
                           capture_output=True, text=True, timeout=30)
    assert "Comment=swiftnb-issue-25" in shown.stdout, shown.stdout + shown.stderr
