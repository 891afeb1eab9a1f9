"""Properties on the `swiftnb run` command line reach the run; bad ones stop it early.

`swiftnb run -clustering.enabled true` used to drop the property silently (the run
did not cluster) while `check-config` applied it; both now share one parser.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from swiftnb import cli

pytestmark = pytest.mark.timeout(120)

TRACE_ONLY = "trace(1);\n"

HELLO = """\
type file;
app (file o) greet () { echo "hi" stdout=@o; }
file out <"out.txt">;
out = greet();
"""


@pytest.fixture
def work(tmp_path, monkeypatch):
    """A directory with a script, and an environment without the user's config."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("SWIFT_SITE_CONF", "SWIFT_CONF_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wf.swift").write_text(TRACE_ONLY)
    (tmp_path / "hello.swift").write_text(HELLO)
    (tmp_path / "fs.data").write_text("rule .* DEFAULT\n")  # a CDM policy
    return tmp_path


def swiftnb(*args: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=str(cwd))
    for var in ("SWIFT_SITE_CONF", "SWIFT_CONF_PATH"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "swiftnb.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=100, env=env)


def _runs(path) -> list[str]:
    return sorted(p.name for p in path.iterdir() if p.name.startswith("run"))


class _Stop(Exception):
    pass


@pytest.mark.parametrize("argv,expected", [
    (["-clustering.enabled", "true"], True),
    (["-clustering.enabled"], True),
    (["-clusteringEnabled", "true"], True),
    ([], False),
])
def test_clustering_enabled_reaches_the_run(work, monkeypatch, argv, expected):
    """The Config handed to prepare_run (the run) has clustering on."""
    import swiftnb.runner

    seen = []

    def prepare_run(program, *, config, **kwargs):
        seen.append(config)
        raise _Stop

    monkeypatch.setattr(swiftnb.runner, "prepare_run", prepare_run)
    with pytest.raises(_Stop):
        cli.main(["run", *argv, "-clustering.min.time", "5", "wf.swift"])
    assert [c.clustering_enabled for c in seen] == [expected]
    assert seen[0].clustering_min_time == 5


def test_clustering_enabled_in_the_run_log(work):
    """End to end: the run's log shows the property in its SWIFT_CONFIGURATION dump."""
    r = swiftnb("run", "-clustering.enabled", "true", "wf.swift", cwd=work)
    log = (work / "run001" / "wf-run001.log").read_text()
    config = log[log.index("SWIFT_CONFIGURATION"):]
    line = next(x for x in config.splitlines() if x.strip().startswith("clusteringEnabled:"))
    assert line.split() == ["clusteringEnabled:", "true", "#", "[C]"], r.stderr


def test_listconfig_shows_command_line_properties(work, capsys):
    assert cli.main(["run", "-clustering.enabled", "true", "-cdm.file", "fs.data",
                     "-listconfig", "full"]) == 0
    lines = {x.split(":")[0].strip(): x.split() for x in capsys.readouterr().out.splitlines()}
    assert lines["clusteringEnabled"] == ["clusteringEnabled:", "true", "#", "[C]"]
    assert lines["CDMFile"] == ["CDMFile:", '"fs.data"', "#", "[C]"]


def test_unknown_property_is_a_usage_error_naming_the_nearest(work):
    r = swiftnb("run", "-clustering.enable", "true", "hello.swift", cwd=work)
    assert r.returncode == 1
    assert r.stderr.startswith("swiftnb: unknown option -clustering.enable "
                               "(did you mean -clustering.enabled?)\n")
    assert r.stdout == "" and _runs(work) == [] and not (work / "out.txt").exists()


def test_check_config_gives_the_same_error(work):
    r = swiftnb("check-config", "-clustering.enable", "true", cwd=work)
    assert r.returncode == 1
    assert r.stderr == ("swiftnb check-config: unknown option -clustering.enable "
                        "(did you mean -clustering.enabled?)\n")


@pytest.mark.parametrize("option", ["-cdm.file", "-cdmfile", "-CDMFile"])
def test_missing_cdm_file_is_a_usage_error(work, option):
    r = swiftnb("run", option, "nope.data", "hello.swift", cwd=work)
    assert r.returncode == 1
    assert f"swiftnb: {option} nope.data: no such file" in r.stderr
    assert _runs(work) == [] and not (work / "out.txt").exists()


def test_removed_properties_warn_and_run(work, monkeypatch, capsys):
    import swiftnb.runner

    seen = []

    def prepare_run(program, *, config, **kwargs):
        seen.append(config)
        raise _Stop

    monkeypatch.setattr(swiftnb.runner, "prepare_run", prepare_run)
    with pytest.raises(_Stop):
        cli.main(["run", "-kickstart.enabled", "maybe", "wf.swift"])
    assert seen[0].warnings == [
        "-kickstart.enabled: removed in Swift 0.96, no effect (swiftnb has no Kickstart)"]


SSH_CL_CONF = """\
site.cluster {
  execution { type: coaster, jobManager: "ssh-cl:local", URL: "127.0.0.1:1",
              options { connectTimeout: 5 } }
  workDirectory: "swiftwork"
  app.ALL { executable: "*" }
}
sites: [cluster]
"""


@pytest.mark.parametrize("job_manager", ["ssh-cl:local", "ssh-cl:slurm"])
def test_ssh_cl_coaster_site_with_an_unreachable_login_node_runs_nothing_here(work, job_manager):
    """`ssh-cl:` used to be ignored (the cluster's work ran on this machine); now its
    blocks go through the login node, and one that cannot be reached fails the run with
    the site, the host and what to check."""
    (work / "swift.conf").write_text(SSH_CL_CONF.replace("ssh-cl:local", job_manager))
    r = swiftnb("run", "hello.swift", cwd=work)
    assert r.returncode != 0, r.stderr
    assert ("coaster site cluster (ssh-cl:" in r.stderr
            and "cannot connect to 127.0.0.1:1" in r.stderr), r.stderr
    assert not (work / "out.txt").exists()
