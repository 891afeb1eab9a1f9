"""A job's record: what the wrapper ran and how it ended, kept in the run directory.

Swift copied the wrapper log of every failed job (and of every job with
``alwaysTransferWrapperLog``) to ``RUNDIR/SCRIPT-RUNID.d/JOBID-info``, so the evidence
outlives the job directory, on whatever machine the job ran.  One file per call cost a
run of 100,000 calls 100,000 inodes (400 MB of 4 KiB blocks, and a create per call on
a shared file system), so by default the records are appended to one file,
``RUNDIR/SCRIPT-RUNID.d/jobs-info``, each after a header line ``==> NAME-info (N bytes)
<==`` (``N`` the record's length: a record may hold any text).  ``wrapperLogPerJob:
true`` writes Swift's one file per record instead.  :func:`read_record` finds a record in
either layout; :func:`records` lists the appended ones.
"""

from __future__ import annotations

import collections
import os
import re
import threading
from collections.abc import Iterator, Mapping
from typing import Any

from swiftnb.engine.task import TaskResult
from swiftnb.events import EventBus, TaskStatus
from swiftnb.execution.outcome import result_from_dict
from swiftnb.remote.wrapper import format_arguments
from swiftnb.scheduling.provider import StatusReporter

__all__ = ["InfoWriter", "RECORDS_FILE", "read_record", "records"]

#: the run's records, appended, in ``RUNDIR/SCRIPT-RUNID.d`` (matches Swift's
#: ``*-info`` glob, so ``grep EXIT_CODE RUNDIR/*.d/*-info`` still finds every record)
RECORDS_FILE = "jobs-info"
_HEADER = re.compile(rb"==> (.+)-info \((\d+) bytes\) <==\n")


class InfoWriter:
    """Writes the ``-info`` records of one run (remembers the directories it made).

    ``background=True`` writes them on a thread of their own, in order, every
    ``BATCH_SECONDS`` (waking it for each record cost a chain of short apps a tenth of
    its speed), each batch in one append; a provider that asks for it calls
    :meth:`close` at its end, when every record is on disk.  The local site asks: with
    alwaysTransferWrapperLog (on in Swift's distributed configuration) it writes one
    per app call, a cost the run's own thread need not wait for.  That thread keeps the
    records file open from its first batch to :meth:`close` (an open and a close per
    batch were most of its file operations).  ``per_job=True`` (``wrapperLogPerJob``)
    writes a file per record, as Swift did."""

    BATCH_SECONDS = 0.05

    def __init__(self, *, background: bool = False, bus: EventBus | None = None,
                 per_job: bool = False) -> None:
        self._dirs: set[str] = set()
        self._background = background
        self._per_job = per_job
        #: (path, bytes, append): a record, or appended records
        self._pending: collections.deque[tuple[str, bytes, bool]] = collections.deque()
        self._closing = threading.Event()
        self._thread: threading.Thread | None = None
        #: where a record that could not be written is said (RECORDS_LOST: the run
        #: warns once, naming the file, and ends with exit code 2)
        self._bus = bus
        self._lost: list[str] = []     # appended on the writing thread, said on the loop's
        self._said = False
        #: the records files the thread appends to, open until close()
        self._appending: dict[str, int] = {}

    def close(self) -> None:
        """Wait until every record handed over is written."""
        thread, self._thread = self._thread, None
        if thread is not None:
            self._closing.set()
            thread.join()
            self._closing.clear()
        self._write_pending()  # handed over as the thread ended
        appending, self._appending = self._appending, {}
        for fd in appending.values():
            os.close(fd)
        self._say_lost()

    def _drain(self) -> None:
        while True:
            closing = self._closing.wait(self.BATCH_SECONDS)
            self._write_pending()
            if closing:
                return

    def _write_pending(self) -> None:
        """What is pending, the appended records of one file in one write."""
        pending = self._pending
        appends: dict[str, list[bytes]] = {}
        while pending:  # append and popleft are atomic: no lock
            path, data, append = pending.popleft()
            if append:
                appends.setdefault(path, []).append(data)
            else:
                self._write_file(path, data, append=False)
        for path, parts in appends.items():
            self._append(path, b"".join(parts))

    def _append(self, path: str, data: bytes) -> None:
        """Records appended to the run's records file, kept open (the thread's)."""
        fd = self._appending.get(path)
        try:
            if fd is None:
                fd = self._appending[path] = os.open(
                    path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o666)
            _write_all(fd, data)
        except OSError as exc:
            if fd is not None:  # opened again for the next batch: the disk may have room
                os.close(self._appending.pop(path))
            self._note_lost(path, exc)

    def _write_file(self, path: str, data: bytes, *, append: bool) -> None:
        """Records; a failure to write them is not the job's failure, but the run's
        records are incomplete: the first such failure is kept, to be said."""
        error = _write_file(path, data, append=append)
        if error is not None:
            self._note_lost(path, error)

    def _note_lost(self, path: str, error: OSError) -> None:
        if not self._lost:
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
        info_dir = os.path.join(run_dir, f"{spec['site_run']}.d")
        try:
            if info_dir not in self._dirs:
                os.makedirs(info_dir, exist_ok=True)
                self._dirs.add(info_dir)
        except OSError as exc:
            self._lost.append(f"the -info records' directory {info_dir} could not be made "
                              f"({exc.strerror or exc}); the run's job records are lost")
            self._say_lost()
            return
        jobid = spec["jobid"]
        name = jobid if not spec.get("attempt") else f"{jobid}-{spec['attempt']}"
        data = _record_bytes(_record_text(spec, result))
        if self._per_job:
            record = (os.path.join(info_dir, f"{name}-info"), data, False)
        else:
            header = f"==> {name}-info ({len(data)} bytes) <==\n".encode("utf-8", "replace")
            record = (os.path.join(info_dir, RECORDS_FILE), header + data, True)
        if not self._background:
            self._write_file(*record[:2], append=record[2])
            self._say_lost()
            return
        self._say_lost()  # what the thread could not write before
        self._pending.append(record)
        if self._thread is None:
            self._thread = threading.Thread(target=self._drain, name="swiftnb-info",
                                            daemon=True)
            self._thread.start()


