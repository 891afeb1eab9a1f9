"""The run's ``-info`` records in one appended file (``RUNDIR/SCRIPT-RUNID.d/jobs-info``),
and Swift's file per record on request (``wrapperLogPerJob: true``).

Real ``swiftnb run`` processes on the local site; the records are read back with the
readers the dashboard uses (``joblog.read_record``, ``joblog.records``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.execution.joblog import RECORDS_FILE, InfoWriter, read_record, records

pytestmark = pytest.mark.timeout(180)

#: 40 calls that succeed, one that fails after printing a line that looks like a header
SCRIPT = """\
type file;
app (file o) make (int i) { echo i stdout=@o; }
app (file o) bad () { sh "-c" "echo '==> fake-info (3 bytes) <=='; echo broken >&2; exit 5" stdout=@o; }
file outs[] <simple_mapper; location="out", prefix="f", suffix=".txt">;
foreach i in [1:40] { outs[i] = make(i); }
file b <"bad.txt">;
b = bad();
"""


def _run(cwd: Path, conf: str) -> subprocess.CompletedProcess[str]:
    (cwd / "wf.swift").write_text(SCRIPT)
    (cwd / "c.conf").write_text(conf)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-config", "c.conf",
                           "-runid", "run001", "wf.swift"], cwd=cwd, capture_output=True,
                          text=True, timeout=150)


def test_one_file_holds_every_record_of_the_run(tmp_path):
    r = _run(tmp_path, "alwaysTransferWrapperLog: true\n")
    assert r.returncode == 2, r.stdout + r.stderr  # the bad call failed the run
    info_dir = tmp_path / "run001" / "wf-run001.d"
    assert [p.name for p in info_dir.iterdir()] == [RECORDS_FILE]
    found = list(records(str(info_dir / RECORDS_FILE)))
    assert len(found) == 41
    texts = dict(found)
    assert sum("EXIT_CODE=0" in t for t in texts.values()) == 40
    bad = next(name for name in texts if name.startswith("sh-"))
    # the app's output quoted a header: it stays inside its record
    assert "==> fake-info (3 bytes) <==" in texts[bad] and "EXIT_CODE=5" in texts[bad]
    assert "broken" in texts[bad]
    assert read_record(str(info_dir / f"{bad}-info")) == texts[bad]
    assert read_record(str(info_dir / "make-nosuchjob-info")) is None
    # Swift's glob still finds them all
    grep = subprocess.run(["grep", "-h", "^EXIT_CODE=", *map(str, info_dir.glob("*-info"))],
                          capture_output=True, text=True, timeout=30)
    assert grep.stdout.count("EXIT_CODE=") == 41


def test_per_job_files_on_request(tmp_path):
    r = _run(tmp_path, "alwaysTransferWrapperLog: true\nwrapperLogPerJob: true\n")
    assert r.returncode == 2, r.stdout + r.stderr
    info_dir = tmp_path / "run001" / "wf-run001.d"
    names = sorted(p.name for p in info_dir.iterdir())
    assert len(names) == 41 and RECORDS_FILE not in names
    bad = next(n for n in names if n.startswith("sh-"))
    text = (info_dir / bad).read_text()
    assert "EXIT_CODE=5" in text and read_record(str(info_dir / bad)) == text


def test_a_setting_that_is_not_a_bool_is_refused(tmp_path):
    r = _run(tmp_path, 'wrapperLogPerJob: "sometimes"\n')
    assert r.returncode != 0 and "wrapperLogPerJob" in r.stdout + r.stderr
    assert not (tmp_path / "out").exists()


def test_a_record_cut_short_ends_the_list_and_a_rewrite_wins(tmp_path):
    """A run killed in mid-write leaves a partial last record: the readers stop before it;
    a record written twice (a missing output found after exit 0) reads as the later."""
    writer = InfoWriter()
    spec = {"site_run": "wf-run001", "jobid": "cat-1", "site": "local", "executable": "cat"}
    writer.write(str(tmp_path), spec, {"exit_code": 0})
    writer.write(str(tmp_path), spec, {"exit_code": 0, "message": "output x.txt missing"})
    writer.write(str(tmp_path), {**spec, "jobid": "cat-2"}, {"exit_code": 1})
    path = tmp_path / "wf-run001.d" / RECORDS_FILE
    whole = path.read_bytes()
    assert [name for name, _ in records(str(path))] == ["cat-1", "cat-1", "cat-2"]
    assert "output x.txt missing" in read_record(str(path.parent / "cat-1-info"))
    path.write_bytes(whole[:-5])
    assert [name for name, _ in records(str(path))] == ["cat-1", "cat-1"]
    assert read_record(str(path.parent / "cat-2-info")) is None
