"""The coaster worker over stdin/stdout (``--stdio``), as ``ssh host python3 -I
_swiftremote.pyz worker`` would run it: a real subprocess of the system Python with only
the zipapp (no swiftnb), driven through its pipes."""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from swiftnb.remote import worker as worker_module
from swiftnb.remote.payload import PAYLOAD_NAME, payload_file

pytestmark = pytest.mark.timeout(60)

SYSTEM_PYTHON = "/usr/bin/python3"
#: bound on every wait (not a timing assertion: only how long a broken worker may hang)
LIMIT = 20.0


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    """The zipapp of worker and wrapper alone in a directory, as a remote site gets it."""
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"no {SYSTEM_PYTHON}")
    where = tmp_path / "ship"
    where.mkdir()
    shutil.copy(payload_file(), where / PAYLOAD_NAME)
    return where


class Client:
    """The client end of a ``--stdio`` worker: send messages, wait for replies."""

    def __init__(self, shipped: Path, cores: int) -> None:
        # -I: isolated (no PYTHONPATH, no user site, no cwd on sys.path): the stdlib only
        self.proc = subprocess.Popen(
            [SYSTEM_PYTHON, "-I", str(shipped / PAYLOAD_NAME), "worker", "--stdio", "--cores",
             str(cores)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.pending: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.messages.put(json.loads(line))
        self.messages.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def expect(self, op: str, n: int | None = None) -> dict[str, Any]:
        """The next message ``op`` (for task ``n``); others are kept for later calls."""
        for i, message in enumerate(self.pending):
            if message["op"] == op and (n is None or message.get("n") == n):
                return self.pending.pop(i)
        deadline = time.monotonic() + LIMIT
        while True:
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if message is None:
                raise AssertionError(f"the worker ended before {op} {n}: "
                                     f"{self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            if message["op"] == op and (n is None or message.get("n") == n):
                return message
            self.pending.append(message)

    def close(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=LIMIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def connect(shipped: Path):
    clients: list[Client] = []

    def make(cores: int = 1) -> Client:
        client = Client(shipped, cores)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def spec(base: Path, jobid: str, script: str, **kw: Any) -> dict[str, Any]:
    base.mkdir(exist_ok=True)
    value = {"jobid": jobid, "tr": "sh", "executable": None, "args": ["-c", script],
             "base_dir": str(base), "work_dir": str(base / "swiftwork"), "site_run": "s-run001",
             "site": "ssh", "stdin": None, "stdout": None, "stderr": None, "inputs": [],
             "outputs": [], "env": {}, "keep": False}
    value.update(kw)
    return value


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (a container's pid 1 may not reap)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


def read_pid(path: Path) -> int:
    wait_for(lambda: path.exists() and path.read_text().strip(), f"{path}")
    return int(path.read_text())


#: an app whose process group holds two processes: the shell and a background sleep
TWO_PROCS = "sleep 30 & echo $! > {pids}/child; echo $$ > {pids}/parent; wait"


def test_hello_says_who_the_worker_is(connect):
    client = connect(cores=3)
    hello = client.expect("hello")
    assert hello == {"op": "hello", "version": 1, "pid": client.proc.pid,
                     "node": socket.gethostname(), "python": hello["python"], "cores": 3}
    assert re.fullmatch(r"\d+\.\d+\.\d+", hello["python"])
    assert client.close() == 0


def test_several_jobs_run_at_once_and_report(connect, tmp_path):
    client = connect(cores=3)
    client.expect("hello")
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    # each job waits (bounded) until all three have arrived: they can only all succeed
    # if they run at the same time
    wait_all = (f"touch {barrier}/$0; i=0; while [ $(ls {barrier} | wc -l) -lt 3 ]; do "
                "i=$((i+1)); [ $i -gt 1000 ] && exit 7; sleep 0.01; done; echo done $0 > out-$0.txt")
    for n in range(3):
        job = spec(tmp_path / "base", f"j-{n}", wait_all, outputs=[f"out-{n}.txt"])
        job["args"] = ["-c", wait_all, str(n)]
        client.send({"op": "run", "n": n, "spec": job})
    for n in range(3):  # no "start" over stdio: the SSH client has no use for it
        assert isinstance(client.expect("active", n)["pid"], int)
        result = client.expect("done", n)["result"]
        assert result["ok"], result["message"]
        assert result["kind"] is None and result["staged_out"] == [f"out-{n}.txt"]
        assert (tmp_path / f"base/out-{n}.txt").read_text() == f"done {n}\n"
    assert client.close() == 0


def test_cancel_kills_the_apps_whole_process_group(connect, tmp_path):
    client = connect(cores=2)
    client.expect("hello")
    pids = tmp_path / "pids"
    pids.mkdir()
    client.send({"op": "run", "n": 1, "spec": spec(tmp_path / "base", "c-1", TWO_PROCS.format(pids=pids))})
    active = client.expect("active", 1)
    parent, child = read_pid(pids / "parent"), read_pid(pids / "child")
    assert active["pid"] == parent and alive(parent) and alive(child)
    client.send({"op": "cancel", "n": 1})
    result = client.expect("done", 1)["result"]
    assert result["kind"] == "canceled" and result["canceled"] is True
    assert result["retryable"] is False and result["cause"] == "Canceled"
    wait_for(lambda: not alive(parent) and not alive(child), "the canceled app's processes to go")
    assert client.close() == 0


def test_a_job_withdrawn_before_a_slot_took_it_is_canceled(connect, tmp_path):
    client = connect(cores=1)
    client.expect("hello")
    pids = tmp_path / "pids"
    pids.mkdir()
    client.send({"op": "run", "n": 1, "spec": spec(tmp_path / "base", "a-1", TWO_PROCS.format(pids=pids))})
    client.expect("active", 1)
    client.send({"op": "run", "n": 2, "spec": spec(tmp_path / "base", "b-2", "echo never > never.txt")})
    client.send({"op": "cancel", "n": 2})
    client.send({"op": "cancel", "n": 1})
    first, second = client.expect("done", 1)["result"], client.expect("done", 2)["result"]
    assert first["kind"] == second["kind"] == "canceled"
    assert second["message"] == "Canceled" and second["staged_out"] == []
    assert not (tmp_path / "base/never.txt").exists()
    assert client.close() == 0


def test_closing_stdin_ends_the_worker_and_its_apps(connect, tmp_path):
    client = connect(cores=2)
    client.expect("hello")
    pids = tmp_path / "pids"
    pids.mkdir()
    client.send({"op": "run", "n": 1, "spec": spec(tmp_path / "base", "e-1", TWO_PROCS.format(pids=pids))})
    client.expect("active", 1)
    parent, child = read_pid(pids / "parent"), read_pid(pids / "child")
    assert client.close() == 0  # EOF: the SSH connection died, or the client hung up
    wait_for(lambda: not alive(parent) and not alive(child), "the apps to go with the worker")


def test_shutdown_ends_the_worker_and_its_apps(connect, tmp_path):
    client = connect(cores=1)
    client.expect("hello")
    pids = tmp_path / "pids"
    pids.mkdir()
    client.send({"op": "run", "n": 1, "spec": spec(tmp_path / "base", "s-1", TWO_PROCS.format(pids=pids))})
    client.expect("active", 1)
    parent, child = read_pid(pids / "parent"), read_pid(pids / "child")
    client.send({"op": "shutdown"})
    assert client.proc.wait(timeout=LIMIT) == 0
    wait_for(lambda: not alive(parent) and not alive(child), "the apps to go with the worker")


def test_walltime_kills_the_app(connect, tmp_path):
    client = connect()
    client.expect("hello")
    client.send({"op": "run", "n": 5, "spec": spec(tmp_path / "base", "w-5", "exec sleep 30",
                                                   walltime=0.3)})
    result = client.expect("done", 5)["result"]
    assert result["kind"] == "walltime" and result["retryable"] is True
    assert result["cause"].endswith("exceeded its walltime of 0.3 seconds and was killed")


def test_apps_do_not_inherit_the_protocol_pipes(connect, tmp_path):
    client = connect()
    client.expect("hello")
    script = "ls -l /proc/$$/fd"  # the shell's descriptors, as the worker started it
    client.send({"op": "run", "n": 1, "spec": spec(tmp_path / "base", "f-1", script,
                                                   stdout="fds.txt", outputs=["fds.txt"])})
    result = client.expect("done", 1)["result"]
    assert result["ok"], result["message"]
    fds = dict(re.findall(r" (\d+) -> (.*)$", (tmp_path / "base/fds.txt").read_text(), re.M))
    assert fds["0"] == "/dev/null"
    assert not [target for target in fds.values() if target.startswith("pipe:")], fds
    assert client.close() == 0


def test_a_worker_error_is_reported_with_its_kind(connect, tmp_path):
    client = connect()
    client.expect("hello")
    client.send({"op": "run", "n": 3, "spec": {"not": "a job spec"}})
    result = client.expect("done", 3)["result"]
    assert result["kind"] == "worker" and result["retryable"] is True
    assert result["message"].startswith("Coaster worker error: KeyError: ")
    # the worker goes on serving
    client.send({"op": "run", "n": 4, "spec": spec(tmp_path / "base", "ok-4", "true")})
    assert client.expect("done", 4)["result"]["ok"]
    assert client.close() == 0


def test_the_tcp_mode_still_needs_its_address():
    with pytest.raises(SystemExit) as info:
        worker_module.main(["--cores", "2"])
    assert info.value.code == 2
