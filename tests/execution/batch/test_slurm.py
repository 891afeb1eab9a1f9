"""The Slurm adapter against a real one-node Slurm (tests/slurm.py), through LocalShell and
through the test sshd's SSHShell (tests/sshd.py; its sessions get SLURM_CONF by SetEnv,
and the jobs are then the login user's).

No walltime test here: Slurm checks ``--time`` about every 30 s, so such a test costs a
minute or more and lives elsewhere, once.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from swiftnb.engine.task import FailureKind
from swiftnb.events import TaskStatus
from swiftnb.execution.batch.lrm import JobPoller, JobState, JobStatus, Resources
from swiftnb.execution.batch.slurm import Slurm
from swiftnb.execution.shell import LocalShell, Shell
from swiftnb.execution.sshshell import SSHShell
from swiftnb.scheduling.provider import ProviderError

#: no test sees the tester's own ~/.ssh or agent (tests/sshd.py)
pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("no_personal_ssh")]


@dataclass
class Case:
    """A shell to reach the cluster, a work directory on its side, and who runs the jobs."""

    make: Callable[[], Shell]
    work: str
    user: str


@pytest.fixture(params=["local", "ssh"])
def case(request, slurm, monkeypatch, tmp_path) -> Case:
    if request.param == "local":
        monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
        work = tmp_path / "jobs"
        work.mkdir()
        return Case(LocalShell, str(work), "root")
    sshd = request.getfixturevalue("sshd")
    return Case(lambda: SSHShell(sshd.host, port=sshd.port, user=sshd.user,
                                 identity_files=[str(sshd.client_key)],
                                 known_hosts=str(sshd.known_hosts)),
                f"{sshd.remote_work}/slurm-{secrets.token_hex(4)}", sshd.user)


@pytest.fixture
def local(slurm, monkeypatch, tmp_path) -> Case:
    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    work = tmp_path / "jobs"
    work.mkdir()
    return Case(LocalShell, str(work), "root")


def on(case: Case, body: Callable[[Slurm], Awaitable[None]]) -> None:
    """Run ``body`` with an adapter over the case's shell (work directory made)."""
    async def main() -> None:
        shell = case.make()
        try:
            await shell.makedirs(case.work)
            await body(Slurm(shell, site="cluster"))
        finally:
            await shell.close()
    asyncio.run(main())


def resources(case: Case, name: str, **kw) -> Resources:
    return Resources(name=name, workdir=case.work, stdout=f"{case.work}/{name}.out",
                     stderr=f"{case.work}/{name}.err", **kw)


async def until(lrm: Slurm, job_id: str, states: Iterable[JobState],
                within: float = 30.0) -> JobStatus:
    """Poll the job's status until it is in one of ``states``."""
    wanted = set(states)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last: JobStatus | None = None
    while loop.time() < deadline:
        last = (await lrm.status([job_id])).get(job_id)
        if last is not None and last.state in wanted:
            return last
        await asyncio.sleep(0.2)
    raise AssertionError(f"job {job_id} is {last}, not in {wanted}, after {within} s")


async def submit(lrm: Slurm, command: str, res: Resources) -> str:
    return await lrm.submit(lrm.script(command, res), res)


# -- directives (no cluster needed) ----------------------------------------------------------
def test_directives_follow_the_resources_and_the_slurm_options():
    res = Resources(name="block 7", walltime=61, nodes=2, tasks_per_node=3, queue="debug",
                    project="proj", workdir="/scratch/run 1", stdout="/scratch/b.out",
                    stderr="/scratch/b.err",
                    options={"slurm.exclusive": True, "slurm.mem": "1G", "slurm.requeue": False,
                             "slurm.constraint": ""})
    assert Slurm(LocalShell()).directives(res) == [
        "#SBATCH --job-name=block_7",
        "#SBATCH --time=2",                    # 61 s: whole minutes, rounded up
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks-per-node=3",
        "#SBATCH --partition=debug",
        "#SBATCH --account=proj",
        "#SBATCH --output=/scratch/b.out",
        "#SBATCH --error=/scratch/b.err",
        '#SBATCH --chdir="/scratch/run 1"',
        "#SBATCH --exclusive",
        "#SBATCH --mem=1G",
        "#SBATCH --constraint",
    ]


