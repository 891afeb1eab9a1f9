"""The run's own records under hostile conditions: a full disk under the restart log and
under the log, and restart logs that hold gigabytes of NUL bytes or other garbage.

Before: a full disk under the restart log left a cut last line and the run ended 0 with
nothing said (a run of 399 calls kept 131); a full disk under ``-logfile`` was silent
too; ``-resume`` read a restart log's line whole, so a 3 GB tail of NUL bytes (what a
crash can leave) took 3 GB of memory or more.  Now: the run goes on, says at once which
file could not be written, and ends with exit code 2 naming it; the restart log never
holds a cut line; reading streams with a bound on a line, skips what cannot be a restart
log's line and refuses a file that does not start as one.
"""

from __future__ import annotations

import contextlib
import os
import resource
import time
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from swiftnb.engine import restart as restart_mod
from swiftnb.engine.restart import RestartLog, RestartLogError

pytestmark = pytest.mark.timeout(180)

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]
#: long output names, so that a few dozen calls fill a small file system
LONG = "o" * 120
#: a run of 200 calls (their outputs on the ordinary disk), and no -info records
CONF = "alwaysTransferWrapperLog: false\n"
MANY = f"""\
type file;
app (file o) make (int i) {{ echo i stdout=@o; }}
file outs[] <simple_mapper; location="out", prefix="{LONG}-", suffix=".txt">;
foreach i in [0:199] {{ outs[i] = make(i); }}
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
    path.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                   check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SWIFTNB, "run", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=150)


def _outputs(tmp_path: Path) -> set[str]:
    return {f"out/{LONG}-{i:04d}.txt" for i in range(200)}


# -- 3. a full disk under the restart log ---------------------------------------------

def test_a_full_disk_under_the_restart_log_fails_the_run_and_leaves_no_cut_line(tmp_path):
    (tmp_path / "wf.swift").write_text(MANY)
    (tmp_path / "c.conf").write_text(CONF)
    with _tmpfs(tmp_path / "run001", "16k") as rundir:
        r = _run(tmp_path, "-config", "c.conf", "-runid", "run001", "-logfile", "wf.log",
                 "wf.swift")
        rlog = rundir / "wf-run001.0.rlog"
        said = r.stdout + r.stderr
        assert r.returncode == 2, said
        assert f"Could not write the restart log {rlog}: No space left on device" in r.stderr
        assert "Warning: Could not write the restart log" in r.stderr  # said when it happened
        assert "Task exception" not in said
        # the run went on: every call ran
        assert {f"out/{p.name}" for p in (tmp_path / "out").iterdir()} == _outputs(tmp_path)
        data = rlog.read_bytes()
        assert data.endswith(b"\n"), "a cut last line"
        entries = data.decode().splitlines()[2:]
        assert 0 < len(entries) < 200 and set(entries) <= _outputs(tmp_path)
        # with room again, -resume skips what was recorded and runs the rest
        subprocess.run(["mount", "-o", "remount,size=1m", str(rundir)], check=True)
        r = _run(tmp_path, "-config", "c.conf", "-resume", str(rlog), "wf.swift")
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"Finished in previous run:{len(entries)}" in r.stderr


def test_a_restart_log_write_cut_short_is_taken_back(tmp_path):
    """One record that the disk takes only in part: the part is cut off again."""
    with _tmpfs(tmp_path / "small", "4k") as small:
        log = RestartLog(small / "x.rlog")
        head = (small / "x.rlog").read_bytes()
        log.record(["a.out"])
        with pytest.raises(RestartLogError, match=r"Could not write the restart log .*x\.rlog: "
                                                  r"No space left on device"):
            log.record([f"{'b' * 1000}-{i}.out" for i in range(8)])  # 8 KB, 4 KiB of room
        log.record(["c.out"])  # after a failure nothing more is written (a gap would follow)
        log.close()
        assert (small / "x.rlog").read_bytes() == head + b"a.out\n"


# -- 3. a full disk under the log -------------------------------------------------------

def test_a_full_disk_under_the_log_fails_the_run_naming_the_log(tmp_path):
    (tmp_path / "wf.swift").write_text(MANY)
    (tmp_path / "c.conf").write_text(CONF)
    with _tmpfs(tmp_path / "logs", "16k") as logs:
        r = _run(tmp_path, "-config", "c.conf", "-logfile", "logs/wf.log", "wf.swift")
        said = r.stdout + r.stderr
        assert r.returncode == 2, said
        assert f"Could not write the log {logs / 'wf.log'}: No space left on device" in r.stderr
        assert "Task exception" not in said and "Traceback" not in said
        assert {f"out/{p.name}" for p in (tmp_path / "out").iterdir()} == _outputs(tmp_path)
        assert (logs / "wf.log").read_bytes().endswith(b"\n"), "a cut last line"


# -- 4. restart logs holding gigabytes of garbage --------------------------------------

FAIL_SECOND = """\
type file;
app (file o) make () { echo "one" stdout=@o; }
app (file o) check (file i, int fail) { sh "-c" "test $1 = 0 && cat $0" @i fail stdout=@o; }
file a <"a.txt">;
file b <"b.txt">;
a = make();
b = check(a, toInt(arg("fail")));
"""
#: address space for the resumed run: enough for swiftnb, far from the file's size (a
#: reader that holds the file would fail here, not take the machine's memory)
ADDRESS_SPACE = 1 << 30
#: what the run may use (a run of swiftnb takes some 30-60 MB)
MAX_RSS_KB = 200 * 1024


def _peak_kb(pid: int) -> int:
    """The process's peak resident memory so far (VmHWM, of its own address space: wait4's
    ru_maxrss would count the memory of this test process, which the child inherits at
    fork), 0 once it has ended."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _limited_run(cwd: Path, *args: str) -> tuple[int, str, int]:
    """``swiftnb run ARGS`` with its address space limited: exit code, stderr, and its
    peak resident memory in KB (sampled while it runs)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    with open(cwd / "err.txt", "w+b") as err:
        proc = subprocess.Popen([*SWIFTNB, "run", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                                stderr=err, preexec_fn=limit, env=dict(os.environ,
                                                                       MALLOC_ARENA_MAX="2"))
        peak = 0
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            peak = max(peak, _peak_kb(proc.pid))
            time.sleep(0.02)
        code = proc.wait(timeout=5)
        err.seek(0)
        return code, err.read().decode(errors="replace"), peak


def test_resume_reads_a_log_with_a_huge_tail_of_nul_bytes_in_bounded_memory(tmp_path):
    (tmp_path / "wf.swift").write_text(FAIL_SECOND)
    r = _run(tmp_path, "wf.swift", "-fail=1")
    assert r.returncode == 2, r.stderr
    rlog = tmp_path / "run001" / "wf-run001.0.rlog"
    good = rlog.stat().st_size
    os.truncate(rlog, good + (3 << 30))  # a crash's 3 GB of NUL bytes (sparse: no disk)
    code, err, rss = _limited_run(tmp_path, "-resume", str(rlog), "wf.swift", "-fail=0")
    assert code == 0, err
    assert f"Warning: the restart log {rlog} ends with {3 << 30} bytes that are not lines " \
           "of a restart log" in err
    assert "Finished in previous run:1" in err
    assert rss < MAX_RSS_KB, f"{rss} KB"


def test_a_huge_file_of_nul_bytes_is_refused_as_no_restart_log(tmp_path):
    (tmp_path / "wf.swift").write_text(FAIL_SECOND)
    garbage = tmp_path / "x.rlog"
    with open(garbage, "wb") as fh:
        fh.truncate(3 << 30)
    code, err, rss = _limited_run(tmp_path, "-resume", "x.rlog", "wf.swift", "-fail=0")
    assert code == 1, err
    assert "x.rlog is not a Swift restart log (no format version line)" in err
    assert rss < MAX_RSS_KB, f"{rss} KB"
    assert not (tmp_path / "a.txt").exists()


def test_a_huge_line_of_text_is_refused_before_the_header(tmp_path):
    garbage = tmp_path / "x.rlog"
    garbage.write_bytes(b"# " + b"x" * (8 << 20) + b"\n# Format version 2.0\n")
    with pytest.raises(RestartLogError, match="is not a Swift restart log"):
        RestartLog(garbage, resume=True)


HEADER = b"# Log file created Sun Nov 22 10:13:21 UTC 2026\n# Format version 2.0\n"


def test_garbage_between_entries_is_skipped_and_a_cut_tail_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(restart_mod, "_READ_BUFFER", 7, raising=False)  # lines across many reads
    path = tmp_path / "x.rlog"
    overlong = b"y" * (2 << 20)
    path.write_bytes(HEADER + b"a.out\n" + overlong + b"\n" + b"bad\0name\n"
                     + b"b-\xff.out\n" + b"\0" * 5000 + b"c.ou")
    log = RestartLog(path, resume=True)
    assert "a.out" in log and os.fsdecode(b"b-\xff.out") in log
    assert "c.ou" not in log and len(log) == 2
    (warning,) = log.warnings
    skipped = len(overlong) + 1 + len(b"bad\0name\n") + 5004
    assert warning == (f"the restart log {path} holds {skipped} bytes that are not lines of a "
                       f"restart log (NUL bytes, a line longer than {restart_mod.MAX_LINE} "
                       "bytes, or a line cut short by a crash or a full disk): they were "
                       "ignored (the 5004 at its end removed)")
    log.record(["d.out"])
    log.close()
    lines = path.read_bytes().split(b"\n")
    assert lines[-4] == b"b-\xff.out" and lines[-3].startswith(b"# Log file updated ")
    assert lines[-2:] == [b"d.out", b""]


def test_lines_of_any_length_near_the_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(restart_mod, "_READ_BUFFER", 5, raising=False)
    monkeypatch.setattr(restart_mod, "MAX_LINE", 24, raising=False)
    path = tmp_path / "x.rlog"
    path.write_bytes(b"# Format version 2.0\n" + b"".join(b"x" * n + b"\n" for n in range(1, 31)))
    log = RestartLog(path, resume=True)
    assert [n for n in range(1, 31) if "x" * n in log] == list(range(1, 25))
    log.close()
