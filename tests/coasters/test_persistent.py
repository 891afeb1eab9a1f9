"""``type: "coaster-persistent"``: runs send their tasks to a coaster service that keeps
running (``swiftnb coaster-service``), started here as a real subprocess, with a worker
started from the command it prints, and real ``swiftnb run`` processes as clients."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coaster_services import LIMIT, ServiceProcess, until

pytestmark = pytest.mark.timeout(180)

BAG = """
type file;
app (file o) cat (file i, string s) {{ cat @i stdout=@o; }}
file inp <"in.txt">;
foreach i in [1:{n}] {{
    file f <single_file_mapper; file=strcat("out/f", i, ".txt")>;
    f = cat(inp, toString(i));
}}
"""


def _conf(url: str, options: str = "", work: str = "work") -> str:
    return f"""
sites: [persist]
site.persist {{
    execution {{ type: "coaster-persistent", URL: "{url}" {options} }}
    workDirectory: "{work}"
    maxParallelTasks: 8
    initialParallelTasks: 8
    app.ALL {{ executable: "*" }}
}}
"""


def _run(cwd: Path, conf: str, env: dict[str, str], n: int = 5) -> subprocess.CompletedProcess[str]:
    cwd.mkdir(exist_ok=True)
    (cwd / "in.txt").write_text("payload\n")
    (cwd / "wf.swift").write_text(BAG.format(n=n))
    (cwd / "swift.conf").write_text(conf)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """An environment whose HOME is the test's: the default secret file goes there."""
    (tmp_path / "home").mkdir()
    return {**os.environ, "HOME": str(tmp_path / "home")}


