"""A site run directory may hold read-only directories (an app's own chmod, a copied
input tree with 0555 directories of the user's); its owner must still be able to remove
it.  Run as an ordinary user (``nobody`` through setpriv): root's removals
ignore permission bits and would prove nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.timeout(60),
              pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                                 reason="needs root and setpriv to act as another user")]

NOBODY = 65534


@pytest.fixture
def reachable():
    """A directory another user can reach (pytest's tmp_path is under a 0700 directory)."""
    made = tempfile.mkdtemp(prefix="swiftnb-readonly-")
    os.chmod(made, 0o777)
    yield Path(made)
    shutil.rmtree(made, ignore_errors=True)  # root: whatever a failing test left


def test_an_ordinary_user_removes_a_tree_of_read_only_directories(reachable):
    top = reachable / "site-run"
    deep = top / "shared" / "dir-copy" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "f").write_text("x")
    (top / "shared" / "dir-copy" / "g").write_text("y")
    for root, _dirs, files in os.walk(top):
        os.chown(root, NOBODY, NOBODY)
        for name in files:
            os.chown(os.path.join(root, name), NOBODY, NOBODY)
            os.chmod(os.path.join(root, name), 0o444)
    for directory in (deep, deep.parent, top / "shared" / "dir-copy"):
        os.chmod(directory, 0o555)
    shown = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                            "--clear-groups", "rm", "-f", str(deep / "f")],
                           capture_output=True, text=True, timeout=30)
    assert shown.returncode != 0, "the tree is not read-only to its owner: the test shows nothing"
    removed = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c",
         "import sys; from swiftnb.execution.shell import remove_local_tree; "
         "remove_local_tree(sys.argv[1])", str(top)],
        capture_output=True, text=True, timeout=30,
        env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(
            os.path.dirname(os.path.abspath(__file__))))})
    assert removed.returncode == 0, removed.stderr
    assert not top.exists()
