"""A call as the store writes and reads it: its columns, the JSON ones as text.

Why beside :class:`~swiftnb.store.records.CallRecord`: memoization records a call per
app call and looks up a call per app call, and turning every record into objects and
back (three JSON texts each way) cost more than the SQL.  A reused call has the same
key as the earlier call it reuses, hence the same command and key parts: its row takes
the earlier row's texts as they are, and a lookup decodes only the files."""

from __future__ import annotations

import json
from typing import NamedTuple

from swiftnb.store.canonical import ascii_sorted_text, ascii_text
from swiftnb.store.records import CallRecord, FileRecord

__all__ = ["CallRow", "FileEntry", "row_of", "record_of", "files_text"]

#: one file of a call as the ``files`` column keeps it: [role, path, digest, size]
#: (role "in" or "out")
FileEntry = list[str | int]


class CallRow(NamedTuple):
    """The ``calls`` columns but the id, in order, and the files decoded."""

    run_id: str
    jobid: str
    key: str
    app: str
    command: str       # JSON list
    site: str
    started: float
    ended: float
    exit_code: int | None
    decision: str
    reason: str
    key_parts: str     # JSON object, keys sorted
    files_json: str    # JSON list of FileEntry
    files: list[FileEntry]

    def outputs(self) -> list[FileEntry]:
        return [entry for entry in self.files if entry[0] == "out"]


def files_text(files: list[FileEntry]) -> str:
    return ascii_text(files)


def row_of(call: CallRecord) -> CallRow:
    files: list[FileEntry] = [["in", f.path, f.digest, f.size] for f in call.inputs]
    files += [["out", f.path, f.digest, f.size] for f in call.outputs]
    return CallRow(call.run_id, call.jobid, call.key, call.app, ascii_text(call.command),
                   call.site, call.started, call.ended, call.exit_code, call.decision,
                   call.reason, ascii_sorted_text(call.key_parts), files_text(files), files)


def record_of(row: CallRow) -> CallRecord:
    inputs: list[FileRecord] = []
    outputs: list[FileRecord] = []
    for role, path, digest, size in row.files:
        (inputs if role == "in" else outputs).append(
            FileRecord(str(path), str(digest), int(size)))
    return CallRecord(row.run_id, row.jobid, row.key, row.app, json.loads(row.command),
                      row.site, row.started, row.ended, row.exit_code, row.decision,
                      row.reason, json.loads(row.key_parts), inputs, outputs)
