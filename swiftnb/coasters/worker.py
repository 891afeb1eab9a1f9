#!/usr/bin/env python3
"""The coaster worker: runs tasks for a coaster service on one node of a block.

Why stdlib-only: a block runs this file (and ``wrapper.py`` beside it) with whatever
Python 3 the cluster node has, without swiftnb installed.  It must not import swiftnb.

Protocol: one JSON object per line (``\\n``-terminated UTF-8), worker first::

    worker -> service  {"op": "hello", "version": 1, "pid": PID, "node": HOST,
                        "python": "3.11.2", "cores": N,
                        "secret": S, "block": B, "id": W, "walltime": SECONDS}  (TCP only)
    service -> worker  {"op": "welcome"}          (TCP only; or the connection is closed)
    service -> worker  {"op": "run", "n": K, "spec": {job spec of wrapper.py}}
    worker -> service  {"op": "start", "n": K}    (a slot took it: stage in begins; TCP
                                                   only: an SSH client has no use for it)
    worker -> service  {"op": "active", "n": K, "pid": P}  (the app started; P is also
                                                   its process group id)
    worker -> service  {"op": "done", "n": K, "result": {wrapper result dict}}
    service -> worker  {"op": "cancel", "n": K}   (kill that app's process group)
    service -> worker  {"op": "shutdown"}         (kill what runs, exit)

Two transports carry it (:class:`TcpTransport`, :class:`StdioTransport`; one
:class:`Worker` serves both):

* TCP (``--host --port --block --id``): a block's worker connects to its coaster service.
  The secret comes from the environment (``SWIFTNB_COASTER_SECRET``), never the command
  line, so other users cannot read it from the process list.
* ``--stdio``: ``ssh HOST python3 worker.py --stdio --cores N`` speaks on the SSH
  channel's stdin/stdout, with no secret or welcome (SSH authenticated the client).

When the channel ends (the service dropped the connection, the SSH connection died, the
client closed stdin) the worker kills every app's process group and exits: the client has
re-queued them, and nothing may be left running.  SIGTERM and SIGHUP do the same.  A
SIGKILLed worker cannot clean up (apps run in sessions of their own, as cancellation needs,
so they outlive it): that case is the client's, which saw each app's pid (= its process
group) in ``active`` and the worker's in ``hello`` and can ``kill -KILL -PGID`` them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

PROTOCOL_VERSION = 1
SECRET_ENV = "SWIFTNB_COASTER_SECRET"


def load_wrapper(path: str | None = None) -> Any:
    """The job wrapper module: ``path``, else ``wrapper.py`` beside this file, else swiftnb's."""
    candidates = [path] if path else [os.path.join(os.path.dirname(os.path.abspath(__file__)), "wrapper.py")]
    for candidate in candidates:
        if candidate and os.path.exists(candidate):
            spec = importlib.util.spec_from_file_location("swiftnb_coaster_wrapper", candidate)
            module = importlib.util.module_from_spec(spec)
            assert spec.loader is not None
            spec.loader.exec_module(module)
            return module
    from swiftnb.execution import wrapper  # running inside a swiftnb installation

    return wrapper


def encode(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, separators=(",", ":")) + "\n").encode()


