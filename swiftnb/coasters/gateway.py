"""The service side of the client protocol (see :mod:`~swiftnb.coasters.persistent`):
a persistent coaster service's clients submit tasks, hear their statuses and results,
and cancel them.

Each client's tasks go into the one service queue, with the client's reports relayed
back over its connection.  When a client goes away its tasks are withdrawn (dropped from
the queue, killed on their workers): nobody would read their results.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from swiftnb.coasters.persistent import result_to_dict
from swiftnb.coasters.planner import admission_error
from swiftnb.coasters.service import CoasterService
from swiftnb.remote.worker import encode
from swiftnb.engine.task import FailureKind, TaskResult
from swiftnb.events import TaskStatus

__all__ = ["ClientGateway"]


class _Relay:
    """A StatusSink that sends one task's statuses to its client."""

    def __init__(self, writer: asyncio.StreamWriter, n: int) -> None:
        self.writer = writer
        self.n = n

    def status(self, status: TaskStatus | int, *, message: str | None = None,
               workerid: str | None = None) -> None:
        if self.writer.is_closing():
            return
        out: dict[str, Any] = {"op": "status", "n": self.n, "status": int(status)}
        if workerid:
            out["workerid"] = workerid
        if message:
            out["message"] = message
        self.writer.write(encode(out))


class ClientGateway:
    """Serves the clients of one CoasterService (``service.client_handler = gateway.serve``)."""

    def __init__(self, service: CoasterService) -> None:
        self.service = service
        self.clients = 0

    async def serve(self, hello: dict[str, Any], reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        name = str(hello.get("name") or "client")
        service = self.service
        writer.write(encode({"op": "welcome", "service": {
            "workerManager": service.settings.worker_manager, "site": service.site,
            "maxJobTime": service.settings.maxtime, "reserve": service.settings.reserve}}))
        tasks: dict[int, asyncio.Future[TaskResult]] = {}
        self.clients += 1
        service.bus.emit("PLANNER", {}, text=f"client {name} (pid {hello.get('pid')}) connected")
        try:
            while True:
                line = await reader.readline()
                if not line:
                    break
                message = json.loads(line)
                if not isinstance(message, dict):
                    break
                op = message.get("op")
                if op == "submit":
                    self._submit(name, message, writer, tasks)
                elif op == "cancel":
                    future = tasks.pop(int(message.get("n", -1)), None)
                    if future is not None:
                        service.cancel(future)
        except (ConnectionError, ValueError, asyncio.IncompleteReadError):
            pass  # a broken line or connection: the client is gone
        except asyncio.CancelledError:
            pass
        finally:
            self.clients -= 1
            for future in tasks.values():
                service.cancel(future)
            if tasks:
                service.bus.emit("PLANNER", {}, text=f"client {name} went away: its "
                                 f"{len(tasks)} task(s) withdrawn")

    def _submit(self, name: str, message: dict[str, Any], writer: asyncio.StreamWriter,
                tasks: dict[int, asyncio.Future[TaskResult]]) -> None:
        n = int(message["n"])
        walltime = int(message.get("walltime") or self.service.settings.default_walltime)
        spec = message.get("spec")
        relay = _Relay(writer, n)
        error = admission_error(walltime, self.service.settings)
        if error is None and not isinstance(spec, dict):
            error = "a submit without a job spec"
        if error is not None:
            relay.status(TaskStatus.FAILED, message=error)
            self._send_result(writer, n, TaskResult(ok=False, message=error,
                                                    failure=FailureKind.SUBMIT_REFUSED))
            return
        assert isinstance(spec, dict)
        future = self.service.submit(str(message.get("taskid") or f"{name}:{n}"), walltime,
                                     spec, relay)
        tasks[n] = future

        def done(f: asyncio.Future[TaskResult]) -> None:
            if tasks.pop(n, None) is not None and not f.cancelled():
                self._send_result(writer, n, f.result())

        future.add_done_callback(done)

    @staticmethod
    def _send_result(writer: asyncio.StreamWriter, n: int, result: TaskResult) -> None:
        if not writer.is_closing():
            writer.write(encode({"op": "result", "n": n, "result": result_to_dict(result)}))
