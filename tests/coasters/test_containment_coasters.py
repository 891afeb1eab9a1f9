"""Nothing left running on a coaster worker: an app's background children (outside its
process group: GNU timeout, setsid, nohup in a subshell) end with its call, on success,
walltime, cancel and the worker's shutdown.

A real worker process against a bare TCP service played by the test; leftovers are found
by a marker unique to the test in their argv, through /proc, and killed in teardown."""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import procs

from swiftnb.remote import worker as worker_module

pytestmark = [pytest.mark.timeout(90),
              pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")]

LIMIT = 20.0
SECRET = "s3cret"


@pytest.fixture
def marker():
    made = f"600.{random.randrange(10**8, 10**9)}"
    yield made
    for pid in procs.running(made):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Service:
    """One worker's connection: welcome it, send tasks, read what it says."""

    def __init__(self, tmp_path: Path) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(LIMIT)
        port = self.server.getsockname()[1]
        self.proc = subprocess.Popen(
            [sys.executable, worker_module.__file__, "--host", "127.0.0.1", "--port",
             str(port), "--block", "b1", "--id", "000000", "--cores", "4"],
            env={**os.environ, worker_module.SECRET_ENV: SECRET}, stdin=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        self.conn, _ = self.server.accept()
        self.conn.settimeout(LIMIT)
        self.reader = self.conn.makefile("rb")
        assert self.read()["op"] == "hello"
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

    def results(self, count: int) -> dict[int, dict[str, Any]]:
        done: dict[int, dict[str, Any]] = {}
        while len(done) < count:
            message = self.read()
            if message["op"] == "done":
                done[message["n"]] = message["result"]
        return done

    def close(self) -> None:
        try:
            self.send({"op": "shutdown"})
            self.proc.wait(timeout=LIMIT)
        except OSError:
            pass
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.reader.close()
            self.conn.close()
            self.server.close()


def _until(predicate, what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def test_worker_ends_every_process_of_a_call_however_it_ends(tmp_path, marker):
    service = Service(tmp_path)
    try:
        service.run(1, f"(nohup sleep {marker}1 >/dev/null 2>&1 &); setsid sleep {marker}2 & "
                       f"timeout 300 sleep {marker}3 & sleep 0.3; exit 0")
        service.run(2, f"timeout 300 sleep {marker}4", walltime=0.5)
        service.run(3, f"setsid sleep {marker}5 & timeout 300 sleep {marker}6 & wait")
        _until(lambda: procs.running(f"{marker}6"), "task 3 to start")
        service.send({"op": "cancel", "n": 3})
        results = service.results(3)
        assert results[1]["ok"], results[1]["message"]
        assert results[2]["kind"] == "walltime"
        assert results[3]["kind"] == "canceled"
        assert procs.gone(marker), f"left running: {procs.running(marker)}"
    finally:
        service.close()


def test_worker_shutdown_ends_a_running_apps_whole_tree(tmp_path, marker):
    service = Service(tmp_path)
    try:
        service.run(1, f"setsid sleep {marker}1 & timeout 300 sleep {marker}2 & wait")
        _until(lambda: len(procs.running(marker)) >= 3, "the app to start")
        service.proc.send_signal(signal.SIGTERM)
        service.proc.wait(timeout=LIMIT)
        assert procs.gone(marker), f"left running: {procs.running(marker)}"
    finally:
        service.close()