def _record_text(spec: Mapping[str, Any], result: Mapping[str, Any]) -> str:
    """One record: Swift's ``KEY=value`` lines, then the message and the tails of the
    app's stdout and stderr when there are any."""
    lines = [
        f"JOBID={spec['jobid']}", f"HOST={spec.get('site')}",
        f"DIR={result.get('directory')}", f"EXEC={spec.get('executable')}",
        f"ARGS={format_arguments(spec.get('args') or [])}",
        f"STDIN={spec.get('stdin') or ''}", f"STDOUT={spec.get('stdout') or ''}",
        f"STDERR={spec.get('stderr') or ''}",
        f"INF={'|'.join(spec.get('inputs') or [])}",
        f"OUTF={'|'.join(spec.get('outputs') or [])}",
    ]
    lines += [f"CDM={action}" for action in result.get("cdm_actions") or ()]
    if result.get("extra_info") is not None:  # env.SWIFT_EXTRA_INFO's output
        lines.append(f"EXTRAINFO={result['extra_info']}")
    lines.append(f"EXIT_CODE={result.get('exit_code')}")
    text = "\n".join(lines) + "\n"
    message = result.get("message") or ""
    stdout, stderr = result.get("stdout_tail") or "", result.get("stderr_tail") or ""
    if message:
        text += f"\n{message}\n"
    if stdout or stderr:
        text += f"\n--- stdout (tail) ---\n{stdout}\n--- stderr (tail) ---\n{stderr}\n"
    return text


def _record_bytes(text: str) -> bytes:
    """A record's bytes: a file name that is not UTF-8 as its own bytes (surrogateescape),
    anything else that UTF-8 cannot hold replaced."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def _write_file(path: str, data: bytes, *, append: bool) -> OSError | None:
    """Records, whole (a file's, or appended to the run's records); os-level.  The error
    that stopped it, if one did."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    try:
        fd = os.open(path, flags, 0o666)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        return exc
    return None


def _write_all(fd: int, data: bytes) -> None:
    """All of ``data``: a short write (a disk filling up) is not the whole record."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def records(path: str) -> Iterator[tuple[str, str]]:
    """The records appended to ``path`` (a run's ``jobs-info``), as (name, text) in the
    order written; a record cut short (the run was killed mid-write) ends the list."""
    with open(path, "rb") as fh:
        while True:
            header = fh.readline()
            found = _HEADER.fullmatch(header)
            if found is None:
                return
            size = int(found.group(2))
            data = fh.read(size)
            if len(data) < size:
                return
            yield (found.group(1).decode("utf-8", "surrogateescape"),
                   data.decode("utf-8", "replace"))


def read_record(path: str) -> str | None:
    """The record Swift would have written to ``path`` (``RUNDIR/SCRIPT-RUNID.d/
    NAME-info``): that file, or else the last record of that name in the directory's
    ``jobs-info``; None if neither has it.  OSError: neither could be read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except FileNotFoundError:
        pass
    directory, base = os.path.split(path)
    if not base.endswith("-info"):
        return None
    name = base[:-len("-info")]
    try:
        found = None
        for record_name, text in records(os.path.join(directory, RECORDS_FILE)):
            if record_name == name:
                found = text  # written again when a failure was found later: the last
        return found
    except FileNotFoundError:
        return None
