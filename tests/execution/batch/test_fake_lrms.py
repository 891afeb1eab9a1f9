"""The PBS/Torque, LSF, HTCondor and Cobalt adapters against FAKE batch systems.

None of the four can run on the test machine, so every test here uses the FAKE commands of
``tests/fakes`` (stdlib programs named like ``qsub``, ``bjobs``, ``condor_q``..., printing
the real commands' documented formats and really running the jobs), put first on PATH for
this process by the ``fake_lrm`` fixture and reached through a real ``LocalShell``.  The
directive tests compare each job script with the directives the systems' documentation
gives, line by line.  Walltime minutes of LSF and Cobalt last one second in the fakes.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from fakes import FakeLRM, fake_lrm  # noqa: F401  (pytest fixture)
from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.cobalt import Cobalt
from swiftnb.execution.batch.condor import Condor
from swiftnb.execution.batch.lrm import LRM, JobPoller, JobState, JobStatus, Resources, lrm_class
from swiftnb.execution.batch.lsf import LSF
from swiftnb.execution.batch.pbs import PBS
from swiftnb.execution.shell import CommandResult, LocalShell
from swiftnb.scheduling.provider import ProviderError

pytestmark = pytest.mark.timeout(30)

ALL = ["pbs", "lsf", "condor", "cobalt"]
SITE = "cluster1"


class CountingShell(LocalShell):
    """This machine's shell, remembering the commands it ran (one status query per poll)."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[list[str]] = []

    async def run(self, argv: Sequence[str], *, input: bytes | None = None,
                  timeout: float | None = None, cwd: str | None = None) -> CommandResult:
        self.commands.append(list(argv))
        return await super().run(argv, input=input, timeout=timeout, cwd=cwd)


@dataclass
class Cluster:
    fake: FakeLRM
    lrm: LRM
    shell: CountingShell
    work: Path

    def resources(self, name: str, **kw: object) -> Resources:
        return Resources(name=name, workdir=str(self.work), stdout=str(self.work / f"{name}.out"),
                         stderr=str(self.work / f"{name}.err"), **kw)  # type: ignore[arg-type]

    async def submit(self, name: str, command: str, **kw: object) -> str:
        resources = self.resources(name, **kw)
        return await self.lrm.submit(self.lrm.script(command, resources), resources)

    async def wait(self, job_id: str, until: frozenset[JobState] | None = None,
                   timeout: float = 15.0) -> list[JobStatus]:
        """Poll until the job reaches one of ``until`` (default: any end); every status
        seen, in order."""
        seen: list[JobStatus] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = (await self.lrm.status([job_id])).get(job_id)
            if status is not None and (not seen or seen[-1] != status):
                seen.append(status)
            if status is not None and (status.state in until if until else status.state.terminal):
                return seen
            await asyncio.sleep(0.1)
        raise AssertionError(f"FAKE {self.fake.system} job {job_id} never got there: {seen}")


@pytest.fixture
def cluster(fake_lrm: FakeLRM, tmp_path: Path) -> Cluster:  # noqa: F811
    work = tmp_path / "work"
    work.mkdir()
    shell = CountingShell()
    return Cluster(fake_lrm, lrm_class(fake_lrm.system)(shell, site=SITE), shell, work)


def fakes(*systems: str) -> pytest.MarkDecorator:
    return pytest.mark.parametrize("fake_lrm", list(systems), indirect=True,
                                   ids=[f"FAKE-{s}" for s in systems])


RUNNING = frozenset({JobState.RUNNING})


def synced(test: Callable[..., Awaitable[None]]) -> Callable[..., None]:
    """Run an async test body in its own event loop (pytest sees its fixtures)."""
    @functools.wraps(test)
    def run(*args: object, **kwargs: object) -> None:
        asyncio.run(test(*args, **kwargs))  # type: ignore[arg-type]
    return run


# -- names --
def test_FAKE_names_and_aliases_of_0_96() -> None:
    assert lrm_class("pbs") is PBS and lrm_class("pbslocal") is PBS
    assert lrm_class("lsf") is LSF
    assert lrm_class("condor") is Condor and lrm_class("condorlocal") is Condor
    assert lrm_class("cobalt") is Cobalt and lrm_class("cobaltlocal") is Cobalt


