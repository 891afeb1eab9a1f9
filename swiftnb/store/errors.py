"""Why a run store could not be used, as a kind a caller can act on.

A store holds what earlier runs did; losing it costs a re-run, so no error here ever
deletes or rewrites the user's files: each message names the file and says what the
person may do (move it aside, upgrade swiftnb, fix permissions, wait)."""

from __future__ import annotations

import enum
import os

from swiftnb.errors import SwiftnbError

__all__ = ["StoreError", "StoreErrorKind"]


class StoreErrorKind(enum.Enum):
    CORRUPT = "corrupt"              # not a database, damaged or truncated
    NEWER_VERSION = "newer-version"  # written by a newer swiftnb (schema user_version)
    UNWRITABLE = "unwritable"        # the directory or database cannot be written
    LOCKED = "locked"                # another process held the database too long
    MISSING = "missing"              # no store there (only when asked not to create one)


class StoreError(SwiftnbError):
    """The store at ``path`` cannot be used; ``kind`` says why."""

    def __init__(self, kind: StoreErrorKind, path: str | os.PathLike[str], message: str):
        super().__init__(message)
        self.kind = kind
        self.path = os.fspath(path)


def corrupt(path: str, detail: str) -> StoreError:
    return StoreError(StoreErrorKind.CORRUPT, path,
                      f"run store {path} is damaged ({detail}); move it aside (for example "
                      f"`mv {path} {path}.broken`) and swiftnb starts a new one: earlier "
                      f"runs' records are then not reused")


def newer(path: str, found: int, ours: int) -> StoreError:
    return StoreError(StoreErrorKind.NEWER_VERSION, path,
                      f"run store {path} has schema version {found}, written by a newer "
                      f"swiftnb (this one reads up to {ours}); upgrade swiftnb, or use "
                      f"another store directory (-store DIR)")


def unwritable(path: str, detail: str) -> StoreError:
    return StoreError(StoreErrorKind.UNWRITABLE, path,
                      f"run store {path} cannot be written ({detail}); make it writable "
                      f"or use another store directory (-store DIR)")


def locked(path: str) -> StoreError:
    return StoreError(StoreErrorKind.LOCKED, path,
                      f"run store {path} stayed locked by another process; try again "
                      f"when the other run has ended")


def missing(path: str) -> StoreError:
    return StoreError(StoreErrorKind.MISSING, path,
                      f"no run store in {path} (a run with memoization on makes one); "
                      f"give the store directory with -store DIR")
