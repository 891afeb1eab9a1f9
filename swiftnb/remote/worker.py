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
    worker -> service  {"op": "start", "n": K}    (a slot took it and its stage in copies
                                                   files: it begins; TCP only: an SSH
                                                   client has no use for it)
    worker -> service  {"op": "active", "n": K, "pid": P}  (the app started; P is also
                                                   its process group id; without a
                                                   "start" before it, it also says that
                                                   the stage in began)
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
re-queued them, and nothing may be left running.  SIGTERM and SIGHUP do the same (an
app that such a signal reached first is held a moment, ``SIGNAL_GRACE``).  A
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
import json
import logging
import os
import queue
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import types
from collections import deque
from collections.abc import Callable
from typing import Any, cast

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
#: an app ended by one of these signals, which its worker did not send, may be the first
#: casualty of its whole block ending (``scancel``, a walltime: the batch system signals
#: every process of the job, in no set order).  Its end is reported after
#: ``SIGNAL_GRACE`` seconds, so that a worker the same signal reaches dies first and the
#: client re-queues the task as the block's loss instead of failing it as the app's.
LOST_SIGNALS = frozenset({signal.SIGTERM, signal.SIGKILL, signal.SIGHUP})
SIGNAL_GRACE = 2.0

TRACE = 5
_LEVELS = {"ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.INFO,
           "DEBUG": logging.DEBUG, "TRACE": TRACE}
_NAMES = {value: key for key, value in _LEVELS.items()}
log = logging.getLogger("swiftnb.remote.worker")
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
        raise SecretFileError(  # noqa: B904  the message says why; the worker prints it
            "cannot read the secret file %s: %s" % (path, exc.strerror or exc))
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


def load_wrapper(path: str | None = None) -> types.ModuleType:
    """The job wrapper, ``swiftnb.remote.wrapper``: a module of this worker's own package,
    whether the worker runs from the shipped zipapp (``_swiftremote.pyz worker``) or from a
    swiftnb installation.  ``path`` (``--wrapper``): where that package is to be imported
    from first, a ``_swiftremote.pyz`` or the ``swiftnb/remote/wrapper.py`` of a tree."""
    if path:
        root = os.path.abspath(path)
        if root.endswith(".py"):  # .../swiftnb/remote/wrapper.py: the tree holding swiftnb/
            root = os.path.dirname(os.path.dirname(os.path.dirname(root)))
        if root not in sys.path:
            sys.path.insert(0, root)
    from swiftnb.remote import wrapper

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
        #: what arrived after the welcome line (the first tasks may come with it)
        self._early = b""

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
        try:
            self.write(encode(message))
            first = self._first_line()
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

    def _first_line(self) -> bytes:
        """The service's answer to the hello; what came after it is kept for read()."""
        assert self._sock is not None
        data = b""
        while b"\n" not in data:
            chunk = self._sock.recv(65536)
            if not chunk:
                return b""
            data += chunk
        line, _, self._early = data.partition(b"\n")
        return line

    def fileno(self) -> int:
        assert self._sock is not None
        return self._sock.fileno()

    def read(self) -> bytes:
        """What has arrived (at least one byte; b"" when the service closed the channel)."""
        early, self._early = self._early, b""
        if early:
            return early
        assert self._sock is not None
        return self._sock.recv(65536)

    def pending(self) -> bool:
        """Whether read() has data without waiting for the socket."""
        return bool(self._early)

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
        self._in: int | None = os.dup(0)   # (not inherited by the apps)
        self._out: int | None = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.dup2(2, 1)

    def open(self, hello: dict[str, Any]) -> None:
        try:
            self.write(encode(hello))
        except OSError as exc:
            raise TransportError(f"cannot say hello on stdout: {exc}", 3) from exc

    def fileno(self) -> int:
        assert self._in is not None
        return self._in

    def read(self) -> bytes:
        assert self._in is not None
        return os.read(self._in, 65536)

    def pending(self) -> bool:
        return False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view and self._out is not None:
            view = view[os.write(self._out, view):]

    def close(self) -> None:
        for fd in (self._in, self._out):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:  # the client is gone: what was unsent does not matter
                    pass
        self._in = self._out = None


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
        try:  # one open and a bounded read: no stat of the path first
            with open(path, "rb") as fh:
                data = fh.read(limit + 1)
        except OSError:
            continue
        if len(data) <= limit and total + len(data) <= 4 * limit:
            found[rel] = base64.b64encode(data).decode("ascii")
            total += len(data)
    return found


