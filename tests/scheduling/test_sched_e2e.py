"""End to end: `swiftnb run -config swift.conf` on simulated sites, through the engine."""

import re
import subprocess
import sys
import time
from collections import Counter
from datetime import datetime

import pytest

CONF = """\
sites: [grid1, grid2, bad]
site.grid1 {
  execution { type: "sim", options { slots: 8, queueTime: "exp:20",
              taskDuration: "uniform:30:90", failureProbability: 0.02, seed: 1 } }
  maxParallelTasks: 8
  initialParallelTasks: 4
}
site.grid2 {
  execution { type: "sim", options { slots: 8, queueTime: "exp:60",
              taskDuration: "uniform:30:90", seed: 2 } }
  maxParallelTasks: 8
  initialParallelTasks: 4
}
site.bad {
  execution { type: "sim", options { slots: 8, queueTime: 5, taskDuration: 10,
              failureProbability: 0.9, seed: 3 } }
  maxParallelTasks: 8
  initialParallelTasks: 4
}
executionRetries: 4
lazyErrors: true
siteSelectionPolicy: "%s"
siteSelectionOptions { seed: 5 }
"""

SCRIPT = """\
type file;
app (file o) work (int i) {
  work i stdout=@o;
}
file f[] <simple_mapper; prefix="simout/f", suffix=".txt">;
foreach i in [1:120] {
  f[i] = work(i);
}
"""

STAMP = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})")


def _run(tmp_path, policy):
    (tmp_path / "swift.conf").write_text(CONF % policy)
    (tmp_path / "work.swift").write_text(SCRIPT)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "-config", "swift.conf",
                           "work.swift"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    return proc, time.monotonic() - t0


@pytest.mark.parametrize("policy", ["weighted", "sitesets"])
def test_swiftnb_run_on_a_simulated_grid(tmp_path, policy):
    proc, wall = _run(tmp_path, policy)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    outputs = sorted((tmp_path / "simout").iterdir())
    assert len(outputs) == 120
    assert outputs[0].read_text().startswith("simulated output of work-")
    logs = list(tmp_path.glob("run001/*.log"))
    assert logs, list(tmp_path.iterdir())
    text = logs[0].read_text()
    hosts = Counter(re.findall(r"THREAD_ASSOCIATION jobid=\S+ thread=\S+ host=(\w+)", text))
    assert set(hosts) <= {"grid1", "grid2", "bad"}
    assert hosts["grid1"] + hosts["grid2"] > hosts["bad"]
    assert "SITE_SET host=bad" in text
    # the log carries simulated time: far more of it than the run took
    stamps = [datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")
              for m in map(STAMP.match, text.splitlines()) if m]
    span = (max(stamps) - min(stamps)).total_seconds()
    assert span > 300 > wall
