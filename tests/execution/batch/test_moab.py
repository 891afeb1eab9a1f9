"""The Moab adapter (``local:moab``, ``execution.type: "moab"``) against a FAKE Moab.

No Moab server runs on the test machine: the FAKE ``msub``/``showq``/``checkjob``/
``canceljob`` of ``tests/fakes/bin/moab`` print the formats Adaptive Computing documented
(``tests/fakes/moab_fake.py`` says which) and really run the jobs.  Besides the adapter's
own life cycle, an LLNL-shaped sites.xml (``jobmanager="local:moab"``) is checked by
``swiftnb check-config`` and runs a script through coaster blocks submitted with msub, and
a swift.conf batch site of type moab runs one.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fakes import FakeLRM, fake_lrm  # noqa: F401  (pytest fixture)
from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import JobState, JobStatus, Resources, lrm_class
from swiftnb.execution.batch.moab import Moab, parse_checkjob, parse_showq
from swiftnb.execution.shell import LocalShell
from swiftnb.scheduling.provider import ProviderError

pytestmark = pytest.mark.timeout(90)
#: the FAKE Moab first on PATH (tests/fakes)
FAKE_MOAB = pytest.mark.parametrize("fake_lrm", ["moab"], indirect=True, ids=["FAKE-moab"])

DATA = Path(__file__).resolve().parents[2] / "data" / "configs25"
SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]


@pytest.fixture
def work(tmp_path: Path, fake_lrm: FakeLRM, monkeypatch: pytest.MonkeyPatch) -> Path:  # noqa: F811
    monkeypatch.setenv("SWIFTNB_FAKE_LRM_QUEUES", "pbatch,batch")
    path = tmp_path / "work"
    path.mkdir()
    return path


def _resources(work: Path, name: str, **kw: object) -> Resources:
    return Resources(name=name, workdir=str(work), stdout=str(work / f"{name}.out"),
                     stderr=str(work / f"{name}.err"), **kw)  # type: ignore[arg-type]


async def _until_ended(lrm: Moab, job_id: str, timeout: float = 20.0) -> list[JobStatus]:
    seen: list[JobStatus] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await lrm.status([job_id])).get(job_id)
        if status is not None and (not seen or seen[-1] != status):
            seen.append(status)
        if status is not None and status.state.terminal:
            return seen
        await asyncio.sleep(0.1)
    raise AssertionError(f"FAKE moab job {job_id} never ended: {seen}")


@FAKE_MOAB
def test_FAKE_moab_is_registered_and_writes_msub_directives(work: Path) -> None:
    assert lrm_class("moab") is Moab
    lrm = Moab(LocalShell(), site="cab")
    lines = lrm.directives(Resources(name="j1", walltime=3600, nodes=2, tasks_per_node=8,
                                     queue="pbatch", project="acct", stdout="/o", stderr="/e",
                                     options={"moab.l": "feature=gpu"}))
    assert lines == ["#MSUB -S /bin/sh", "#MSUB -N j1", "#MSUB -l nodes=2:ppn=8",
                     "#MSUB -l walltime=01:00:00", "#MSUB -q pbatch", "#MSUB -A acct",
                     "#MSUB -o /o", "#MSUB -e /e", "#MSUB -l feature=gpu"]
    assert "ppn=4" in lrm.directives(Resources(options={"ppn": "4"}))[2]
    assert Moab.check_options({"moab.long": "x"})   # not a one-letter msub option
    assert "pbs.l" in Moab.ignored_options({"pbs.l": "x"})


def test_FAKE_moab_formats_are_read() -> None:
    showq = ("active jobs------------------------\n"
             "JOBID              USERNAME      STATE PROCS   REMAINING            STARTTIME\n\n"
             "12941                sartois    Running    25     2:44:11  Thu Sep  1 15:02:50\n\n"
             "1 active job\n\neligible jobs----------------------\n"
             "JOBID              USERNAME      STATE PROCS     WCLIMIT            QUEUETIME\n\n"
             "12956               cfosdyke       Idle    32     6:40:00  Thu Sep  1 15:02:50\n"
             "12978               cfosdyke   UserHold     4     1:00:00  Thu Sep  1 15:02:50\n")
    assert parse_showq(showq) == {"12941": "Running", "12956": "Idle", "12978": "UserHold"}
    fields = parse_checkjob("job 7\n\nAName: x\nState: Completed\n"
                            "Completion Code: 3  Time: Thu Sep  1 15:02:50\n")
    assert fields["state"] == "Completed" and fields["completion code"].split()[0] == "3"


@FAKE_MOAB
def test_FAKE_moab_jobs_complete_fail_are_cancelled_and_time_out(work: Path) -> None:
    async def body() -> None:
        lrm = Moab(LocalShell(), site="cab")

        async def submit(name: str, command: str, **kw: object) -> str:
            r = _resources(work, name, **kw)
            return await lrm.submit(lrm.script(command, r), r)

        done = await submit("done1", "echo from-the-job", queue="pbatch")
        seen = await _until_ended(lrm, done)
        assert (seen[-1].state, seen[-1].exit_code) == (JobState.COMPLETED, 0)
        assert (work / "done1.out").read_text() == "from-the-job\n"

        failed = await submit("fail1", "exit 3")
        last = (await _until_ended(lrm, failed))[-1]
        assert (last.state, last.exit_code) == (JobState.FAILED, 3), last

        slow = await submit("cancel1", "sleep 30")
        await asyncio.sleep(0.5)
        await lrm.cancel([slow])
        assert (await _until_ended(lrm, slow))[-1].state is JobState.CANCELED
        await lrm.cancel([slow])   # an ended job: no error

        walled = await submit("wall1", "sleep 30", walltime=1)
        last = (await _until_ended(lrm, walled))[-1]
        assert last.state is JobState.TIMEOUT and "wallclock" in last.reason, last

        with pytest.raises(ProviderError) as err:
            await submit("refused1", "true", queue="nosuch")
        assert err.value.kind is FailureKind.SUBMIT_REFUSED
        assert "invalid QOS/class requested" in str(err.value)
        assert "site cab (moab on this machine)" in str(err.value)
    asyncio.run(body())


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "SWIFTNB_FAKE_LRM_QUEUES": "pbatch,batch"}


_SCRIPT = """type file;
app (file o) greet (string s) { echo s stdout=@o; }
foreach i in [1:3] {
  file x <single_file_mapper; file=strcat("out", i, ".txt")>;
  x = greet(strcat("hi ", i));
}
"""


def _outputs(run_dir: Path) -> list[str]:
    return [(run_dir / f"out{i}.txt").read_text() for i in (1, 2, 3)]


@FAKE_MOAB
def test_FAKE_llnl_sites_xml_with_local_moab_checks_and_runs(
        work: Path, tmp_path: Path, fake_lrm: FakeLRM) -> None:  # noqa: F811
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    sites = run_dir / "sites.xml"
    sites.write_text((DATA / "llnl-moab-sites.xml").read_text().replace("WORKDIR", str(work)))
    (run_dir / "tc.data").write_text("cab echo /bin/echo null null null\n")
    (run_dir / "t.swift").write_text(_SCRIPT)
    legacy = ["-sites.file", "sites.xml", "-tc.file", "tc.data"]
    checked = subprocess.run([*SWIFTNB, "check-config", *legacy], cwd=run_dir,
                             env=_env(tmp_path), capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr
    assert 'jobManager: "local:moab"' in checked.stdout
    ran = subprocess.run([*SWIFTNB, *legacy, "t.swift"], cwd=run_dir, env=_env(tmp_path),
                         capture_output=True, text=True, timeout=80)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _outputs(run_dir) == ["hi 1\n", "hi 2\n", "hi 3\n"]
    jobs = fake_lrm.records()
    assert jobs and all(j["queue"] == "pbatch" and j["extra"]["account"] == "ACCOUNT"
                        for j in jobs)


@FAKE_MOAB
def test_FAKE_batch_site_of_type_moab_runs_a_script(work: Path, tmp_path: Path,
                                                    fake_lrm: FakeLRM) -> None:  # noqa: F811
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "swift.conf").write_text(f"""
sites: [cab]
site.cab {{
    execution {{ type: "moab", options {{ jobQueue: "pbatch", maxJobTime: "00:05:00" }} }}
    workDirectory: "{work}"
    staging: "local"
    app.echo {{ executable: "/bin/echo" }}
}}
""")
    (run_dir / "t.swift").write_text(_SCRIPT)
    ran = subprocess.run([*SWIFTNB, "t.swift"], cwd=run_dir, env=_env(tmp_path),
                         capture_output=True, text=True, timeout=80)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert _outputs(run_dir) == ["hi 1\n", "hi 2\n", "hi 3\n"]
    assert len(fake_lrm.records()) == 3
