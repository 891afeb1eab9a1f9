"""An app that writes into its input on the local site.  A large input (over the
wrapper's copy limit) is one copy per site run that every job's directory links to; an
app that appends to it must not change what another job reads, nor the user's file:
the writer fails visibly, a reader at the same time reads the original content.  Tests
run as root here, which permission bits do not stop: the root branch is the one shown."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from robusthelp import swiftnb

pytestmark = pytest.mark.timeout(120)


ROOT = Path(__file__).resolve().parents[2]
BIG = 2 * (1 << 20) + 7  # over the 1 MiB copy limit: the run's shared copy, linked

#: the writer appends to its input, then opens the gate; the reader waits (bounded) for
#: the gate before it reads, so that it reads after the write was tried
APPENDER = """\
type file;
app (file o) append(file big, string gate) {
    sh "-c" "echo extra >> $0; status=$?; touch $1; exit $status" @big gate stdout=@o;
}
app (file o) size(file big, string gate) {
    sh "-c" "i=0; while [ ! -e $1 ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; wc -c < $0"
       @big gate stdout=@o;
}
file big <"big.dat">;
file wrote <"wrote.txt">;
file read <"read.txt">;
string gate = arg("gate");
wrote = append(big, gate);
read = size(big, gate);
"""


def test_an_app_cannot_change_a_shared_large_input(tmp_path):
    original = bytes(range(256)) * (BIG // 256) + b"x" * (BIG % 256)
    (tmp_path / "big.dat").write_bytes(original)
    (tmp_path / "appender.swift").write_text(APPENDER)
    r = swiftnb("run", "appender.swift", f"-gate={tmp_path / 'gate'}", cwd=tmp_path, timeout=90)
    assert r.returncode == 2, r.stderr  # the writer's call failed, and the run says so
    # as a user the app's write is refused (EACCES, in its stderr); root writes through
    # permission bits, so its job wrote a copy of its own, and the call fails for it
    refused = "Permission denied" if os.geteuid() else "modified its input big.dat"
    assert refused in r.stderr and "big.dat" in r.stderr, r.stderr
    assert not (tmp_path / "wrote.txt").exists()
    assert (tmp_path / "read.txt").read_text().strip() == str(BIG)
    assert (tmp_path / "big.dat").read_bytes() == original


def test_a_later_run_reads_the_original_after_a_writer_failed(tmp_path):
    """The site copy outlives nothing it should not: a second run of a reader alone
    reads the user's content."""
    original = b"y" * BIG
    (tmp_path / "big.dat").write_bytes(original)
    (tmp_path / "appender.swift").write_text(APPENDER)
    swiftnb("run", "appender.swift", f"-gate={tmp_path / 'gate'}", cwd=tmp_path, timeout=90)
    (tmp_path / "reader.swift").write_text(
        'type file;\napp (file o) cat(file i) { cat @i stdout=@o; }\n'
        'file big <"big.dat">;\nfile o <"copy.dat">;\no = cat(big);\n')
    r = swiftnb("run", "reader.swift", cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "copy.dat").read_bytes() == original


NOBODY = 65534



@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to run swiftnb as an ordinary user")
def test_as_an_ordinary_user_the_write_is_refused(tmp_path):
    """What users see (they are not root): the shared copy is read-only, the app's
    append fails with EACCES, the reader reads the original."""
    work = Path(tempfile.mkdtemp(prefix="swiftnb-shared-"))
    try:
        os.chown(work, NOBODY, NOBODY)
        original = b"z" * BIG
        for name, data in (("big.dat", original), ("appender.swift", APPENDER.encode())):
            (work / name).write_bytes(data)
            os.chown(work / name, NOBODY, NOBODY)
        r = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             sys.executable, "-m", "swiftnb.cli", "run", "appender.swift",
             f"-gate={work / 'gate'}"],
            cwd=work, capture_output=True, text=True, timeout=90,
            env={**os.environ, "HOME": str(work), "PYTHONPATH": str(ROOT)})
        assert "Traceback" not in r.stderr, r.stderr
        assert r.returncode == 2, r.stderr
        assert "Permission denied" in r.stderr and "big.dat" in r.stderr, r.stderr
        assert not (work / "wrote.txt").exists()
        assert (work / "read.txt").read_text().strip() == str(BIG)
        assert (work / "big.dat").read_bytes() == original
        assert not (work / "swiftwork").exists() or not any((work / "swiftwork").iterdir())
    finally:
        shutil.rmtree(work, ignore_errors=True)
