"""The restart test of issue 3: SIGKILL a run in the middle of a 50-call foreach, resume,
and show that completed calls did not run again and the outputs equal an uninterrupted run's.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from runhelp import needs_engine, run_swiftnb

pytestmark = [pytest.mark.timeout(180), needs_engine]

SCRIPT = """\
type file;
app (file o) step(int i, string calls) {
    sh "-c" "echo $0 >> $1; sleep 0.1; echo result-$0" i calls stdout=@o;
}
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:50] {
    f[i] = step(i, arg("calls"));
}
"""


def outputs(d):
    out = d / "out"
    return {p.name: p.read_text() for p in sorted(out.iterdir())} if out.is_dir() else {}


def calls(path):
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def test_sigkill_then_resume_skips_completed_calls(tmp_path):
    # the reference: an uninterrupted run
    ref = tmp_path / "ref"
    ref.mkdir()
    (ref / "wf.swift").write_text(SCRIPT)
    r = run_swiftnb("wf.swift", f"-calls={ref / 'calls.txt'}", cwd=ref)
    assert r.returncode == 0, r.stderr
    expected = outputs(ref)
    assert len(expected) == 50

    work = tmp_path / "work"
    work.mkdir()
    (work / "wf.swift").write_text(SCRIPT)
    log = work / "calls.txt"
    env = dict(os.environ, HOME=str(work))
    env.pop("SWIFT_SITE_CONF", None)
    proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift",
                             f"-calls={log}"], cwd=work, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(calls(log)) < 12 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the run and the apps it started
    finally:
        proc.wait(timeout=30)
    first_calls = calls(log)
    assert 12 <= len(first_calls) < 50

    rlogs = list((work / "run001").glob("*.rlog"))
    assert len(rlogs) == 1, "the killed run left its restart log"
    recorded = [ln for ln in rlogs[0].read_text().splitlines() if ln and not ln.startswith("#")]
    assert recorded, "completed calls were recorded before the kill"
    done_before = {int(p.split("/f")[-1].split(".")[0]) for p in recorded}
    assert done_before <= set(first_calls)

    r = run_swiftnb("-resume", str(rlogs[0]), "wf.swift", f"-calls={log}", cwd=work)
    assert r.returncode == 0, r.stderr
    second_calls = calls(log)[len(first_calls):]
    assert not done_before & set(second_calls), "a completed call ran again"
    assert set(first_calls) | set(second_calls) == set(range(1, 51))
    assert "Finished in previous run" in r.stderr
    assert outputs(work) == expected
    assert not rlogs[0].exists(), "the restart log is deleted once the resumed run succeeds"
