"""The store's one SQLite database: opening it safely, its schema, and sqlite's errors
turned into :class:`StoreError` kinds.

Why SQLite in WAL mode: two runs in one directory (two terminals, a notebook and a
command) may record at once, readers never wait for writers, and a run killed with
``kill -9`` loses at most its uncommitted batch, never the file.  Errors are told apart
by sqlite's result code (``sqlite_errorcode``), never by message text."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from swiftnb.store import errors
from swiftnb.store.errors import StoreError

__all__ = ["StoreDatabase", "SCHEMA_VERSION", "DATABASE_NAME", "Row"]

#: a row as sqlite3 gives it (its columns' types are the schema's)
Row = tuple[Any, ...]

SCHEMA_VERSION = 1
DATABASE_NAME = "store.sqlite"
#: how long a writer waits for another process's transaction before LOCKED
BUSY_TIMEOUT_MS = 15_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, script TEXT NOT NULL, args TEXT NOT NULL,
    config_digest TEXT NOT NULL, base_dir TEXT NOT NULL, started REAL NOT NULL,
    ended REAL, status TEXT NOT NULL, counts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, jobid TEXT NOT NULL, key TEXT NOT NULL,
    app TEXT NOT NULL, command TEXT NOT NULL, site TEXT NOT NULL, started REAL NOT NULL,
    ended REAL NOT NULL, exit_code INTEGER, decision TEXT NOT NULL, reason TEXT NOT NULL,
    key_parts TEXT NOT NULL, files TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS calls_by_key ON calls (key, id);
CREATE INDEX IF NOT EXISTS calls_by_run ON calls (run_id, id);
-- calls.files holds the same records as JSON ([[role, path, digest, size], ...]) so
-- that a lookup is one row, and this table answers "who produced this path"
-- role: 'in' or 'out' (an output row names its producer call)
CREATE TABLE IF NOT EXISTS files (
    call_id INTEGER NOT NULL REFERENCES calls (id), role TEXT NOT NULL,
    path TEXT NOT NULL, digest TEXT NOT NULL, size INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS files_by_path ON files (path, role, call_id);
CREATE INDEX IF NOT EXISTS files_by_call ON files (call_id);
-- one row a file (device and inode), with the real path it was digested under
CREATE TABLE IF NOT EXISTS digests (
    dev INTEGER NOT NULL, ino INTEGER NOT NULL, path TEXT NOT NULL,
    size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (dev, ino)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS objects (
    digest TEXT PRIMARY KEY, size INTEGER NOT NULL, last_used REAL NOT NULL);
"""

_HEADER = b"SQLite format 3\x00"
# sqlite primary result codes (https://sqlite.org/rescode.html)
_PERM, _BUSY, _LOCKED, _READONLY, _IOERR, _CORRUPT, _FULL, _CANTOPEN, _NOTADB = (
    3, 5, 6, 8, 10, 11, 13, 14, 26)


class StoreDatabase:
    """One connection, shared by the process's threads under a lock (memoization digests
    files from worker threads while the loop records calls)."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.RLock()
        _check_header(path)
        with self.guard():
            self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False,
                                        timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            self._prepare_with_retries()
        except BaseException:
            self.conn.close()
            raise

    def _prepare_with_retries(self) -> None:
        """Some of sqlite's locks on a database being created or switched to WAL by
        another process fail at once with BUSY, without the busy handler (the change of
        journal mode, a read that must upgrade): those are retried here, for as long as
        the busy timeout, so that two runs starting in one directory both open it."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.005
        while True:
            try:
                with self.guard():
                    self._prepare()
                return
            except StoreError as exc:
                if exc.kind is not errors.StoreErrorKind.LOCKED or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _prepare(self) -> None:
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise errors.newer(self.path, version, SCHEMA_VERSION)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # durable across a killed process
        # a lookup a call on a store of 100,000s of calls: pages from memory, not read()
        conn.execute("PRAGMA cache_size = -65536")
        conn.execute("PRAGMA mmap_size = 1073741824")
        if version < SCHEMA_VERSION:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                    for statement in _SCHEMA.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        # reading every table's root page finds a file damaged past its header
        for table in ("runs", "calls", "files", "digests", "objects"):
            conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchall()

    @contextmanager
    def guard(self) -> Iterator[None]:
        """sqlite's errors about the file as :class:`StoreError`, by result code (any
        other, such as a bad statement, is a bug and stays as it is)."""
        try:
            yield
        except sqlite3.Error as exc:
            translated = self.translate(exc)
            if translated is None:
                raise
            raise translated from exc

    def translate(self, exc: sqlite3.Error) -> StoreError | None:
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        detail = str(exc)
        if code in (_BUSY, _LOCKED):
            return errors.locked(self.path)
        if code in (_PERM, _READONLY, _CANTOPEN, _FULL):
            return errors.unwritable(self.path, detail)
        if code == _IOERR and not os.access(self.path, os.W_OK):
            return errors.unwritable(self.path, detail)
        if code in (_IOERR, _CORRUPT, _NOTADB):
            return errors.corrupt(self.path, detail)
        return None

    def read(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        """Rows of one query (the hot path of memoization: no context manager here)."""
        with self.lock:
            try:
                return self.conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                translated = self.translate(exc)
                if translated is None:
                    raise
                raise translated from exc

    def write(self, body: Callable[[sqlite3.Connection], object]) -> None:
        """``body`` in one transaction: all of it is in the file, or none of it."""
        with self.lock, self.guard():
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                body(self.conn)
                self.conn.execute("COMMIT")
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _check_header(path: str) -> None:
    """A file that is not a whole SQLite database is CORRUPT before sqlite reads it:
    a truncated one (shorter than the page count its header gives) may otherwise open
    and fail only at some later query."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
            size = os.fstat(fh.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise errors.unwritable(path, exc.strerror or str(exc)) from exc
    if not header:
        return  # an empty file: sqlite makes a database of it
    if len(header) < 100 or not header.startswith(_HEADER):
        raise errors.corrupt(path, "not an SQLite database")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    valid_for = int.from_bytes(header[92:96], "big")
    change_counter = int.from_bytes(header[24:28], "big")
    if pages and valid_for == change_counter and size < pages * page_size:
        raise errors.corrupt(path, f"truncated: {size} bytes of {pages * page_size}")


def path_text(path: str) -> str:
    """A path as the database keeps it.  SQLite text is UTF-8, and a file name that is
    not (carried as surrogates, as os does) would make the insert raise: its bytes that
    are not UTF-8 are written as ``\\xff`` escapes, the same way on every write and query,
    so such a file is still found (a real name of that spelling would share its rows)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return path
