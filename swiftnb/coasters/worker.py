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
    service -> worker  {"op": "cores", "n": N}    (run up to N apps at once: the SSH
                                                   site's maxParallelTasks was raised)
    service -> worker  {"op": "shutdown"}         (kill what runs, exit)

Two transports carry it (:class:`TcpTransport`, :class:`StdioTransport`; one
:class:`Worker` serves both):

* TCP (``--host --port --block --id``): a block's worker connects to its coaster service.
  The secret comes from a file of mode 0600 (``--secret-file``) or the environment
  (``SWIFTNB_COASTER_SECRET``), never the command line, so other users cannot read it
  from the process list.  ``--id auto`` takes the worker's id from the launcher's rank
  variable (``srun``, ``mpiexec``, ``aprun`` start one worker per node with one command
  line).  A connection closed without an answer (the service busy, or not up yet) is
  tried again a few times; ``{"op": "refused"}`` ends the worker at once.
* ``--stdio``: ``ssh HOST python3 worker.py --stdio --cores N`` speaks on the SSH
  channel's stdin/stdout, with no secret or welcome (SSH authenticated the client).

When the channel ends (the service dropped the connection, the SSH connection died, the
client closed stdin) the worker kills every app's process group and exits: the client has
re-queued them, and nothing may be left running.  SIGTERM and SIGHUP do the same.  A
SIGKILLed worker cannot clean up (apps run in sessions of their own, as cancellation needs,
so they outlive it): that case is the client's, which saw each app's pid (= its process
group) in ``active`` and the worker's in ``hello`` and can ``kill -KILL -PGID`` them.

Logging (``--log-level ERROR|WARN|INFO|DEBUG|TRACE``, ``--log-dir DIR``; Swift 0.96's
``workerLoggingLevel`` and ``workerLoggingDirectory``): one file per worker,
``DIR/worker-BLOCK-ID.log``; NONE (the default) writes none.  INFO says what the worker
is and where it connects, DEBUG each task, TRACE each message (the secret left out).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

PROTOCOL_VERSION = 1
#: the most slot threads a ``cores`` message may ask for (the widest throttle slider)
MAX_CORES = 1024
SECRET_ENV = "SWIFTNB_COASTER_SECRET"

#: where a launcher puts the rank of the process it started (``--id auto``): swiftnb's
#: own plain and ssh launchers, Slurm's srun, MPICH/Hydra's mpiexec, Open MPI's mpiexec,
#: Cray's aprun
RANK_VARIABLES = ("SWIFTNB_WORKER_INDEX", "SLURM_PROCID", "PMI_RANK", "OMPI_COMM_WORLD_RANK",
                  "ALPS_APP_PE")
LOG_LEVELS = ("NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")
#: Swift 0.96's workerLoggingDirectory default
DEFAULT_LOG_DIR = "~/.globus/coasters"
#: connection attempts, and the pauses between them (s): a service that closes a
#: connection without answering is busy (too many at once) or not listening yet
CONNECT_PAUSES = (1.0, 2.0, 4.0, 8.0)

TRACE = 5
_LEVELS = {"ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.INFO,
           "DEBUG": logging.DEBUG, "TRACE": TRACE}
_NAMES = {value: key for key, value in _LEVELS.items()}
log = logging.getLogger("swiftnb.coasters.worker")
log.addHandler(logging.NullHandler())
log.propagate = False


class _Format(logging.Formatter):
    """``2024-05-01 12:00:00,123 DEBUG message``, with Swift's level names (WARN, TRACE)."""

    def format(self, record: logging.LogRecord) -> str:
        record.levelname = _NAMES.get(record.levelno, record.levelname)
        return super().format(record)


def start_logging(level: str, directory: str | None, block: str, wid: str) -> str | None:
    """Log to ``DIR/worker-BLOCK-ID.log`` at ``level`` (NONE: nowhere); returns the path."""
    level = level.upper()
    if level == "NONE":
        return None
    directory = os.path.expanduser(directory or DEFAULT_LOG_DIR)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "worker-%s-%s.log" % (block, wid))
    handler = logging.FileHandler(path)
    handler.setFormatter(_Format("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(_LEVELS[level])
    return path


def _shown(message: dict[str, Any]) -> str:
    """A message for the TRACE log: the secret left out, long ones cut."""
    text = json.dumps({k: ("..." if k == "secret" else v) for k, v in message.items()})
    return text if len(text) <= 400 else text[:400] + "..."


def worker_id(text: str, environ: "dict[str, str] | None" = None) -> str:
    """``--id``: as given, or ``auto``: the launcher's rank as the service's 6-digit id."""
    if text != "auto":
        return text
    env = os.environ if environ is None else environ
    for name in RANK_VARIABLES:
        value = env.get(name, "").strip()
        if value.isdigit():
            return "%06d" % int(value)
    return "%06d" % 0


class SecretFileError(Exception):
    """The secret file is missing, empty, or readable by others."""


def read_secret_file(path: str) -> str:
    """The secret in ``path``, which only its owner may read (mode 0600 or 0400)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        raise SecretFileError("cannot read the secret file %s: %s" % (path, exc.strerror or exc))
    try:
        mode = os.fstat(fd).st_mode & 0o777
        if mode & 0o077:
            raise SecretFileError("the secret file %s has mode %03o: others may read it; "
                                  "chmod 600 it" % (path, mode))
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    secret = data.decode("utf-8", "replace").strip()
    if not secret:
        raise SecretFileError("the secret file %s is empty" % path)
    return secret


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


#: what one connection attempt came to
_WELCOMED, _REFUSED, _SILENT, _UNREACHABLE = "welcomed", "refused", "silent", "unreachable"


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
        """Connect and say hello; tried again after a pause when the connection fails or
        is closed without an answer, given up at once when the service refuses it."""
        message = {**hello, "secret": self.secret, "block": self.block, "id": self.id,
                   "walltime": self.walltime}
        for pause in CONNECT_PAUSES + (None,):
            outcome, detail = self._attempt(message)
            if outcome == _WELCOMED:
                return
            if outcome == _REFUSED:
                raise TransportError("the service refused the connection: %s" % detail, 3)
            if pause is None:
                code = 2 if outcome == _UNREACHABLE else 3
                raise TransportError("cannot connect to %s:%s: %s" % (self.host, self.port, detail),
                                     code)
            log.warning("connecting to %s:%s: %s; again in %g s", self.host, self.port,
                        detail, pause)
            time.sleep(pause)

    def _attempt(self, message: dict[str, Any]) -> "tuple[str, str]":
        """One connection: (_WELCOMED, ""), or what happened and the details."""
        self.close()
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=30)
        except OSError as exc:
            return _UNREACHABLE, str(exc)
        self._sock.settimeout(None)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._reader = self._sock.makefile("rb")
        try:
            self.write(encode(message))
            first = self._reader.readline()
            answer = json.loads(first) if first else {}
        except (OSError, ValueError):
            answer = {}
        if not isinstance(answer, dict):
            answer = {}
        if answer.get("op") == "welcome":
            # a passive service may give a worker a new id (one taken already)
            self.id = str(answer.get("id") or self.id)
            self.name = "%s:%s" % (self.block, self.id)
            log.info("connected to %s:%s as worker %s", self.host, self.port, self.name)
            return _WELCOMED, ""
        if answer.get("op") == "refused":
            return _REFUSED, str(answer.get("reason") or "no reason given")
        return _SILENT, ("the service closed the connection without an answer (a wrong "
                         "secret, or too many connections at once)")

    def lines(self) -> Iterator[bytes]:
        return iter(self._reader)

    def write(self, data: bytes) -> None:
        if self._sock is not None:
            self._sock.sendall(data)

    def close(self) -> None:
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()  # it holds the socket open until closed itself
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
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "sent %s", _shown(message))
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
            log.error("%s", exc)
            print(f"worker {self.transport.name}: {exc}", file=sys.stderr)
            return exc.code
        self._open = True
        self._slots: list[threading.Thread] = []
        self._grow(self.cores)
        try:
            self._serve()
        finally:
            self._stop(self._slots)
        return 0

    def _grow(self, cores: int) -> None:
        """Run up to ``cores`` apps at once: start the slot threads missing (slots are
        never taken away: the sender keeps fewer tasks in flight to lower the width)."""
        while len(self._slots) < cores:
            thread = threading.Thread(target=self._slot, daemon=True)
            self._slots.append(thread)
            thread.start()
        self.cores = len(self._slots)

    def _serve(self) -> None:
        """Read messages until EOF, ``shutdown`` or a line that is not JSON."""
        try:
            for line in self.transport.lines():
                if not line.strip():
                    continue
                message = json.loads(line)
                if log.isEnabledFor(TRACE):
                    log.log(TRACE, "received %s", _shown(message))
                op = message.get("op")
                if op == "run":
                    self._jobs.put((int(message["n"]), message["spec"]))
                elif op == "cancel":
                    self._cancel(int(message["n"]))
                elif op == "cores":
                    self._grow(min(int(message["n"]), MAX_CORES))
                elif op == "shutdown":
                    log.info("the service said shutdown")
                    return
            log.info("the service closed the connection")
        except (OSError, ValueError) as exc:
            log.info("the connection ended: %s", exc)

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
        log.debug("task %s canceled", n)
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
                    log.debug("task %s (%s) begins", n, spec.get("jobid", "?"))
                    result = self._run(n, spec)
                    log.debug("task %s ended: %s", n, "ok" if result.get("ok") else
                              result.get("message") or result.get("cause") or "failed")
            except Exception as exc:  # a worker bug must not lose the task silently
                log.exception("task %s", n)
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
    parser.add_argument("--id", help="the worker's id, or auto: the launcher's rank ("
                        + ", ".join(RANK_VARIABLES) + ", else 0) as 6 digits")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--walltime", type=float, default=0)
    parser.add_argument("--wrapper", default=None, help="path of wrapper.py (default: beside this file)")
    parser.add_argument("--secret-file", default=None,
                        help="read the service's secret from this file (mode 0600) instead "
                        "of $" + SECRET_ENV)
    parser.add_argument("--log-level", default=None, type=str.upper, choices=LOG_LEVELS,
                        help="write a log at this level (default NONE, or INFO with --log-dir)")
    parser.add_argument("--log-dir", default=None,
                        help="where the log goes: DIR/worker-BLOCK-ID.log (default "
                        + DEFAULT_LOG_DIR + ")")
    args = parser.parse_args(argv)
    if args.cores < 1:
        parser.error("--cores must be at least 1")
    level = args.log_level or ("INFO" if args.log_dir else "NONE")
    transport: Any
    if args.stdio:
        transport = StdioTransport()
        start_logging(level, args.log_dir, "stdio", str(os.getpid()))
    else:
        missing = [f"--{name}" for name in ("host", "port", "block", "id")
                   if getattr(args, name) is None]
        if missing:
            parser.error(f"the TCP mode needs {', '.join(missing)} (or use --stdio)")
        wid = worker_id(args.id)
        # the secret never reaches the apps: out of the environment either way
        secret = os.environ.pop(SECRET_ENV, "")
        if args.secret_file:
            try:
                secret = read_secret_file(args.secret_file)
            except SecretFileError as exc:
                print(f"worker {args.block}:{wid}: {exc}", file=sys.stderr)
                return 2
        try:
            path = start_logging(level, args.log_dir, args.block, wid)
        except OSError as exc:
            print(f"worker {args.block}:{wid}: cannot write its log: {exc}", file=sys.stderr)
            return 2
        if path is not None:
            log.info("worker %s:%s, pid %s on %s, Python %s, %s core(s), service %s:%s",
                     args.block, wid, os.getpid(), socket.gethostname(),
                     "%d.%d.%d" % sys.version_info[:3], args.cores, args.host, args.port)
        transport = TcpTransport(args.host, args.port, secret, args.block, wid, args.walltime)
    worker = Worker(transport, args.cores, load_wrapper(args.wrapper))

    def on_term(signum: int, frame: Any) -> None:
        # the LRM ends the block (walltime, scancel), or the SSH session hangs up: take
        # the apps down with us
        log.info("signal %s: killing the apps", signum)
        worker.kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)
    code = worker.run()
    log.info("exit %s", code)
    return code


if __name__ == "__main__":
    sys.exit(main())
