"""The runs of one Swift kernel session go to one session directory beside the notebook
(.swiftnb/session-DATE-ID/runNNN), not into the notebook's folder.  The run store of
memoized runs (store.sqlite, objects/) lives in the same .swiftnb folder."""

from __future__ import annotations

import os

import pytest

from kernelhelp import Kernel

pytestmark = pytest.mark.timeout(120)

APP_CELL = 'type file;\napp (file o) hi() { echo "hi" stdout=@o; }\nfile f <"f.txt"> = hi();\n'


def _sessions(base):
    """The session folders in base/.swiftnb, beside the run store the kernel's memoized
    runs keep there (and nothing else)."""
    names = os.listdir(base / ".swiftnb")
    sessions = [n for n in names if n.startswith("session-")]
    assert set(names) - set(sessions) <= {"store.sqlite", "store.sqlite-wal",
                                          "store.sqlite-shm", "objects"}
    return sessions


def test_runs_of_a_session_share_one_session_directory(tmp_path):
    k = Kernel(str(tmp_path))
    try:
        assert k.run(APP_CELL).status == "ok"
        assert k.run("trace(2);").status == "ok"
        log = k.run("%python print(swift_run.log_path)").stream().strip()
    finally:
        k.close()
    assert not [n for n in os.listdir(tmp_path) if n.startswith("run")]
    assert (tmp_path / "f.txt").read_text() == "hi\n"  # mapped files stay where mapped
    sessions = _sessions(tmp_path)
    assert len(sessions) == 1
    session = tmp_path / ".swiftnb" / sessions[0]
    assert sorted(os.listdir(session)) == ["run001", "run002"]
    assert log == str(session / "run002" / "cell-run002.log")


def test_a_second_kernel_gets_a_session_of_its_own(tmp_path):
    for _ in range(2):
        k = Kernel(str(tmp_path))
        try:
            assert k.run("trace(1);").status == "ok"
        finally:
            k.close()
    sessions = _sessions(tmp_path)
    assert len(sessions) == 2
    for name in sessions:
        assert os.listdir(tmp_path / ".swiftnb" / name) == ["run001"]


def test_a_session_directory_that_cannot_be_made_is_a_message(tmp_path):
    (tmp_path / ".swiftnb").write_text("a file where the sessions would go\n")
    k = Kernel(str(tmp_path))
    try:
        r = k.run("trace(1);")
        assert r.status == "error"
        text = "\n".join(r.errors[0]["traceback"])
        assert "cannot create the session directory" in text and ".swiftnb" in text
        assert "Traceback" not in text
    finally:
        k.close()
