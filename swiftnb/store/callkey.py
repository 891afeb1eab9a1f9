"""A memoized call's key, made from its parts' digests with one template per app.

The key is ``sha256:`` over the canonical JSON of the parts (``sorted_text``: keys
sorted, ``", "`` and ``": "`` between them; docs/memoization.md lists the parts).  Every
part's value is a digest text, and the parts' names are fixed but for the inputs', so
that JSON is the app's constant text with the call's digests put in: one join and one
sha256 a call instead of encoding a dict of seven texts.  It is the same text, so the
same key, as the dict's encoding gives (tests/store/test_store_call_key.py): a store's
calls keep matching across this change.

Why the app's parts apart: the app's program digest, its environment and profiles are
the same for all its calls; :class:`AppParts` holds them, made once a run per app."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple

from swiftnb.store.callrows import FileEntry
from swiftnb.store.canonical import ascii_sorted_text, sorted_text

__all__ = ["AppParts", "CallKey", "digest_text"]


def digest_text(text: str) -> str:
    """``sha256:<hex>`` of a text (a name that is not UTF-8 kept as its bytes)."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True, slots=True)
class AppParts:
    """The parts of a key that depend on the app alone (its commands' apps, their
    environment and profiles), and what is decided with them."""

    program: str     # the first command's program
    app: str         # the ``app`` part: digest of [[tr, program, program digest], ...]
    env: str         # the ``env`` part
    profiles: str    # the ``profiles`` part (the scheduling ones left out)
    opted_out: bool  # ``memoize: false``: its calls always run, unremembered


class CallKey(NamedTuple):
    """A call's key and its parts: the app's, the digests of its argument vectors, its
    redirections and its declared outputs, and each input's content digest.  A tuple:
    one is made for every call, and a frozen dataclass takes three times as long."""

    key: str
    app: AppParts
    args: str
    stdio: str
    outputs: str
    input_digests: tuple[tuple[str, str], ...]  # (path as mapped, digest), sorted
    inputs: list[FileEntry]  # ["in", absolute path, digest, size] as the call read them
    text: str  # the parts' canonical JSON, what the key digests

    @classmethod
    def make(cls, app: AppParts, args: str, stdio: str, outputs: str,
             input_digests: dict[str, str], inputs: list[FileEntry]) -> CallKey:
        """The key of these parts (``inputs``: the files' records, kept for the call's)."""
        digests = tuple(sorted(input_digests.items())) if input_digests else ()
        named = "".join(f"{sorted_text('input:' + path)}: {sorted_text(digest)}, "
                        for path, digest in digests)
        text = (f'{{"app": "{app.app}", "args": "{args}", "env": "{app.env}", {named}'
                f'"outputs": "{outputs}", "profiles": "{app.profiles}", "stdio": "{stdio}"}}')
        return cls(digest_text(text), app, args, stdio, outputs, digests, inputs, text)

    @property
    def parts_text(self) -> str:
        """The parts as a call's record keeps them (``ascii_sorted_text``), made
        again only when a name is not ASCII (else it is the key's text)."""
        return self.text if self.text.isascii() else ascii_sorted_text(self.parts)

    @property
    def parts(self) -> dict[str, str]:
        """The parts by name, as a call's record keeps them (``key_parts``)."""
        parts = {"app": self.app.app, "args": self.args, "env": self.app.env,
                 "outputs": self.outputs, "profiles": self.app.profiles, "stdio": self.stdio}
        parts.update((f"input:{path}", digest) for path, digest in self.input_digests)
        return parts
