"""A store that cannot be used is refused with its kind and a message naming the file,
and the file is left as it was."""

from __future__ import annotations

import os
import sqlite3

import pytest

from swiftnb.store import RunStore, StoreError, StoreErrorKind
from tests.store.helpers import call

pytestmark = pytest.mark.timeout(60)


def made(tmp_path, calls: int = 2000):
    directory = tmp_path / "st"
    with RunStore.open(directory) as store:
        for i in range(calls):
            store.record_call(call("r", f"j{i}", f"sha256:{i}", command=["x" * 200]))
    return directory, directory / "store.sqlite"


def refused(directory) -> StoreError:
    with pytest.raises(StoreError) as caught:
        with RunStore.open(directory) as store:
            store.call_records()
    return caught.value


def test_garbage_bytes_are_corrupt_and_left_in_place(tmp_path):
    directory = tmp_path / "st"
    directory.mkdir()
    (directory / "store.sqlite").write_bytes(b"this is not a database\n" * 50)
    error = refused(directory)
    assert error.kind is StoreErrorKind.CORRUPT
    assert str(directory / "store.sqlite") in str(error) and "move it aside" in str(error)
    assert (directory / "store.sqlite").read_bytes() == b"this is not a database\n" * 50


def test_a_truncated_database_is_corrupt(tmp_path):
    directory, database = made(tmp_path)
    size = database.stat().st_size
    assert size > 100_000
    os.truncate(database, size // 2)
    error = refused(directory)
    assert error.kind is StoreErrorKind.CORRUPT and str(database) in str(error)
    assert database.stat().st_size == size // 2


def test_a_newer_schema_is_refused(tmp_path):
    directory, database = made(tmp_path, 1)
    conn = sqlite3.connect(database)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    error = refused(directory)
    assert error.kind is StoreErrorKind.NEWER_VERSION
    assert "99" in str(error) and str(database) in str(error)


def test_a_directory_that_cannot_be_made_is_unwritable(tmp_path):
    (tmp_path / "file").write_text("x")
    error = refused(tmp_path / "file" / "st")
    assert error.kind is StoreErrorKind.UNWRITABLE
    assert str(tmp_path / "file" / "st") in str(error)


def test_reading_a_missing_store_does_not_make_one(tmp_path):
    with pytest.raises(StoreError) as caught:
        RunStore.open(tmp_path / "none", create=False)
    assert caught.value.kind is StoreErrorKind.MISSING
    assert not (tmp_path / "none").exists()
