"""swiftnb.remote runs on other machines (SSH hosts, batch nodes, coaster blocks) with
whatever Python is there and no swiftnb installed: its modules import the standard
library and swiftnb.remote only, none is over 1,000 lines, and the zipapp they are
shipped as (``shared/_swiftremote.pyz``, remote/payload.py) runs with ``python3 -I -S``
and nothing else beside it."""

from __future__ import annotations

import ast
import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from swiftnb.remote import payload

REMOTE = Path(__file__).resolve().parents[1] / "swiftnb" / "remote"
MODULES = sorted(REMOTE.rglob("*.py"))
#: a Python without site-packages, as a node's may be
BARE = [sys.executable, "-I", "-S"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), feature_version=(3, 8))  # nodes have old Pythons
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    names |= {node.module for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    return names


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(REMOTE)) for p in MODULES])
def test_a_remote_module_imports_the_stdlib_and_swiftnb_remote_only(path):
    foreign = {name for name in _imports(path)
               if name.split(".")[0] not in sys.stdlib_module_names
               and name != "swiftnb.remote" and not name.startswith("swiftnb.remote.")}
    assert foreign == set(), f"{path.name} imports {sorted(foreign)}"


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(REMOTE)) for p in MODULES])
def test_no_remote_module_is_over_a_thousand_lines(path):
    assert len(path.read_text().splitlines()) <= 1000


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """The zipapp alone in a directory, under its shipped name, as on a site."""
    where = tmp_path_factory.mktemp("site") / payload.PAYLOAD_NAME
    shutil.copy(payload.payload_file(), where)
    return where


def test_the_zipapp_holds_every_remote_module_and_is_the_same_each_time(shipped):
    names = set(zipfile.ZipFile(shipped).namelist())
    wanted = {"swiftnb/remote/" + p.relative_to(REMOTE).as_posix() for p in MODULES}
    assert wanted <= names and "__main__.py" in names
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert hashlib.sha256(payload.payload_bytes()).hexdigest() == digest
    again = subprocess.run([sys.executable, "-c", "import hashlib; "
                            "from swiftnb.remote import payload; "
                            "print(hashlib.sha256(payload.payload_bytes()).hexdigest())"],
                           capture_output=True, text=True, timeout=60)
    assert again.stdout.strip() == digest, again.stderr


def test_the_zipapps_modules_import_in_a_bare_python_and_load_nothing_else(shipped):
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import pkgutil, importlib, swiftnb.remote\n"
            "names = [m.name for m in pkgutil.walk_packages(swiftnb.remote.__path__, 'swiftnb.remote.')]\n"
            "for name in names: importlib.import_module(name)\n"
            "print(len(names), sorted(m.__file__ for m in list(sys.modules.values())\n"
            "      if m.__name__.split('.')[0] == 'swiftnb' and not m.__file__.startswith(%r)))\n"
            ) % (str(shipped), str(shipped))
    out = subprocess.run([*BARE, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=shipped.parent)
    count, _, outside = out.stdout.strip().partition(" ")
    assert out.returncode == 0, out.stderr
    assert int(count) >= 15 and outside == "[]", out.stdout


def test_the_zipapp_runs_a_job_of_several_commands_in_a_bare_python(shipped, tmp_path):
    """``wrap`` reads a spec and prints the result; the sequence process of a job of
    several commands is started from inside the archive too."""
    spec = {"jobid": "j1", "tr": "echo", "args": ["one"], "base_dir": str(tmp_path),
            "work_dir": str(tmp_path / "work"), "site_run": "r", "stdout": "one.txt",
            "outputs": ["one.txt", "two.txt"],
            "commands": [{"tr": "echo", "executable": "echo", "args": ["two"], "stdin": None,
                          "stdout": "two.txt", "stderr": None, "source": None}]}
    out = subprocess.run([*BARE, str(shipped), "wrap"], input=json.dumps(spec),
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    result = json.loads(out.stdout)
    assert result["ok"], result["message"]
    assert result["staged_out"] == ["one.txt", "two.txt"]
    assert (tmp_path / "two.txt").read_text() == "two\n"


def test_the_zipapp_says_how_it_is_used(shipped):
    out = subprocess.run([*BARE, str(shipped), "neither"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and "wrap" in out.stderr and "worker" in out.stderr


def test_the_zipapps_worker_starts_and_greets_over_stdio(shipped):
    out = subprocess.run([*BARE, str(shipped), "worker", "--stdio"], input="",
                         capture_output=True, text=True, timeout=60)
    hello = json.loads(out.stdout.splitlines()[0])
    assert hello["op"] == "hello", out.stdout + out.stderr
