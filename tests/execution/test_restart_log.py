"""The .rlog file: Swift's format, resume, deletion, locking."""

from __future__ import annotations

import re

import pytest

from swiftnb.engine.restart import RestartLog, RestartLogError

pytestmark = pytest.mark.timeout(10)


def test_format_and_resume(tmp_path):
    path = tmp_path / "run001" / "restart.log"
    log = RestartLog(path)
    log.record(["a.out", "dir/c0002.out"])
    log.record(["b.out"])
    log.close()
    lines = path.read_text().splitlines()
    assert re.fullmatch(r"# Log file created \w{3} \w{3} \d\d \d\d:\d\d:\d\d UTC \d{4}", lines[0])
    assert lines[1] == "# Format version 2.0"
    assert lines[2:] == ["a.out", "dir/c0002.out", "b.out"]

    again = RestartLog(path, resume=True)
    again.base_dir = str(tmp_path)
    assert not again.is_done(["a.out"]), "recorded, but the file is gone: run it again"
    (tmp_path / "dir").mkdir()
    for name in ("a.out", "dir/c0002.out", "missing.out"):
        (tmp_path / name).write_text("x")
    assert again.is_done(["a.out", "dir/c0002.out"])
    assert not again.is_done(["a.out", "missing.out"])
    assert not again.is_done([])
    again.record(["d.out"])
    again.close()
    lines = path.read_text().splitlines()
    assert lines[5].startswith("# Log file updated ")
    assert lines[6] == "d.out"


def test_swift_written_log_with_keys_is_read(tmp_path):
    path = tmp_path / "x.0.rlog"
    path.write_text("# Log file created Sun Nov 22 10:13:21 UTC 2026\n# Format version 2.0\n"
                    "R-2:v.$!42\nout/f.txt\n")
    log = RestartLog(path, resume=True)
    log.base_dir = str(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "f.txt").write_text("x")
    assert log.is_done(["out/f.txt"]) and "R-2:v.$" in log and log.value("R-2:v.$") == "42"
    log.close()


def test_records_survive_without_close(tmp_path):
    path = tmp_path / "r.rlog"
    log = RestartLog(path)
    log.record(["x"])
    assert path.read_text().splitlines()[-1] == "x"  # flushed at once (SIGKILL-safe)
    log.close()


def test_delete_on_success_and_errors(tmp_path):
    log = RestartLog(tmp_path / "r.rlog")
    log.delete()
    assert not (tmp_path / "r.rlog").exists()
    with pytest.raises(RestartLogError, match="not found"):
        RestartLog(tmp_path / "nope.rlog", resume=True)
    (tmp_path / "bad.rlog").write_text("hello\n")
    with pytest.raises(RestartLogError, match="format version"):
        RestartLog(tmp_path / "bad.rlog", resume=True)


def test_a_log_in_use_is_refused(tmp_path):
    first = RestartLog(tmp_path / "r.rlog")
    with pytest.raises(RestartLogError, match="in use"):
        RestartLog(tmp_path / "r.rlog", resume=True)
    first.close()


def test_next_free_index(tmp_path):
    (tmp_path / "wf.0.rlog").write_text("")
    log = RestartLog.next_free(str(tmp_path), "wf")
    assert log.path.endswith("wf.1.rlog")
    log.close()


def test_unwritable_restart_log_is_a_restart_log_error(tmp_path):
    (tmp_path / "afile").write_text("not a directory\n")
    with pytest.raises(RestartLogError, match=r"Cannot create the restart log .*afile/x\.rlog"):
        RestartLog(tmp_path / "afile" / "x.rlog")
    (tmp_path / "adir.rlog").mkdir()
    with pytest.raises(RestartLogError, match="Cannot create the restart log"):
        RestartLog(tmp_path / "adir.rlog")


def test_a_resumed_log_that_skipped_nothing_is_kept(tmp_path):
    path = tmp_path / "other-run007.0.rlog"
    path.write_text("# Log file created x\n# Format version 2.0\nsomething.else\n")
    log = RestartLog(path, resume=True)
    log.base_dir = str(tmp_path)
    assert not log.is_done(["mine.out"])
    log.delete()  # the run succeeded, but this was not its log
    assert path.exists()
    (tmp_path / "something.else").write_text("x")
    log = RestartLog(path, resume=True)
    log.base_dir = str(tmp_path)
    assert log.is_done(["something.else"])
    log.delete()
    assert not path.exists()
