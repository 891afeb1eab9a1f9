"""The run store: what each run did, call by call, with the content digests of the
files the calls read and wrote, in ``<working dir>/.swiftnb`` (SQLite and a content
store of output copies).

Memoization asks it whether a call was made before (:meth:`RunStore.lookup`),
``swiftnb history`` and ``swiftnb explain`` read it, and in a notebook
``swiftnb.store.runs()``, ``calls()`` and ``files()`` give it as DataFrames.  pandas is
imported only when a frame is asked for."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from swiftnb.store.db import DEFAULT_DIR, RunStore
from swiftnb.store.digests import DigestCache
from swiftnb.store.errors import StoreError, StoreErrorKind
from swiftnb.store.explain import Explanation
from swiftnb.store.explain import explain as _explain
from swiftnb.store.objects import ContentStore
from swiftnb.store.records import CallRecord, FileRecord, RunRecord

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RunStore", "RunRecord", "CallRecord", "FileRecord", "DigestCache",
           "ContentStore", "StoreError", "StoreErrorKind", "Explanation", "DEFAULT_DIR",
           "explain", "runs", "calls", "files"]

StorePath = str | os.PathLike[str]


def explain(store: RunStore, path: str, why: bool = False) -> Explanation:
    """The tree of calls behind ``path`` (see :mod:`swiftnb.store.explain`)."""
    return _explain(store, path, why)


def _open(path: StorePath | None) -> RunStore:
    return RunStore.open(DEFAULT_DIR if path is None else path, create=False)


def runs(path: StorePath | None = None) -> pd.DataFrame:
    """One row per run of the store (default: ``.swiftnb`` of the current directory)."""
    with _open(path) as store:
        return store.runs()


def calls(run_id: str | None = None, path: StorePath | None = None) -> pd.DataFrame:
    """One row per recorded call (of one run if ``run_id`` is given)."""
    with _open(path) as store:
        return store.calls(run_id)


def files(path: StorePath | None = None) -> pd.DataFrame:
    """One row per file a call read ("in") or wrote ("out")."""
    with _open(path) as store:
        return store.files()
