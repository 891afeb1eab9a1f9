"""A ``coaster-persistent`` site: tasks go to a coaster service that keeps running
between runs (``swiftnb coaster-service``), at ``execution.URL``.

Why a separate service: workers started once (by hand, ``-passive``, or by the service's
own blocks) serve many runs, and a run does not wait for blocks to start.  The client
protocol is the workers' (JSON lines over TCP, the same secret, the same
:class:`~swiftnb.coasters.listener.Listener` in front)::

    client -> service  {"op": "client", "version": 1, "secret": S, "name": SITE, "pid": P}
    service -> client  {"op": "welcome", "service": {"workerManager": ..., ...}}
                       (or {"op": "refused", "reason": R}, or closed: a wrong secret)
    client -> service  {"op": "submit", "n": K, "taskid": T, "walltime": W, "spec": {...}}
    service -> client  {"op": "status", "n": K, "status": 1|16|2|17|7|5[, "workerid": B:W]
                        [, "message": M]}
    service -> client  {"op": "result", "n": K, "result": {"ok", "exit_code", "message",
                        "stdout_tail", "stderr_tail", "kind"}}
    client -> service  {"op": "cancel", "n": K}

The statuses are the in-process service's, relayed, so the client's log has the same
TASK_STATUS_CHANGE lines (workerids included).  The secret is read from
``execution.options.secretFile``, else from the service's default file for its port (see
:mod:`~swiftnb.coasters.secretfile`).  When the connection drops, every task of this
client fails with ``connection-lost`` (retryable: the run retries it, on another site or
through a new connection); the service withdraws them on its side.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from swiftnb.coasters.listener import LINE_LIMIT
from swiftnb.coasters.secretfile import default_secret_path, read_secret
from swiftnb.coasters.servicerecords import RecordResult, StageOut, StatusSink, stage_out_result
from swiftnb.remote.worker import PROTOCOL_VERSION, encode
from swiftnb.engine.task import FailureKind, TaskResult
from swiftnb.events import TaskStatus
from swiftnb.execution.outcome import result_from_dict
from swiftnb.scheduling.background import internal_error
from swiftnb.scheduling.provider import ProviderError

__all__ = ["ServiceAddress", "ServiceClient", "parse_service_url", "result_to_dict"]

#: the statuses a client is told (the service's own, relayed)
_RELAYED = {int(s) for s in TaskStatus}


def parse_service_url(url: str) -> tuple[str, int]:
    """``http://host:1984``, ``tcp://host:1984``, ``host:1984`` or ``[::1]:1984`` ->
    (host, port); a ValueError (for people) otherwise."""
    text = url.strip()
    parts = urlsplit(text if "://" in text else f"tcp://{text}")
    try:
        port = parts.port
    except ValueError:
        port = None
    if not parts.hostname or port is None or parts.path not in ("", "/"):
        raise ValueError(f"execution.URL \"{url}\": expected the coaster service's host and "
                         "port, as http://HOST:PORT or HOST:PORT")
    return parts.hostname, port


@dataclass(frozen=True)
class ServiceAddress:
    """Where a coaster-persistent site's service is, and its secret's file."""

    url: str
    host: str
    port: int
    secret_file: str | None = None   # None: the service's default file for its port
    connect_timeout: float = 30.0

    @classmethod
    def from_url(cls, url: str, secret_file: str | None = None) -> ServiceAddress:
        host, port = parse_service_url(url)
        return cls(url, host, port, secret_file)

    @property
    def secret_path(self) -> str:
        return os.path.expanduser(self.secret_file) if self.secret_file else \
            default_secret_path(self.port)


def result_to_dict(result: TaskResult) -> dict[str, Any]:
    """A TaskResult as the client protocol carries it (``result_from_dict`` reads it)."""
    return {"ok": result.ok, "exit_code": result.exit_code, "message": result.message,
            "stdout_tail": result.stdout_tail, "stderr_tail": result.stderr_tail,
            "kind": result.failure.value if result.failure is not None else None}


@dataclass(eq=False)
class _Job:
    n: int
    taskid: str
    walltime: int
    spec: dict[str, Any]
    report: StatusSink
    future: asyncio.Future[TaskResult]
    stage_out: StageOut | None = None
    record: RecordResult | None = None
    status: int = 0
    sent: bool = False


@dataclass
class _Counts:
    submitted: int = 0
    completed: int = 0
    failed: int = 0
    requeued: int = 0


class ServiceClient:
    """The connection of one coaster-persistent site to its service; offers the
    in-process service's ``submit`` / ``cancel`` / ``shutdown`` / ``state``."""

    def __init__(self, address: ServiceAddress, *, site: str) -> None:
        self.address = address
        self.site = site
        self.host, self.port = address.host, address.port
        self.service_info: dict[str, Any] = {}
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._reading: asyncio.Task[None] | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._jobs: dict[int, _Job] = {}
        self._by_future: dict[asyncio.Future[TaskResult], _Job] = {}
        self._next_n = 0
        self._closing = False
        self._staging: set[asyncio.Task[None]] = set()
        self.counts = _Counts()

    def where(self) -> str:
        return f"coaster-persistent site {self.site}: the coaster service at {self.address.url}"

    # -- connection ---------------------------------------------------------------------

    async def start(self) -> None:
        """Connect and authenticate; a ProviderError that names the URL if not."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=LINE_LIMIT),
                self.address.connect_timeout)
        except TimeoutError:
            raise ProviderError(FailureKind.TIMEOUT, (
                f"{self.where()}: no connection within {self.address.connect_timeout:g} s"
            )) from None
        except OSError as exc:
            why = os.strerror(exc.errno) if exc.errno else str(exc)
            raise ProviderError(FailureKind.CONNECTION_LOST, (
                f"{self.where()}: cannot connect to {self.host}:{self.port} ({why}); is "
                f"'swiftnb coaster-service -p {self.port}' running there?")) from None
        try:  # read once it is known to be there: an unreachable URL is said first
            secret = read_secret(self.address.secret_path)
        except ValueError as exc:
            writer.close()
            raise ProviderError(FailureKind.SUBMIT_REFUSED, (
                f"{self.where()}: {exc} (the service writes it when it starts; name a copy "
                "with execution.options.secretFile)")) from None
        with contextlib.suppress(OSError):
            writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        writer.write(encode({"op": "client", "version": PROTOCOL_VERSION, "secret": secret,
                             "name": self.site, "pid": os.getpid()}))
        try:
            line = await asyncio.wait_for(reader.readline(), self.address.connect_timeout)
            answer = json.loads(line) if line else {}
        except (TimeoutError, OSError, ValueError):
            answer = {}
        if not isinstance(answer, dict) or answer.get("op") != "welcome":
            writer.close()
            why = (f"refused the connection: {answer.get('reason')}"
                   if isinstance(answer, dict) and answer.get("op") == "refused" else
                   f"closed the connection without an answer (is the secret in "
                   f"{self.address.secret_path} this service's?)")
            raise ProviderError(FailureKind.SUBMIT_REFUSED, f"{self.where()} {why}")
        info = answer.get("service")
        self.service_info = dict(info) if isinstance(info, Mapping) else {}
        self._reader, self._writer = reader, writer
        self._reading = asyncio.get_running_loop().create_task(self._read(reader))
        for job in sorted(self._jobs.values(), key=lambda j: j.n):
            if not job.sent:
                self._send_submit(job)

    def _connect_later(self) -> None:
        """Reconnect for tasks submitted while there is no connection."""
        if self._connecting is not None or self._closing:
            return

        async def connect() -> None:
            try:
                await self.start()
            except ProviderError as exc:
                self._fail_all(str(exc), exc.kind)
            except Exception as exc:  # noqa: BLE001 - a bug here: the tasks fail, saying so
                self._fail_all(internal_error(f"connecting to {self.where()}", exc),
                               FailureKind.WORKER)
            finally:
                self._connecting = None

        self._connecting = asyncio.get_running_loop().create_task(connect())

    async def _read(self, reader: asyncio.StreamReader) -> None:
        why = "the service closed the connection"
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                self._on_message(json.loads(line))
        except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
            why = f"the connection broke ({exc})"
        except asyncio.CancelledError:
            return
        except Exception as exc:  # noqa: BLE001 - a bug here: the tasks fail, saying so
            why = internal_error("reading the service's messages", exc)
        self._dropped(why)

    def _dropped(self, why: str) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        self._reading = None
        if not self._closing:
            self._fail_all(f"{self.where()}: {why} while the task was there",
                           FailureKind.CONNECTION_LOST)

    def _fail_all(self, message: str, kind: FailureKind) -> None:
        for job in list(self._jobs.values()):
            job.report.status(TaskStatus.FAILED, message=message)
            self.counts.failed += 1
            self._finish(job, TaskResult(ok=False, message=message, site=self.site, failure=kind))

    def _on_message(self, message: dict[str, Any]) -> None:
        op = message.get("op")
        job = self._jobs.get(int(message.get("n", -1)))
        if job is None:
            return
        if op == "status":
            status = int(message.get("status", 0))
            if status not in _RELAYED or job.future.done():
                return
            job.status = status
            job.report.status(status, message=message.get("message") or None,
                              workerid=message.get("workerid") or None)
        elif op == "result":
            raw = message.get("result")
            result = dict(raw) if isinstance(raw, Mapping) else {"ok": False}
            if job.stage_out is not None:
                self._jobs.pop(job.n, None)
                task = asyncio.get_running_loop().create_task(self._staged_out(job, result))
                self._staging.add(task)
                task.add_done_callback(self._staging.discard)
                return
            self._resolve(job, result)

    async def _staged_out(self, job: _Job, result: dict[str, Any]) -> None:
        assert job.stage_out is not None
        self._resolve(job, await stage_out_result(job.stage_out, result))

    def _resolve(self, job: _Job, result: dict[str, Any]) -> None:
        if result.get("ok"):
            self.counts.completed += 1
        else:
            self.counts.failed += 1
        if job.record is not None:
            job.record(result)
        self._finish(job, result_from_dict({**result, "site": self.site}))

    def _finish(self, job: _Job, result: TaskResult) -> None:
        self._jobs.pop(job.n, None)
        self._by_future.pop(job.future, None)
        if not job.future.done():
            job.future.set_result(result)

    # -- the service's interface ----------------------------------------------------------

    def submit(self, taskid: str, walltime: int, spec: dict[str, Any],
               report: StatusSink, *, stage_out: StageOut | None = None,
               record: RecordResult | None = None) -> asyncio.Future[TaskResult]:
        """Send a task to the service; the future completes with its TaskResult.
        ``record`` is told the result as the client protocol carries it (no job
        directory: the service's side knows it)."""
        loop = asyncio.get_running_loop()
        self._next_n += 1
        job = _Job(self._next_n, taskid, int(walltime), spec, report, loop.create_future(),
                   stage_out, record)
        self.counts.submitted += 1
        if self._closing:
            self._finish(job, TaskResult(ok=False, message="Coaster client shut down",
                                         site=self.site, failure=FailureKind.CANCELED))
            return job.future
        self._jobs[job.n] = job
        self._by_future[job.future] = job
        if self._writer is not None and not self._writer.is_closing():
            self._send_submit(job)
        else:
            self._connect_later()
        return job.future

    def _send_submit(self, job: _Job) -> None:
        assert self._writer is not None
        job.sent = True
        self._writer.write(encode({"op": "submit", "n": job.n, "taskid": job.taskid,
                                   "walltime": job.walltime, "spec": job.spec}))

    def cancel(self, future: asyncio.Future[TaskResult]) -> None:
        """Withdraw a task (the caller reports it canceled)."""
        job = self._by_future.pop(future, None)
        if job is None:
            return
        self._jobs.pop(job.n, None)
        if job.sent and self._writer is not None and not self._writer.is_closing():
            self._writer.write(encode({"op": "cancel", "n": job.n}))

    async def shutdown(self) -> None:
        """Withdraw what is still out and close the connection (the service runs on)."""
        if self._closing:
            return
        self._closing = True
        for job in list(self._jobs.values()):
            self._finish(job, TaskResult(ok=False, message="Coaster client shut down",
                                         site=self.site, failure=FailureKind.CANCELED))
        for task in [self._connecting, self._reading, *self._staging]:
            if task is not None:
                task.cancel()
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 2.0)

    def state(self) -> dict[str, Any]:
        """The in-process service's state() keys, as far as a client knows them."""
        statuses = [job.status for job in self._jobs.values()]
        running = sum(1 for s in statuses if s in (TaskStatus.STAGE_IN, TaskStatus.ACTIVE,
                                                   TaskStatus.STAGE_OUT))
        return {
            "site": self.site,
            "contact": f"{self.host}:{self.port}",
            "workerManager": self.service_info.get("workerManager"),
            "holding": 0,
            "queued": len(statuses) - running,
            "running": running,
            "counts": {"submitted": self.counts.submitted, "completed": self.counts.completed,
                       "failed": self.counts.failed, "requeued": self.counts.requeued},
            "blocks": [],
            "workers": [],
            "decisions": [],
            "settings": {},
        }
