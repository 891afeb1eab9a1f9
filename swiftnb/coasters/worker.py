#!/usr/bin/env python3
"""The coaster worker: runs tasks for a coaster service on one node of a block.

Why stdlib-only: a block runs this file (and ``wrapper.py`` beside it) with whatever
Python 3 the cluster node has, without swiftnb installed.  It must not import swiftnb.

Protocol: one JSON object per line over TCP (``\\n``-terminated UTF-8), worker first::

    worker -> service  {"op": "hello", "version": 1, "secret": S, "block": B, "id": W,
                        "cores": N, "walltime": SECONDS, "node": HOST, "pid": PID}
    service -> worker  {"op": "welcome"}          (or the connection is closed)
    service -> worker  {"op": "run", "n": K, "spec": {job spec of wrapper.py}}
    worker -> service  {"op": "start", "n": K}    (a slot took it: stage in begins)
    worker -> service  {"op": "active", "n": K}   (the app process has started)
    worker -> service  {"op": "done", "n": K, "result": {wrapper result dict}}
    service -> worker  {"op": "cancel", "n": K}   (kill that app's process group)
    service -> worker  {"op": "shutdown"}         (kill what runs, exit)

The secret comes from the environment (``SWIFTNB_COASTER_SECRET``), never the command
line, so other users cannot read it from the process list.  When the connection to the
service drops, the worker kills its apps and exits: the service has already re-queued them.
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


class Worker:
    """One worker: ``cores`` task slots, each a thread that runs one app at a time."""

    def __init__(self, host: str, port: int, secret: str, block: str, wid: str, cores: int,
                 walltime: float, wrapper: Any) -> None:
        self.host, self.port, self.secret = host, port, secret
        self.block, self.id, self.cores, self.walltime = block, wid, cores, walltime
        self.wrapper = wrapper
        self.sock: socket.socket | None = None
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

    # -- connection -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        with self._send_lock:
            if self.sock is None:
                return
            try:
                self.sock.sendall(data)
            except OSError:
                pass

    def run(self) -> int:
        try:
            self.sock = socket.create_connection((self.host, self.port), timeout=30)
        except OSError as exc:
            print(f"worker {self.block}:{self.id}: cannot connect to {self.host}:{self.port}: {exc}",
                  file=sys.stderr)
            return 2
        self.sock.settimeout(None)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = self.sock.makefile("rb")
        self.send({"op": "hello", "version": PROTOCOL_VERSION, "secret": self.secret,
                   "block": self.block, "id": self.id, "cores": self.cores,
                   "walltime": self.walltime, "node": socket.gethostname(), "pid": os.getpid()})
        first = reader.readline()
        if not first or json.loads(first).get("op") != "welcome":
            print(f"worker {self.block}:{self.id}: the service refused the connection", file=sys.stderr)
            return 3
        threads = [threading.Thread(target=self._slot, daemon=True) for _ in range(self.cores)]
        for t in threads:
            t.start()
        try:
            for line in reader:
                message = json.loads(line)
                op = message.get("op")
                if op == "run":
                    self._jobs.put((int(message["n"]), message["spec"]))
                elif op == "cancel":
                    self._cancel(int(message["n"]))
                elif op == "shutdown":
                    break
        except (OSError, ValueError):
            pass
        self._closing = True
        for n in list(self._procs):
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
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None
        return 0

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
                    result = {"ok": False, "exit_code": None, "canceled": True, "message": "Canceled"}
                else:
                    self.send({"op": "start", "n": n})
                    result = self._run(n, spec)
            except Exception as exc:  # a worker bug must not lose the task silently
                result = {"ok": False, "exit_code": None, "retryable": True,
                          "message": f"Coaster worker error: {type(exc).__name__}: {exc}"}
            with self._lock:
                self._procs.pop(n, None)
                self._canceled.discard(n)
            self.send({"op": "done", "n": n, "result": result})

    def _run(self, n: int, spec: dict[str, Any]) -> dict[str, Any]:
        job = (self.wrapper.prepare(spec) if self._spares is None
               else self.wrapper.prepare(spec, self._spares))
        if job.failure is not None:
            return job.failure
        try:
            proc = subprocess.Popen(job.argv, **job.popen_kwargs())
        except OSError as exc:
            job.close_streams()
            job.cleanup()
            return job._result(False, None, f"Cannot execute {job.argv[0]}: {exc.strerror or exc}")
        job.close_streams()
        with self._lock:
            self._procs[n] = proc
            canceled = n in self._canceled
        if canceled:
            self.wrapper.kill_group(proc.pid)
        self.send({"op": "active", "n": n})
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
        try:
            result = job.finish(returncode, timed_out=timed_out, canceled=canceled, cleanup=False)
        except TypeError:  # an older wrapper.py without deferred cleanup
            return job.finish(returncode, timed_out=timed_out, canceled=canceled)
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
    parser.add_argument("--host", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--block", required=True)
    parser.add_argument("--id", required=True)
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--walltime", type=float, default=0)
    parser.add_argument("--wrapper", default=None, help="path of wrapper.py (default: beside this file)")
    args = parser.parse_args(argv)
    secret = os.environ.pop(SECRET_ENV, "")
    worker = Worker(args.host, args.port, secret, args.block, args.id, args.cores, args.walltime,
                    load_wrapper(args.wrapper))

    def on_term(signum: int, frame: Any) -> None:
        # the LRM ends the block (walltime, scancel): take the apps down with us
        worker.kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    return worker.run()


if __name__ == "__main__":
    sys.exit(main())
