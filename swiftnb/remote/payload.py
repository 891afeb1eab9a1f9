"""The far side's code as one file: a zipapp of this package, ``_swiftremote.pyz``.

Why one archive: the wrapper and the worker are a package of small modules, and a site
gets them with one copy, run as ``python3 -I shared/_swiftremote.pyz wrap`` (or
``worker``).  The archive holds ``swiftnb/remote/`` (sources only: any Python 3 compiles
them), an empty ``swiftnb/__init__.py`` and a ``__main__.py`` that dispatches; it is
stored uncompressed (a node's Python may lack zlib) with fixed times and a fixed order,
so that its bytes, and its digest, are the same in every process built from the same
sources.  Built once per process."""

from __future__ import annotations

import atexit
import functools
import io
import os
import shutil
import tempfile
import zipfile

#: the archive's name in a site's ``shared/`` directory
PAYLOAD_NAME = "_swiftremote.pyz"

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_MAIN = "import sys\nfrom swiftnb.remote.__main__ import main\nsys.exit(main())\n"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def _sources() -> list[tuple[str, str]]:
    """(name in the archive, local path) of the package's modules, sorted."""
    found = []
    for top, dirs, names in os.walk(_PACKAGE):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(top, name)
                rel = os.path.relpath(path, _PACKAGE).replace(os.sep, "/")
                found.append(("swiftnb/remote/" + rel, path))
    return sorted(found)


def _entry(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
    info = zipfile.ZipInfo(name, date_time=_EPOCH)
    info.external_attr = 0o644 << 16
    info.compress_type = zipfile.ZIP_STORED
    archive.writestr(info, data)


@functools.lru_cache(maxsize=1)
def payload_bytes() -> bytes:
    """The zipapp's bytes (the same for the same sources)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        _entry(archive, "__main__.py", _MAIN.encode())
        _entry(archive, "swiftnb/__init__.py", b"")
        for name, source in _sources():
            with open(source, "rb") as fh:
                _entry(archive, name, fh.read())
    return buffer.getvalue()


@functools.lru_cache(maxsize=1)
def payload_file() -> str:
    """A local file holding the zipapp, for a shell to copy to a site (this process's
    own, removed when it exits)."""
    directory = tempfile.mkdtemp(prefix="swiftnb-payload-")
    atexit.register(shutil.rmtree, directory, True)
    path = os.path.join(directory, PAYLOAD_NAME)
    with open(path, "wb") as fh:
        fh.write(payload_bytes())
    return path
