"""``-cdm.file fs.data`` end to end: a DIRECT rule makes the app read the file from the
rule's directory (not a staged copy), on the local site and on an SSH site."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SCRIPT = """
type file;
app (file o) cat (file i) { cat @i stdout=@o; }
file inp <"data/in.txt">;
file out <"out.txt">;
out = cat(inp);
"""


def _prepare(work: Path, gpfs: Path) -> None:
    (gpfs / "data").mkdir(parents=True)
    (gpfs / "data" / "in.txt").write_text("from the DIRECT directory\n")
    os.chmod(gpfs / "data" / "in.txt", 0o644)
    (work / "data").mkdir()
    (work / "data" / "in.txt").write_text("the local copy\n")   # what staging would send
    (work / "wf.swift").write_text(SCRIPT)
    (work / "fs.data").write_text(f"# CDM policy\nproperty GATHER_LIMIT 1\n"
                                  f"rule .*in.txt DIRECT {gpfs}\nrule .* DEFAULT\n")


def _run(work: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-cdm.file", "fs.data",
                           "wf.swift"], cwd=work, env=env, capture_output=True, text=True,
                          timeout=100)


def test_a_direct_input_need_not_exist_here(tmp_path):
    """The engine does not require a DIRECT input on this machine: the rule's directory
    has it (0.96's users kept their data on the cluster's shared file system)."""
    _prepare(tmp_path, tmp_path / "gpfs")
    (tmp_path / "data" / "in.txt").unlink()
    r = _run(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "from the DIRECT directory\n"


def test_direct_rule_on_the_local_site(tmp_path):
    _prepare(tmp_path, tmp_path / "gpfs")
    r = _run(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "out.txt").read_text() == "from the DIRECT directory\n"


def test_direct_rule_on_an_ssh_site_is_not_staged(sshd, tmp_path):
    gpfs = Path(tempfile.mkdtemp(prefix="swiftnb-gpfs-", dir="/tmp"))  # "shared" by both
    os.chmod(gpfs, 0o755)
    try:
        _prepare(tmp_path, gpfs)
        (tmp_path / "swift.conf").write_text(f"""
sites: [remote]
keepSiteDir: true
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/cdm"
    app.ALL {{ executable: "*" }}
}}
""")
        r = _run(tmp_path, sshd.env())
        assert r.returncode == 0, r.stdout + r.stderr
        assert (tmp_path / "out.txt").read_text() == "from the DIRECT directory\n"
        shared = next((Path(sshd.remote_work) / "cdm").iterdir()) / "shared"
        assert not (shared / "data" / "in.txt").exists()   # DIRECT: nothing staged
    finally:
        shutil.rmtree(gpfs, ignore_errors=True)
