"""swiftnb.remote runs on other machines (SSH hosts, batch nodes, coaster blocks) with
whatever Python is there and no swiftnb installed: its modules import the standard
library and swiftnb.remote only, and each runs as a lone file too (how it is shipped:
``shared/_swiftwrap.py``, ``shared/_swiftworker.py``)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REMOTE = Path(__file__).resolve().parents[1] / "swiftnb" / "remote"
MODULES = sorted(REMOTE.glob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), feature_version=(3, 8))  # nodes have old Pythons
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    names |= {node.module for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    return names


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_a_remote_module_imports_the_stdlib_and_swiftnb_remote_only(path):
    foreign = {name for name in _imports(path)
               if name.split(".")[0] not in sys.stdlib_module_names
               and name != "swiftnb.remote" and not name.startswith("swiftnb.remote.")}
    assert foreign == set(), f"{path.name} imports {sorted(foreign)}"


def test_the_package_imports_in_an_isolated_python_without_site_packages():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import swiftnb.remote.wrapper, swiftnb.remote.worker\n"
            "extra = sorted(m for m in sys.modules if m.split('.')[0] == 'swiftnb'"
            " and m != 'swiftnb' and not m.startswith('swiftnb.remote'))\n"
            "print(extra)\n") % str(REMOTE.parents[1])
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, timeout=30)
    assert out.stdout.strip() == "[]", out.stderr


def test_the_shipped_files_run_alone(tmp_path):
    """As on a node: the two files under their shipped names, nothing else."""
    shutil.copy(REMOTE / "wrapper.py", tmp_path / "_swiftwrap.py")
    shutil.copy(REMOTE / "worker.py", tmp_path / "_swiftworker.py")
    code = ("import runpy, sys\n"
            "runpy.run_path('_swiftwrap.py', run_name='w')\n"
            "runpy.run_path('_swiftworker.py', run_name='k')\n"
            "print(sorted(m for m in sys.modules if m.startswith('swiftnb')))\n")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True,
                         text=True, timeout=30, cwd=tmp_path)
    assert out.stdout.strip() == "[]", out.stderr
