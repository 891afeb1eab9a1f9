"""RunStore: the record of runs and their app calls, in ``<dir>/store.sqlite``, with
the digest cache and the content store beside it.

Why batches: a workflow of 100,000 short calls records one row group per call; one
transaction each would be bound by commits, so calls are buffered and written in one
transaction per 256 calls or per second, whichever comes first (per 8,192 reused
calls or per second: a re-run reuses thousands a second), and on
``end_run``/``flush``/``close``.  A call still in the buffer is already seen by
:meth:`RunStore.lookup` of this process.  Memoization looks keys up in batches
(:meth:`RunStore.earlier_rows`, one query for up to LOOKUP_CHUNK keys) and records and
reads calls as rows (:mod:`swiftnb.store.callrows`), not as records; a call reused on
the event loop is recorded as a :class:`ReusedCall` (the earlier row's id: its texts are
copied by the insert itself), and a full buffer of those is written by the store's
flushing thread, never by the caller's."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING, NamedTuple

from swiftnb.store import errors
from swiftnb.store.callrows import CallRow, record_of, row_of
from swiftnb.store.digests import DigestCache
from swiftnb.store.objects import DEFAULT_LIMIT, ContentStore
from swiftnb.store.records import CallRecord, RunRecord
from swiftnb.store.sqlite import DATABASE_NAME, Row, StoreDatabase, path_text

if TYPE_CHECKING:  # pandas is imported only when a frame is asked for
    import pandas as pd

__all__ = ["RunStore", "ReusedCall", "DEFAULT_DIR", "BATCH_CALLS", "BATCH_SECONDS",
           "REUSED_BATCH_CALLS", "LOOKUP_CHUNK"]

#: the store directory of a run, under its working directory
DEFAULT_DIR = ".swiftnb"
BATCH_CALLS = 256
BATCH_SECONDS = 1.0
#: reused calls buffered before the flushing thread is woken for them (else by age):
#: a re-run reuses thousands a second, and each wake-up of that thread takes the GIL
#: from the event loop, which decides the reuses, several times
REUSED_BATCH_CALLS = 8192

_CALL_COLUMNS = ("id, run_id, jobid, key, app, command, site, started, ended, exit_code, "
                 "decision, reason, key_parts, files")
_SUCCESS = "('ran', 'cached')"
#: the call columns as ``c.<name>``, for queries that join files (made once: the lookup
#: of a memoized call is the hot path)
_C_COLUMNS = ", ".join(f"c.{name.strip()}" for name in _CALL_COLUMNS.split(","))
_LOOKUP = (f"SELECT {_CALL_COLUMNS} FROM calls WHERE key IN (?) AND decision IN {_SUCCESS} "
           f"ORDER BY id")
#: keys a lookup query asks for at once (SQLite allows 32,766 parameters)
LOOKUP_CHUNK = 500
#: reused calls: each the earlier call's row (v.column5) with this call's id, run,
#: jobid, time and reason, all of a batch in one statement (one step of sqlite without
#: the GIL, not one a row: the event loop's thread is not held up by this one's turns)
_REUSE_CALLS = (f"INSERT INTO calls ({_CALL_COLUMNS}) SELECT v.column1, v.column2, v.column3, "
                f"c.key, c.app, c.command, c.site, v.column4, v.column4, c.exit_code, 'cached', "
                f"v.column6, c.key_parts, c.files FROM (VALUES {{rows}}) AS v "
                f"JOIN calls c ON c.id = v.column5")
_REUSE_FILES = ("INSERT INTO files SELECT v.column1, f.role, f.path, f.digest, f.size "
                "FROM (VALUES {rows}) AS v JOIN files f ON f.call_id = v.column2 "
                "ORDER BY v.column1, f.rowid")
#: reused calls a statement writes (6 parameters each; sqlite allows 32,766)
_REUSE_CHUNK = 1000


class ReusedCall(NamedTuple):
    """A call reused from the earlier call ``earlier_id`` with the same key, files and
    all (what memoization records for a reuse it decided from memory)."""

    run_id: str
    jobid: str
    at: float  # started and ended
    reason: str
    earlier_id: int


class RunStore:
    """Open with :meth:`open`; a context manager that flushes and closes."""

    def __init__(self, directory: str, db: StoreDatabase, object_limit: int):
        self.directory = directory
        self._db = db
        self._lock = threading.Lock()
        #: one flush at a time, so batches reach the file in the order they were recorded
        self._flushing = threading.Lock()
        self._buffer: list[CallRow | ReusedCall] = []
        self._rows = 0  # the CallRows in the buffer (the rest are ReusedCalls)
        self._pending_keys: dict[str, CallRow] = {}
        self._oldest = 0.0  # when the oldest buffered call was recorded (monotonic)
        self._closed = threading.Event()
        #: set when the buffer is full and the flushing thread should write it now
        self._due = threading.Event()
        self._flusher: threading.Thread | None = None
        self.digests = DigestCache(db, self.flush)
        self.objects = ContentStore(db, os.path.join(directory, "objects"), object_limit)

    @classmethod
    def open(cls, path: str | os.PathLike[str], object_limit: int = DEFAULT_LIMIT,
             create: bool = True) -> RunStore:
        """The store in directory ``path``, made (0700) if missing unless ``create`` is
        False (then StoreError MISSING: reading a history never leaves a store behind)."""
        directory = os.path.abspath(os.fspath(path))
        if not create and not os.path.isfile(os.path.join(directory, DATABASE_NAME)):
            raise errors.missing(directory)
        try:
            os.makedirs(directory, mode=0o700, exist_ok=True)
            os.makedirs(os.path.join(directory, "objects"), mode=0o700, exist_ok=True)
        except OSError as exc:
            raise errors.unwritable(directory, exc.strerror or str(exc)) from exc
        if not os.access(directory, os.W_OK | os.X_OK):
            raise errors.unwritable(directory, "no write permission on the directory")
        return cls(directory, StoreDatabase(os.path.join(directory, DATABASE_NAME)),
                   object_limit)

    @property
    def database(self) -> str:
        return self._db.path

    # ------------------------------------------------------------------ runs
    def begin_run(self, run: RunRecord) -> None:
        self._db.write(lambda conn: conn.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run.run_id, run.script, json.dumps(run.args), run.config_digest, run.base_dir,
             run.started, run.ended, run.status, json.dumps(run.counts))))

    def end_run(self, run_id: str, status: str, ended: float, counts: dict[str, int]) -> None:
        self.flush()
        self._db.write(lambda conn: conn.execute(
            "UPDATE runs SET status = ?, ended = ?, counts = ? WHERE run_id = ?",
            (status, ended, json.dumps(counts), run_id)))

    def run_records(self) -> list[RunRecord]:
        self.flush()
        return [RunRecord(run_id, script, json.loads(args), config, base, started, ended,
                          status, json.loads(counts))
                for run_id, script, args, config, base, started, ended, status, counts
                in self._db.read("SELECT * FROM runs ORDER BY started, rowid")]

    # ------------------------------------------------------------------ calls
    def record_call(self, call: CallRecord) -> None:
        self.record_row(row_of(call))

    def record_row(self, call: CallRow) -> None:
        """:meth:`record_call` of a call already in the columns' form (memoization's)."""
        if self._buffered(call):
            self.flush()

    def record_reuse(self, call: ReusedCall) -> None:
        """Record a reused call without touching the database in the caller's thread
        (the event loop's): a full buffer is written by the flushing thread."""
        if self._buffered(call):
            self._due.set()

    def _buffered(self, call: CallRow | ReusedCall) -> bool:
        """Add ``call`` to the buffer; whether the buffer is full."""
        with self._lock:
            if not self._buffer:
                self._oldest = time.monotonic()
            self._buffer.append(call)
            if type(call) is CallRow:
                self._rows += 1
                if call.decision != "failed":
                    self._pending_keys[call.key] = call
            if self._flusher is None:
                self._flusher = threading.Thread(target=self._flush_by_age, daemon=True,
                                                 name="swiftnb-store-flush")
                self._flusher.start()
            return self._full()

    def _full(self) -> bool:
        """Whether the buffer is to be written now, not by age (under the lock)."""
        return self._rows >= BATCH_CALLS or len(self._buffer) >= REUSED_BATCH_CALLS

    def _flush_by_age(self) -> None:
        """One thread a store: writes a batch once it is full (:meth:`record_reuse`) or
        its oldest call is BATCH_SECONDS old (a quiet run still gets its calls on disk).
        An error here comes back at the next flush, which keeps the calls."""
        while not self._closed.is_set():
            self._due.wait(BATCH_SECONDS / 4)
            self._due.clear()
            if self._closed.is_set():
                return
            if self._buffer and (self._full()
                                 or time.monotonic() - self._oldest >= BATCH_SECONDS):
                try:
                    self.flush()
                except errors.StoreError:
                    pass

    def flush(self) -> None:
        """Write the buffered calls and digests in one transaction."""
        with self._flushing:
            self._flush()

    def _flush(self) -> None:
        with self._lock:
            batch, self._buffer, self._rows = self._buffer, [], 0
        if not batch and not self.digests.has_pending():
            return
        try:
            self._db.write(lambda conn: self._write(conn, batch))
        except BaseException:
            with self._lock:
                self._buffer[:0] = batch  # kept for the next flush
                self._rows = sum(type(call) is CallRow for call in self._buffer)
            raise
        with self._lock:
            for call in batch:
                if isinstance(call, CallRow) and self._pending_keys.get(call.key) is call:
                    del self._pending_keys[call.key]

    def _write(self, conn: sqlite3.Connection, batch: Sequence[CallRow | ReusedCall]) -> None:
        # ids given here (the transaction holds the write lock), in the order recorded,
        # so that one executemany writes each kind of row of the whole batch
        first = conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM calls").fetchone()[0]
        rows: list[tuple[object, ...]] = []
        files: list[tuple[int, object, str, object, object]] = []
        reused: list[tuple[object, ...]] = []
        for call_id, call in enumerate(batch, first):
            if isinstance(call, ReusedCall):
                reused.append((call_id, call.run_id, call.jobid, call.at, call.earlier_id,
                               call.reason))
                continue
            rows.append((call_id, *call[:13]))
            files.extend((call_id, role, path_text(str(path)), digest, size)
                         for role, path, digest, size in call.files)
        conn.executemany(f"INSERT INTO calls ({_CALL_COLUMNS}) "
                         f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?)", files)
        for start in range(0, len(reused), _REUSE_CHUNK):
            chunk = reused[start:start + _REUSE_CHUNK]
            conn.execute(_REUSE_CALLS.format(rows=", ".join(["(?, ?, ?, ?, ?, ?)"] * len(chunk))),
                         [value for row in chunk for value in row])
            conn.execute(_REUSE_FILES.format(rows=", ".join(["(?, ?)"] * len(chunk))),
                         [value for row in chunk for value in (row[0], row[4])])
        self.digests.write_pending(conn)

    def lookup(self, key: str) -> CallRecord | None:
        """The latest call with this key that ran or was reused (never a failed one)."""
        return self.lookup_many([key]).get(key)

    def lookup_many(self, keys: Sequence[str]) -> dict[str, CallRecord]:
        """:meth:`lookup` of many keys; the keys not found are absent."""
        return {key: record_of(row) for key, row in self.earlier_rows(keys).items()}

    def earlier_rows(self, keys: Sequence[str]) -> dict[str, CallRow]:
        """:meth:`lookup_many` as rows, one query a LOOKUP_CHUNK of keys (what a
        memoized run asks for its calls in batches)."""
        found: dict[str, CallRow] = {}
        wanted: list[str] = []
        for key in dict.fromkeys(keys):
            pending = self._pending_keys.get(key)
            if pending is not None:
                found[key] = pending
            else:
                wanted.append(key)
        for start in range(0, len(wanted), LOOKUP_CHUNK):
            chunk = wanted[start:start + LOOKUP_CHUNK]
            latest: dict[str, Row] = {}
            for row in self._db.read(_LOOKUP.replace("?", ", ".join("?" * len(chunk))),
                                     chunk):
                latest[row[3]] = row  # ordered by id: the last one is the latest
            found.update((key, _row(row)) for key, row in latest.items())
        return found

    def known_call_rows(self, script: str, before_run: str, runs: int) -> list[Row]:
        """(id, key, jobid, run_id, files, app) of the successful calls of the latest ``runs``
        runs of ``script`` but ``before_run``, in the order recorded (what
        :class:`~swiftnb.store.known.KnownCalls` reads once a run: a run that reuses a
        call records it again, so the latest runs hold what an iteration reuses, and a
        store of many runs is not read whole at each one)."""
        return self._db.read(
            f"SELECT id, key, jobid, run_id, files, app FROM calls WHERE decision IN "
            f"{_SUCCESS} AND run_id IN (SELECT run_id FROM runs WHERE script = ? AND run_id != ? "
            f"ORDER BY started DESC, rowid DESC LIMIT ?) ORDER BY id",
            (script, before_run, runs))

    def last_decisions(self, keys: Sequence[str]) -> dict[str, str]:
        """The decision of the latest call of each key, whatever it was (memoization
        says "earlier call failed" when it is "failed"); the keys never recorded are
        absent.  One query a LOOKUP_CHUNK of keys."""
        self.flush()
        found: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(keys))):
            for key, decision in self._db.read(
                    f"SELECT key, decision FROM calls WHERE key IN ({_marks(chunk)}) "
                    f"ORDER BY id", chunk):
                found[key] = decision  # the last one is the latest
        return found

    def latest_producers(self, paths: Sequence[str]) -> dict[str, tuple[int, dict[str, str]]]:
        """For each path, the latest successful call that produced it: (its id, its key
        parts); the paths no call produced are absent.  :meth:`previous_call` of many
        calls' outputs at once, one query a LOOKUP_CHUNK of paths."""
        self.flush()
        stored = {path_text(path): path for path in paths}
        found: dict[str, tuple[int, dict[str, str]]] = {}
        parts: dict[int, dict[str, str]] = {}
        for chunk in _chunks(list(stored)):
            # SQLite takes the bare column of the row that has the MAX
            for path, call_id, key_parts in self._db.read(
                    f"SELECT f.path, MAX(c.id), c.key_parts FROM files f JOIN calls c "
                    f"ON c.id = f.call_id WHERE f.path IN ({_marks(chunk)}) "
                    f"AND f.role = 'out' AND c.decision IN {_SUCCESS} GROUP BY f.path",
                    chunk):
                if call_id not in parts:
                    parts[call_id] = json.loads(key_parts)
                found[stored[path]] = (call_id, parts[call_id])
        return found

    def last_call(self, key: str) -> CallRecord | None:
        """The latest call with this key whatever its decision (memoization says
        "earlier call failed" when it is a failed one)."""
        self.flush()
        return self._one(f"SELECT {_CALL_COLUMNS} FROM calls WHERE key = ? "
                         f"ORDER BY id DESC LIMIT 1", (key,))

    def producer(self, path: str, digest: str | None = None) -> CallRecord | None:
        """The latest successful call that produced ``path`` (with ``digest`` if given)."""
        self.flush()
        where = "f.path = ? AND f.role = 'out'" + (" AND f.digest = ?" if digest else "")
        params: tuple[str, ...] = (path_text(path), digest) if digest else (path_text(path),)
        return self._one(f"SELECT {_C_COLUMNS} FROM files f JOIN calls c "
                         f"ON c.id = f.call_id WHERE {where} AND c.decision IN {_SUCCESS} "
                         f"ORDER BY c.id DESC LIMIT 1", params)

    def previous_call(self, outputs: list[str], before_run: str | None = None) -> CallRecord | None:
        """The latest successful call (of a run before ``before_run`` when given) that
        produced any of ``outputs``: what a new call is compared with to say what changed."""
        self.flush()
        if not outputs:
            return None
        marks = ", ".join("?" * len(outputs))
        sql = (f"SELECT {_C_COLUMNS} FROM files f JOIN calls c ON c.id = f.call_id "
               f"WHERE f.path IN ({marks}) AND f.role = 'out' AND c.decision IN {_SUCCESS}")
        params: list[object] = [path_text(p) for p in outputs]
        if before_run is not None:
            sql += (" AND c.run_id != ? AND c.id < COALESCE((SELECT MIN(id) FROM calls "
                    "WHERE run_id = ?), (SELECT MAX(id) + 1 FROM calls))")
            params += [before_run, before_run]
        return self._one(sql + " ORDER BY c.id DESC LIMIT 1", params)

    def call_records(self, run_id: str | None = None) -> list[CallRecord]:
        self.flush()
        sql = f"SELECT {_CALL_COLUMNS} FROM calls"
        rows = self._db.read(sql + (" WHERE run_id = ? ORDER BY id" if run_id else " ORDER BY id"),
                             (run_id,) if run_id else ())
        return [self._call(row) for row in rows]

    def file_rows(self) -> list[Row]:
        """(run_id, jobid, role, path, digest, size) of every file record."""
        self.flush()
        return self._db.read("SELECT c.run_id, c.jobid, f.role, f.path, f.digest, f.size "
                             "FROM files f JOIN calls c ON c.id = f.call_id ORDER BY f.rowid")

    def _one(self, sql: str, params: Sequence[object]) -> CallRecord | None:
        rows = self._db.read(sql, params)
        return self._call(rows[0]) if rows else None

    def _call(self, row: Row) -> CallRecord:
        return record_of(_row(row))

    # ------------------------------------------------------------------ frames
    def runs(self) -> pd.DataFrame:
        from swiftnb.store.frames import runs_frame

        return runs_frame(self.run_records())

    def calls(self, run_id: str | None = None) -> pd.DataFrame:
        from swiftnb.store.frames import calls_frame

        return calls_frame(self.call_records(run_id))

    def files(self) -> pd.DataFrame:
        from swiftnb.store.frames import files_frame

        return files_frame(self.file_rows())

    # ------------------------------------------------------------------ life
    def close(self) -> None:
        self._closed.set()
        self._due.set()
        if self._flusher is not None:
            self._flusher.join(timeout=BATCH_SECONDS)
        try:
            self.flush()
        finally:
            self._db.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _row(row: Row) -> CallRow:
    """A ``calls`` row (its id first) as a CallRow."""
    (_, run_id, jobid, key, app, command, site, started, ended, exit_code, decision, reason,
     key_parts, files) = row
    return CallRow(run_id, jobid, key, app, command, site, started, ended, exit_code,
                   decision, reason, key_parts, files, json.loads(files))


def _chunks(items: list[str]) -> list[list[str]]:
    return [items[start:start + LOOKUP_CHUNK] for start in range(0, len(items), LOOKUP_CHUNK)]


def _marks(chunk: Sequence[object]) -> str:
    return ", ".join("?" * len(chunk))
