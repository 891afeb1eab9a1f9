"""The restart log (Swift's ``.rlog``): which app calls already produced their outputs.

Why it exists: a long run that dies (a crash, SIGKILL, a failed app with lazyErrors off)
can be resumed with ``-resume file`` and skip every call whose outputs were recorded.
The format is Swift 0.96's (reference 5.5), so logs move between the two::

    # Log file created Sun Nov 22 10:13:21 UTC 2026
    # Format version 2.0
    a.out
    c0002.out

One line per output of each successful call.  ``KEY!VALUE`` lines are read back too.  On
resume the same file is reopened for appending with ``# Log file updated <date>``.  The
log is deleted when the run succeeds.  The file is locked (``flock``) while a run uses it.

What it guarantees:

* Names are bytes on POSIX: each is written as its bytes (``os.fsencode``), so a name
  that is not UTF-8 is found again by ``-resume``.
* Each call's lines go to the OS in one ``write``, as the call completes (a SIGKILL loses
  nothing written).  A write the disk cannot take whole is taken back (the file is cut
  to its last whole line) and raises :class:`RestartLogError` naming the file: no cut
  line is left for a ``-resume`` to misread.  The file is ``fsync``-ed when closed, not
  per call (that would cost a disk flush per app call); a machine crash may therefore
  lose the last calls (they run again) or leave a tail of NUL bytes, which reading skips.
* Reading streams the file with a bound on the length of a line, so memory stays small
  whatever the file holds; a file that does not start as a restart log is refused at
  once, and lines that cannot be a restart log's (NUL bytes, overlong, a last line cut
  short) are skipped with a warning (:attr:`RestartLog.warnings`); on resume, such lines
  at the end are cut off before new ones are appended.
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Iterable, Iterator

from swiftnb.errors import SwiftnbError

try:  # not on Windows
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]  # no fcntl on this system

__all__ = ["RestartLog", "RestartLogError", "FORMAT_VERSION", "java_date"]

FORMAT_VERSION = "2.0"
#: the longest line read as a restart log's (a name, a URL, a ``KEY!VALUE``); longer
#: ones are garbage, read through and never held whole
MAX_LINE = 1 << 16
#: the format version line must come within this many bytes, before any entry
HEADER_BYTES = 1 << 16
_VERSION = b"# Format version"
#: reads of this size: a crash's gigabytes of NUL bytes go by in few system calls
_READ_BUFFER = 1 << 20
_SEEK_DATA: int | None = getattr(os, "SEEK_DATA", None)  # not on every system


class RestartLogError(SwiftnbError):
    """A restart log that cannot be used (missing, wrong version, in use, not a restart
    log) or written (a full disk): the message names the file."""


def java_date(t: float | None = None) -> str:
    """Java's ``Date.toString()``: ``Sun Nov 22 10:13:21 UTC 2026`` (in UTC)."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(time.time() if t is None else t))


def _lines(fd: int, limit: int) -> Iterator[tuple[bytes | None, int]]:
    """Each line of the file (without its newline) and the offset just after it; None
    for one that cannot be a restart log's: longer than ``limit`` (never held whole),
    holding a NUL byte, or the last one, cut short (no newline).  Read in large pieces,
    over the holes of a sparse file: a crash's gigabytes of NUL bytes cost little."""
    line = bytearray()  # the current line so far, while it may still be good
    bad = False  # the current line is garbage already (too long, NUL bytes)
    offset = 0
    while True:
        data = _next_data(fd, offset)
        if data is None:  # a hole up to the end: NUL bytes
            end = os.fstat(fd).st_size
            bad = bad or end > offset
            offset = max(offset, end)
            break
        if data > offset:
            bad, offset = True, data
        piece = os.pread(fd, _READ_BUFFER, offset)
        if not piece:
            break
        pos = 0
        while (nl := piece.find(b"\n", pos)) >= 0:
            if not bad:
                line += piece[pos:nl]
            good = not bad and len(line) <= limit and b"\0" not in line
            yield (bytes(line) if good else None), offset + nl + 1
            line.clear()
            bad = False
            pos = nl + 1
        if not bad:
            line += piece[pos:]
            if len(line) > limit:
                bad = True
                line.clear()
        offset += len(piece)
    if line or bad:
        yield None, offset


