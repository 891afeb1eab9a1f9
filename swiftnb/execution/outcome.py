"""The wrapper's result dict -> the engine's typed TaskResult.

The wrapper and the coaster worker are stdlib-only (they run on remote machines), so
they speak plain dicts with a ``kind`` string; every provider turns those into a
:class:`~swiftnb.engine.task.TaskResult` here, in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from swiftnb.engine.task import FailureKind, TaskResult

__all__ = ["result_from_dict", "failure_kind"]

_KINDS = {kind.value: kind for kind in FailureKind}


def failure_kind(result: Mapping[str, Any]) -> FailureKind | None:
    """The kind of a failed wrapper result (an older wrapper without ``kind``: by its
    ``canceled`` and ``retryable`` flags)."""
    if result.get("ok"):
        return None
    kind = _KINDS.get(str(result.get("kind") or ""))
    if kind is not None:
        return kind
    if result.get("canceled"):
        return FailureKind.CANCELED
    if result.get("retryable") is False:
        return FailureKind.NOT_EXECUTABLE
    return FailureKind.APP_EXIT


def result_from_dict(result: Mapping[str, Any], site: str = "") -> TaskResult:
    """The engine's TaskResult from the wrapper's (or a worker's) result dict."""
    return TaskResult(
        ok=bool(result.get("ok")),
        exit_code=result.get("exit_code"),
        message=result.get("message", ""),
        stdout_tail=result.get("stdout_tail", ""),
        stderr_tail=result.get("stderr_tail", ""),
        site=result.get("site") or site,
        failure=failure_kind(result),
        output_digests=dict(result.get("output_digests") or {}) if result.get("ok") else {},
    )
