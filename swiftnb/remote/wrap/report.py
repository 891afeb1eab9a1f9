"""What a failed job tells people: its arguments as Java printed them, the ends of its
streams, the signal that ended it (reference 2.6, Swift's failure text)."""

from __future__ import annotations

import os
import signal

#: How much of stdout/stderr a failure message carries (the end of it).
TAIL_CHARS = 2000


def format_arguments(args: list[str]) -> str:
    """Java's ``List.toString``: ``[a, b]`` (the form of ``Arguments:`` and JOB_START)."""
    return "[" + ", ".join(str(a) for a in args) + "]"


def file_tail(path: str | None, limit: int = TAIL_CHARS) -> str:
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            try:
                fh.seek(-limit, os.SEEK_END)
            except OSError:
                fh.seek(0)
            data = fh.read()
    except OSError:
        return ""
    return printable_tail(data)


#: control characters shown as "." in a failure report (tabs, newlines and ESC stay)
_CONTROL = {c: "." for c in (*range(0, 9), 11, 12, *range(14, 27), *range(28, 32), 127)}


def printable_tail(data: bytes) -> str:
    """A stream tail for people: UTF-8 (bad bytes replaced), control characters (a
    binary stdout's NULs) as dots, so a report never garbles the terminal."""
    return data.decode("utf-8", "replace").rstrip("\n").translate(_CONTROL)


def signal_note(returncode: int | None) -> str:
    """`` (killed by signal 9, SIGKILL)`` for an app a signal ended (the exit code alone,
    128 + N as a shell reports it, does not say so), else empty."""
    if returncode is None or returncode >= 0:
        return ""
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "unknown signal"
    return f" (killed by signal {-returncode}, {name})"
