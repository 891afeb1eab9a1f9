"""`python -m swiftnb.kernel install` puts the swiftnb-highlight lab extension beside the
kernelspec, where JupyterLab's own discovery finds it as a prebuilt extension."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.timeout(120)


def _install(prefix) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "swiftnb.kernel", "install", "--prefix",
                           str(prefix)], capture_output=True, text=True, timeout=60)


def test_install_puts_the_lab_extension_where_jupyterlab_finds_it(tmp_path):
    from jupyterlab_server.config import get_federated_extensions

    done = _install(tmp_path)
    assert done.returncode == 0, done.stderr
    where = tmp_path / "share" / "jupyter" / "labextensions"
    assert f"Installed lab extension swiftnb-highlight in {where / 'swiftnb-highlight'}" \
        in done.stdout
    found = get_federated_extensions([str(where)])
    build = found["swiftnb-highlight"]["jupyterlab"]["_build"]
    assert build == {"load": "static/remoteEntry.js", "extension": "./extension"}
    entry = where / "swiftnb-highlight" / "static" / "remoteEntry.js"
    assert '_JUPYTERLAB[NAME]' in entry.read_text()
    # again, over an older copy: replaced, not merged
    (where / "swiftnb-highlight" / "static" / "stale.js").write_text("old")
    assert _install(tmp_path).returncode == 0
    assert not (where / "swiftnb-highlight" / "static" / "stale.js").exists()


def test_a_lab_extension_that_cannot_be_written_is_a_message(tmp_path):
    (tmp_path / "share" / "jupyter").mkdir(parents=True)
    (tmp_path / "share" / "jupyter" / "labextensions").write_text("a file, not a folder\n")
    done = _install(tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("swiftnb: cannot install the lab extension "
                                  "swiftnb-highlight: ")
    assert "Traceback" not in done.stderr
