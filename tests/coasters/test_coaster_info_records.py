"""A coaster site writes the run's ``-info`` records as the local and SSH sites do
(alwaysTransferWrapperLog, on by default as in Swift 0.96's distributed configuration:
every call's; off: the failures' only), appended to the one ``RUNDIR/SCRIPT-RUNID.d/
jobs-info``, or a file per record with ``wrapperLogPerJob``.  Real ``swiftnb run``
processes on a local coaster block of real worker processes; the records are read back
with the readers the dashboard uses (``joblog.records``, ``joblog.read_record``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.execution.joblog import RECORDS_FILE, read_record, records

pytestmark = pytest.mark.timeout(240)

#: 30 calls that succeed, one that fails after printing to stderr
SCRIPT = """\
type file;
app (file o) make (int i) { echo i stdout=@o; }
app (file o) bad () { sh "-c" "echo broken >&2; exit 5" stdout=@o; }
file outs[] <simple_mapper; location="out", prefix="f", suffix=".txt">;
foreach i in [1:30] { outs[i] = make(i); }
file b <"bad.txt">;
b = bad();
"""

SITE = """sites: coast
site.coast {
    execution {
        type: "coaster"
        jobManager: "local:local"
        options { maxJobs: 1, maxNodesPerJob: 2, tasksPerNode: 2 }
    }
    workDirectory: "swiftwork"
    maxParallelTasks: 4
    app.echo { executable: "echo" }
    app.sh { executable: "sh" }
}
"""


def _run(cwd: Path, settings: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    (cwd / "wf.swift").write_text(SCRIPT)
    (cwd / "c.conf").write_text(settings + SITE)
    done = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-config", "c.conf",
                           "-runid", "run001", "wf.swift"], cwd=cwd, capture_output=True,
                          text=True, timeout=200)
    assert done.returncode == 2, done.stdout + done.stderr  # the bad call failed the run
    return done, cwd / "run001" / "wf-run001.d"


def test_every_call_has_its_record_in_one_file(tmp_path: Path) -> None:
    _, info_dir = _run(tmp_path, "")  # alwaysTransferWrapperLog: true by default
    assert [p.name for p in info_dir.iterdir()] == [RECORDS_FILE]
    texts = dict(records(str(info_dir / RECORDS_FILE)))
    assert len(texts) == 31
    made = {name: text for name, text in texts.items() if name.startswith("echo-")}
    assert len(made) == 30 and all("EXIT_CODE=0" in t for t in made.values())
    assert all("HOST=coast" in t and "EXEC=echo" in t for t in made.values())
    # each record names its own call's output and the job directory it ran in
    outputs = sorted(line for t in made.values() for line in t.splitlines()
                     if line.startswith("OUTF="))
    assert outputs == sorted(f"OUTF=out/f{i:04d}.txt" for i in range(1, 31))
    assert all("DIR=" in t and "/jobs/" in t for t in made.values())
    bad = next(name for name in texts if name.startswith("sh-"))
    assert "EXIT_CODE=5" in texts[bad] and "broken" in texts[bad]
    assert read_record(str(info_dir / f"{bad}-info")) == texts[bad]


def test_without_always_only_the_failure_is_recorded(tmp_path: Path) -> None:
    _, info_dir = _run(tmp_path, "alwaysTransferWrapperLog: false\n")
    found = list(records(str(info_dir / RECORDS_FILE)))
    assert [name.split("-")[0] for name, _ in found] == ["sh"]
    assert "EXIT_CODE=5" in found[0][1]


def test_a_file_per_record_on_request(tmp_path: Path) -> None:
    _, info_dir = _run(tmp_path, "wrapperLogPerJob: true\n")
    names = sorted(p.name for p in info_dir.iterdir())
    assert len(names) == 31 and RECORDS_FILE not in names
    bad = next(n for n in names if n.startswith("sh-"))
    text = (info_dir / bad).read_text()
    assert "EXIT_CODE=5" in text and read_record(str(info_dir / bad)) == text
