"""Helpers for tests of the coaster service's side: a passive service in this process,
workers started as a person would start them, the ``swiftnb coaster-service`` command as
a real subprocess, and a reporter that records status codes."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from swiftnb.coasters.blocks import LocalBlockProvider
from swiftnb.coasters.service import CoasterService
from swiftnb.coasters.settings import CoasterSettings
from swiftnb.events import Event, EventBus

#: bound on every wait: how long a broken service or worker may hang a test, not a timing
LIMIT = 30.0

SWIFTNB = str(Path(sys.executable).with_name("swiftnb"))


class Recorder:
    """A StatusSink that keeps the codes and fields it is told."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, dict[str, Any]]] = []

    def status(self, status: int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        fields = {k: v for k, v in (("message", message), ("workerid", workerid)) if v}
        self.seen.append((int(status), fields))

    @property
    def codes(self) -> list[int]:
        return [code for code, _ in self.seen]


def passive_service(tmp_path: Path, **options: Any) -> tuple[CoasterService, list[Event]]:
    """A passive CoasterService (not started) and the list its events go to."""
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    settings = CoasterSettings.from_options({"workerManager": "passive",
                                             "secretFile": str(tmp_path / "secret"), **options})
    return CoasterService(settings, LocalBlockProvider(), bus=bus, site="hand"), events


async def start_worker(command: str, *extra: str, env: dict[str, str] | None = None,
                       stderr: Any = asyncio.subprocess.PIPE) -> asyncio.subprocess.Process:
    """Start a worker by its printed command (plus ``extra`` arguments), as a person would."""
    return await asyncio.create_subprocess_exec(
        *shlex.split(command), *extra, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL, stderr=stderr,
        env={**os.environ, **(env or {})}, start_new_session=True)


async def stop(proc: asyncio.subprocess.Process) -> None:
    """End a worker this test started, by its pid."""
    if proc.returncode is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    await proc.wait()


async def until(predicate: Callable[[], bool], what: str, timeout: float = LIMIT) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate():
        if loop.time() > end:
            raise AssertionError(f"not reached within {timeout:g} s: {what}")
        await asyncio.sleep(0.02)


def spec(tmp_path: Path, jobid: str, argv: list[str], stdout: str | None = None) -> dict[str, Any]:
    """A wrapper job spec for a task run in ``tmp_path`` (what the provider would build)."""
    from swiftnb.engine.task import Task
    from swiftnb.remote import wrapper

    task = Task(jobid=jobid, tr=argv[0], args=argv[1:], base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"), stdout=stdout,
                outputs=[stdout] if stdout else [])
    return wrapper.spec_from_task(task, site="hand", work_dir=str(tmp_path / "work"),
                                  site_run="run", keep=False, walltime=None)


class ServiceProcess:
    """``swiftnb coaster-service`` as a real subprocess: its URL, worker command and
    secret file are read from what it prints; stopped by its pid."""

    def __init__(self, args: list[str], cwd: Path, env: dict[str, str] | None = None,
                 preexec_fn: Callable[[], None] | None = None) -> None:
        self.log = cwd / "service.stderr"
        self._err = open(self.log, "wb")
        self.proc = subprocess.Popen(
            [SWIFTNB, "coaster-service", *args], cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=self._err, env={**os.environ, **(env or {})},
            start_new_session=True, preexec_fn=preexec_fn)
        self.lines: list[str] = []
        self.url = self._read(r"^Coaster service URL: (\S+)$")
        self.secret_file = self._read(r"^Secret file: (\S+)$")
        # only a passive service has a command for people to start workers with
        self.worker_command = ("" if "-jobmanager" in args
                               else self._read(r"^Start a worker with: (.+)$"))

    def _read(self, pattern: str) -> str:
        assert self.proc.stdout is not None
        end = time.monotonic() + LIMIT
        while time.monotonic() < end:
            for line in self.lines:
                found = re.match(pattern, line)
                if found:
                    return found.group(1)
            raw = self.proc.stdout.readline()
            if not raw:
                raise AssertionError(f"coaster-service ended before printing {pattern}: "
                                     f"{self.stderr()}")
            self.lines.append(raw.decode().rstrip("\n"))
        raise AssertionError(f"coaster-service printed no {pattern} within {LIMIT} s")

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def peak_kib(self) -> int:
        """The service process's peak resident memory so far (VmHWM, KiB)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def stop(self) -> int:
        """SIGTERM (the service shuts down cleanly), SIGKILL if it does not end."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._err.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode
