"""The restart log (Swift's ``.rlog``): which app calls already produced their outputs.

Why it exists: a long run that dies (a crash, SIGKILL, a failed app with lazyErrors off)
can be resumed with ``-resume file`` and skip every call whose outputs were recorded.
The format is Swift 0.96's (reference 5.5), so logs move between the two::

    # Log file created Sun Nov 22 10:13:21 UTC 2026
    # Format version 2.0
    a.out
    c0002.out

One line per output of each successful call, written (and flushed to the OS, so a SIGKILL
does not lose it) as the call completes.  ``KEY!VALUE`` lines are read back too.  On
resume the same file is reopened for appending with ``# Log file updated <date>``.  The
log is deleted when the run succeeds.  The file is locked (``flock``) while a run uses it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

try:  # not on Windows
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]

__all__ = ["RestartLog", "RestartLogError", "FORMAT_VERSION", "java_date"]

FORMAT_VERSION = "2.0"


class RestartLogError(Exception):
    """A restart log that cannot be used (missing, wrong version, in use)."""


def java_date(t: float | None = None) -> str:
    """Java's ``Date.toString()``: ``Sun Nov 22 10:13:21 UTC 2026`` (in UTC)."""
    return time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(time.time() if t is None else t))


class RestartLog:
    """An open restart log: ``record`` completed calls, ask ``is_done`` when resuming."""

    def __init__(self, path: str | os.PathLike[str], *, resume: bool = False) -> None:
        self.path = os.fspath(path)
        self.resumed = resume
        self._entries: set[str] = set()
        self._values: dict[str, str] = {}
        try:
            self._open(resume)
        except OSError as exc:  # a full disk, a read-only directory, a directory named so
            raise RestartLogError(f"Cannot {'update' if resume else 'create'} the restart log "
                                  f"{self.path}: {exc.strerror or exc}") from None
        self.closed = False

    def _open(self, resume: bool) -> None:
        if resume:
            if not os.path.isfile(self.path):
                raise RestartLogError(f"Restart log not found: {self.path}")
            self._read()
            self._fh = open(self.path, "a", encoding="utf-8")
            self._lock()
            self._fh.write(f"# Log file updated {java_date()}\n")
        else:
            parent = os.path.dirname(self.path)
            if parent:
                os.makedirs(parent, exist_ok=True)
            self._fh = open(self.path, "w", encoding="utf-8")
            self._lock()
            self._fh.write(f"# Log file created {java_date()}\n# Format version {FORMAT_VERSION}\n")
        try:
            self._fh.flush()
        except OSError:
            try:
                self._fh.close()
            except OSError:
                pass
            raise

    @classmethod
    def next_free(cls, directory: str, script_stem: str) -> "RestartLog":
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
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._fh.close()
            raise RestartLogError(f"Restart log {self.path} is in use by another run") from None

    def _read(self) -> None:
        version = None
        with open(self.path, encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                line = raw.rstrip("\n")
                if not line:
                    continue
                if line.startswith("#"):
                    if line.startswith("# Format version"):
                        version = line[len("# Format version"):].strip()
                    continue
                key, sep, value = line.partition("!")
                self._entries.add(key)
                if sep:
                    self._values[key] = value
        if version is None:
            raise RestartLogError(f"{self.path} is not a Swift restart log (no format version line)")
        if version.split(".")[0] != FORMAT_VERSION.split(".")[0]:
            raise RestartLogError(
                f"Restart log {self.path} has format version {version}; this Swift reads {FORMAT_VERSION}")

    # -- the two operations a run needs -------------------------------------------------

    #: where relative outputs are looked for (None: the current directory, the CLI's)
    base_dir: str | None = None
    #: calls skipped thanks to this log (a resumed log that skipped none is kept)
    hits: int = 0

    def is_done(self, outputs: Iterable[str]) -> bool:
        """True when every output of a call is recorded and still exists (a call with no
        outputs never is).  Swift trusted the log alone, so an output deleted since was
        not made again and the calls that read it failed; here such a call runs again."""
        outs = list(outputs)
        if not outs or not all(o in self._entries for o in outs):
            return False
        base = self.base_dir or os.getcwd()
        done = all(os.path.lexists(o if os.path.isabs(o) else os.path.join(base, o))
                   for o in outs)
        self.hits += done
        return done

    def record(self, outputs: Iterable[str]) -> None:
        """Append a successful call's outputs, one per line, and hand them to the OS now."""
        outs = [str(o) for o in outputs]
        if not outs or self.closed:
            return
        self._fh.write("".join(o.replace("\n", " ") + "\n" for o in outs))
        self._fh.flush()
        self._entries.update(outs)

    def record_value(self, key: str, value: str) -> None:
        """A ``KEY!VALUE`` line (used for external outputs and similar keyed results)."""
        if self.closed:
            return
        self._fh.write(f"{key}!{value}\n")
        self._fh.flush()
        self._entries.add(key)
        self._values[key] = value

    def value(self, key: str) -> str | None:
        return self._values.get(key)

    def __contains__(self, entry: str) -> bool:
        return entry in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    # -- end of the run ------------------------------------------------------------------

    def close(self) -> None:
        """Flush and release the log (it stays on disk: the run may be resumed)."""
        if self.closed:
            return
        self.closed = True
        try:
            self._fh.flush()
            os.fsync(self._fh.fileno())
        except (OSError, ValueError):
            pass
        try:
            self._fh.close()
        except OSError:  # the disk filled up: what was flushed before is on disk
            pass

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