class TransportError(Exception):
    """The channel to the client could not be opened; ``code`` is the worker's exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class TcpTransport:
    """A TCP connection to a coaster service: the hello carries the block's secret, and
    the service answers ``welcome`` (or closes the connection)."""

    says_start = True

    def __init__(self, host: str, port: int, secret: str, block: str, wid: str,
                 walltime: float) -> None:
        self.host, self.port, self.secret = host, port, secret
        self.block, self.id, self.walltime = block, wid, walltime
        self.name = f"{block}:{wid}"
        self._sock: socket.socket | None = None
        self._reader: Any = None

    def open(self, hello: dict[str, Any]) -> None:
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=30)
        except OSError as exc:
            raise TransportError(f"cannot connect to {self.host}:{self.port}: {exc}", 2) from exc
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = self._sock.makefile("rb")
        try:
            self.write(encode({**hello, "secret": self.secret, "block": self.block,
                               "id": self.id, "walltime": self.walltime}))
            first = self._reader.readline()
            welcomed = bool(first) and json.loads(first).get("op") == "welcome"
        except (OSError, ValueError):
            welcomed = False
        if not welcomed:
            raise TransportError("the service refused the connection", 3)

    def lines(self) -> Iterator[bytes]:
        return iter(self._reader)

    def write(self, data: bytes) -> None:
        if self._sock is not None:
            self._sock.sendall(data)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()


class StdioTransport:
    """The worker's own stdin and stdout, e.g. the channel of ``ssh host python3
    worker.py --stdio``: the SSH connection already authenticated the client, so there
    is no secret and no welcome; the worker says hello and serves.

    The protocol gets private duplicates of descriptors 0 and 1, and 0 and 1 themselves
    are pointed at ``/dev/null`` and stderr: nothing the worker starts (apps, ``cp`` of
    a CDM LOCAL copy) or prints by mistake can read the client's messages or write into
    the protocol stream.
    """

    name = "stdio"
    #: whether the client hears "start" (the coaster service reports stage-in with it)
    says_start = False

    def __init__(self) -> None:
        self._in = os.fdopen(os.dup(0), "rb")
        self._out = os.fdopen(os.dup(1), "wb")
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)

    def open(self, hello: dict[str, Any]) -> None:
        try:
            self.write(encode(hello))
        except OSError as exc:
            raise TransportError(f"cannot say hello on stdout: {exc}", 3) from exc

    def lines(self) -> Iterator[bytes]:
        return iter(self._in.readline, b"")

    def write(self, data: bytes) -> None:
        if self._out is not None:
            self._out.write(data)
            self._out.flush()  # one message, one flush: the client waits for it

    def close(self) -> None:
        out, self._out = self._out, None
        if out is not None:
            try:
                out.close()
            except OSError:  # the client is gone: what was unsent does not matter
                pass


def inline_outputs(spec: dict[str, Any], result: dict[str, Any], limit: int) -> dict[str, str]:
    """The small outputs of a finished job, base64, keyed by their ``staged_out`` path.

    Why: a client across a slow link (an SSH channel) would fetch each output with a
    file transfer of its own, a few round trips per file; a job's small outputs ride
    back on the ``done`` message instead.  Files over ``limit`` bytes, and any beyond
    ``4 * limit`` in all, are left for a transfer."""
    import base64

    found: dict[str, str] = {}
    total = 0
    for rel in result.get("staged_out") or ():
        path = os.path.join(spec["base_dir"], rel)
        try:
            size = os.path.getsize(path)
            if size > limit or total + size > 4 * limit:
                continue
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError:
            continue
        if len(data) <= limit:
            found[rel] = base64.b64encode(data).decode("ascii")
            total += len(data)
    return found


class Worker:
    """One worker: ``cores`` task slots, each a thread that runs one app at a time.

    The protocol loop is the same over every transport (TCP to a coaster service, or
    stdin/stdout over SSH); the transport only opens the channel and moves lines.
    When the channel ends (EOF: the service or the SSH connection went away) or says
    ``shutdown``, every running app's process group is killed before the worker exits.
    """

    def __init__(self, transport: Any, cores: int, wrapper: Any) -> None:
        self.transport = transport
        self.cores = cores
        self.wrapper = wrapper
        self._open = False
        self._send_lock = threading.Lock()
        self._jobs: queue.Queue[tuple[int, dict[str, Any]] | None] = queue.Queue()
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._canceled: set[int] = set()
        self._lock = threading.Lock()
        self._closing = False
        # job directories are removed on one background thread: the outputs are in place
        # already, and on a busy file system the removal costs milliseconds per task
        self._janitor: queue.Queue[Any] = queue.Queue()
        self._janitor_thread = threading.Thread(target=self._clean, daemon=True)
        self._janitor_thread.start()
        # empty job directories reused by the next task (a wrapper.py of an older
        # swiftnb has no SpareDirs: then every task makes its own)
        spare_dirs = getattr(wrapper, "SpareDirs", None)
        self._spares = spare_dirs() if spare_dirs is not None else None

    def hello(self) -> dict[str, Any]:
        """The first message: who this worker is (the transport adds what it needs)."""
        return {"op": "hello", "version": PROTOCOL_VERSION, "pid": os.getpid(),
                "node": socket.gethostname(), "python": "%d.%d.%d" % sys.version_info[:3],
                "cores": self.cores}

    # -- connection -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Write one message (whole, under one lock); a closed channel drops it."""
        data = encode(message)
        with self._send_lock:
            if not self._open:
                return
            try:
                self.transport.write(data)
            except OSError:
                pass

    def run(self) -> int:
        try:
            self.transport.open(self.hello())
        except TransportError as exc:
            print(f"worker {self.transport.name}: {exc}", file=sys.stderr)
            return exc.code
        self._open = True
        threads = [threading.Thread(target=self._slot, daemon=True) for _ in range(self.cores)]
        for t in threads:
            t.start()
        try:
            self._serve()
        finally:
            self._stop(threads)
        return 0

    def _serve(self) -> None:
        """Read messages until EOF, ``shutdown`` or a line that is not JSON."""
        try:
            for line in self.transport.lines():
                if not line.strip():
                    continue
                message = json.loads(line)
                op = message.get("op")
                if op == "run":
                    self._jobs.put((int(message["n"]), message["spec"]))
                elif op == "cancel":
                    self._cancel(int(message["n"]))
                elif op == "shutdown":
                    return
        except (OSError, ValueError):
            pass

    def _stop(self, threads: list[threading.Thread]) -> None:
        """Kill every running app (one starting now is killed as it registers), let the
        slots report, remove job directories, close the channel."""
        with self._lock:
            self._closing = True
            running = list(self._procs)
        for n in running:
            self._cancel(n)
        for _ in threads:
            self._jobs.put(None)
        for t in threads:
            t.join(timeout=5)
        self._janitor.put(None)
        self._janitor_thread.join(timeout=10)
        if self._spares is not None:
            self._spares.clear()
        with self._send_lock:
            self._open = False
            try:
                self.transport.close()
            except OSError:
                pass

    # -- running tasks ----------------------------------------------------------------

    def kill_all(self) -> None:
        with self._lock:
            procs = list(self._procs.values())
        for proc in procs:
            self.wrapper.kill_group(proc.pid)

    def _cancel(self, n: int) -> None:
        with self._lock:
            self._canceled.add(n)
            proc = self._procs.get(n)
        if proc is not None:
            self.wrapper.kill_group(proc.pid)

    def _slot(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None or self._closing:
                return
            n, spec = item
            with self._lock:
                canceled = n in self._canceled
            try:
                if canceled:  # withdrawn while it waited here
                    result = self._failure(self.wrapper.KIND_CANCELED, "Canceled", spec)
                else:
                    if self.transport.says_start:
                        self.send({"op": "start", "n": n})
                    result = self._run(n, spec)
            except Exception as exc:  # a worker bug must not lose the task silently
                result = self._failure(self.wrapper.KIND_WORKER,
                                       f"Coaster worker error: {type(exc).__name__}: {exc}", spec)
            with self._lock:
                self._procs.pop(n, None)
                self._canceled.discard(n)
            if result.get("ok") and isinstance(spec, dict) and spec.get("inline_limit"):
                result["inline"] = inline_outputs(spec, result, int(spec["inline_limit"]))
            self.send({"op": "done", "n": n, "result": result})

    def _failure(self, kind: str, cause: str, spec: Any) -> dict[str, Any]:
        """A result for a task the worker ended itself (never ran, or the worker failed)."""
        site = spec.get("site") if isinstance(spec, dict) else None
        return self.wrapper.failure_result(kind, cause, site=str(site or "local"))

    def _run(self, n: int, spec: dict[str, Any]) -> dict[str, Any]:
        job = (self.wrapper.prepare(spec) if self._spares is None
               else self.wrapper.prepare(spec, self._spares))
        if job.failure is not None:
            return job.failure
        try:
            proc = subprocess.Popen(job.argv, **job.popen_kwargs())
        except OSError as exc:
            return job.start_failed(exc)
        job.close_streams()
        with self._lock:
            self._procs[n] = proc
            if self._closing:  # the channel ended while this one was starting
                self._canceled.add(n)
            canceled = n in self._canceled
        if canceled:
            self.wrapper.kill_group(proc.pid)
        # the app's pid is its process group's id (it has a session of its own): a client
        # that loses this worker can still ``kill -KILL -PID`` what it started
        self.send({"op": "active", "n": n, "pid": proc.pid})
        walltime = spec.get("walltime")
        timed_out = False
        try:
            returncode = proc.wait(timeout=walltime if walltime else None)
        except subprocess.TimeoutExpired:
            self.wrapper.kill_group(proc.pid)
            returncode = proc.wait()
            timed_out = True
        with self._lock:
            canceled = n in self._canceled
        result = job.finish(returncode, timed_out=timed_out, canceled=canceled, cleanup=False)
        self._janitor.put(job)
        return result

    def _clean(self) -> None:
        while True:
            job = self._janitor.get()
            if job is None:
                return
            try:
                job.cleanup()
            except Exception:
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="swiftnb coaster worker")
    parser.add_argument("--stdio", action="store_true",
                        help="speak the protocol on stdin/stdout (over SSH) instead of TCP")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--block")
    parser.add_argument("--id")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--walltime", type=float, default=0)
    parser.add_argument("--wrapper", default=None, help="path of wrapper.py (default: beside this file)")
    args = parser.parse_args(argv)
    if args.cores < 1:
        parser.error("--cores must be at least 1")
    transport: Any
    if args.stdio:
        transport = StdioTransport()
    else:
        missing = [f"--{name}" for name in ("host", "port", "block", "id")
                   if getattr(args, name) is None]
        if missing:
            parser.error(f"the TCP mode needs {', '.join(missing)} (or use --stdio)")
        transport = TcpTransport(args.host, args.port, os.environ.pop(SECRET_ENV, ""),
                                 args.block, args.id, args.walltime)
    worker = Worker(transport, args.cores, load_wrapper(args.wrapper))

    def on_term(signum: int, frame: Any) -> None:
        # the LRM ends the block (walltime, scancel), or the SSH session hangs up: take
        # the apps down with us
        worker.kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    return worker.run()


if __name__ == "__main__":
    sys.exit(main())