#: a job whose stage-in or stage-out copies files (scratch directories, copied inputs,
#: CDM policies) or runs a command (SWIFT_EXTRA_INFO) is prepared and finished on a
#: thread of its own, so that one large copy does not hold the other slots' tasks
def _slow_staging(spec: dict[str, Any]) -> bool:
    env = spec.get("env") or {}
    return bool(spec.get("scratch") or spec.get("copy_inputs") or spec.get("cdm")
                or "SWIFT_JOBDIR_PATH" in env or "SWIFT_EXTRA_INFO" in env)


#: without pidfds (Linux before 5.3, Python before 3.9, other systems) running apps are
#: polled this often (s)
POLL_INTERVAL = 0.005


class _Task:
    """A task this worker holds: waiting for a slot, staging, or running."""

    __slots__ = ("n", "spec", "slow", "job", "proc", "pidfd", "deadline", "canceled",
                 "timed_out", "held", "slots")

    def __init__(self, n: int, spec: dict[str, Any]) -> None:
        self.n = n
        self.spec = spec
        #: worker slots it holds while it runs (an MPI task: several; see coasters/mpi.py)
        self.slots = max(1, int(spec.get("slots", 1))) if isinstance(spec, dict) else 1
        self.slow = _slow_staging(spec)
        self.job: Any = None
        self.proc: "subprocess.Popen[bytes] | None" = None
        self.pidfd: int | None = None
        self.deadline: float | None = None
        self.canceled = False
        self.timed_out = False
        #: (report after, exit code) of an app a signal ended (see ``SIGNAL_GRACE``)
        self.held: "tuple[float, int] | None" = None


_CHANNEL, _WAKE = "channel", "wake"


