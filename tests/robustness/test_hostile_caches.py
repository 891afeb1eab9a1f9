"""Files swiftnb keeps for itself that someone else may have touched (issue 24): the disk
cache (``$XDG_CACHE_HOME/swiftnb``: pickles, which run code when loaded) is used only
when nobody but its owner could have written it, and never calls a function a file
names; ``coaster-service -secretfile`` given a path it cannot write says so and leaves
no secret behind."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb import diskcache, scriptcache

NOBODY = 65534
SCRIPT = "int x = 3;\ntrace(x + 1);\n"


def _need_root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("these tests chown files to another user: they need root")
        pytest.skip("chown to another user needs root")


class _Marker:
    """Unpickled, runs ``touch PATH``: proof that a file was loaded as code."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # noqa: ANN204 - the pickle protocol
        return (os.system, (f"touch {self.path}",))


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SWIFTNB_NO_CACHE", raising=False)
    return tmp_path / "cache"


def _kept(cache: Path) -> Path:
    """A script's parse kept in ``cache``, checked to be used as it is."""
    scriptcache.reparse(SCRIPT, "s.swift")
    assert scriptcache.lookup(SCRIPT, "s.swift") is not None  # the control: it is used
    (path,) = (cache / "swiftnb" / "scripts").glob("*.pickle")
    return path


def test_cache_is_private(cache):
    path = _kept(cache)
    assert path.stat().st_mode & 0o777 == 0o600
    assert (cache / "swiftnb").stat().st_mode & 0o777 == 0o700
    assert path.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.parametrize("tamper", ["file-owner", "file-0664", "file-0666", "folder-0777",
                                    "folder-owner", "swiftnb-0777", "swiftnb-owner"])
def test_file_others_could_write_is_not_loaded(cache, tamper):
    path = _kept(cache)
    what, how = tamper.split("-")
    target = {"file": path, "folder": path.parent, "swiftnb": cache / "swiftnb"}[what]
    if how == "owner":
        _need_root()
        os.chown(target, NOBODY, -1)
    else:
        os.chmod(target, int(how, 8))
    assert scriptcache.lookup(SCRIPT, "s.swift") is None


@pytest.mark.parametrize("owner", ["mine", "nobody"])
def test_pickle_that_runs_code_never_runs(cache, tmp_path, owner):
    path = _kept(cache)
    key = pickle.loads(path.read_bytes())[0]
    marker = tmp_path / "marker"
    path.write_bytes(pickle.dumps((key, _Marker(marker))))
    if owner == "nobody":
        _need_root()
        os.chown(path, NOBODY, -1)
    assert diskcache.load(str(path), key) is None
    assert scriptcache.lookup(SCRIPT, "s.swift") is None
    assert not marker.exists()


def _swiftnb(cwd: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                       capture_output=True, text=True, timeout=120, env=env)
    assert "Traceback" not in r.stderr, r.stderr
    return r


@pytest.mark.parametrize("owner", ["mine", "nobody"])
def test_run_with_planted_cache_files(tmp_path, owner):
    """Every file the command keeps (script parse, configuration parses, defaults)
    replaced by a pickle that would run a command: the next run loads none of them."""
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"))
    env.pop("SWIFTNB_NO_CACHE", None)
    env.pop("SWIFT_SITE_CONF", None)
    (tmp_path / "s.swift").write_text(SCRIPT)
    assert _swiftnb(tmp_path, "run", "s.swift", env=env).returncode == 0
    kept = list((tmp_path / "cache" / "swiftnb").glob("*/*.pickle"))
    assert kept
    marker = tmp_path / "marker"
    if owner == "nobody":
        _need_root()
    for path in kept:
        path.write_bytes(pickle.dumps((("x",), _Marker(marker))))
        if owner == "nobody":
            os.chown(path, NOBODY, -1)
    r = _swiftnb(tmp_path, "run", "s.swift", env=env)
    assert r.returncode == 0, r.stderr
    assert "SwiftScript trace: 4" in r.stdout
    assert not marker.exists()


# ---------------------------------------------------------------- coaster-service -secretfile

def _service(cwd: Path, secret: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(cwd))
    return _swiftnb(cwd, "coaster-service", "-p", "0", "-secretfile", secret, env=env)


def _no_secret_left(root: Path) -> None:
    left = [p for p in root.rglob("*") if p.is_file()]
    assert not left, left


def test_secretfile_is_a_directory(tmp_path):
    folder = tmp_path / "d" / "secrets"
    folder.mkdir(parents=True)
    r = _service(tmp_path, str(folder))
    assert r.returncode == 1, r.stderr
    assert f"cannot write the secret file {folder}: it is a directory" in r.stderr
    assert "Errno" not in r.stderr
    _no_secret_left(tmp_path / "d")


@pytest.mark.parametrize("where", ["/proc/swiftnb-secret", "/proc/none/secret"])
def test_secretfile_unwritable(tmp_path, where):
    r = _service(tmp_path, where)
    assert r.returncode == 1, r.stderr
    assert f"cannot write the secret file {where}:" in r.stderr
    assert "Errno" not in r.stderr


def test_secretfile_on_a_full_disk(tmp_path):
    """The temporary file is made, its write fails: nothing of the secret remains."""
    _need_root()
    disk = tmp_path / "full"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,nr_inodes=3", "tmpfs", str(disk)],
                   check=True)
    try:
        with open(disk / "filler", "wb") as fh:
            try:
                fh.write(b"x" * (1 << 20))
                fh.flush()
            except OSError:
                pass
        r = _service(tmp_path, str(disk / "secret"))
        assert r.returncode == 1, r.stderr
        assert f"cannot write the secret file {disk / 'secret'}:" in r.stderr
        assert not [p for p in disk.iterdir() if p.name != "filler"]
    finally:
        subprocess.run(["umount", str(disk)], check=True)