def test_ppn_and_depth_become_tasks_per_node_and_cpus_per_task():
    lines = Slurm(LocalShell()).directives(Resources(tasks_per_node=1,
                                                     options={"ppn": 4, "depth": 2}))
    assert "#SBATCH --ntasks-per-node=4" in lines and "#SBATCH --cpus-per-task=2" in lines
    assert not [line for line in lines if "--partition" in line or "--account" in line]


def test_keys_slurm_does_not_understand_are_refused():
    problems = Slurm.check_options({"pbs.aprun": True, "pnp": 2, "slurm.a b": 1, "ppn": 0},
                                   where="site.c.jobOptions")
    assert problems == [
        "site.c.jobOptions.pbs.aprun has no meaning for slurm (it understands depth, ppn, "
        "slurm.*)",
        "site.c.jobOptions.pnp has no meaning for slurm (it understands depth, ppn, slurm.*); "
        "did you mean 'ppn'?",
        "site.c.jobOptions.slurm.a b: 'a b' is not an sbatch option name",
        "site.c.jobOptions.ppn must be a whole number of at least 1 (got 0)",
    ]
    with pytest.raises(ValueError, match="condor.requirements has no meaning for slurm"):
        Slurm(LocalShell()).directives(Resources(options={"condor.requirements": "x"}))
    with pytest.raises(ValueError, match="line breaks"):
        Slurm(LocalShell()).directives(Resources(options={"slurm.comment": "a\n#SBATCH -p x"}))


# -- against the real Slurm ------------------------------------------------------------------
def test_a_job_runs_and_completes_with_exit_code_0(case, slurm):
    async def body(lrm: Slurm) -> None:
        res = resources(case, "hello", queue=slurm.partition, project="swiftproj", walltime=61,
                        options={"slurm.comment": "from swiftnb", "ppn": 2})
        job_id = await submit(lrm, 'echo "hello $SLURM_JOB_ID $(id -un)" > result.txt', res)
        status = await until(lrm, job_id, [JobState.COMPLETED, JobState.FAILED])
        assert status == JobStatus(JobState.COMPLETED, 0, "")
        assert Path(case.work, "result.txt").read_text() == f"hello {job_id} {case.user}\n"
        # sbatch honoured the directives
        shown = slurm.run(["scontrol", "-o", "show", "job", job_id]).stdout
        for field in ("Partition=debug", "Account=swiftproj", "TimeLimit=00:02:00",
                      "Comment=from swiftnb", "NumTasks=2", f"WorkDir={case.work}",
                      f"StdOut={case.work}/hello.out"):
            assert field in shown, shown

    on(case, body)


def test_a_failing_job_is_failed_with_its_exit_code(case):
    async def body(lrm: Slurm) -> None:
        job_id = await submit(lrm, "echo about to fail >&2; exit 3", resources(case, "fails"))
        status = await until(lrm, job_id, [JobState.COMPLETED, JobState.FAILED])
        assert (status.state, status.exit_code) == (JobState.FAILED, 3)
        assert status.reason == "FAILED (NonZeroExitCode)"
        assert status.state.task_status is TaskStatus.FAILED
        assert Path(case.work, "fails.err").read_text() == "about to fail\n"

    on(case, body)


def test_a_cancelled_job_is_canceled(case):
    async def body(lrm: Slurm) -> None:
        job_id = await submit(lrm, "sleep 60", resources(case, "sleeper"))
        await until(lrm, job_id, [JobState.RUNNING])
        await lrm.cancel([job_id])
        status = await until(lrm, job_id, [JobState.CANCELED, JobState.FAILED,
                                           JobState.COMPLETED])
        assert status.state is JobState.CANCELED, status
        assert status.state.task_status is TaskStatus.CANCELED
        await lrm.cancel([job_id])   # ended already: no error

    on(case, body)