class Worker:
    """One worker: up to ``cores`` apps at once, all driven from one thread.

    Why one thread: a task's life here is a few cheap system calls (job directory,
    fork/exec, an exit heard through the app's pidfd, outputs moved) and three short
    messages; handing each task between a reader thread, a slot thread and a clean-up
    thread cost more CPU in thread switches than the work itself.  The loop writes the
    messages of one turn in one write (a task's "done" and the next one's "active"
    usually travel together), and removes finished job directories after
    that write, when the service already knows.  Only jobs whose staging copies files
    (see ``_slow_staging``) are prepared and finished on threads.

    The protocol loop is the same over every transport (TCP to a coaster service, or
    stdin/stdout over SSH); the transport only opens the channel and moves bytes.
    When the channel ends (EOF: the service or the SSH connection went away) or says
    ``shutdown``, every running app's process group is killed before the worker exits.
    """

    def __init__(self, transport: "TcpTransport | StdioTransport", cores: int,
                 wrapper: types.ModuleType) -> None:
        self.transport = transport
        self.cores = cores
        self.wrapper = wrapper
        self._open = False
        self._closing = False
        self._tasks: dict[int, _Task] = {}     # every task held, until its "done"
        self._waiting: deque[_Task] = deque()  # for a slot
        self._busy = 0                         # slots staging or running a task
        self._out: list[bytes] = []            # messages of this turn of the loop
        self._cleanups: list[Any] = []         # finished jobs whose directories go next
        self._selector = selectors.DefaultSelector()
        self._use_pidfd = hasattr(os, "pidfd_open")
        # staging threads hand their results back through a queue and wake the loop
        self._posted: "queue.SimpleQueue[tuple[_Task, Any, Any]]" = queue.SimpleQueue()
        self._wake_r, self._wake_w = os.pipe()
        for fd in (self._wake_r, self._wake_w):
            os.set_blocking(fd, False)
        # empty job directories reused by the next task (wrapper.py ships with this file)
        self._spares = wrapper.SpareDirs()
        wrapper.become_subreaper()  # for good: this process exists for its apps (Job.end_processes)

    def hello(self) -> dict[str, Any]:
        """The first message: who this worker is (the transport adds what it needs)."""
        return {"op": "hello", "version": PROTOCOL_VERSION, "pid": os.getpid(),
                "node": socket.gethostname(), "python": "%d.%d.%d" % sys.version_info[:3],
                "cores": self.cores}

    # -- connection -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Queue one message; the loop writes a turn's messages at once (``_flush``)."""
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "sent %s", _shown(message))
        if self._open:
            self._out.append(encode(message))

    def _flush(self) -> None:
        if not self._out:
            return
        data = b"".join(self._out)
        self._out = []
        try:
            self.transport.write(data)
        except OSError:  # the channel is gone: the loop hears it as EOF next
            pass

    def run(self) -> int:
        try:
            self.transport.open(self.hello())
        except TransportError as exc:
            log.error("%s", exc)
            print(f"worker {self.transport.name}: {exc}", file=sys.stderr)
            return exc.code
        self._open = True
        self._selector.register(self.transport.fileno(), selectors.EVENT_READ, _CHANNEL)
        self._selector.register(self._wake_r, selectors.EVENT_READ, _WAKE)
        try:
            self._serve()
        finally:
            self._stop()
        return 0

    def _serve(self) -> None:
        """Run the loop until EOF, ``shutdown`` or a line that is not JSON."""
        buffered = b""
        try:
            while True:
                self._start_waiting()
                self._flush()
                self._clean_up()
                # (what came with the welcome is read first, without waiting)
                ready = [_CHANNEL] if self.transport.pending() else [
                    key.data for key, _ in self._selector.select(self._timeout())]
                for source in ready:
                    if source is _CHANNEL:
                        data = self.transport.read()
                        if not data:
                            log.info("the service closed the connection")
                            return
                        lines = (buffered + data).split(b"\n")
                        buffered = lines.pop()
                        for line in lines:
                            if line.strip() and not self._on_message(json.loads(line)):
                                log.info("the service said shutdown")
                                return
                    elif source is _WAKE:
                        self._take_posted()
                    else:
                        self._exited(cast(_Task, source))  # the other keys: tasks
                self._check_running()
        except (OSError, ValueError) as exc:
            log.info("the connection ended: %s", exc)

    def _on_message(self, message: dict[str, Any]) -> bool:
        """Act on one message; False for ``shutdown``."""
        if log.isEnabledFor(TRACE):
            log.log(TRACE, "received %s", _shown(message))
        op = message.get("op")
        if op == "run":
            task = _Task(int(message["n"]), message["spec"])
            self._tasks[task.n] = task
            self._waiting.append(task)
        elif op == "cancel":
            self._cancel(int(message["n"]))
        elif op == "cores":
            # slots are never taken away: the sender keeps fewer tasks in flight instead
            self.cores = max(self.cores, min(int(message["n"]), MAX_CORES))
        elif op == "shutdown":
            return False
        return True

    def _stop(self) -> None:
        """Kill every running app, report them, remove job directories, close the
        channel (what is still waiting for a slot is dropped: the client re-queues it)."""
        self._closing = True
        self._waiting.clear()
        for task in list(self._tasks.values()):
            if task.held is not None:
                self._report_exit(task, task.held[1])
        for task in list(self._tasks.values()):
            if task.proc is not None:
                task.canceled = True
                task.job.kill(task.proc.pid)
        limit = time.monotonic() + 5.0
        while self._busy and time.monotonic() < limit:
            wait = self._timeout()
            for key, _ in self._selector.select(1.0 if wait is None else min(wait, 1.0)):
                if key.data is _WAKE:
                    self._take_posted()
                elif key.data is not _CHANNEL:
                    self._exited(key.data)
            self._check_running()
        self._flush()
        self._clean_up()
        self._spares.clear()
        self._open = False
        try:
            self.transport.close()
        except OSError:
            pass

    # -- running tasks ----------------------------------------------------------------

    def kill_all(self) -> None:
        for task in list(self._tasks.values()):
            if task.proc is not None:
                task.job.kill(task.proc.pid)

    def _cancel(self, n: int) -> None:
        log.debug("task %s canceled", n)
        task = self._tasks.get(n)
        if task is None:
            return
        task.canceled = True
        if task in self._waiting:  # withdrawn while it waited here
            self._waiting.remove(task)
            self._done(task, self._failure(self.wrapper.KIND_CANCELED, "Canceled", task.spec),
                       slot=False)
        elif task.proc is not None:
            task.job.kill(task.proc.pid)

    def _start_waiting(self) -> None:
        # first come, first served: an MPI task waits until its slots are free (alone,
        # it starts even if it asks for more than the worker has)
        while (self._waiting and not self._closing and (
                self._busy + self._waiting[0].slots <= self.cores or not self._busy)):
            task = self._waiting.popleft()
            self._busy += task.slots
            log.debug("task %s (%s) begins", task.n, task.spec.get("jobid", "?"))
            if task.slow:
                # a stage-in that may take long: the service hears of it as it begins
                # (else "active" says both, a moment later)
                if self.transport.says_start:
                    self.send({"op": "start", "n": task.n})
                self._flush()
                self._on_thread(task, self._prepare)
            else:
                self._guarded(task, self._begin)

    def _begin(self, task: _Task) -> None:
        self._spawn(task, self._prepare(task))

    def _prepare(self, task: _Task) -> Any:
        return self.wrapper.prepare(task.spec, self._spares)

    def _guarded(self, task: _Task, step: "Callable[..., None]", *args: Any) -> None:
        """``step(task, *args)``; a worker bug fails the task instead of losing it."""
        try:
            step(task, *args)
        except Exception as exc:
            log.exception("task %s", task.n)
            if task.proc is not None:
                task.job.kill(task.proc.pid)
                self._forget_pidfd(task)
                task.proc = None
            self._done(task, self._failure(self.wrapper.KIND_WORKER,
                                           f"Coaster worker error: {type(exc).__name__}: {exc}",
                                           task.spec))

    def _on_thread(self, task: _Task, work: "Callable[..., Any]", *args: Any) -> None:
        """Run ``work(task, *args)`` on a thread; its value comes back to the loop."""
        def run() -> None:
            try:
                value: Any = work(task, *args)
                error = None
            except Exception as exc:
                value, error = None, exc
            self._posted.put((task, value, error))
            try:
                os.write(self._wake_w, b"x")
            except OSError:  # the pipe is full: the loop is being woken anyway
                pass

        threading.Thread(target=run, daemon=True).start()

    def _take_posted(self) -> None:
        try:
            os.read(self._wake_r, 4096)
        except BlockingIOError:
            pass
        while True:
            try:
                task, value, error = self._posted.get_nowait()
            except queue.Empty:
                return
            if error is not None:
                self._guarded(task, self._raise, error)
            elif task.job is None:  # prepared
                self._guarded(task, self._spawn, value)
            else:  # finished
                self._done(task, value)

    @staticmethod
    def _raise(task: _Task, error: Exception) -> None:
        raise error

    def _spawn(self, task: _Task, job: Any) -> None:
        """Start a prepared task's app and watch for its end."""
        task.job = job
        if job.failure is not None:
            self._done(task, job.failure)
            return
        if task.canceled or self._closing:
            job.close_streams()
            job.cleanup()
            self._done(task, self._failure(self.wrapper.KIND_CANCELED, "Canceled", task.spec))
            return
        try:
            proc = subprocess.Popen(job.argv, **job.popen_kwargs())
        except OSError as exc:
            self._done(task, job.start_failed(exc))
            return
        job.close_streams()
        job.started(proc.pid)
        task.proc = proc
        walltime = task.spec.get("walltime")
        if walltime:
            task.deadline = time.monotonic() + float(walltime)
        if self._use_pidfd:
            try:
                task.pidfd = os.pidfd_open(proc.pid)
            except OSError:  # e.g. a seccomp filter refuses it: poll instead
                self._use_pidfd = False
            else:
                self._selector.register(task.pidfd, selectors.EVENT_READ, task)
        # the app's pid is its process group's id (it has a session of its own): a client
        # that loses this worker can still ``kill -KILL -PID`` what it started
        self.send({"op": "active", "n": task.n, "pid": proc.pid})

    def _forget_pidfd(self, task: _Task) -> None:
        if task.pidfd is not None:
            self._selector.unregister(task.pidfd)
            os.close(task.pidfd)
            task.pidfd = None

    def _timeout(self) -> float | None:
        """How long the loop may wait: until the nearest walltime, or the next poll."""
        deadlines = [t.deadline for t in self._tasks.values()
                     if t.deadline is not None and t.proc is not None]
        deadlines += [t.held[0] for t in self._tasks.values() if t.held is not None]
        wait = max(0.0, min(deadlines) - time.monotonic()) if deadlines else None
        if not self._use_pidfd and any(t.proc is not None for t in self._tasks.values()):
            wait = POLL_INTERVAL if wait is None else min(wait, POLL_INTERVAL)
        return wait

    def _check_running(self) -> None:
        """Kill apps past their walltime; without pidfds, hear of ended apps; report
        the apps held for ``SIGNAL_GRACE``."""
        now = time.monotonic()
        for task in list(self._tasks.values()):
            if task.held is not None and now >= task.held[0]:
                self._report_exit(task, task.held[1])
            if task.proc is None:
                continue
            if task.deadline is not None and now >= task.deadline and not task.timed_out:
                task.timed_out = True
                task.job.kill(task.proc.pid)
            if task.pidfd is None and task.proc.poll() is not None:
                self._exited(task)

    def _exited(self, task: _Task) -> None:
        """An app ended: check and move its outputs, report it."""
        self._forget_pidfd(task)
        proc, task.proc = task.proc, None
        assert proc is not None
        returncode = proc.wait()
        if (returncode < 0 and -returncode in LOST_SIGNALS and not task.canceled
                and not task.timed_out and not self._closing):
            log.debug("task %s: signal %s from outside; reported in %s s", task.n,
                      -returncode, SIGNAL_GRACE)
            task.held = (time.monotonic() + SIGNAL_GRACE, returncode)
            return
        self._report_exit(task, returncode)

    def _report_exit(self, task: _Task, returncode: int) -> None:
        task.held = None
        if task.slow:
            self._on_thread(task, self._finish, returncode, True)
        else:
            self._guarded(task, self._finished, returncode)

    def _finish(self, task: _Task, returncode: int, cleanup: bool) -> dict[str, Any]:
        result: dict[str, Any] = task.job.finish(
            returncode, timed_out=task.timed_out, canceled=task.canceled, cleanup=cleanup)
        return result

    def _finished(self, task: _Task, returncode: int) -> None:
        result = self._finish(task, returncode, False)
        self._cleanups.append(task.job)
        self._done(task, result)

    def _done(self, task: _Task, result: dict[str, Any], slot: bool = True) -> None:
        """Report a task's end and free its slot."""
        if slot:
            self._busy -= task.slots
        self._tasks.pop(task.n, None)
        log.debug("task %s ended: %s", task.n, "ok" if result.get("ok") else
                  result.get("message") or result.get("cause") or "failed")
        spec = task.spec
        if result.get("ok") and isinstance(spec, dict) and spec.get("inline_limit"):
            result["inline"] = inline_outputs(spec, result, int(spec["inline_limit"]))
        self.send({"op": "done", "n": task.n, "result": result})

    def _clean_up(self) -> None:
        """Remove finished jobs' directories (after their "done" went out)."""
        jobs, self._cleanups = self._cleanups, []
        for job in jobs:
            try:
                job.cleanup()
            except Exception:
                pass

    def _failure(self, kind: str, cause: str, spec: Any) -> dict[str, Any]:
        """A result for a task the worker ended itself (never ran, or the worker failed)."""
        site = spec.get("site") if isinstance(spec, dict) else None
        result: dict[str, Any] = self.wrapper.failure_result(kind, cause, site=str(site or "local"))
        return result


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
    parser.add_argument("--wrapper", default=None,
                        help="a _swiftremote.pyz or wrapper.py whose package to use (default: this worker's own)")
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
    transport: TcpTransport | StdioTransport
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