# -- directives, line by line --
def _expected(system: str, work: Path) -> tuple[dict[str, str], list[str]]:
    """jobOptions and the lines the documentation says they make (qsub(1) of Torque, LSF
    10.1 bsub, HTCondor condor_submit, ALCF's Cobalt guide)."""
    out, err = work / "blk-7.out", work / "blk-7.err"
    if system == "pbs":
        return ({"ppn": "8", "pbs.properties": "ib", "pbs.l": "mem=4gb",
                 "pbs.resource_list": "file=20gb"},
                ["#PBS -S /bin/sh", "#PBS -N blk-7", "#PBS -m n", "#PBS -l walltime=00:02:05",
                 "#PBS -l nodes=2:ppn=8:ib", "#PBS -q debug", "#PBS -A proj",
                 f"#PBS -o {out}", f"#PBS -e {err}", "#PBS -l file=20gb", "#PBS -l mem=4gb"])
    if system == "lsf":
        return ({"ppn": "8", "lsf.x": "true", "lsf.R": "rusage[mem=4000]"},
                ["#BSUB -J blk-7", "#BSUB -W 0:03", "#BSUB -n 16", '#BSUB -R "span[ptile=8]"',
                 "#BSUB -q debug", "#BSUB -P proj", f"#BSUB -cwd {work}", f"#BSUB -o {out}",
                 f"#BSUB -e {err}", "#BSUB -x", "#BSUB -R rusage[mem=4000]"])
    if system == "condor":
        return ({"ppn": "8", "condor.requirements": '(OpSys == "LINUX")',
                 "condor.+ProjectName": '"swift"'},
                [f"executable = {work}/blk-7.sh", "universe = vanilla", f"output = {out}",
                 f"error = {err}", f"log = {work}/blk-7.log", "request_cpus = 16",
                 "periodic_remove = (JobStatus == 2) && ((time() - EnteredCurrentStatus) > 125)",
                 "notification = never", "accounting_group = proj",
                 'requirements = (OpSys == "LINUX")', '+ProjectName = "swift"', "queue"])
    return ({"cobalt.attrs": "mcdram=cache:numa=quad", "cobalt.disablePreboot": "true"},
            ["#COBALT -t 3", "#COBALT -n 2", "#COBALT -q debug", "#COBALT -A proj",
             f"#COBALT -O {work}/blk-7", f"#COBALT -o {out}", f"#COBALT -e {err}",
             "#COBALT --attrs mcdram=cache:numa=quad", "#COBALT --disable_preboot"])


@fakes(*ALL)
@synced
async def test_FAKE_directives_match_the_documented_ones(cluster: Cluster) -> None:
    system = cluster.fake.system
    options, expected = _expected(system, cluster.work)
    queue = None if system == "condor" else "debug"
    resources = cluster.resources("blk-7", walltime=125, nodes=2, tasks_per_node=4,
                                  queue=queue, project="proj", options=options,
                                  env={"SWIFTNB_X": "a b"})
    script = cluster.lrm.script("echo hello", resources)
    lines = script.splitlines()
    assert lines[0] == "#!/bin/sh"
    assert "export SWIFTNB_X='a b'" in lines
    if isinstance(cluster.lrm, Condor):
        assert not any(line.startswith("#") for line in lines[1:])
        assert cluster.lrm.description(resources).splitlines() == expected
    else:
        directive = cluster.lrm.directive
        assert [line for line in lines if line.startswith(directive + " ")] == expected
        # directives come before the first command, where the batch systems read them
        assert lines[1:1 + len(expected)] == expected
    # the FAKE system reads them as its real counterpart would
    job_id = await cluster.lrm.submit(script, resources)
    record = cluster.fake.records()[-1]
    assert record["queue"] == (queue or "")
    if system == "pbs":
        assert record["extra"]["resources"] == {"walltime": "00:02:05", "nodes": "2:ppn=8:ib",
                                                "file": "20gb", "mem": "4gb"}
        assert (record["walltime"], record["slots"], record["name"]) == (125, 16, "blk-7")
        assert record["extra"]["account"] == "proj"
    elif system == "lsf":
        assert (record["walltime"], record["slots"]) == (3.0, 16)  # 3 minutes of 1 s
        assert record["extra"]["R"] == ["span[ptile=8]", "rusage[mem=4000]"]
    elif system == "condor":
        assert (record["walltime"], record["slots"]) == (125.0, 16)
        assert record["extra"]["accounting_group"] == "proj"
    else:
        assert (record["walltime"], record["slots"]) == (3.0, 2)
        assert record["extra"]["attrs"] == "mcdram=cache:numa=quad"
    await cluster.lrm.cancel([job_id])