def test_a_bad_partition_is_refused_in_sbatchs_words(case):
    async def body(lrm: Slurm) -> None:
        with pytest.raises(ProviderError) as info:
            await submit(lrm, "true", resources(case, "nowhere", queue="nosuch"))
        assert info.value.kind is FailureKind.SUBMIT_REFUSED
        message = str(info.value)
        assert "partition 'nosuch'" in message and "site cluster (slurm on" in message
        assert "sbatch: error: invalid partition specified: nosuch" in message

    on(case, body)


def test_ids_squeue_does_not_know_are_left_out(local):
    async def body(lrm: Slurm) -> None:
        job_id = await submit(lrm, "true", resources(local, "known"))
        # squeue fails when it knows none of the ids, lists the known ones otherwise
        assert await lrm.status(["999999"]) == {}
        assert set(await lrm.status([job_id, "999999"])) == {job_id}

    on(local, body)


def test_the_poller_sees_a_job_pending_then_running_then_completed(local, slurm):
    async def body(lrm: Slurm) -> None:
        res = resources(local, "held", options={"slurm.hold": True})
        job_id = await submit(lrm, "sleep 1", res)
        seen: list[JobStatus] = []
        done = asyncio.Event()

        def changed(_: str, status: JobStatus) -> None:
            seen.append(status)
            if status.state is JobState.PENDING:
                assert slurm.run(["scontrol", "release", job_id]).returncode == 0
            if status.state.terminal:
                done.set()

        poller = JobPoller(lrm, interval=0.2, max_interval=1.0)
        poller.watch(job_id, changed)
        try:
            await asyncio.wait_for(done.wait(), 30)
        finally:
            await poller.close()
        assert [s.state for s in seen] == [JobState.PENDING, JobState.RUNNING,
                                           JobState.COMPLETED]
        assert [s.state.task_status for s in seen] == [TaskStatus.SUBMITTED, TaskStatus.ACTIVE,
                                                       TaskStatus.COMPLETED]
        assert "(JobHeldUser)" in seen[0].reason

    on(local, body)


def test_polling_survives_a_slurmctld_restart_while_a_job_runs(local, slurm):
    """slurmctld stopped mid-job: the poller reports the outage once, in squeue's words,
    backs off and keeps polling; after the restart the job's completion is seen."""
    go = Path(local.work, "go")

    async def body(lrm: Slurm) -> None:
        job_id = await submit(lrm, f"while [ ! -e {go} ]; do sleep 0.2; done",
                              resources(local, "survivor"))
        errors: list[str] = []
        seen: list[JobState] = []
        done = asyncio.Event()

        def changed(_: str, status: JobStatus) -> None:
            seen.append(status.state)
            if status.state.terminal:
                done.set()

        poller = JobPoller(lrm, interval=0.2, max_interval=2.0, on_error=errors.append)
        poller.watch(job_id, changed)
        loop = asyncio.get_running_loop()
        try:
            while JobState.RUNNING not in seen:
                await asyncio.sleep(0.1)
            await loop.run_in_executor(None, slurm.stop_controller)
            while not errors:   # squeue gives up on the controller after 10-20 s
                await asyncio.sleep(0.2)
            outage_polls = poller.polls
            assert poller.outage is not None and poller.interval > poller.min_interval
            await loop.run_in_executor(None, slurm.start_controller)
            go.write_text("")
            await asyncio.wait_for(done.wait(), 40)
        finally:
            await poller.close()
            slurm.start_controller()
        assert seen[-2:] == [JobState.RUNNING, JobState.COMPLETED], seen
        assert poller.polls > outage_polls
        assert len(errors) == 2, errors
        assert "squeue: slurm_load_jobs error: Unable to contact slurm controller" in errors[0]
        assert "site cluster (slurm on this machine)" in errors[0]
        assert errors[0].endswith("(slurmctld does not answer) (polling continues)")
        assert errors[1] == "site cluster (slurm on this machine): squeue answers again"

    on(local, body)
