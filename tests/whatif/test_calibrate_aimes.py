"""Calibration on the real Swift 0.96 AIMES logs, and predicting one of them from the
others (leave-one-out, as benchmarks/whatif.py does for all four)."""

import json
import os
import subprocess
import sys

import pytest

from swiftnb.logs.frame import LogFrame
from swiftnb.forecast import Model, calibrate, whatif

from aimes_runs import EXAMPLE, RUNS  # tests/whatif/aimes_runs.py


@pytest.fixture(scope="module")
def frames():
    return {n: LogFrame.read(path) for n, path in RUNS.items()}


def test_calibration_on_the_four_aimes_logs(frames):
    model = calibrate(frames.values())
    assert list(model.sites) == ["stampede"]
    site = model.sites["stampede"]
    assert site.logs == 4
    assert site.attempts == 8 + 32 + 256 + 2048 and site.failures == 0
    # one Tq and one Tb per block (2 + 16 + 128 + 1 blocks), as LogFrame times them
    tq = sorted(t for f in frames.values() for t in f.timings(["Tq"])["duration"])
    assert sorted(site.block_queue) == pytest.approx(tq, abs=1e-3)
    assert len(site.block_startup) == 147
    # `sleep 900` lasts 900 s and a little: a factor of its argument
    sleep = site.apps["sleep"]
    assert sleep.argument == 0
    assert 1.0 < min(sleep.samples) and max(sleep.samples) < 1.001
    # the experiment's limits: 20 blocks of 16 slots, 1440 s, 320 tasks at once
    assert site.limits == {"running": 320, "blocks": 20, "workers": 20,
                           "block_slots": 16, "block_walltime": 1440}
    # idle blocks shut down ~2 min after their last task (exp 019's first waves)
    assert 120 < sorted(site.block_idle)[len(site.block_idle) // 2] < 160
    assert len(model.run_startup) == 4 and len(model.run_shutdown) == 4


def test_a_site_seen_in_one_log_is_modelled(frames):
    model = calibrate([frames[8]])
    site = model.sites["stampede"]
    assert site.logs == 1 and len(site.block_queue) == 1
    assert site.block_idle == []  # its only block ended with the run: no idle sample


def test_the_model_file_carries_its_format_version(tmp_path, frames):
    out = tmp_path / "model.json"
    proc = subprocess.run([sys.executable, "-m", "swiftnb.cli", "calibrate", RUNS[8],
                           RUNS[32], "-o", str(out)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "site stampede: 2 log(s), 40 attempts, 3 blocks, apps sleep" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["format"] == "swiftnb-whatif-model" and doc["version"] == 1
    again = Model.load(out)
    assert again.sites["stampede"].block_queue == calibrate(
        [frames[8], frames[32]]).sites["stampede"].block_queue


def test_leave_one_out_predicts_the_256_task_run(frames):
    model = calibrate([frames[n] for n in (8, 32, 2048)])
    table = whatif(os.path.join(EXAMPLE, "bag_of_tasks.swift"), model,
                   config=os.path.join(EXAMPLE, "stampede.conf"),
                   args=["-N=256", "-sleep=900"], runs=5, seed=1)
    actual = frames[256].run["ttc"]
    median, p10, p90 = table.loc["TTC", ["median", "p10", "p90"]]
    assert abs(median - actual) / actual < 0.10
    assert p10 <= actual <= p90
    assert table.attrs["failed_runs"] == 0
    # the breakdown: one wave of 16 blocks, Te ~900 s
    assert table.loc["Te", "median"] == pytest.approx(900, abs=1)
    assert 15 < table.loc["Tq", "median"] < 80


def test_swiftnb_whatif_without_a_configuration_uses_the_sites_as_seen(tmp_path, frames):
    import swiftnb

    path = tmp_path / "model.json"
    calibrate([frames[n] for n in (8, 256, 2048)]).save(path)
    table = swiftnb.whatif(os.path.join(EXAMPLE, "bag_of_tasks.swift"), str(path),
                           args=["-N=32", "-sleep=900"], runs=3)
    actual = frames[32].run["ttc"]
    assert abs(table.loc["TTC", "median"] - actual) / actual < 0.10
    per_run = table.attrs["per_run"]
    assert len(per_run) == 3 and (per_run["ok"] == 1).all()
    # the runs differ: each draws from its own bootstrap of the model
    assert per_run["TTC"].nunique() == 3
