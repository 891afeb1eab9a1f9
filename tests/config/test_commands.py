"""swiftnb convert-config (swift-convert-config) and check-config, as real commands."""

from __future__ import annotations

import os
import subprocess
import sys

from swiftnb.config import load_config, load_config_text

SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]


def run(args, cwd, env):
    return subprocess.run(SWIFTNB + args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60)


def test_converted_text_loads_to_the_same_configuration(data, clean_env):
    env = dict(clean_env, SUBMIT_HOST="h")
    legacy = load_config(properties_file=data / "legacy" / "swift.properties", env=env)
    text = legacy.to_swift_conf()
    again = load_config_text(text)
    assert again.raw == legacy.raw
    assert "site.local: null" not in text  # the catalog has no pool named local


def test_convert_config_command(data, tmp_path, clean_env):
    env = dict(os.environ, HOME=clean_env["HOME"])
    legacy = data / "legacy"
    result = run(["convert-config", "-sites.file", str(legacy / "sites.xml"), "-tc.file",
                  str(legacy / "tc.data"), "-out", "swift.conf"], tmp_path, env)
    assert result.returncode == 0, result.stderr
    converted = load_config(cwd=tmp_path, env=clean_env)  # ./swift.conf
    assert converted.selected_sites == ["localhost", "beagle", "tgncsa"]
    from swiftnb.coasters.settings import CoasterSettings

    assert CoasterSettings.from_options(converted.sites["beagle"].options).maxtime == 3600
    assert converted.app_for("localhost", "R").env["R_HOME"] == "/home/user/r"


def test_convert_config_replaces_a_local_pool(tmp_path, clean_env):
    (tmp_path / "sites.xml").write_text(
        '<config><pool handle="local"><execution provider="local"/>'
        "<workdirectory>/w</workdirectory></pool></config>\n")
    result = run(["convert-config", "-sites.file", "sites.xml"], tmp_path,
                 dict(os.environ, HOME=clean_env["HOME"]))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("site.local: null\n")
    config = load_config_text(result.stdout)
    assert config.sites["local"].work_directory == "/w"
    assert config.app_for("local", "echo") is None


def test_check_config_command(data, tmp_path, clean_env):
    env = dict(os.environ, HOME=clean_env["HOME"], USER="yadunand")
    result = run(["check-config", "-config", str(data / "aimes-swift.conf")], tmp_path, env)
    # the configuration is printed, and what a run would ignore.  The AIMES sites are
    # coaster blocks over ssh-cl:slurm and ssh-cl:pbs, which a run builds; Gordon's
    # jobOptions.depth, without pbs.mpp or pbs.aprun, was read and written nowhere by
    # Swift 0.96's PBS provider: swiftnb takes the file as 0.96 did, and says so
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        f"Warning: {data / 'aimes-swift.conf'}:46: site.gordon.execution.options.jobOptions"
        ".depth (threads per process) is PBS's mppdepth with pbs.mpp: true, or aprun's -d "
        "with pbs.aprun: true; with neither it has no effect (Swift 0.96 ignored it): remove "
        "it, or set ppn for the cores of a node; ignored\n")
    assert "\tsites: [stampede]" in result.stdout
    assert result.stdout.splitlines()[1] == f"[R] {data / 'aimes-swift.conf'}"
    bad = run(["check-config", "-config", "two-errors.conf"], data / "bad", env)
    assert bad.returncode == 1
    assert bad.stderr == (
        "two-errors.conf:2: keepSiteDirectory: unknown key, did you mean keepSiteDir?\n"
        'two-errors.conf:3: hostJobSubmitThrottle: invalid value 0, expected an integer '
        'from 1 to 2147483647 or "off"\n')
    listed = run(["check-config", "-sitelist"], tmp_path, env)
    assert listed.stdout == "Defined sites:\n  local: local (enabled)\n"
