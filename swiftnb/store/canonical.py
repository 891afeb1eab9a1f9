"""JSON text of keys and records, with encoders made once.

Why: ``json.JSONEncoder.encode`` builds a new C encoder on every call, which costs more
than encoding the few short strings of a key part; memoization encodes several a call
(the key's parts, the call's record).  The text is exactly what ``json`` gives with the
same options (the key of a call must not change between versions of swiftnb: a store's
calls are found by it)."""

from __future__ import annotations

import json
from collections.abc import Callable

try:
    import _json
except ImportError:  # a Python without the C accelerator: json's own encoder
    _json = None  # type: ignore[assignment]  # the module, or None where it is missing

__all__ = ["sorted_text", "ascii_text", "ascii_sorted_text"]


def _make(ensure_ascii: bool, sort_keys: bool) -> Callable[[object], str]:
    """An encoder of ``json.JSONEncoder(ensure_ascii=..., sort_keys=...)``'s output."""
    if _json is None:
        return json.JSONEncoder(ensure_ascii=ensure_ascii, sort_keys=sort_keys).encode
    strings = _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring

    def unsupported(value: object) -> object:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    # markers None: no check for cycles (keys and records are trees of str, int, float)
    chunks = _json.make_encoder(None, unsupported, strings, None, ": ", ", ", sort_keys, False, True)

    def encode(value: object) -> str:
        if isinstance(value, str):
            return strings(value)
        return "".join(chunks(value, 0))

    return encode


#: ``json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode``: the key's parts
sorted_text = _make(ensure_ascii=False, sort_keys=True)
#: ``json.JSONEncoder().encode``: a call's command and files in the store
ascii_text = _make(ensure_ascii=True, sort_keys=False)
#: ``json.JSONEncoder(sort_keys=True).encode``: a call's key parts in the store
ascii_sorted_text = _make(ensure_ascii=True, sort_keys=True)
