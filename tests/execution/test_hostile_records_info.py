"""The run's other records on a full disk: the ``-info`` records of its jobs
(``RUNDIR/SCRIPT-RUNID.d/JOBID-info``) and ``swift.out``, the copy of its console.

Before: a failed write of either was swallowed; the run ended 0 with records missing and
nothing said.  Now: a warning naming the file, once, when it happens; the run goes on (no
work is lost) and ends with exit code 2 saying which records were lost, as for the
restart log and the log (tests/execution/test_hostile_records.py).

The full disk is a real tmpfs of a few KiB (root only), mounted where the record goes:
on the ``.d`` directory, or holding the file ``swift.out`` links to.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
LONG = "o" * 120
#: 60 calls, each leaving an -info record (alwaysTransferWrapperLog) of ~1 KiB
CONF = "alwaysTransferWrapperLog: true\n"
MANY = f"""\
type file;
app (file o) make (int i) {{ echo i stdout=@o; }}
file outs[] <simple_mapper; location="out", prefix="{LONG}-", suffix=".txt">;
foreach i in [0:59] {{ outs[i] = make(i); }}
"""
#: 200 lines of console output (~26 KiB)
CHATTY = f"""\
foreach i in [0:199] {{ trace("{LONG}", i); }}
"""


def _root_or_skip() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("a tmpfs mount needs root (CI=true)")
        pytest.skip("a tmpfs mount needs root")


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A small tmpfs mounted on ``path`` (made if missing), unmounted at the end."""
    _root_or_skip()
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SWIFTNB, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=150)


def test_a_full_disk_under_the_info_records_fails_the_run_naming_the_file(tmp_path):
    (tmp_path / "wf.swift").write_text(MANY)
    (tmp_path / "c.conf").write_text(CONF)
    with _tmpfs(tmp_path / "run001" / "wf-run001.d", "8k") as info:
        r = _run(tmp_path, "-config", "c.conf", "-runid", "run001", "wf.swift")
        said = r.stdout + r.stderr
        assert r.returncode == 2, said
        assert f"the -info record {info}/" in r.stderr, said
        assert "could not be written (No space left on device)" in r.stderr, said
        assert r.stderr.count("Warning: the -info record") == 1, said  # once, not per job
        assert "Task exception" not in said and "Traceback" not in said
        # the run went on: every call ran
        assert len(list((tmp_path / "out").iterdir())) == 60
        assert "could not be written" in (tmp_path / "run001" / "wf-run001.log").read_text()


def test_a_full_disk_under_swift_out_fails_the_run_naming_it(tmp_path):
    (tmp_path / "wf.swift").write_text(CHATTY)
    with _tmpfs(tmp_path / "small", "4k") as small:
        (tmp_path / "run001").mkdir()
        (tmp_path / "run001" / "swift.out").symlink_to(small / "swift.out")
        r = _run(tmp_path, "-runid", "run001", "wf.swift")
        said = r.stdout + r.stderr
        assert r.returncode == 2, said
        out = tmp_path / "run001" / "swift.out"
        assert (f"the run's console copy {out} could not be written (No space left on "
                "device)") in r.stderr, said
        assert "Traceback" not in said
        assert r.stdout.count(LONG) == 200  # the console itself got everything
