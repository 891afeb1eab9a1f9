"""The worker's loop as a service sees it: every task driven from one thread (no thread
per slot, no reader or clean-up thread), a task's "active" standing for its "start"
unless its stage-in copies files, and an app's end heard with or without pidfds.

A real worker process against a bare TCP service played by the test (the messages
themselves are what is checked here)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from swiftnb.remote import worker as worker_module

pytestmark = pytest.mark.timeout(120)

#: bound on every wait: how long a broken worker may hang the test, not a timing
LIMIT = 30.0
SECRET = "s3cret"

#: runs worker.py with os.pidfd_open taken away (an old kernel or Python)
NO_PIDFD = ("import os, runpy, sys; del os.pidfd_open; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")


class FakeService:
    """One worker's connection: welcome it, send tasks, read what it says."""

    def __init__(self, tmp_path: Path, cores: int, *, pidfd: bool = True) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(LIMIT)
        port = self.server.getsockname()[1]
        script = worker_module.__file__
        argv = [sys.executable, script] if pidfd else [sys.executable, "-c", NO_PIDFD, script]
        self.proc = subprocess.Popen(
            [*argv, "--host", "127.0.0.1", "--port", str(port), "--block", "b1", "--id",
             "000000", "--cores", str(cores)],
            env={**os.environ, worker_module.SECRET_ENV: SECRET}, stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE, start_new_session=True)
        self.conn, _ = self.server.accept()
        self.conn.settimeout(LIMIT)
        self.reader = self.conn.makefile("rb")
        hello = self.read()
        assert hello["op"] == "hello" and hello["secret"] == SECRET
        self.send({"op": "welcome", "id": "000000"})
        self.base = tmp_path

    def send(self, message: dict[str, Any]) -> None:
        self.conn.sendall((json.dumps(message) + "\n").encode())

    def read(self) -> dict[str, Any]:
        line = self.reader.readline()
        assert line, "the worker closed the connection"
        return json.loads(line)

    def run(self, n: int, script: str, **kw: Any) -> None:
        spec = {"jobid": f"t{n}", "tr": "sh", "executable": None, "args": ["-c", script],
                "base_dir": str(self.base), "work_dir": str(self.base / "work"),
                "site_run": "s-run001", "site": "fake", "stdin": None, "stdout": None,
                "stderr": None, "inputs": [], "outputs": [], "env": {}, "keep": False}
        spec.update(kw)
        self.send({"op": "run", "n": n, "spec": spec})

    def until_done(self, count: int) -> dict[int, list[dict[str, Any]]]:
        """Every message of each task, in order, until ``count`` tasks are done."""
        seen: dict[int, list[dict[str, Any]]] = {}
        done = 0
        while done < count:
            message = self.read()
            seen.setdefault(message["n"], []).append(message)
            done += message["op"] == "done"
        return seen

    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/task"))

    def close(self) -> None:
        try:
            self.send({"op": "shutdown"})
            self.proc.wait(timeout=LIMIT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.reader.close()
            self.conn.close()
            self.server.close()


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_one_thread_runs_every_slot_and_active_stands_for_start(tmp_path, pidfd):
    service = FakeService(tmp_path, cores=3, pidfd=pidfd)
    gate = tmp_path / "gate"
    try:
        # three apps at once, each waiting for the gate: the worker is at its busiest
        for n in (1, 2, 3):
            service.run(n, f"while [ ! -e {gate} ]; do sleep 0.05; done; echo {n}")
        actives = [service.read() for _ in range(3)]
        assert sorted((m["op"], m["n"]) for m in actives) == [("active", 1), ("active", 2),
                                                               ("active", 3)]
        assert service.threads() == 1
        gate.touch()
        seen = service.until_done(3)
        for n in (1, 2, 3):
            assert seen[n][-1]["result"]["ok"], seen[n]
            assert [m["op"] for m in seen[n]] == ["done"]  # "active" came before
        # a stage-in that copies its input: "start" goes out before it begins
        (tmp_path / "in.txt").write_text("payload\n")
        service.run(4, "cat in.txt", inputs=["in.txt"], copy_inputs=True)
        seen = service.until_done(1)
        assert [m["op"] for m in seen[4]] == ["start", "active", "done"]
        assert seen[4][-1]["result"]["ok"], seen[4]
    finally:
        gate.touch()
        service.close()


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_walltime_and_cancel_on_the_one_thread(tmp_path, pidfd):
    service = FakeService(tmp_path, cores=2, pidfd=pidfd)
    try:
        service.run(1, "sleep 30", walltime=0.5)
        service.run(2, "sleep 30")
        service.run(3, "echo waited")   # no slot free: waits in the worker
        first = [service.read() for _ in range(2)]
        assert {m["n"] for m in first} == {1, 2} and all(m["op"] == "active" for m in first)
        assert service.threads() == 1
        service.send({"op": "cancel", "n": 2})
        seen = service.until_done(3)
        assert seen[1][-1]["result"]["kind"] == "walltime"
        assert seen[2][-1]["result"]["canceled"]
        assert seen[3][-1]["result"]["ok"]
        for pid in (m["pid"] for m in first):
            _wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                      open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] == "Z",
                      f"app {pid} killed")
    finally:
        service.close()


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polled"])
def test_an_app_signalled_from_outside_waits_for_its_workers_fate(tmp_path, pidfd):
    """``scancel`` signals every process of the block in no set order: an app that a
    SIGTERM ended before its worker is held for a moment, so that the worker, dying of the
    same signal, leaves the task to be re-queued instead of reporting it failed."""
    service = FakeService(tmp_path, cores=1, pidfd=pidfd)
    try:
        # the app alone is signalled: after the grace, its end is the app's failure
        service.run(1, "sleep 30")
        active = service.read()
        assert active["op"] == "active"
        os.kill(active["pid"], signal.SIGTERM)
        done = service.read()
        assert (done["op"], done["n"]) == ("done", 1)
        assert not done["result"]["ok"] and "SIGTERM" in done["result"]["message"], done
        # the app, then its worker: the worker dies without a word about the task
        service.run(2, "sleep 30")
        active = service.read()
        assert (active["op"], active["n"]) == ("active", 2)
        os.kill(active["pid"], signal.SIGTERM)
        # the worker has reaped the app (heard its end) before its own signal comes
        _wait_for(lambda: not os.path.exists(f"/proc/{active['pid']}"), "the app reaped")
        os.kill(service.proc.pid, signal.SIGTERM)
        assert service.proc.wait(timeout=LIMIT) == 128 + signal.SIGTERM
        assert service.reader.readline() == b""
    finally:
        service.close()
