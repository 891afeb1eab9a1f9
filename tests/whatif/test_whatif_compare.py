"""Comparing configurations (issue 28): the table behind the widget, the widget's
content, and queue waits drawn by log and by time, on real AIMES logs (one and two
sites) in tests/data/aimes."""

import math
import os
import random

import pytest

from swiftnb.forecast import calibrate
from swiftnb.forecast.comparison import Scenario, compare
from swiftnb.forecast.model import Model
from swiftnb.logs.frame import LogFrame
from swiftnb.runner import load_run_config

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "aimes")
EXAMPLE = os.path.join(ROOT, "examples", "aimes")
SCRIPT = os.path.join(EXAMPLE, "bag_of_tasks.swift")


def _log(name):
    folder = os.path.join(DATA, name)
    (log,) = [f for f in os.listdir(folder) if f.startswith("swift.log")]
    return os.path.join(folder, log)


@pytest.fixture(scope="module")
def frames():
    names = ("stampede-exp-020", "stampede-exp-017", "stampede_gordon-exp-034",
             "stampede_gordon-exp-035", "stampede_gordon-exp-039", "stampede_gordon-exp-040")
    return {n: LogFrame.read(_log(n)) for n in names}


def _config(sites):
    return load_run_config(os.path.join(EXAMPLE, "swift.conf"), sites=sites,
                           base_dir=EXAMPLE)


@pytest.fixture(scope="module")
def table(frames):
    # the 8-task two-site run 034 is held out: it is the actual run beside the prediction
    model = calibrate([f for n, f in frames.items() if n != "stampede_gordon-exp-034"])
    return compare(SCRIPT, model, {
        "Stampede": _config(["stampede"]),
        "Stampede + Gordon": Scenario(_config(["stampede", "gordon"]),
                                      actual=frames["stampede_gordon-exp-034"]),
    }, args=["-N=8", "-sleep=900"], runs=4, seed=3,
        at=float(frames["stampede_gordon-exp-034"].run["start"]))


def test_one_row_per_configuration_with_interval_and_shares(table):
    assert list(table.index) == ["Stampede", "Stampede + Gordon"]
    assert (table["p10"] <= table["median"]).all() and (table["median"] <= table["p90"]).all()
    assert (table["failed_runs"] == 0).all()
    alone = table.loc["Stampede"]
    assert alone["share:stampede"] == 1.0 and alone["share:gordon"] == 0.0
    assert math.isnan(alone["actual"])
    both = table.loc["Stampede + Gordon"]
    assert both["share:stampede"] + both["share:gordon"] == pytest.approx(1.0)
    assert both["share:gordon"] > 0 and both["share:stampede"] > 0
    # the actual run: 7 tasks on Stampede, 1 on Gordon, 1,650 s
    assert both["actual"] == pytest.approx(1650.3, abs=0.1)
    assert both["actual share:stampede"] == pytest.approx(7 / 8)
    assert both["actual share:gordon"] == pytest.approx(1 / 8)
    # asked on the day of run 034, when Stampede's queue was quiet (run 035, an hour
    # later): one site is one 16-slot block, one short queue wait and one sleep
    assert 900 < alone["median"] < 1200


def test_the_widget_shows_the_table(table):
    import swiftnb
    from swiftnb.widgets.whatif import WhatIfPanel, comparison_rows, share_bars

    assert swiftnb.WhatIfPanel is WhatIfPanel
    panel = WhatIfPanel(table)
    html = panel.table.value
    assert "Stampede + Gordon" in html and "27 min 30 s" in html  # the actual 1,650 s
    rows = comparison_rows(table)
    assert [r[0] for r in rows] == ["Stampede", "Stampede + Gordon"]
    assert rows[0][3] == "-"  # no actual run
    assert "(actual: gordon 12%, stampede 88%)" in rows[1][4]
    bars = share_bars(table)
    assert bars["bar"] == ["Stampede", "Stampede + Gordon", "Stampede + Gordon (actual)"]
    assert bars["gordon"][2] == pytest.approx(1 / 8)
    ttc_chart, share_chart = panel.charts.children
    # the first chart's data: the configurations bottom-up, medians as predicted
    source = ttc_chart._model.renderers[0].data_source
    assert source.data["y"] == ["Stampede + Gordon", "Stampede"]
    assert source.data["median"] == list(table["median"][::-1])
    assert share_chart._model.y_range.factors == bars["bar"][::-1]


