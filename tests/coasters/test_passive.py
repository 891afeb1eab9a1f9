"""``workerManager: "passive"``: the service starts no blocks; a person starts workers with
the command it prints, and the tasks wait in the queue until one connects.  Real
``swiftnb run`` processes and real workers started from that printed command."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from coaster_services import LIMIT, start_worker, stop, until
from swiftnb.events import EventBus

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

#: the same bag, whose apps wait for a file: both hand-started workers have connected
#: before any task can end (else the first worker may run them all, the run end, and
#: the second worker never come in)
GATED = """
type file;
app (file o) gated (file i, string go) {{
    sh "-c" "while [ ! -e $0 ]; do sleep 0.05; done; cat $1" go @i stdout=@o;
}}
file inp <"in.txt">;
foreach i in [1:{n}] {{
    file f <single_file_mapper; file=strcat("out/f", i, ".txt")>;
    f = gated(inp, "{go}");
}}
"""

CONF = """
sites: [hand]
site.hand {{
    execution {{
        type: "coaster"
        jobManager: "local:local"
        options {{ workerManager: "passive", tasksPerNode: 2, secretFile: "{secret}" }}
    }}
    workDirectory: "{work}"
    maxParallelTasks: 8
    initialParallelTasks: 8
    app.ALL {{ executable: "*" }}
}}
"""


class Run:
    """``swiftnb run`` as a subprocess whose stderr is read as it comes."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"],
                                     cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.err: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)

    def worker_command(self) -> str:
        """The command line the run printed for starting a worker by hand."""
        end = time.monotonic() + LIMIT
        while time.monotonic() < end:
            lines = list(self.err)
            for i, line in enumerate(lines[:-1]):
                if line.rstrip().endswith("Start a worker with:"):
                    return lines[i + 1].strip()
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"no worker command printed: {''.join(self.err)}")

    def wait(self) -> int:
        try:
            code = self.proc.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            code = self.proc.wait()
        self._reader.join(5)
        return code


def _worker_ids(tmp_path: Path) -> set[str]:
    """The ids of the workers the run's log has seen connect so far."""
    found: set[str] = set()
    for log in tmp_path.glob("run*/*.log"):
        found |= set(re.findall(r"WORKER_ACTIVE blockid=\S+ id=(\d{6})", log.read_text()))
    return found


def test_a_run_waits_for_workers_started_by_hand(tmp_path):
    n = 6
    go = tmp_path / "go"
    (tmp_path / "in.txt").write_text("payload\n")
    (tmp_path / "wf.swift").write_text(GATED.format(n=n, go=go))
    secret = tmp_path / "secret"
    (tmp_path / "swift.conf").write_text(CONF.format(secret=secret, work=tmp_path / "work"))
    run = Run(tmp_path)
    workers: list[subprocess.Popen[bytes]] = []
    try:
        command = run.worker_command()
        argv = shlex.split(command)
        # the printed command: this worker.py, the service's address, the block, an id
        # from the launcher (or 0), tasksPerNode, and the secret as a 0600 file
        assert argv[1].endswith("swiftnb/remote/worker.py")
        assert argv[argv.index("--cores") + 1] == "2"
        assert argv[argv.index("--id") + 1] == "auto"
        assert argv[argv.index("--secret-file") + 1] == str(secret)
        assert secret.stat().st_mode & 0o777 == 0o600
        assert secret.read_text().strip() not in command
        port = int(argv[argv.index("--port") + 1])
        assert 50000 <= port <= 50100  # the dist swift.conf's TCPPortRange
        # nothing runs until a worker comes
        time.sleep(1.0)
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
        for _ in range(2):  # the same command twice, as a person pastes it
            workers.append(subprocess.Popen(argv, cwd=tmp_path, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                            start_new_session=True))
        end = time.monotonic() + LIMIT
        while len(_worker_ids(tmp_path)) < 2 and time.monotonic() < end:
            time.sleep(0.1)
        go.touch()  # the apps may end now
        code = run.wait()
    finally:
        for w in workers:
            if w.poll() is None:
                os.killpg(w.pid, 9)
            w.wait()
        if run.proc.poll() is None:
            os.killpg(run.proc.pid, 9)
    assert code == 0, "".join(run.err)
    for i in range(1, n + 1):
        assert (tmp_path / "out" / f"f{i}.txt").read_text() == "payload\n"
    log = next(tmp_path.glob("run*/*.log")).read_text()
    assert "BLOCK_REQUESTED" not in log
    # the run's log says how to start a worker too
    assert re.search(r"WARN .*Start a worker with:", log) or "Start a worker with:" in log
    workerids = re.findall(r"status=2 workerid=(\S+)", log)
    assert len(workerids) == n
    block = argv[argv.index("--block") + 1]
    assert {w.split(":")[0] for w in workerids} == {block}
    # two workers from one command: two ids
    assert set(re.findall(r"WORKER_ACTIVE blockid=\S+ id=(\d{6})", log)) == {"000000", "000001"}
    assert not secret.exists()  # removed with the service