@fakes("pbs")
@synced
async def test_FAKE_pbs_cray_mpp_request(cluster: Cluster) -> None:
    resources = cluster.resources("mpp", walltime=60, nodes=2, tasks_per_node=4,
                                  options={"pbs.mpp": "true", "ppn": "16", "depth": "2",
                                           "pbs.aprun": "true"})
    lines = cluster.lrm.directives(resources)
    assert "#PBS -l mppwidth=32,mppnppn=16,mppdepth=2" in lines
    assert not any("nodes=" in line or "aprun" in line for line in lines)
    assert PBS.launcher_hint(resources.options) == "aprun"
    assert PBS.launcher_hint({}) is None
    with pytest.raises(ValueError, match=r"depth \(threads per process\) is PBS's mppdepth "
                       r"with pbs.mpp: true, or aprun's -d"):
        cluster.lrm.directives(cluster.resources("x", options={"depth": "2"}))


@fakes("condor")
@synced
async def test_FAKE_condor_refuses_a_queue(cluster: Cluster) -> None:
    with pytest.raises(ValueError, match="HTCondor has no queues: jobQueue 'debug'"):
        cluster.lrm.directives(cluster.resources("q", queue="debug"))


# -- options it does not know --
@fakes(*ALL)
@synced
async def test_FAKE_unknown_job_option_is_refused_by_name(cluster: Cluster) -> None:
    cls = type(cluster.lrm)
    problems = cls.check_options({"bogus.key": "1", "slurm.mem": "4G"})
    assert len(problems) == 2
    assert problems[0].startswith(f"jobOptions.bogus.key has no meaning for {cls.name}")
    assert problems[1].startswith(f"jobOptions.slurm.mem has no meaning for {cls.name}")
    with pytest.raises(ValueError, match="jobOptions.bogus.key has no meaning"):
        cluster.lrm.script("true", cluster.resources("x", options={"bogus.key": "1"}))
    if cls is not Cobalt:
        assert cls.check_options({"ppn": "many"}) == [
            "jobOptions.ppn must be a whole number of at least 1 (got 'many')"]
    else:  # a Cobalt script job gets whole nodes: ppn is aprun's business
        assert cls.check_options({"ppn": "4"})[0].startswith("jobOptions.ppn has no meaning")


# -- jobs that run --
@fakes(*ALL)
@synced
async def test_FAKE_job_runs_to_completion_with_its_exit_code(cluster: Cluster) -> None:
    job_id = await cluster.submit("done1", "sleep 0.6; echo from-the-job")
    seen = await cluster.wait(job_id)
    states = [s.state for s in seen]
    assert states[-1] is JobState.COMPLETED and seen[-1].exit_code == 0
    assert JobState.RUNNING in states
    assert states == sorted(states, key=[JobState.PENDING, JobState.RUNNING,
                                         JobState.COMPLETED].index)
    assert (cluster.work / "done1.out").read_text() == "from-the-job\n"


@fakes(*ALL)
@synced
async def test_FAKE_failing_job_is_failed_with_its_exit_code(cluster: Cluster) -> None:
    job_id = await cluster.submit("fail1", "echo oops >&2; exit 3")
    status = (await cluster.wait(job_id))[-1]
    assert (status.state, status.exit_code) == (JobState.FAILED, 3), status
    assert (cluster.work / "fail1.err").read_text() == "oops\n"


@fakes(*ALL)
@synced
async def test_FAKE_cancelled_job_is_canceled(cluster: Cluster) -> None:
    job_id = await cluster.submit("cancel1", "sleep 30")
    await cluster.wait(job_id, RUNNING)
    started = time.monotonic()
    await cluster.lrm.cancel([job_id])
    status = (await cluster.wait(job_id))[-1]
    assert status.state is JobState.CANCELED, status
    assert time.monotonic() - started < 10
    await cluster.lrm.cancel([job_id])  # an ended job: no error


