"""The Grid Engine adapter against a real Grid Engine (tests/gridengine.py): through this
machine's shell and through the test sshd's login user (an ``ssh-cl:sge`` login node).

Every state here is Grid Engine's own: jobs really run, fail, are deleted, are killed at
their h_rt, and qacct is really read.  The job script's directives are checked as text
for the options no single-host cluster can show (a project, a queue of another name).
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import JobPoller, JobState, JobStatus, Resources
from swiftnb.execution.batch.sge import GridEngine, job_name, state_of
from swiftnb.execution.shell import LocalShell, Shell
from swiftnb.execution.sshshell import SSHShell
from swiftnb.scheduling.provider import ProviderError

pytestmark = pytest.mark.timeout(120)


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(body())


@dataclass
class Side:
    """Where the adapter's commands run: this machine as root, or the sshd's login user."""

    kind: str
    shell: Shell
    workdir: str   # a directory of the job's owner on the cluster


@pytest.fixture
def local_env(gridengine, monkeypatch: pytest.MonkeyPatch):
    """LocalShell runs commands with this process's environment: give it the cell's."""
    for key, value in gridengine.env().items():
        monkeypatch.setenv(key, value)
    return gridengine


@pytest.fixture(params=["local", "ssh"])
def side(request: pytest.FixtureRequest, local_env, tmp_path: Path) -> Iterator[Side]:
    if request.param == "local":
        yield Side("local", LocalShell(), str(tmp_path))
        return
    sshd = request.getfixturevalue("sshd")
    shell = SSHShell(sshd.host, port=sshd.port, user=sshd.user,
                     identity_files=[str(sshd.client_key)], known_hosts=str(sshd.known_hosts))
    yield Side("ssh", shell, f"{sshd.remote_work}/sge-{secrets.token_hex(4)}")


async def _until(lrm: GridEngine, ids: Sequence[str], done: Callable[[JobStatus], bool],
                 within: float = 30.0) -> dict[str, JobStatus]:
    """Poll until every job's status satisfies ``done``; the last statuses seen.  A job
    is not asked for again once it has ended (as JobPoller does)."""
    seen: dict[str, JobStatus] = {}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        seen.update(await lrm.status([i for i in ids if i not in seen
                                      or not seen[i].state.terminal]))
        if all(i in seen and done(seen[i]) for i in ids):
            return seen
        if loop.time() > deadline:
            raise AssertionError(f"not reached within {within} s: {seen}")
        await asyncio.sleep(0.3)


def _terminal(s: JobStatus) -> bool:
    return s.state.terminal


# -- the job script ------------------------------------------------------------------------

def test_directives_carry_the_site_options() -> None:
    lrm = GridEngine(LocalShell(), site="cluster")
    res = Resources(name="42 tasks/run", walltime=3725, nodes=2, tasks_per_node=3,
                    queue="short.q", project="proj-7", workdir="/scratch/my run",
                    stdout="/scratch/my run/out", stderr="/scratch/err",
                    options={"pe": "mpi", "sge.l": "mem_free=2G", "sge.notify": "",
                             "sge.P": "physics"})
    assert lrm.directives(res) == [
        "#$ -N j42_tasks_run",
        "#$ -S /bin/sh",
        "#$ -l h_rt=01:02:05",
        "#$ -q short.q",
        "#$ -A proj-7",
        "#$ -pe mpi 6",
        "#$ -wd '/scratch/my run'",
        "#$ -o '/scratch/my run/out'",
        "#$ -e /scratch/err",
        "#$ -l mem_free=2G",
        "#$ -notify",
        "#$ -P physics",
    ]
    script = lrm.script("echo hi", Resources(name="t", walltime=5, stdout="/o",
                                             env={"A": "x y"}))
    assert script.splitlines() == ["#!/bin/sh", "#$ -N t", "#$ -S /bin/sh",
                                   "#$ -l h_rt=00:00:05", "#$ -o /o", "#$ -j y",
                                   "export A='x y'", "echo hi"]
    assert "-V" not in script  # this machine's environment stays here


def test_unknown_options_are_refused_with_a_message() -> None:
    problems = GridEngine.check_options({"ppn": "4", "pe": "smp", "sge.l": "h_vmem=1G",
                                         "sge.-x": "1", "sge.": "y"})
    text = "\n".join(problems)
    assert "jobOptions.ppn has no meaning for sge" in text
    assert "pe, sge.*" in text            # what it understands
    assert "'-x' is not a qsub option name" in text
    assert "jobOptions.sge. has no meaning" in text
    assert len(problems) == 3
    lrm = GridEngine(LocalShell(), site="cluster")
    with pytest.raises(ProviderError) as err:
        lrm.directives(Resources(options={"ppn": "4"}))
    assert err.value.kind is FailureKind.SUBMIT_REFUSED
    assert "site cluster" in str(err.value) and "ppn" in str(err.value)
    with pytest.raises(ProviderError) as err:   # no directive can be smuggled in
        lrm.directives(Resources(queue="a.q\n#$ -u root"))
    assert "the queue holds a line break" in str(err.value)
    # more than one slot gets CoG's default parallel environment; one slot gets none
    assert "#$ -pe 1way 4" in lrm.directives(Resources(tasks_per_node=4))
    assert not any("-pe" in line for line in lrm.directives(Resources(options={"pe": "smp"})))


def test_names_and_states_in_grid_engine_words() -> None:
    assert job_name("1abc") == "j1abc"
    assert job_name("a b:c@d/e*f?") == "a_b_c_d_e_f_"
    assert job_name("") == "j"
    assert job_name("-x") == "j-x"
    assert job_name("ok_name.1") == "ok_name.1"
    expected = {"qw": JobState.PENDING, "hqw": JobState.PENDING, "r": JobState.RUNNING,
                "t": JobState.RUNNING, "Rr": JobState.RUNNING, "s": JobState.SUSPENDED,
                "S": JobState.SUSPENDED, "T": JobState.SUSPENDED, "Eqw": JobState.FAILED,
                "dr": JobState.CANCELED, "dt": JobState.CANCELED, "x": JobState.UNKNOWN}
    assert {k: state_of(k) for k in expected} == expected


# -- a real Grid Engine --------------------------------------------------------------------

def test_jobs_end_as_grid_engine_says(side: Side) -> None:
    """Completed, failed, cancelled running and pending, killed at h_rt: all at once."""
    async def body() -> None:
        lrm = GridEngine(side.shell, site="ge")
        await side.shell.makedirs(side.workdir)
        w = side.workdir

        async def submit(name: str, command: str, *, walltime: int = 600,
                         options: dict[str, str] | None = None) -> str:
            r = Resources(name=name, workdir=w, stdout=f"{w}/{name}.out", walltime=walltime,
                          options=options or {})
            return await lrm.submit(lrm.script(command, r), r)

        ok, bad, running, held, slow = await asyncio.gather(
            submit("ok", 'echo "hello from $JOB_ID in $(pwd)"; echo to-stderr >&2'),
            submit("bad", "echo failing; exit 3"),
            submit("running", "sleep 60"),
            submit("held", "sleep 60", options={"sge.h": ""}),
            submit("slow", "sleep 60", walltime=5))
        assert all(i.isdigit() for i in (ok, bad, running, held, slow))
        states = await _until(lrm, [running, held],
                              lambda s: s.state in (JobState.RUNNING, JobState.PENDING))
        assert states[running].state is JobState.RUNNING
        assert states[held].state is JobState.PENDING
        await lrm.cancel([running, held])
        done = await _until(lrm, [ok, bad, running, held, slow], _terminal, within=40)
        assert done[ok] == JobStatus(JobState.COMPLETED, 0)
        assert done[bad] == JobStatus(JobState.FAILED, 3, "exit_status 3")
        assert done[running].state is JobState.CANCELED
        assert done[held].state is JobState.CANCELED
        again = await lrm.status([running, held])   # asked again: still what it was
        assert {i: again[i].state for i in again} == {running: JobState.CANCELED,
                                                       held: JobState.CANCELED}
        assert done[slow].state is JobState.TIMEOUT
        assert "qmaster enforced h_rt" in done[slow].reason
        assert done[slow].exit_code == 137
        out = await side.shell.run(["cat", f"{w}/ok.out", f"{w}/bad.out"])
        assert out.stdout.splitlines() == [f"hello from {ok} in {w}", "to-stderr", "failing"]
        await lrm.cancel([ok, bad])    # ended long ago: no error
        await side.shell.close()
    run(body)


def test_a_bad_queue_is_refused_in_qsubs_words(side: Side) -> None:
    async def body() -> None:
        lrm = GridEngine(side.shell, site="ge")
        r = Resources(name="nowhere", queue="nosuch.q", workdir=side.workdir)
        with pytest.raises(ProviderError) as err:
            await lrm.submit(lrm.script("true", r), r)
        assert err.value.kind is FailureKind.SUBMIT_REFUSED
        text = str(err.value)
        assert "site ge" in text and side.shell.name in text
        assert "to queue nosuch.q" in text
        assert 'job requests unknown queue "nosuch.q"' in text   # qsub's own words
        assert "Exiting." not in text
        await side.shell.close()
    run(body)


def test_a_parallel_job_gets_its_slots(local_env, tmp_path: Path) -> None:
    async def body() -> None:
        lrm = GridEngine(LocalShell())
        r = Resources(name="par", tasks_per_node=3, workdir=str(tmp_path),
                      stdout=str(tmp_path / "par.out"), options={"pe": local_env.pe})
        job = await lrm.submit(lrm.script('echo "$PE $NSLOTS"', r), r)
        assert (await _until(lrm, [job], _terminal))[job].state is JobState.COMPLETED
        assert (tmp_path / "par.out").read_text() == f"{local_env.pe} 3\n"
    run(body)


def test_a_job_in_error_state_fails_with_the_reason_and_is_deleted(local_env,
                                                                    tmp_path: Path) -> None:
    async def body() -> None:
        lrm = GridEngine(LocalShell())
        r = Resources(name="noout", stdout=str(tmp_path / "missing" / "out"))
        job = await lrm.submit(lrm.script("true", r), r)
        status = (await _until(lrm, [job], _terminal))[job]
        assert status.state is JobState.FAILED
        assert "can't open output file" in status.reason and "missing/out" in status.reason
        listed = local_env.run(["qstat"]).stdout.split()
        assert job not in listed
    run(body)


def test_a_poller_follows_a_real_job(local_env, tmp_path: Path) -> None:
    """PENDING (held), RUNNING once released, COMPLETED: each change heard once."""
    async def body() -> None:
        lrm = GridEngine(LocalShell())
        r = Resources(name="followed", workdir=str(tmp_path), stdout=str(tmp_path / "f.out"),
                      options={"sge.h": ""})
        job = await lrm.submit(lrm.script("sleep 2", r), r)
        heard: list[JobStatus] = []
        ended = asyncio.Event()

        def hear(job_id: str, status: JobStatus) -> None:
            assert job_id == job
            heard.append(status)
            if status.state.terminal:
                ended.set()

        poller = JobPoller(lrm, interval=0.3, max_interval=0.6)
        poller.watch(job, hear)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20
        while not heard and loop.time() < deadline:
            await asyncio.sleep(0.1)
        released = await asyncio.to_thread(local_env.run, ["qrls", job])
        assert released.returncode == 0, released.stderr
        await asyncio.wait_for(ended.wait(), 30)
        await poller.close()
        assert [s.state for s in heard] == [JobState.PENDING, JobState.RUNNING,
                                            JobState.COMPLETED]
        assert heard[-1].exit_code == 0
    run(body)


def test_a_qmaster_that_does_not_answer_is_a_provider_error(local_env, monkeypatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]   # nothing listens there once closed
    monkeypatch.setenv("SGE_QMASTER_PORT", str(closed))

    async def body() -> None:
        lrm = GridEngine(LocalShell(), site="ge")
        with pytest.raises(ProviderError) as err:
            await lrm.status(["1"])
        assert err.value.kind is FailureKind.CONNECTION_LOST
        assert "qstat did not answer" in str(err.value)
        assert f"port {closed}" in str(err.value)           # qstat's own words
        r = Resources(name="x")
        with pytest.raises(ProviderError) as err:
            await lrm.submit(lrm.script("true", r), r)
        assert err.value.kind is FailureKind.CONNECTION_LOST
        assert "qsub said" in str(err.value) and f"port {closed}" in str(err.value)
        with pytest.raises(ProviderError) as err:
            await lrm.cancel(["1"])
        assert err.value.kind is FailureKind.CONNECTION_LOST
    run(body)


@pytest.mark.timeout(240)  # up to three ends of two jobs
def test_a_job_keeps_its_last_state_until_qacct_knows_how_it_ended(local_env,
                                                                   tmp_path: Path) -> None:
    """qacct lags a job's end by up to the accounting flush time (15 s by default, and
    here: measured on this cell, 3.7 s after an idle spell and 11-12 s for jobs that end
    one after another; with 5 s it was 0.8-1.8 s, a round or two of this loop, which made
    the test flaky): meanwhile the job keeps its last state, or, past the adapter's grace,
    is left out."""
    reporting = local_env.config("reporting_params")
    assert "accounting_flush_time=00:00:00" in reporting
    local_env.set_config("reporting_params", reporting.replace(
        "accounting_flush_time=00:00:00", "accounting_flush_time=00:00:15"))

    Gap = tuple[JobStatus | None, JobStatus | None]

    async def one_end() -> list[Gap]:
        """Two jobs end; what the patient and the hasty adapter said of them in each round
        after both left qstat and before qacct knew (the patient one not yet terminal)."""
        patient, hasty = GridEngine(LocalShell()), GridEngine(LocalShell(), accounting_grace=0)
        jobs = []
        for n, lrm in enumerate((patient, hasty)):
            r = Resources(name=f"lag{n}", workdir=str(tmp_path), stdout=str(tmp_path / f"{n}"))
            jobs.append(await lrm.submit(lrm.script("sleep 2", r), r))
        gaps: list[Gap] = []
        ended: dict[str, JobStatus] = {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 45
        while len(ended) < 2 and loop.time() < deadline:
            listed = (await asyncio.to_thread(local_env.run, ["qstat"])).stdout.split()
            seen = [(await lrm.status([job])).get(job) if job not in ended else None
                    for lrm, job in zip((patient, hasty), jobs)]
            if not any(job in listed for job in jobs) and len(ended) == 0:
                gaps.append((seen[0], seen[1]))
            for job, status in zip(jobs, seen):
                if status is not None and status.state.terminal:
                    ended[job] = status
            await asyncio.sleep(0.3)
        assert [ended.get(j) for j in jobs] == [JobStatus(JobState.COMPLETED, 0)] * 2
        return [g for g in gaps if g[0] is not None and not g[0].state.terminal]

    try:
        # a flush that lands within a round of the jobs' end leaves a single round, in which
        # it may land between the two queries (then the second already knows the end):
        # such an end says nothing, so the jobs end again (at most three times)
        for _ in range(3):
            waiting = asyncio.run(one_end())
            if len(waiting) >= 2:
                break
        # after both left qstat and before qacct knew: the last state, or nothing
        assert waiting
        assert all(g[0] == JobStatus(JobState.RUNNING) for g in waiting), waiting
        # the hasty adapter leaves the job out meanwhile
        assert any(g[1] is None for g in waiting), waiting
        assert all(g[1] is None or g[1].state.terminal for g in waiting), waiting
    finally:
        local_env.set_config("reporting_params", reporting)
