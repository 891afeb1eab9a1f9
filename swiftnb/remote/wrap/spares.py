"""Empty job directories kept for the next job (a rename instead of mkdir + rmdir)."""

from __future__ import annotations

import errno
import os
import shutil

from .sequence import libc_function

_NO_SHAPE: frozenset[str] = frozenset()

#: renameat2's flag: fail with EEXIST rather than replace the target
_RENAME_NOREPLACE = 1
_AT_FDCWD = -100


def rename_no_replace(src: str, dst: str) -> None:
    """``os.rename(src, dst)`` that raises FileExistsError when ``dst`` exists (a
    rename of a directory replaces an empty one silently).  One system call where the
    kernel and file system can (renameat2's RENAME_NOREPLACE: a job directory made
    without a look at its path first); else a look, then the rename (callers hold
    :attr:`SpareDirs.lock`, so nothing of ours comes between)."""
    call = libc_function("renameat2")
    if callable(call):
        import ctypes

        if call(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst),
                _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), src, None, dst)
    if os.path.lexists(dst):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), dst)
    os.rename(src, dst)


class SpareDirs:
    """Job directories kept for the next job, which takes one with a rename.

    Why: a ``mkdir`` + ``rmdir`` pair per app call is the dearest part of a short job on
    ext4 (allocating a directory inode scans the recently freed ones), several times an
    ``echo``'s own cost; a rename allocates nothing.  A job whose inputs or outputs sit
    in subdirectories (``cat c/c0001.txt``) leaves those behind empty, and its directory
    is kept with them: its *shape*, the set of their relative paths.  The next job of the
    same app (``tr``) takes a spare of the shape the last one left, or an empty one, and
    removes before its app starts any directory of the shape it did not need, so an app
    always sees exactly the directories it would have had.  ``limit`` spares at most;
    the end of the run removes them with the site directory.  One lock orders every
    creation of a job directory in this process, so a rename never replaces another
    job's (just made) directory.
    """

    def __init__(self, limit: int = 64) -> None:
        import threading

        self.limit = limit
        self.lock = threading.Lock()
        self._dirs: dict[frozenset[str], list[str]] = {}
        self._count = 0
        self._shapes: dict[str, frozenset[str]] = {}  # tr -> the shape its last job left

    def __len__(self) -> int:
        return self._count

    def shape_for(self, tr: str) -> frozenset[str]:
        """The shape a job of app ``tr`` most likely needs (the last one's)."""
        return self._shapes.get(tr, _NO_SHAPE)

    def take(self, path: str, shape: frozenset[str] = frozenset()) -> frozenset[str] | None:
        """Move a spare of ``shape`` (else an empty one) to ``path`` (call with ``lock``
        held); the shape taken, or None when there is none.  FileExistsError: ``path``
        exists (the spare stays in the pool)."""
        for wanted in (shape, _NO_SHAPE) if shape else (_NO_SHAPE,):
            pool = self._dirs.get(wanted)
            while pool:
                spare = pool.pop()
                self._count -= 1
                try:
                    rename_no_replace(spare, path)
                    return wanted
                except FileExistsError:
                    pool.append(spare)
                    self._count += 1
                    raise
                except FileNotFoundError:
                    if not os.path.isdir(spare):
                        continue  # removed behind our back (the site directory went away)
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    rename_no_replace(spare, path)
                    return wanted
                except OSError:
                    return None  # e.g. another file system: fall back to mkdir
        return None

    def give(self, path: str, shape: frozenset[str] = frozenset(), tr: str | None = None) -> bool:
        """Keep a job directory holding only the (empty) directories of ``shape`` for
        reuse; False when the pool is full.  ``tr``: the app whose job left it."""
        with self.lock:
            if tr is not None:
                self._shapes[tr] = shape
            if self._count >= self.limit:
                return False
            self._dirs.setdefault(shape, []).append(path)
            self._count += 1
            return True

    def clear(self) -> None:
        """Remove the spares (a kept site directory should not hold them)."""
        with self.lock:
            pools, self._dirs, self._count = self._dirs, {}, 0
        for shape, paths in pools.items():
            for path in paths:
                if shape:
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    try:
                        os.rmdir(path)
                    except OSError:
                        pass
