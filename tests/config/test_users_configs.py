"""Real users' configurations of Swift/K 0.94-0.96 load unchanged (issue 25).

Each file of tests/data/configs25 is in the shape its users wrote (its first comment says
where from); ``swiftnb check-config`` checks it as a subprocess, as a user would.  What has
no effect here is a warning naming the key and why; nothing Swift/K loaded is refused.
The Grid Engine test submits to the real Grid Engine of tests/gridengine.py.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from swiftnb.engine.task import FailureKind
from swiftnb.execution.batch.lrm import Resources
from swiftnb.execution.batch.sge import GridEngine
from swiftnb.execution.shell import LocalShell
from swiftnb.scheduling.provider import ProviderError

pytestmark = pytest.mark.timeout(120)

DATA = Path(__file__).resolve().parents[1] / "data" / "configs25"
SWIFTNB = [sys.executable, "-m", "swiftnb.cli"]


def _copy(name: str, where: Path) -> Path:
    """The data file ``name`` in ``where``, its WORKDIR place holder filled in."""
    work = where / "work"
    work.mkdir(exist_ok=True)
    target = where / name
    target.write_text((DATA / name).read_text().replace("WORKDIR", str(work)))
    return target


def _swiftnb(args: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(cwd)}
    env.pop("SWIFT_SITE_CONF", None)
    return subprocess.run([*SWIFTNB, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def _checked(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """check-config, which must accept the configuration."""
    result = _swiftnb(["check-config", *args], cwd)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


def test_docker_app_options_on_a_batch_site_are_a_warning(tmp_path: Path) -> None:
    conf = _copy("parallelworks-docker-slurm.conf", tmp_path)
    result = _checked(["-config", str(conf)], tmp_path)
    warned = [line for line in result.stderr.splitlines() if line.startswith("Warning")]
    assert any("app.sim.options.docker.image has no effect on site cluster" in line
               and "container image" in line and f"{conf}:13" in line for line in warned), \
        result.stderr
    assert any("docker.cpus" in line for line in warned)


def test_sge_sites_without_a_pe_check_on_any_machine(tmp_path: Path) -> None:
    """No qconf runs: the check must not depend on the checking machine's batch system
    (PATH holds no Grid Engine command here)."""
    conf = _copy("sge-tasksPerNode.conf", tmp_path)
    sites = _copy("sge-jobsPerNode-sites.xml", tmp_path)
    for args in (["-config", str(conf)], ["-sites.file", str(sites)]):
        result = _checked(args, tmp_path)
        assert "parallel environment" not in result.stderr


def test_sge_job_of_several_slots_gets_cogs_default_pe() -> None:
    lines = GridEngine(LocalShell()).directives(Resources(nodes=2, tasks_per_node=4))
    assert "#$ -pe 1way 8" in lines   # CoG's provider-sge.properties: parallel.environment
    lines = GridEngine(LocalShell()).directives(Resources(options={"pe": "mpi"},
                                                          tasks_per_node=2))
    assert "#$ -pe mpi 2" in lines
    assert not any("-pe" in line for line in GridEngine(LocalShell()).directives(Resources()))


def test_sge_pe_the_cluster_lacks_is_refused_with_its_list(gridengine,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           tmp_path: Path) -> None:
    for key, value in gridengine.env().items():
        monkeypatch.setenv(key, value)

    async def body() -> None:
        lrm = GridEngine(LocalShell(), site="ge")
        r = Resources(name="pe1", tasks_per_node=2, workdir=str(tmp_path))
        with pytest.raises(ProviderError) as err:
            await lrm.submit(lrm.script("true", r), r)
        text = str(err.value)
        assert err.value.kind is FailureKind.SUBMIT_REFUSED
        assert "site ge" in text and "'1way'" in text
        assert f"(qconf -spl): {gridengine.pe}" in text and "jobOptions.pe" in text
    asyncio.run(body())


def test_094_cf_given_as_config_loads_with_its_values(tmp_path: Path) -> None:
    cf = _copy("swift094-cf", tmp_path)
    result = _checked(["-config", str(cf)], tmp_path)
    for carried in ("maxForeachThreads: 100", "fileGCEnabled: false",
                    'wrapperParameterMode: "files"', "keepSiteDir: true",
                    "executionRetries: 1"):
        assert carried in result.stdout, result.stdout


def test_properties_naming_the_installations_catalogs_fall_back(tmp_path: Path) -> None:
    props = _copy("swift094-default-catalogs.properties", tmp_path)
    result = _checked(["-properties", str(props)], tmp_path)
    assert "sites.file" in result.stderr and "site catalog not found" in result.stderr
    assert "the local site" in result.stderr and "PATH" in result.stderr
    assert "sites: [local]" in result.stdout and "executionRetries: 2" in result.stdout
    (tmp_path / "t.swift").write_text('type file;\napp (file o) e (string s) '
                                      '{ echo s stdout=@o; }\nfile f <"out.txt">;\n'
                                      'f = e("carried");\n')
    ran = _swiftnb(["-properties", str(props), "t.swift"], tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (tmp_path / "out.txt").read_text() == "carried\n"


def test_095_site_blocks_load(tmp_path: Path) -> None:
    props = _copy("swift095-site-blocks.properties", tmp_path)
    result = _checked(["-properties", str(props)], tmp_path)
    out, err = result.stdout, result.stderr
    assert 'workerManager: "block"' in out and 'highOverallocation: "100"' in out
    assert 'jobOptions.pe: "smp"' in out
    assert "config.rundirs: ignored" in err
    assert "site.passive.jobmanager 'local:slurm' has no effect" in err
    assert "site.login has no jobmanager" in err and 'type: "local"' in out