def _next_data(fd: int, offset: int) -> int | None:
    """Where data starts again at or after ``offset`` (past a hole of a sparse file,
    which reads as NUL bytes); None when only a hole, or nothing, is left."""
    if _SEEK_DATA is None:
        return offset
    try:
        return os.lseek(fd, offset, _SEEK_DATA)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            return None
        return offset  # a file system that cannot say: read it all


def _entry_bytes(name: str) -> bytes:
    """A name as the line of it: its bytes (a newline in it would end the line, so it is
    written as a space: such a call is not found again and runs again)."""
    text = name.replace("\n", " ")
    try:
        return os.fsencode(text) + b"\n"
    except UnicodeEncodeError:  # no file can have this name: it will not match, harmless
        return text.encode("utf-8", "backslashreplace") + b"\n"


class RestartLog:
    """An open restart log: ``record`` completed calls, ask ``is_done`` when resuming."""

    #: where relative outputs are looked for (None: the current directory, the CLI's)
    base_dir: str | None = None
    #: calls skipped thanks to this log (a resumed log that skipped none is kept)
    hits: int = 0

    def __init__(self, path: str | os.PathLike[str], *, resume: bool = False) -> None:
        self.path = os.fspath(path)
        self.resumed = resume
        #: what the log held when it was opened (``-resume``): the outputs a call of this
        #: run may find done.  What this run records is not added: no call asks for a file
        #: another call of the same run made (the mapping checker forbids two writers),
        #: and a run of a million calls would keep a million paths for nothing
        self._entries: set[str] = set()
        self._values: dict[str, str] = {}
        #: what reading set aside, for people (the run prints them as warnings)
        self.warnings: list[str] = []
        #: the error that stopped the recording (a full disk): records are lost since
        self.failure: OSError | None = None
        self._fd = -1
        self._size = 0  # bytes of whole lines on disk: a failed write is cut back to it
        try:
            self._open(resume)
        except OSError as exc:  # a full disk, a read-only directory, a directory named so
            self._close_fd()
            raise RestartLogError(f"Cannot {'update' if resume else 'create'} the restart log "
                                  f"{self.path}: {exc.strerror or exc}") from None
        except RestartLogError:
            self._close_fd()
            raise
        self.closed = False

    # -- opening -----------------------------------------------------------------------

    def _open(self, resume: bool) -> None:
        if resume:
            if not os.path.isfile(self.path):
                raise RestartLogError(f"Restart log not found: {self.path}")
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
            self._lock()
            self._size = self._read()
            if self._size < os.fstat(self._fd).st_size:
                os.ftruncate(self._fd, self._size)  # a cut or garbage tail: see _read
            self._write_whole(f"# Log file updated {java_date()}\n".encode())
        else:
            parent = os.path.dirname(self.path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            # truncated only once locked: another run's log in use is left as it is
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                               0o666)
            self._lock()
            os.ftruncate(self._fd, 0)
            self._write_whole(f"# Log file created {java_date()}\n"
                              f"# Format version {FORMAT_VERSION}\n".encode())

    @classmethod
    def next_free(cls, directory: str, script_stem: str) -> RestartLog:
        """Swift's fallback name ``SCRIPT.<i>.rlog`` with the first free index."""
        for i in range(16385):
            path = os.path.join(directory, f"{script_stem}.{i}.rlog")
            if not os.path.exists(path):
                return cls(path)
        raise RestartLogError(f"No free restart log name for {script_stem} in {directory}")

    def _lock(self) -> None:
        if fcntl is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise RestartLogError(f"Restart log {self.path} is in use by another run") from None

    def _close_fd(self) -> None:
        if self._fd >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1

    # -- reading -----------------------------------------------------------------------

    def _not_a_restart_log(self) -> RestartLogError:
        return RestartLogError(f"{self.path} is not a Swift restart log (no format version line)")

    def _read(self) -> int:
        """Read the entries; the offset after the last whole line worth keeping (what
        follows it is garbage to cut off before appending)."""
        version: str | None = None
        keep = 0
        skipped = 0  # bytes of garbage, in all
        tail = 0  # of those, at the end
        for line, end in _lines(self._fd, MAX_LINE):
            if version is None:  # the header: comments, then the version line
                if line is None or end > HEADER_BYTES or (line and not line.startswith(b"#")):
                    raise self._not_a_restart_log()
                if line.startswith(_VERSION):
                    version = line[len(_VERSION):].decode("ascii", "replace").strip()
                    self._check_version(version)
                keep = end
                continue
            if line is None:
                skipped += end - keep - tail
                tail = end - keep
                continue
            tail = 0  # garbage followed by good lines stays; only a tail is cut off
            keep = end
            self._take(line)
        if version is None:
            raise self._not_a_restart_log()
        if skipped:
            self.warnings.append(self._garbage_warning(skipped, tail))
        return keep

    def _check_version(self, version: str) -> None:
        if version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
            raise RestartLogError(
                f"Restart log {self.path} has format version {version}; this Swift reads {FORMAT_VERSION}")

    def _take(self, line: bytes) -> None:
        """One line of the log: a comment, an entry, or ``KEY!VALUE``."""
        if not line or line.startswith(b"#"):
            return
        key, sep, value = os.fsdecode(line).partition("!")
        self._entries.add(key)
        if sep:
            self._values[key] = value

    def _garbage_warning(self, skipped: int, tail: int) -> str:
        """What reading skipped, for people: a crash (NUL bytes where the last writes
        should be) or a write cut short; the calls they were of run again."""
        what = ("ends with" if tail == skipped else "holds") + f" {skipped} bytes"
        removed = ""
        if tail and self.resumed:
            removed = " and removed" if tail == skipped else f" (the {tail} at its end removed)"
        return (f"the restart log {self.path} {what} that are not lines of a restart log "
                f"(NUL bytes, a line longer than {MAX_LINE} bytes, or a line cut short by a "
                f"crash or a full disk): they were ignored{removed}")

    # -- the two operations a run needs -------------------------------------------------

    def is_done(self, outputs: Iterable[str]) -> bool:
        """True when every output of a call is recorded and still exists (a call with no
        outputs never is).  Swift trusted the log alone, so an output deleted since was
        not made again and the calls that read it failed; here such a call runs again."""
        entries = self._entries
        if not entries:  # a fresh log: asked once per call, answered at once
            return False
        outs = list(outputs)
        if not outs:
            return False
        for o in outs:
            if o not in entries:
                return False
        base = self.base_dir or os.getcwd()
        done = all(os.path.lexists(o if os.path.isabs(o) else os.path.join(base, o))
                   for o in outs)
        self.hits += done
        return done

    def record(self, outputs: Iterable[str]) -> None:
        """Append a successful call's outputs, one per line, in one write to the OS now
        (on disk only: see ``_entries``).  Raises :class:`RestartLogError` the first time
        the file cannot take them; from then on nothing more is recorded (the next lines
        would follow a gap)."""
        outs = [os.fspath(o) for o in outputs]
        if not outs or self.closed or self.failure is not None:
            return
        self._append(b"".join(_entry_bytes(o) for o in outs))

    def record_value(self, key: str, value: str) -> None:
        """A ``KEY!VALUE`` line (used for external outputs and similar keyed results)."""
        if self.closed or self.failure is not None:
            return
        self._append(_entry_bytes(f"{key}!{value}"))
        self._entries.add(key)
        self._values[key] = value

    def _append(self, data: bytes) -> None:
        """Record ``data`` (whole lines); a failure stops the recording, said once."""
        try:
            self._write_whole(data)
        except OSError as exc:
            self.failure = exc
            raise RestartLogError(
                f"Could not write the restart log {self.path}: {exc.strerror or exc}; the "
                f"calls that complete from now on are not recorded (a -resume would run "
                f"them again)") from None

    def _write_whole(self, data: bytes) -> None:
        """``data`` at the end of the file, all of it or none: the part of a write the
        disk took before it filled up is cut off again."""
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                n = os.write(self._fd, view[done:])
                if n <= 0:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                done += n
        except OSError:
            if done:
                try:
                    os.ftruncate(self._fd, self._size)
                except OSError:
                    pass  # the line stays cut; reading ignores a line without its end
            raise
        self._size += done

    def value(self, key: str) -> str | None:
        return self._values.get(key)

    def __contains__(self, entry: str) -> bool:
        return entry in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    # -- end of the run ------------------------------------------------------------------

    def close(self) -> None:
        """Hand the log to the disk and release it (it stays: the run may be resumed)."""
        if self.closed:
            return
        self.closed = True
        try:
            os.fsync(self._fd)
        except OSError:
            pass
        self._close_fd()

    def delete(self) -> None:
        """The run succeeded: close and remove the log, as Swift does, except a log given
        to ``-resume`` that skipped no call: that may be another script's log (a wrong
        ``-resume`` argument), and deleting it would lose that run's resume point."""
        self.close()
        if self.resumed and not self.hits:
            return
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
