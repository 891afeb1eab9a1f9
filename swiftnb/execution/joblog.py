"""A job's record in ``RUNDIR/SCRIPT-RUNID.d/JOBID-info``.

Swift copied the wrapper log of every failed job there (and of every job with
``alwaysTransferWrapperLog``), so the evidence outlives the job directory, on whatever
machine the job ran.  Every provider writes it through :func:`write_info`.
"""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Mapping
from typing import Any

from swiftnb.engine.task import TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.execution.outcome import result_from_dict
from swiftnb.remote.wrapper import format_arguments
from swiftnb.scheduling.provider import StatusReporter

__all__ = ["InfoWriter"]


class InfoWriter:
    """Writes the ``-info`` records of one run (remembers the directories it made).

    ``background=True`` writes the files on a thread of their own, in order, every
    ``BATCH_SECONDS`` (waking it for each record cost a chain of short apps a tenth of
    its speed); a provider that asks for it calls :meth:`close` at its end, when every
    record is on disk.  The local site asks: with alwaysTransferWrapperLog (on in Swift's
    distributed configuration) it writes one per app call, and making a file is the
    dearest system call of a local app's path (a new inode; on a file system with
    recently freed ones, ext4 looks at each of them first), a cost the run's own thread
    need not wait for."""

    BATCH_SECONDS = 0.05

    def __init__(self, *, background: bool = False, bus: EventBus | None = None) -> None:
        self._dirs: set[str] = set()
        self._background = background
        self._pending: collections.deque[tuple[str, bytes]] = collections.deque()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        #: where a record that could not be written is said (RECORDS_LOST: the run
        #: warns once, naming the file, and ends with exit code 2)
        self._bus = bus
        self._lost: list[str] = []     # appended on the writing thread, said on the loop's
        self._said = False

    def close(self) -> None:
        """Wait until every record handed over is written."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._closing.set()
            thread.join()
            self._closing.clear()
        while self._pending:  # handed over as the thread ended
            self._write_file(*self._pending.popleft())
        self._say_lost()

    def _drain(self) -> None:
        while True:
            closing = self._closing.wait(self.BATCH_SECONDS)
            pending = self._pending
            while pending:  # append and popleft are atomic: no lock
                self._write_file(*pending.popleft())
            if closing:
                return

    def _write_file(self, path: str, data: bytes) -> None:
        """One record; a failure to write it is not the job's failure, but the run's
        records are incomplete: the first such failure is kept, to be said."""
        error = _write_file(path, data)
        if error is not None and not self._lost:
            self._lost.append(f"the -info record {path} could not be written "
                              f"({error.strerror or error}); the run's job records are "
                              "incomplete")

    def _say_lost(self) -> None:
        """Say the first lost record once (on the event loop's thread: the bus is not
        thread-safe)."""
        if self._lost and not self._said:
            self._said = True
            if self._bus is not None:
                self._bus.emit("RECORDS_LOST", {}, text=self._lost[0], level="WARN")

    def finish(self, run_dir: str, spec: Mapping[str, Any], result: Mapping[str, Any],
               attempt: StatusReporter, *, site: str, counts: dict[str, int],
               always: bool = False) -> TaskResult:
        """An attempt's end as the wrapper reported it, the same on every site that runs
        the wrapper far away: COMPLETED, or FAILED with its cause; the ``-info`` record of
        a failure (of a success too with alwaysTransferWrapperLog); the site's counts."""
        outcome = result_from_dict(result, site)
        if outcome.ok:
            counts["completed"] += 1
            attempt.status(TaskStatus.COMPLETED)
            if always:
                self.write(run_dir, spec, result)
        else:
            counts["failed"] += 1
            self.write(run_dir, spec, result)
            attempt.status(TaskStatus.FAILED, message=result.get("cause") or outcome.message)
        return outcome

    def write(self, run_dir: str, spec: Mapping[str, Any], result: Mapping[str, Any]) -> None:
        """The record of one attempt (``spec`` as the wrapper ran it, ``result`` its end);
        a failure to write it is not the job's failure."""
        try:
            info_dir = os.path.join(run_dir, f"{spec['site_run']}.d")
            if info_dir not in self._dirs:
                os.makedirs(info_dir, exist_ok=True)
                self._dirs.add(info_dir)
            jobid = spec["jobid"]
            name = jobid if not spec.get("attempt") else f"{jobid}-{spec['attempt']}"
            lines = [
                f"JOBID={jobid}", f"HOST={spec.get('site')}", f"DIR={result.get('directory')}",
                f"EXEC={spec.get('executable')}",
                f"ARGS={format_arguments(spec.get('args') or [])}",
                f"STDIN={spec.get('stdin') or ''}", f"STDOUT={spec.get('stdout') or ''}",
                f"STDERR={spec.get('stderr') or ''}",
                f"INF={'|'.join(spec.get('inputs') or [])}",
                f"OUTF={'|'.join(spec.get('outputs') or [])}",
            ]
            lines += [f"CDM={action}" for action in result.get("cdm_actions") or ()]
            if result.get("extra_info") is not None:  # env.SWIFT_EXTRA_INFO's output
                lines.append(f"EXTRAINFO={result['extra_info']}")
            text = ("\n".join(lines) + f"\nEXIT_CODE={result.get('exit_code')}\n\n"
                    f"{result.get('message', '')}\n"
                    f"\n--- stdout (tail) ---\n{result.get('stdout_tail', '')}\n"
                    f"--- stderr (tail) ---\n{result.get('stderr_tail', '')}\n")
            record = (os.path.join(info_dir, f"{name}-info"), _record_bytes(text))
        except OSError as exc:
            self._lost.append(f"the -info records' directory {info_dir} could not be made "
                              f"({exc.strerror or exc}); the run's job records are lost")
            self._say_lost()
            return
        if not self._background:
            self._write_file(*record)
            self._say_lost()
            return
        self._say_lost()  # what the thread could not write before
        self._pending.append(record)
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="swiftnb-info",
                                            daemon=True)
            self._thread.start()


def _record_bytes(text: str) -> bytes:
    """A record's bytes: a file name that is not UTF-8 as its own bytes (surrogateescape),
    anything else that UTF-8 cannot hold replaced."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _write_file(path: str, data: bytes) -> OSError | None:
    """One record, whole; os-level (one per app call on a busy run).  The error that
    stopped it, if one did."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        try:
            view = memoryview(data)
            while view:  # a short write (a disk filling up) is not the whole record
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    return None
