"""Bad input to calibrate and whatif: one clear line, a typed error, exit code 1 (as a
configuration error); nothing is half-written."""

import bz2
import json
import os
import subprocess
import sys

import pytest

from swiftnb.config.loader import load_config
from swiftnb.errors import SwiftnbError
from swiftnb.forecast import Model, ModelError, SiteModel, calibrate
from swiftnb.forecast.sites import simulated_config

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
LOG8 = os.path.join(ROOT, "tests", "data", "aimes", "stampede-exp-020", "swift.log.bz2")
EXAMPLE = os.path.join(ROOT, "examples", "aimes")

HEADER = """\
2016-01-25 01:42:39,004+0000 INFO  Loader JAVA Oracle Corporation Java HotSpot(TM) 64-Bit Server VM 1.7.0_79
2016-01-25 01:42:39,007+0000 INFO  Loader RUN_ID run019
2016-01-25 01:42:39,009+0000 INFO  Loader CWD /scratch/midway/yadunand
"""


def _swiftnb(args, cwd):
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_a_log_with_nothing_to_model(tmp_path):
    (tmp_path / "empty.log").write_text(HEADER)
    proc = _swiftnb(["calibrate", "empty.log", "-o", "model.json"], tmp_path)
    assert proc.returncode == 1
    assert "no tasks and no blocks: nothing to calibrate" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "model.json").exists()


def test_a_coaster_log_without_its_blocks(tmp_path):
    text = bz2.decompress(open(LOG8, "rb").read()).decode()
    kept = [line for line in text.splitlines(True) if " BLOCK_" not in line]
    (tmp_path / "noblocks.log").write_text("".join(kept))
    with pytest.raises(ModelError, match="tasks ran on coaster workers but the log has no "
                                         "blocks"):
        calibrate([str(tmp_path / "noblocks.log")])


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "model.json"
    calibrate([LOG8]).save(path)
    return path


def test_a_model_of_another_version(tmp_path, model_file):
    doc = json.loads(model_file.read_text())
    doc["version"] = 99
    (tmp_path / "old.json").write_text(json.dumps(doc))
    proc = _swiftnb(["whatif", "-model", "old.json", "-config",
                     os.path.join(EXAMPLE, "stampede.conf"),
                     os.path.join(EXAMPLE, "bag_of_tasks.swift"), "-N=4"], tmp_path)
    assert proc.returncode == 1
    assert "model format version 99, this swiftnb reads version 1" in proc.stderr
    (tmp_path / "other.json").write_text('{"sites": {}}')
    with pytest.raises(ModelError, match="not a swiftnb what-if model"):
        Model.load(tmp_path / "other.json")


def test_a_site_the_model_lacks(tmp_path, model_file):
    (tmp_path / "swift.conf").write_text(
        'sites: [elsewhere]\nsite.elsewhere { execution { type: "sim" } }\n')
    proc = _swiftnb(["whatif", "-model", str(model_file), "-config", "swift.conf",
                     os.path.join(EXAMPLE, "bag_of_tasks.swift"), "-N=4"], tmp_path)
    assert proc.returncode == 1
    assert ("site elsewhere is not in the model (sites in the model: stampede)"
            in proc.stderr)


def test_a_coaster_site_with_no_blocks_in_the_model():
    config = load_config(os.path.join(EXAMPLE, "stampede.conf"))
    model = Model({"stampede": SiteModel(logs=1, job_queue=[5.0], attempts=3)})
    with pytest.raises(ModelError, match="site stampede is a coaster site, but the logs of "
                                         "the model show no blocks") as caught:
        simulated_config(config, model, seed=0)
    assert isinstance(caught.value, SwiftnbError)


def test_bad_command_lines(tmp_path):
    proc = _swiftnb(["whatif", "bag_of_tasks.swift"], tmp_path)
    assert proc.returncode == 1 and "usage: swiftnb whatif -model" in proc.stderr
    proc = _swiftnb(["whatif", "-model", "m.json", "s.swift", "-format", "xml"], tmp_path)
    assert proc.returncode == 1 and "-format xml: expected table or json" in proc.stderr
    proc = _swiftnb(["calibrate", "a.log"], tmp_path)
    assert proc.returncode == 1 and "usage: swiftnb calibrate" in proc.stderr
