"""Where a file came from: the call that produced it, that call's inputs, and the calls
behind those, as a tree; with ``why``, whether each call of the latest run ran or was
reused and, when it ran, what changed against the earlier call that made the same
outputs.

Why from the store rather than the logs: the store has every call's inputs and outputs
with their content digests, so the chain of producers is a join, and "what changed" is
a comparison of two calls' key parts (one digest per component of the memo key)."""

from __future__ import annotations

import os
import shlex
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from swiftnb.store.db import RunStore
from swiftnb.store.digests import short
from swiftnb.store.records import CallRecord

__all__ = ["explain", "Explanation", "ProducerNode", "FileNode", "what_changed"]

_PART_NAMES = {"args": "arguments changed", "env": "environment changed",
               "profiles": "profiles changed", "stdio": "stdio changed"}


@dataclass
class FileNode:
    path: str
    digest: str
    producer: ProducerNode | None = None   # None: nobody recorded made it (a source)
    shown_above: bool = False              # its producer is drawn elsewhere in the tree

    def lines(self) -> list[str]:
        note = "" if self.producer or self.shown_above else "  (source file)"
        if self.shown_above:
            note = "  (its call is shown above)"
        return [f"{self.path}  {short(self.digest) or '?'}{note}"]

    def children(self) -> list[ProducerNode]:
        return [self.producer] if self.producer else []


@dataclass
class ProducerNode:
    call: CallRecord
    why: str | None = None
    inputs: list[FileNode] = field(default_factory=list)

    def lines(self) -> list[str]:
        c = self.call
        exit_code = "-" if c.exit_code is None else str(c.exit_code)
        lines = [f"{c.app}  {c.decision}  on {c.site or '?'}  exit {exit_code}",
                 f"$ {shlex.join(c.command)}",
                 f"{_when(c.started)} -> {_when(c.ended)} UTC ({c.ended - c.started:.1f} s), "
                 f"job {c.jobid}, run {c.run_id}"]
        if self.why is not None:
            lines.append(f"why: {self.why}")
        return lines

    def children(self) -> list[FileNode]:
        return self.inputs


@dataclass
class Explanation:
    """``str()`` is what ``swiftnb explain`` prints."""

    path: str
    root: FileNode | None   # None: no recorded call produced the file

    @property
    def found(self) -> bool:
        return self.root is not None

    def __str__(self) -> str:
        if self.root is None:
            return (f"{self.path}: no recorded call produced this file (a source file, "
                    f"or made outside swiftnb or before its run store was used)")
        out: list[str] = []
        _render(out, self.root, "", "")
        return "\n".join(out)


def explain(store: RunStore, path: str, why: bool = False) -> Explanation:
    target = os.path.abspath(path)
    call = store.producer(target)
    if call is None:
        return Explanation(target, None)
    digest = next((f.digest for f in call.outputs if f.path == target), "")
    seen: set[tuple[str, str]] = set()
    root = FileNode(target, digest, _producer(store, call, seen, call.run_id if why else None))
    return Explanation(target, root)


def _producer(store: RunStore, call: CallRecord, seen: set[tuple[str, str]],
              why_run: str | None) -> ProducerNode:
    seen.add((call.run_id, call.jobid))
    node = ProducerNode(call, _why(store, call) if why_run is not None
                        and call.run_id == why_run else None)
    for record in call.inputs:
        child = FileNode(record.path, record.digest)
        earlier = store.producer(record.path, record.digest or None)
        if earlier is not None:
            if (earlier.run_id, earlier.jobid) in seen:
                child.shown_above = True
            else:
                child.producer = _producer(store, earlier, seen, why_run)
        node.inputs.append(child)
    return node


def _why(store: RunStore, call: CallRecord) -> str:
    if call.decision == "cached":
        return "reused (cached)" + (f": {call.reason}" if call.reason else "")
    if call.decision == "failed":
        return "failed" + (f": {call.reason}" if call.reason else "")
    previous = store.previous_call([f.path for f in call.outputs], before_run=call.run_id)
    if previous is None:
        return "ran: no earlier call"
    changes = what_changed(previous, call)
    if changes:
        return "ran: " + "; ".join(changes)
    if call.reason:
        return f"ran: {call.reason}"
    return f"ran: nothing in its key changed since run {previous.run_id}"


def what_changed(old: CallRecord, new: CallRecord) -> list[str]:
    """The components of the memo key that differ between two calls, for people."""
    changes: list[str] = []
    parts = set(old.key_parts) | set(new.key_parts)
    for name in sorted(parts, key=lambda n: (n.startswith("input:"), n)):
        before, after = old.key_parts.get(name), new.key_parts.get(name)
        if before == after:
            continue
        if name.startswith("input:"):
            path = name.removeprefix("input:")
            if before is None:
                changes.append(f"input added: {path}")
            elif after is None:
                changes.append(f"input removed: {path}")
            else:
                changes.append(f"input changed: {path} ({short(before)} -> {short(after)})")
        elif name == "app":
            changes.append(f"app changed: {new.command[0]}" if new.command else "app changed")
        else:
            changes.append(_PART_NAMES.get(name, f"{name} changed"))
    return changes


def _when(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(epoch))


def _render(out: list[str], node: FileNode | ProducerNode, lead: str, rest: str) -> None:
    head, *details = node.lines()
    kids: Sequence[FileNode | ProducerNode] = node.children()
    out.append(lead + head)
    for line in details:
        out.append(rest + ("│  " if kids else "   ") + line)
    for i, kid in enumerate(kids):
        last = i == len(kids) - 1
        _render(out, kid, rest + ("└─ " if last else "├─ "), rest + ("   " if last else "│  "))
