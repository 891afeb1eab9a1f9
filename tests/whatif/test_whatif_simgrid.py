"""What if reproduces a known simulated grid: logs made by the sim provider (coaster
blocks, failures, retries) in virtual time, a model calibrated on them, and the same
configuration predicted; the grid's time on a fresh seed falls inside the interval."""

import json
import subprocess
import sys

import pytest

from swiftnb.forecast import calibrate

CONF = """\
sites: [grid]
site.grid {
  execution { type: "sim", options { blockSlots: 4, maxBlocks: 3, blockWalltime: 900,
              blockQueueTime: "exp:60", blockStartup: "uniform:5:15", blockIdleTime: 20,
              blockSubmitTime: 1, serviceStartTime: 5, taskDuration: "uniform:30:90",
              failureProbability: 0.05, seed: %d } }
  app.ALL { executable: "*", maxWallTime: "00:02:00" }
  maxParallelTasks: 100
  initialParallelTasks: 100
}
executionRetries: 3
"""

SCRIPT = """\
int n = toInt(arg("n", "10"));
app work (int i) {
  work i;
}
foreach i in [1:n] {
  work(i);
}
"""


def _swiftnb(args, cwd):
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _grid_run(tmp_path, seed):
    """A run of the grid with ``seed``: (its log, its time to completion)."""
    where = tmp_path / f"seed{seed}"
    where.mkdir()
    (where / "swift.conf").write_text(CONF % seed)
    (where / "work.swift").write_text(SCRIPT)
    proc = _swiftnb(["run", "-config", "swift.conf", "work.swift", "-n=40"], where)
    assert proc.returncode == 0, proc.stderr
    log = next(where.glob("run001/*.log"))
    return log


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("grid")
    logs = [_grid_run(tmp_path, seed) for seed in (1, 2, 3, 4)]
    return tmp_path, logs


def test_calibration_sees_the_simulated_grid(grid):
    _tmp, logs = grid
    model = calibrate(logs[:3])
    site = model.sites["grid"]
    assert site.logs == 3
    assert site.limits["block_slots"] == 4 and site.limits["blocks"] <= 3
    assert site.limits["block_walltime"] == 900
    assert all(5 <= s <= 15 for s in site.block_startup)
    assert 30 <= min(site.apps["work"].samples) and max(site.apps["work"].samples) <= 90
    assert site.apps["work"].argument is None  # `work i` does not last i seconds
    assert 0 < site.failure_probability < 0.2


def test_whatif_reproduces_the_grid_within_its_interval(grid):
    """Leave-one-out on the four seeds: each run predicted from a model of the other
    three (the last through the command line).  A 10-90% interval should hold the actual
    time about 8 times in 10, so three of four (one seed's run is faster than all three
    it is predicted from)."""
    tmp_path, logs = grid
    from swiftnb.forecast import whatif
    from swiftnb.logs.frame import LogFrame
    from swiftnb.runner import load_run_config

    inside = 0
    for held_out, log in enumerate(logs):
        actual = LogFrame.read(log).run["ttc"]
        others = [other for other in logs if other != log]
        where = tmp_path / f"seed{held_out + 1}"
        if held_out < len(logs) - 1:
            table = whatif(where / "work.swift", calibrate(others),
                           config=load_run_config(str(where / "swift.conf"), base_dir=str(where)),
                           args=["-n=40"], runs=10)
            ttc = {k: float(table.loc["TTC", k]) for k in ("median", "p10", "p90")}
        else:
            proc = _swiftnb(["calibrate", *map(str, others), "-o", "model.json"], tmp_path)
            assert proc.returncode == 0, proc.stderr
            proc = _swiftnb(["whatif", "-model", "model.json", "-config",
                             str(where / "swift.conf"), str(where / "work.swift"),
                             "-n=40", "-runs", "10", "-format", "json"], tmp_path)
            assert proc.returncode == 0, proc.stderr
            doc = json.loads(proc.stdout)
            ttc = doc["ttc"]
            assert {"Tw", "Tq", "Tb", "Te"} <= set(doc["timings"])
            assert len(doc["ttc_runs"]) == 10 and doc["runs"] == 10
        inside += ttc["p10"] <= actual <= ttc["p90"]
        assert abs(ttc["median"] - actual) / actual < 0.15, (held_out, actual, ttc)
    assert inside >= 3


def test_the_table_format_prints_the_breakdown(grid):
    tmp_path, _logs = grid
    proc = _swiftnb(["calibrate", *map(str, grid[1][:2]), "-o", "two.json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    proc = _swiftnb(["whatif", "-model", "two.json", "-config", "seed1/swift.conf",
                     "seed1/work.swift", "-n=12", "-runs", "3"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("predicted over 3 simulated runs")
    assert lines[1].split()[0] == "TTC"
    assert {line.split()[0] for line in lines[1:]} >= {"TTC", "Tq", "Tw", "Te"}


PLAIN = """\
sites: [batch]
site.batch {
  execution { type: "sim", options { slots: 100, queueTime: "uniform:100:200",
              taskDuration: "uniform:30:90", seed: %d } }
  maxParallelTasks: 6
  initialParallelTasks: 6
}
"""


def test_a_site_without_blocks_is_modelled_by_its_job_queue(tmp_path):
    """A batch site: each job waits a resampled queue time; how many run at once is the
    configuration's throttle, applied again in the prediction.  It is compared with
    three runs the model did not see."""
    from statistics import median

    from swiftnb.forecast import whatif
    from swiftnb.logs.frame import LogFrame

    logs = []
    for seed in range(1, 7):
        where = tmp_path / f"plain{seed}"
        where.mkdir()
        (where / "swift.conf").write_text(PLAIN % seed)
        (where / "work.swift").write_text(SCRIPT)
        proc = _swiftnb(["run", "-config", "swift.conf", "work.swift", "-n=18"], where)
        assert proc.returncode == 0, proc.stderr
        logs.append(next(where.glob("run001/*.log")))
    model = calibrate(logs[:3])
    site = model.sites["batch"]
    assert not site.has_blocks and site.block_queue == []
    # Tw is the batch queue's wait; the site's throttle (six jobs at once) is before it
    assert len(site.job_queue) == 54
    assert all(100 <= q <= 200 for q in site.job_queue)
    assert site.limits["running"] == 6
    held_out = [LogFrame.read(log).run["ttc"] for log in logs[3:]]
    table = whatif(tmp_path / "plain1" / "work.swift", model,
                   config=tmp_path / "plain1" / "swift.conf", args=["-n=18"], runs=8)
    predicted = table.loc["TTC", "median"]
    assert abs(predicted - median(held_out)) / median(held_out) < 0.10, (held_out, table)
    assert all(abs(predicted - t) / t < 0.15 for t in held_out), (held_out, table)
    assert 100 <= table.loc["Tw", "median"] <= 200
    assert table.loc["Tss", "median"] > 100  # the configuration's throttle holds jobs back