@fakes(*ALL)
@synced
async def test_FAKE_job_past_its_walltime_is_timeout(cluster: Cluster) -> None:
    # PBS and HTCondor take seconds; LSF's and Cobalt's one minute lasts 1 s in the fakes
    walltime = 1 if cluster.fake.system in ("pbs", "condor") else 60
    job_id = await cluster.submit("wall1", "sleep 30", walltime=walltime)
    status = (await cluster.wait(job_id))[-1]
    assert status.state is JobState.TIMEOUT, status
    if isinstance(cluster.lrm, PBS):
        assert "=>> PBS: job killed: walltime" in (cluster.work / "wall1.err").read_text()


@fakes(*ALL)
@synced
async def test_FAKE_refused_submission_quotes_the_batch_system(cluster: Cluster) -> None:
    system = cluster.fake.system
    if system == "condor":  # no queues: an unknown universe is what it refuses
        kw: dict[str, object] = {"options": {"condor.universe": "nosuch"}}
        words = "ERROR: I don't know about the 'nosuch' universe."
    else:
        kw = {"queue": "nosuch"}
        words = {"pbs": "qsub: submit error (Unknown queue MSG=requested queue not found)",
                 "lsf": "nosuch: No such queue. Job not submitted.",
                 "cobalt": "'nosuch' is not an existing queue"}[system]
    with pytest.raises(ProviderError) as caught:
        await cluster.submit("refused1", "true", **kw)
    assert caught.value.kind is FailureKind.SUBMIT_REFUSED
    message = str(caught.value)
    assert words in message
    assert message.startswith(f"site {SITE} ({type(cluster.lrm).name} on this machine)")
    if system != "condor":
        assert "queue 'nosuch'" in message
    assert cluster.fake.records() == []


# -- the poller --
@fakes(*ALL)
@synced
async def test_FAKE_poller_follows_jobs_with_one_query_per_poll(cluster: Cluster) -> None:
    good = await cluster.submit("poll-ok", "sleep 1")
    bad = await cluster.submit("poll-bad", "sleep 1; exit 5")
    await cluster.wait(good, RUNNING)
    await cluster.wait(bad, RUNNING)
    cluster.shell.commands.clear()
    both = await cluster.lrm.status([good, bad])
    assert [s.state for s in both.values()] == [JobState.RUNNING, JobState.RUNNING]
    assert len(cluster.shell.commands) == 1, cluster.shell.commands  # one query for both
    heard: dict[str, list[JobStatus]] = {good: [], bad: []}
    ended = asyncio.Event()

    def changed(job_id: str, status: JobStatus) -> None:
        heard[job_id].append(status)
        if all(h and h[-1].state.terminal for h in heard.values()):
            ended.set()

    poller = JobPoller(cluster.lrm, interval=0.1, max_interval=0.4)
    try:
        poller.watch(good, changed)
        poller.watch(bad, changed)
        await asyncio.wait_for(ended.wait(), 15)
    finally:
        await poller.close()
    assert [s.state for s in heard[good]] == [JobState.RUNNING, JobState.COMPLETED]
    assert [(s.state, s.exit_code) for s in heard[bad]][-1] == (JobState.FAILED, 5)
    assert poller.outage is None and poller.polls >= 2


# -- PBS's variants --
@fakes("pbs")
@synced
async def test_FAKE_pbs_professional_finished_jobs_are_asked_with_x(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWIFTNB_FAKE_PBS", "pro")
    job_id = await cluster.submit("pro1", "exit 4")
    status = (await cluster.wait(job_id))[-1]
    assert (status.state, status.exit_code) == (JobState.FAILED, 4)
    assert ["qstat", "-f", "-x", job_id] in cluster.shell.commands


@fakes("pbs")
@synced
async def test_FAKE_torque_forgotten_job_ends_by_its_exit_file(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWIFTNB_FAKE_LRM_KEEP", "0")  # keep_completed = 0
    job_id = await cluster.submit("gone1", "exit 6")
    status = (await cluster.wait(job_id))[-1]
    assert (status.state, status.exit_code) == (JobState.FAILED, 6)
    assert (cluster.work / "gone1.pbs-exit").read_text() == "6\n"