@pytest.fixture
def service(tmp_path: Path, home: dict[str, str]):
    started: list[ServiceProcess] = []

    def start(*args: str, **kwargs) -> ServiceProcess:
        proc = ServiceProcess(list(args), tmp_path, env=home, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.stop()


@pytest.fixture
def workers():
    started: list[subprocess.Popen[bytes]] = []

    def start(command: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen(shlex.split(command), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_runs_use_a_running_service_and_its_hand_started_worker(tmp_path, home, service, workers):
    svc = service("-p", "0", "-option", "tasksPerNode=2")
    assert svc.url.startswith("http://127.0.0.1:")
    # the default secret file: per port, under ~/.swiftnb, mode 0600
    assert svc.secret_file == str(tmp_path / "home" / ".swiftnb" / "coasters"
                                  / f"service-{svc.port}.secret")
    assert os.stat(svc.secret_file).st_mode & 0o777 == 0o600
    worker = workers(svc.worker_command, home)
    # two runs, one after the other, with the URL as 0.96 wrote it and without the scheme;
    # the worker serves both
    for name, url in (("first", svc.url), ("second", f"127.0.0.1:{svc.port}")):
        cwd = tmp_path / name
        r = _run(cwd, _conf(url, work=str(cwd / "work")), home)
        assert r.returncode == 0, r.stderr + svc.stderr()
        for i in range(1, 6):
            assert (cwd / "out" / f"f{i}.txt").read_text() == "payload\n"
        log = next(cwd.glob("run*/*.log")).read_text()
        # the same TASK_STATUS_CHANGE lines as an in-process service, workers named
        for taskid in set(re.findall(r"JOB_TASK jobid=\S+ taskid=(\S+)", log)):
            codes = re.findall(rf"TASK_STATUS_CHANGE taskid={re.escape(taskid)} status=(\d+)", log)
            assert codes == ["8", "1", "16", "2", "17", "7"], (taskid, codes)
        workerids = set(re.findall(r"status=2 workerid=(\S+)", log))
        assert len(workerids) == 1 and next(iter(workerids)).endswith(":000000")
        assert "BLOCK_REQUESTED" not in log
    assert worker.poll() is None  # still there for the next run
    assert svc.stop() == 0
    assert not os.path.exists(svc.secret_file)  # removed when the service stops
    worker.wait(LIMIT)  # and the worker ends with the service


def test_separate_worker_port_and_an_explicit_secret_file(tmp_path, home, service, workers):
    secret = tmp_path / "secrets" / "svc.secret"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        local = s.getsockname()[1]
    svc = service("-p", "0", "-localport", str(local), "-secretfile", str(secret))
    worker_port = int(re.search(r"--port (\d+)", svc.worker_command).group(1))
    assert worker_port == local != svc.port and svc.secret_file == str(secret)
    assert f"Workers connect to: 127.0.0.1:{local}" in svc.lines
    workers(svc.worker_command, home)
    cwd = tmp_path / "run"
    r = _run(cwd, _conf(svc.url, f', options {{ secretFile: "{secret}" }}',
                        work=str(cwd / "work")), home, n=2)
    assert r.returncode == 0, r.stderr
    assert (cwd / "out" / "f2.txt").read_text() == "payload\n"


def test_a_service_with_blocks_of_its_own(tmp_path, home, service):
    """-jobmanager local:local: the service plans and starts blocks for its clients' tasks
    (from -option), and they show in the service's log, not the client's."""
    svc = service("-p", "0", "-jobmanager", "local:local", "-option", "tasksPerNode=2",
                  "-option", "maxNodesPerJob=1", "-option", "maxJobs=2",
                  "-option", "planInterval=0.1", "-log", str(tmp_path / "service.log"))
    cwd = tmp_path / "run"
    r = _run(cwd, _conf(svc.url, work=str(cwd / "work")), home, n=4)
    assert r.returncode == 0, r.stderr + svc.stderr()
    for i in range(1, 5):
        assert (cwd / "out" / f"f{i}.txt").read_text() == "payload\n"
    assert svc.stop() == 0
    service_log = (tmp_path / "service.log").read_text()
    assert "BLOCK_REQUESTED" in service_log and "BLOCK_DONE" in service_log
    client_log = next(cwd.glob("run*/*.log")).read_text()
    assert "BLOCK_REQUESTED" not in client_log
    assert len(re.findall(r"status=7", client_log)) == 4


def test_an_unreachable_url_is_an_error_naming_it(tmp_path, home):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nobody listens there
    url = f"http://127.0.0.1:{port}"
    r = _run(tmp_path / "run", _conf(url), home, n=1)
    assert r.returncode == 2
    assert (f"coaster-persistent site persist: the coaster service at {url}: cannot connect "
            f"to 127.0.0.1:{port} (Connection refused); is 'swiftnb coaster-service -p {port}' "
            "running there?") in r.stderr, r.stderr
    # never a private service instead
    assert "BLOCK_REQUESTED" not in next((tmp_path / "run").glob("run*/*.log")).read_text()


def test_a_wrong_secret_is_refused(tmp_path, home, service):
    svc = service("-p", "0")
    wrong = tmp_path / "wrong"
    wrong.write_text("0" * 32)
    wrong.chmod(0o600)
    r = _run(tmp_path / "run", _conf(svc.url, f', options {{ secretFile: "{wrong}" }}'), home,
             n=1)
    assert r.returncode == 2
    assert (f"the coaster service at {svc.url} closed the connection without an answer (is "
            f"the secret in {wrong} this service's?)") in r.stderr, r.stderr
    # a secret file others may read is not used at all
    wrong.chmod(0o644)
    r = _run(tmp_path / "run2", _conf(svc.url, f', options {{ secretFile: "{wrong}" }}'), home,
             n=1)
    assert r.returncode == 2 and "has mode 644: others may read it" in r.stderr, r.stderr


def test_a_dropped_service_fails_its_tasks_as_connection_lost(make_site, tmp_path, home,
                                                              service, workers):
    """The tasks of a client whose service went away fail retryably (the run retries them,
    elsewhere or through a new connection), naming the URL; the next submission connects
    to the service started again on that port."""
    from swiftnb.coasters.provider import CoasterProvider
    from swiftnb.engine.task import FailureKind

    svc = service("-p", "0")
    workers(svc.worker_command, home)
    site = make_site({})
    site.provider = CoasterProvider.from_site(
        {"name": "persist", "execution": {"type": "coaster-persistent", "URL": svc.url,
                                          "options": {"secretFile": svc.secret_file}},
         "workDirectory": str(tmp_path / "work")}, site.bus)

    async def main():
        running = asyncio.ensure_future(site.run(site.task(1, tr="sh", args=["-c", "sleep 60"])))
        await until(lambda: any(s == 2 for s, _ in site.statuses["sh-00001"]), "the task runs")
        os.kill(svc.proc.pid, signal.SIGKILL)  # the service dies with the task on its worker
        lost = await asyncio.wait_for(running, LIMIT)
        # the same port again (a person restarts it), a worker for it, and a new task
        again = service("-p", str(svc.port), "-secretfile", svc.secret_file)
        workers(again.worker_command, home)
        ok = await asyncio.wait_for(site.run(site.task(2)), LIMIT)
        await site.provider.shutdown()
        return lost, ok

    lost, ok = asyncio.run(main())
    assert not lost.ok and lost.failure is FailureKind.CONNECTION_LOST and lost.retryable
    assert f"the coaster service at {svc.url}" in lost.message
    assert [s for s, _ in site.statuses["sh-00001"]] == [8, 1, 16, 2, 5]
    assert ok.ok, ok.message
    assert [s for s, _ in site.statuses["echo-00002"]] == [8, 1, 16, 2, 17, 7]


def test_a_run_goes_on_elsewhere_when_its_service_dies(tmp_path, home, service, workers):
    """Two sites, the persistent one and a local one: the service is killed while it runs
    tasks; they fail as connection-lost and the run's retries finish them locally (with
    seed 001's site sets a site where a task failed is hibernated at once; the default
    weighted policy would keep offering the dead site tasks it refuses until its score
    falls below zero)."""
    svc = service("-p", "0", "-option", "tasksPerNode=4")
    workers(svc.worker_command, home)
    cwd = tmp_path / "run"
    cwd.mkdir()
    (cwd / "in.txt").write_text("payload\n")
    (cwd / "wf.swift").write_text("""
type file;
app (file o) slowcat (file i, string s) { sh "-c" "sleep 2; cat $0" @i stdout=@o; }
file inp <"in.txt">;
foreach i in [1:6] {
    file f <single_file_mapper; file=strcat("out/f", i, ".txt")>;
    f = slowcat(inp, toString(i));
}
""")
    (cwd / "swift.conf").write_text(f"""
sites: [persist, here]
executionRetries: 2
siteSelectionPolicy: "sitesets"
site.persist {{
    execution {{ type: "coaster-persistent", URL: "{svc.url}" }}
    workDirectory: "{cwd / "work"}"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
site.here {{
    execution {{ type: "local" }}
    workDirectory: "{cwd / "work-here"}"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
""")
    run = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"], cwd=cwd,
                           env=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        end = time.monotonic() + LIMIT
        while not any("status=2 workerid=" in p.read_text() for p in cwd.glob("run*/*.log")):
            assert time.monotonic() < end and run.poll() is None, "no task reached the service"
            time.sleep(0.05)
        os.kill(svc.proc.pid, signal.SIGKILL)
        _, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    assert run.returncode == 0, err
    for i in range(1, 7):
        assert (cwd / "out" / f"f{i}.txt").read_text() == "payload\n"
    log = next(cwd.glob("run*/*.log")).read_text()
    assert f"the coaster service at {svc.url}: the service closed the connection" in log or \
        f"the coaster service at {svc.url}: the connection broke" in log
    # the tasks that failed on the dead service ran again on the local site
    failed = set(re.findall(r"APPLICATION_EXCEPTION jobid=(\S+) - Application exception: "
                            r"coaster-persistent site persist", log))
    assert failed
    for jobid in failed:
        assert re.search(rf"JOB_START jobid={re.escape(jobid)} .* host=here", log), jobid


def test_a_persistent_sites_planner_options_are_left_out_with_a_warning():
    """Swift/K's tests/sites/active-persistent-coasters/swift.conf gives the service's
    planner keys to the client's site: the running service plans with its own."""
    from swiftnb.coasters import make_provider
    from swiftnb.config import load_config_text
    from swiftnb.events import EventBus
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock

    config = load_config_text(
        'site.c { execution { type: "coaster-persistent", URL: "127.0.0.1:1984", '
        'options { maxJobs: 2, defaultWalltime: "00:05:00" } }\n'
        ' workDirectory: "/tmp/w" }\nsites: [c]\n')
    p = make_provider(config.sites["c"], BuildContext(config, EventBus(), RealClock()))
    assert p.remote is not None and p.settings.slots == 20  # the default, not 2
    assert config.warnings == [
        "swift.conf:1: site.c.execution.options.maxJobs has no effect on a coaster-persistent "
        "site: the running service has its own settings (swiftnb coaster-service -option "
        "maxJobs=...); only defaultWalltime, secretFile apply here; ignored"]


@pytest.mark.parametrize(("execution", "message"), [
    ('URL: "127.0.0.1:1984", jobManager: "local:slurm"',
     r"site.c.execution.jobManager has no effect on a coaster-persistent site"),
    ('URL: "127.0.0.1"',
     r'execution.URL "127.0.0.1": expected the coaster service\'s host and port'),
])
def test_persistent_site_options_take_effect_or_are_refused(execution, message):
    """0.96's persistent-coaster configurations name jobManager "local:local" as a matter
    of form: that one is taken (test_persistent_site_takes_local_local_job_manager)."""
    from swiftnb.coasters import make_provider
    from swiftnb.config import load_config_text
    from swiftnb.events import EventBus
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock
    from swiftnb.scheduling.scheduler import SchedulerError

    config = load_config_text(
        f'site.c {{ execution {{ type: "coaster-persistent", {execution} }}\n'
        ' workDirectory: "/tmp/w" }\nsites: [c]\n')
    with pytest.raises(SchedulerError, match=message):
        make_provider(config.sites["c"], BuildContext(config, EventBus(), RealClock()))


def test_nosec_is_refused(tmp_path, home):
    r = subprocess.run([str(Path(sys.executable).with_name("swiftnb")), "coaster-service",
                        "-nosec"], capture_output=True, text=True, env=home, timeout=LIMIT)
    assert r.returncode == 1
    assert "-nosec is not supported" in r.stderr


def test_persistent_site_takes_local_local_job_manager():
    from swiftnb.coasters import make_provider
    from swiftnb.config import load_config_text
    from swiftnb.events import EventBus
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock

    config = load_config_text(
        'site.c { execution { type: "coaster-persistent", URL: "http://127.0.0.1:1984", '
        'jobManager: "local:local" }\n workDirectory: "/tmp/w" }\nsites: [c]\n')
    provider = make_provider(config.sites["c"], BuildContext(config, EventBus(), RealClock()))
    assert provider.remote is not None and provider.remote.port == 1984
