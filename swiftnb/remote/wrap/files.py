"""The file operations of staging: copies that keep modes and times, moves that are
atomic whatever the file systems, outputs made regular files of their own, and the
per-process caches (PATH lookups, directories made) that keep a short job cheap."""

from __future__ import annotations

import errno
import itertools
import os
import shutil
import stat
import time

_WHICH: dict[tuple[str, str], str] = {}

#: Executables found to be runnable files (a changed one fails at exec, with its reason).
_RUNNABLE: set[str] = set()

#: Destination directories known to exist (saves a failing mkdir per output).
_DIRS_MADE: set[str] = set()


def _which(name: str, env: dict[str, str] | None) -> str | None:
    path = (env or os.environ).get("PATH", os.defpath)
    key = (name, path)
    found = _WHICH.get(key)
    if found is None:
        found = shutil.which(name, path=path)
        if found is not None:
            if len(_WHICH) > 4096:
                _WHICH.clear()
            _WHICH[key] = found
    return found


def _ensure_dir(path: str) -> None:
    if path and path not in _DIRS_MADE:
        os.makedirs(path, exist_ok=True)
        if len(_DIRS_MADE) > 65536:
            _DIRS_MADE.clear()
        _DIRS_MADE.add(path)


def _anonymous_file(name: str) -> int | None:
    """A descriptor for the wrapper's own stdout/stderr capture that costs no directory
    entry (``memfd``); None where memfd is missing (a real file beside the job directory
    is used then)."""
    memfd = getattr(os, "memfd_create", None)
    if memfd is None:
        return None
    try:
        fd: int = memfd(name)
        return fd
    except OSError:
        return None


_DEVNULL: int | None = None


def _devnull() -> int:
    """One read-only ``/dev/null`` descriptor for every child's stdin, kept open (Popen
    would open and close one per child)."""
    global _DEVNULL
    if _DEVNULL is None:
        _DEVNULL = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    return _DEVNULL


def _temp_beside(dest: str) -> str:
    """A temporary name in ``dest``'s directory, unique to this process and moment (so
    that an ``os.replace`` from it is atomic and concurrent writers never share it).
    It fits NAME_MAX whatever ``dest``'s name: the part of that name it shows is cut to
    what leaves room for the unique part (which alone tells temporary names apart)."""
    unique = f".swiftnb-{os.getpid()}-{time.monotonic_ns()}-{next(_TEMP_SERIAL)}"
    room = _NAME_MAX - 1 - len(unique)
    shown = os.fsencode(os.path.basename(dest))[:room]
    return os.path.join(os.path.dirname(dest),
                        "." + os.fsdecode(shown) + unique)


#: the longest file name (bytes) of Linux file systems; a temporary name stays within it
_NAME_MAX = 255


#: tells apart temporary names made at the same nanosecond by threads of one worker
_TEMP_SERIAL = itertools.count()


def _copy_fd(src: int, dst: int, size: int) -> None:
    """``size`` bytes of ``src`` (a regular file's, from its start) into ``dst``, in the
    kernel where it can (copy_file_range: a reflink on file systems that share
    extents), else by reads and writes."""
    try:
        while size > 0:
            copied = os.copy_file_range(src, dst, size)
            if not copied:
                return
            size -= copied
        return
    except OSError as exc:  # another file system on an old kernel, a /proc file...
        if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise
    while True:
        data = os.read(src, 1 << 20)
        if not data:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view):]


def _write_copy(src: int, path: str, st: os.stat_result, mode: int) -> None:
    """A new file at ``path`` (which must not exist) holding the data of ``src``, whose
    status is ``st``, with its modification time (as ``cp -p``: tools comparing times
    see the file as the user left it)."""
    out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode)
    try:
        _copy_fd(src, out, st.st_size)
        os.utime(out, ns=(st.st_atime_ns, st.st_mtime_ns))
    finally:
        os.close(out)


def _copy_into(src: int, dest: str, mode: int) -> None:
    """Replace ``dest`` by a copy of ``src``'s data in one step (through a temporary
    name beside it)."""
    tmp = _temp_beside(dest)
    try:
        _write_copy(src, tmp, os.fstat(src), mode)
        os.replace(tmp, dest)
    except BaseException:
        _unlink(tmp)
        raise


#: what a file that is neither a regular file nor a directory is, for people
_FILE_TYPES = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISDIR, "a directory"))


def _what(mode: int) -> str:
    return next((name for test, name in _FILE_TYPES if test(mode)), "not a regular file")