def test_tasks_wait_for_a_worker_and_move_when_one_dies(make_site, tmp_path):
    site = make_site({"workerManager": "passive", "tasksPerNode": 1,
                      "secretFile": str(tmp_path / "secret")})
    provider, events = site.provider, site.events

    async def main():
        await provider.start()
        command = provider.service.worker_command()
        slow = asyncio.ensure_future(site.run(site.task(1, tr="sh", args=["-c", "sleep 30"])))
        quick = asyncio.ensure_future(site.run(site.task(2)))
        await until(lambda: [s for s, _ in site.statuses["echo-00002"]] == [8, 1], "queued")
        await asyncio.sleep(0.5)
        assert [s for s, _ in site.statuses["echo-00002"]] == [8, 1]  # no worker: it waits
        first = await start_worker(command)
        await until(lambda: any(s == 2 for s, _ in site.statuses["sh-00001"])
                    or any(s == 2 for s, _ in site.statuses["echo-00002"]), "a task runs")
        second = await start_worker(command)
        await until(lambda: len([e for e in events if e.kind == "WORKER_ACTIVE"]) == 2,
                    "the second worker")
        # whichever worker runs the sleep dies: the sleep moves to the other one
        victim = next(w for w in (first, second)
                      if any(s == 2 and f.get("workerid", "").endswith(
                          "000000" if w is first else "000001")
                          for s, f in site.statuses["sh-00001"]))
        await stop(victim)
        await until(lambda: [s for s, _ in site.statuses["sh-00001"]].count(2) == 2,
                    "the sleep runs again on the other worker")
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        done = await asyncio.wait_for(quick, LIMIT)
        await provider.shutdown()
        for w in (first, second):
            await stop(w)
        return done

    done = asyncio.run(main())
    assert done.ok
    seq = [s for s, _ in site.statuses["sh-00001"]]
    assert seq[:2] == [8, 1] and 5 in seq and seq[-1] == 6
    lost = next(f["message"] for s, f in site.statuses["sh-00001"] if s == 5)
    assert "Worker lost" in lost and "worker connection lost" in lost
    kinds = [e.kind for e in events]
    assert "BLOCK_REQUESTED" not in kinds
    assert kinds.count("BLOCK_ACTIVE") == 1 and kinds.count("BLOCK_DONE") == 1
    assert not (tmp_path / "secret").exists()


def test_passive_with_a_batch_job_manager_is_taken_as_0_96_took_it(tmp_path):
    """Swift 0.96 took any jobManager on a passive site: the service starts no blocks,
    so the batch system is not used; said once, and the site runs."""
    from swiftnb.coasters import make_provider
    from swiftnb.config import load_config_text
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock

    config = load_config_text(
        'site.c { execution { type: "coaster", jobManager: "local:slurm", '
        'options { workerManager: "passive" } }\n workDirectory: "/tmp/w" }\nsites: [c]\n')
    provider = make_provider(config.sites["c"], BuildContext(config, EventBus(), RealClock()))
    assert provider.settings.passive and provider.job_manager == "local:local"
    assert config.warnings == ['site.c.execution.jobManager "local:slurm" has no effect with '
                               'workerManager "passive": the service starts no blocks (workers '
                               'are started by hand); ignored']


def test_passive_with_an_ssh_cl_job_manager_says_what_to_write(tmp_path):
    from swiftnb.coasters import make_provider
    from swiftnb.config import load_config_text
    from swiftnb.scheduling.build import BuildContext
    from swiftnb.scheduling.clock import RealClock
    from swiftnb.scheduling.scheduler import SchedulerError

    config = load_config_text(
        'site.c { execution { type: "coaster", jobManager: "ssh-cl:slurm", URL: "login", '
        'options { workerManager: "passive" } }\n workDirectory: "/tmp/w" }\nsites: [c]\n')
    with pytest.raises(SchedulerError, match=r'workerManager "passive": an ssh-cl service .* '
                       r'use jobManager "local:local"'):
        make_provider(config.sites["c"], BuildContext(config, EventBus(), RealClock()))
