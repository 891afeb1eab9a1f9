"""What the store keeps: runs, the app calls in them, and the files those calls read
and wrote.  Plain dataclasses so that memoization, the dashboard, ``explain`` and the
DataFrames share one vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunRecord", "CallRecord", "FileRecord", "RUN_STATUSES", "DECISIONS"]

RUN_STATUSES = ("running", "success", "failure", "canceled")
#: a call ran its app, was reused from an earlier call (cached), or ran and failed
DECISIONS = ("ran", "cached", "failed")


@dataclass
class FileRecord:
    path: str      # absolute
    digest: str    # "sha256:<64 hex>"
    size: int


@dataclass
class RunRecord:
    run_id: str
    script: str
    args: list[str] = field(default_factory=list)
    config_digest: str = ""
    base_dir: str = ""
    started: float = 0.0
    ended: float | None = None
    status: str = "running"
    counts: dict[str, int] = field(default_factory=dict)


@dataclass
class CallRecord:
    run_id: str
    jobid: str
    key: str                       # "sha256:..." of the canonical key
    app: str                       # the transformation (tr)
    command: list[str] = field(default_factory=list)  # executable and argv as run
    site: str = ""
    started: float = 0.0
    ended: float = 0.0
    exit_code: int | None = None
    decision: str = "ran"
    reason: str = ""
    #: component -> digest: "app", "args", "env", "profiles", "stdio", "input:<path>"
    key_parts: dict[str, str] = field(default_factory=dict)
    inputs: list[FileRecord] = field(default_factory=list)
    outputs: list[FileRecord] = field(default_factory=list)
