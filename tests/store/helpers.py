"""Records for the store's tests: a chain of calls a -> b -> c as a run would leave them."""

from __future__ import annotations

from swiftnb.store import CallRecord, FileRecord


def digest(char: str) -> str:
    return "sha256:" + char * 64


def call(run_id: str, jobid: str, key: str, *, inputs: list[FileRecord] = (),  # type: ignore[assignment]
         outputs: list[FileRecord] = (), decision: str = "ran", app: str = "cat",  # type: ignore[assignment]
         command: list[str] | None = None, key_parts: dict[str, str] | None = None,
         started: float = 1_800_000_000.0, reason: str = "") -> CallRecord:
    return CallRecord(run_id=run_id, jobid=jobid, key=key, app=app,
                      command=command or [app], site="local", started=started,
                      ended=started + 2.5, exit_code=1 if decision == "failed" else 0,
                      decision=decision, reason=reason, key_parts=key_parts or {},
                      inputs=list(inputs), outputs=list(outputs))
