"""Reading a JSON object from text another program wrote.

Why one function: a job's ``result.json``, a worker's hello line and a relay's first
line may be anything (cut short, garbage, a JSON list); each reader wants the object or
nothing, and says itself what nothing means.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_object"]


def json_object(text: str | bytes) -> dict[str, Any] | None:
    """The JSON object ``text`` holds, or None if it holds anything else."""
    try:
        value = json.loads(text)
    except ValueError:  # (UnicodeDecodeError is one)
        return None
    return value if isinstance(value, dict) else None