def test_queue_waits_are_drawn_from_the_logs_nearest_the_moment_asked_for(frames):
    quiet, busy = frames["stampede-exp-020"], frames["stampede_gordon-exp-039"]
    model = calibrate([quiet, busy])
    waits = {name: model.sites["stampede"].block_queue[i]
             for i, name in enumerate(("quiet", "busy"))}
    assert waits["quiet"] < 100 < 20000 < waits["busy"]  # January's and February's queue
    rng = random.Random(7)
    near_busy = model.resampled(rng, at=float(busy.run["start"]))
    assert set(near_busy.sites["stampede"].block_queue) == {waits["busy"]}
    near_quiet = model.resampled(rng, at=float(quiet.run["start"]))
    assert set(near_quiet.sites["stampede"].block_queue) == {waits["quiet"]}
    # asked for no moment: every sample alike, from any log
    seen = {w for _ in range(40)
            for w in model.resampled(rng).sites["stampede"].block_queue}
    assert seen == set(waits.values())


def test_each_draw_takes_every_sample_from_one_log_with_as_many_sites(frames):
    """One simulated run's start-up, service start, worker start-up and durations are one
    log's, asked for one site a one-site log's; with ``at``, its queue waits are the log's
    nearest ``at``, of any number of sites."""
    names = ("stampede-exp-020", "stampede-exp-017", "stampede_gordon-exp-039")
    model = calibrate([frames[n] for n in names])
    assert model.run_sites == [1, 1, 2]
    stampede = model.sites["stampede"]
    service = dict(zip(names, stampede.service_start))
    assert service["stampede_gordon-exp-039"] > 40 > 25 > max(
        service["stampede-exp-020"], service["stampede-exp-017"])  # two services start slower
    rng = random.Random(3)
    seen = set()
    for _ in range(30):
        drawn = model.resampled(rng, sites=1)
        site = drawn.sites["stampede"]
        (run,) = {model.sites["stampede"].runs["service_start"][
            stampede.service_start.index(s)] for s in site.service_start}
        seen.add(run)
        assert set(site.block_startup) <= {
            s for s, r in zip(stampede.block_startup, stampede.runs["block_startup"]) if r == run}
        assert set(drawn.run_startup) == {model.run_startup[run]}
        sleep = stampede.apps["sleep"]
        assert set(site.apps["sleep"].samples) <= {
            s for s, r in zip(sleep.samples, sleep.runs) if r == run}
    assert seen == {0, 1}  # both one-site logs, never the two-site one
    # asked for February, Stampede alone waits February's queue (a queue is the site's,
    # however many sites the run used) but starts up as a one-site run
    feb = model.resampled(rng, sites=1, at=float(frames["stampede_gordon-exp-039"].run["start"]))
    queue = dict(zip(stampede.runs["block_queue"], stampede.block_queue))
    assert set(feb.sites["stampede"].block_queue) == {queue[2]}
    assert feb.sites["stampede"].service_start[0] < 25
    two = {model.resampled(rng, sites=2).sites["stampede"].service_start[0] for _ in range(5)}
    assert two == {service["stampede_gordon-exp-039"]}
    # a model written before the samples said their runs reads as before
    doc = model.to_json()
    for site in doc["sites"].values():
        site["block_queue_run"] = site.pop("runs")["block_queue"]
    again = Model.from_json(doc)
    assert again.sites["stampede"].runs == {"block_queue": stampede.runs["block_queue"]}
    assert again.sites["stampede"].block_queue == stampede.block_queue


def test_swiftnb_whatif_at_a_moment_on_the_command_line(tmp_path, frames):
    import json
    import subprocess
    import sys

    quiet, busy = frames["stampede-exp-020"], frames["stampede_gordon-exp-039"]
    model = tmp_path / "model.json"
    calibrate([quiet, busy]).save(model)
    config = tmp_path / "stampede.conf"
    config.write_text(open(os.path.join(EXAMPLE, "stampede.conf")).read())

    def predicted(*extra):
        proc = subprocess.run(
            [sys.executable, "-m", "swiftnb.cli", "whatif", "-model", str(model), "-config",
             str(config), SCRIPT, "-N=8", "-sleep=900", "-runs", "2", "-format", "json",
             *extra], capture_output=True, text=True, timeout=240, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["ttc"]["median"]

    # Stampede's one block waited 18 s in January and 28,863 s in February
    assert predicted("-at", str(quiet.run["start"])) < 1200
    assert predicted("-at", str(busy.run["start"])) > 28000
    proc = subprocess.run([sys.executable, "-m", "swiftnb.cli", "whatif", "-model",
                           str(model), SCRIPT, "-at", "yesterday"], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 1
    assert "-at yesterday: expected epoch seconds" in proc.stderr
