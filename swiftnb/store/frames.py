"""The store as pandas DataFrames, for analysis in a notebook: one row per run, per
call, per file record, with the dataclasses' fields as columns and times as
Timestamps (UTC), so they sort, subtract and plot as the log frames do."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pandas as pd

from swiftnb.store.records import CallRecord, FileRecord, RunRecord
from swiftnb.store.sqlite import Row

__all__ = ["runs_frame", "calls_frame", "files_frame"]

_RUN_COLUMNS = [f.name for f in dataclasses.fields(RunRecord)]
_CALL_COLUMNS = [f.name for f in dataclasses.fields(CallRecord)]
_FILE_COLUMNS = ["run_id", "jobid", "role"] + [f.name for f in dataclasses.fields(FileRecord)]


def _times(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    for column in columns:
        frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
    return frame


def runs_frame(runs: Sequence[RunRecord]) -> pd.DataFrame:
    frame = pd.DataFrame([dataclasses.asdict(r) for r in runs], columns=_RUN_COLUMNS)
    return _times(frame, ("started", "ended"))


def calls_frame(calls: Sequence[CallRecord]) -> pd.DataFrame:
    rows = []
    for call in calls:
        row = {name: getattr(call, name) for name in _CALL_COLUMNS}
        row["inputs"] = [dataclasses.asdict(f) for f in call.inputs]
        row["outputs"] = [dataclasses.asdict(f) for f in call.outputs]
        rows.append(row)
    frame = pd.DataFrame(rows, columns=_CALL_COLUMNS)
    frame["exit_code"] = frame["exit_code"].astype("Int64")
    return _times(frame, ("started", "ended"))


def files_frame(rows: Sequence[Row]) -> pd.DataFrame:
    """``role`` is "in" or "out" (an output row's call is the file's producer)."""
    return pd.DataFrame(list(rows), columns=_FILE_COLUMNS)