def _make_regular(path: str, name: str, *, top: bool = True,
                  st: os.stat_result | None = None) -> str | None:
    """Make the output the app left at ``path`` a regular file of its own (a directory:
    each file in it), as Swift/K's staging copied content: a symbolic link to a regular
    file or a file with other hard links (``ln /etc/passwd out``) is replaced by a copy
    of the data.  None when done, else why the output cannot be one (``name`` is how
    the message calls it): a dangling link, a link to a directory or a device, a pipe.
    An OSError of the copy is raised (a stage-out trouble, not the app's).  ``st``:
    ``path``'s lstat, if read already."""
    if st is None:
        st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        if st.st_nlink > 1:
            _copy_regular(path, st.st_mode)
        return None
    if stat.S_ISDIR(st.st_mode):
        with os.scandir(path) as entries:
            inside = sorted(entries, key=lambda e: e.name)
        for entry in inside:
            cause = _make_regular(entry.path, f"{name}/{entry.name}", top=False)
            if cause is not None:
                return cause
        return None
    what = "output file" if top else "file"
    if not stat.S_ISLNK(st.st_mode):
        return f"The {what} {name} is {_what(st.st_mode)}, not a regular file"
    target = os.readlink(path)
    try:
        followed = os.stat(path)
    except OSError:
        return f"The {what} {name} is a symbolic link to {target}, which does not exist"
    if not stat.S_ISREG(followed.st_mode):
        return (f"The {what} {name} is a symbolic link to {target}, which is "
                f"{_what(followed.st_mode)}, not a regular file")
    _copy_regular(path, followed.st_mode)
    return None


def _copy_regular(path: str, mode: int) -> None:
    """Replace ``path`` (a link to a regular file, or one of its hard links) by a copy of
    its data; the copy is opened without blocking and checked again, so a link changed
    to a pipe meanwhile is never read."""
    src = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        _copy_into(src, path, stat.S_IMODE(mode) | 0o600)
    finally:
        os.close(src)


#: inputs up to this size are copied into each job directory; larger ones (and input
#: directories) are linked to one copy per run
_COPY_LIMIT = 1 << 20
#: the modes of that copy: no app writes into what the run's other jobs read (it gets
#: EACCES and fails, naming the file)
_SHARED_FILE_MODE = 0o444
#: a copied input directory stays writable by its owner: the site's cleanupCommand
#: (Swift's ``/bin/rm -rf``, which a user may have set to anything) must remove it, and
#: ``rm -rf`` cannot empty a 0555 directory of another's tree; its files are read-only


def permission_bits_bind() -> bool:
    """Whether a read-only mode stops this process's apps from writing: not for root,
    whose CAP_DAC_OVERRIDE writes a 0444 file and into a 0555 directory anyway (its jobs
    get copies of their own instead of links to the shared one)."""
    return not hasattr(os, "geteuid") or os.geteuid() != 0


def _read_only_tree(top: str) -> None:
    """Make the files of a copied directory tree read-only (0444); its directories keep
    their mode (see above)."""
    for root, _dirs, names in os.walk(top):
        for name in names:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, _SHARED_FILE_MODE)


def _copy_input(source: str, place: str, st: os.stat_result) -> None:
    """A job's own copy of an input file or directory (its links followed, so nothing
    in it leads back to the user's files), with the file's mode and times: an app that
    copies its input (``cp @i @o``) makes the output it made when inputs were links."""
    if stat.S_ISDIR(st.st_mode):
        shutil.copytree(source, place, symlinks=False, ignore_dangling_symlinks=True)
        return
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _write_copy(src, place, st, stat.S_IMODE(st.st_mode))
    finally:
        os.close(src)


def _same_copy(source: str, copy: str) -> bool:
    """Whether ``copy`` is a current copy of ``source``: a directory copy is kept as it
    is; a file's size and modification time must match (an app that wrote to it
    changed its time: it is copied again for the next job)."""
    try:
        have = os.lstat(copy)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(have.st_mode):
        return True
    want = os.stat(source)
    return (stat.S_ISREG(have.st_mode) and have.st_size == want.st_size
            and have.st_mtime_ns == want.st_mtime_ns)


def _site_copy_of(source: str, copy: str) -> None:
    """Make ``copy`` a read-only copy of ``source`` (data and times) in one step (a
    temporary name first: jobs of other processes may be linking to it)."""
    if os.path.isdir(source):
        tmp = _temp_beside(copy)
        try:
            shutil.copytree(source, tmp, symlinks=False, ignore_dangling_symlinks=True)
            _read_only_tree(tmp)
            os.rename(tmp, copy)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not os.path.isdir(copy):  # else another job made it first
                raise
        return
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _copy_into(src, copy, _SHARED_FILE_MODE)
    finally:
        os.close(src)


def _move_atomic(src: str, dest: str) -> None:
    """Put ``src`` at ``dest`` in one step; across file systems copy to a temp name first."""
    parent = os.path.dirname(dest)
    _ensure_dir(parent)
    try:
        os.replace(src, dest)
        return
    except FileNotFoundError:
        if not os.path.lexists(src) or not parent:
            raise
        _DIRS_MADE.discard(parent)  # removed behind our back: make it again
        os.makedirs(parent, exist_ok=True)
        os.replace(src, dest)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    tmp = _temp_beside(dest)
    try:
        if os.path.isdir(src) and not os.path.islink(src):
            shutil.copytree(src, tmp, symlinks=True)
            if os.path.isdir(dest) and not os.path.islink(dest):
                shutil.rmtree(dest)
        else:
            shutil.copy2(src, tmp, follow_symlinks=False)
        os.replace(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True) if os.path.isdir(tmp) else _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
