"""Task.digest_outputs on every kind of site: the wrapper digests each declared output
where it ends up and the provider returns them in TaskResult.output_digests, keyed by
the path as the task names it (a file: sha256 of its bytes; a directory: of the sorted
"<relative path>\\t<file digest>\\n" lines of its regular files)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from swiftnb.config.loader import load_config_text
from swiftnb.engine.task import Task
from swiftnb.events import EventBus
from swiftnb.execution.local import LocalProvider
from swiftnb.scheduling.build import build_sites
from swiftnb.scheduling.clock import RealClock
from swiftnb.scheduling.provider import Provider, RecordingReporter

pytestmark = pytest.mark.timeout(180)

MAKE = "echo one > a.txt; mkdir -p d/e; printf x > d/e/f; printf yy > d/g"


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def expected(absolute: str | None = None, with_dir: bool = True) -> dict[str, str]:
    f, g = _sha(b"x"), _sha(b"yy")
    found = {"a.txt": _sha(b"one\n")}
    if with_dir:
        found["d"] = _sha(f"e/f\t{f}\ng\t{g}\n".encode())
    if absolute is not None:
        found[absolute] = _sha(b"abs\n")
    return found


def digest_task(base: Path, jobid: str, absolute: str | None = None, with_dir: bool = True,
                **kw) -> Task:
    body = MAKE + (f"; echo abs > {absolute}" if absolute else "")
    outputs = ["a.txt", *(["d"] if with_dir else []), *([absolute] if absolute else [])]
    return Task(jobid=jobid, tr="sh", args=["-c", body], base_dir=str(base),
                run_dir=str(base / "run001"), outputs=outputs, digest_outputs=True, **kw)


async def _run_on(provider: Provider, task: Task):
    await provider.start()
    try:
        return await provider.execute(provider.prepare(task), RecordingReporter())
    finally:
        await provider.shutdown()


def _provider_of(conf: str, tmp_path: Path, env: dict[str, str]) -> Provider:
    config = load_config_text(conf, env=env, cwd=tmp_path)
    [site] = build_sites(config, EventBus(), RealClock(), site_run="digests-run001")
    return site.provider


def test_a_local_site_returns_the_digests_of_file_and_directory_outputs(tmp_path):
    result = asyncio.run(_run_on(LocalProvider(site_run="digests-run001"),
                                 digest_task(tmp_path, "sh-1")))
    assert result.ok, result.message
    assert result.output_digests == expected()
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_no_digests_unless_asked(tmp_path):
    task = digest_task(tmp_path, "sh-2")
    task.digest_outputs = False
    result = asyncio.run(_run_on(LocalProvider(site_run="digests-run001"), task))
    assert result.ok and result.output_digests == {}


@pytest.mark.parametrize("staging", ["swift", "local"])
def test_an_ssh_site_returns_the_digests_of_its_outputs(sshd, tmp_path, monkeypatch,
                                                                 staging):
    for key, value in sshd.env().items():
        monkeypatch.setenv(key, value)
    absolute = str(tmp_path / "abs.txt")
    conf = f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{sshd.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{sshd.remote_work}/swiftwork"
    staging: "{staging}"
    app.ALL {{ executable: "*" }}
}}
"""
    task = digest_task(tmp_path, f"sh-{staging}", absolute, with_dir=False)
    result = asyncio.run(_run_on(_provider_of(conf, tmp_path, sshd.env()), task))
    assert result.ok, result.message
    assert result.output_digests == expected(absolute, with_dir=False)
    assert (tmp_path / "abs.txt").read_text() == "abs\n"


def test_a_slurm_site_returns_the_digests(slurm, tmp_path, monkeypatch):
    for key, value in slurm.env().items():
        monkeypatch.setenv(key, value)
    conf = f"""
sites: [cluster]
site.cluster {{
    execution {{ type: "slurm" }}
    workDirectory: "{tmp_path / 'swiftwork'}"
    staging: "direct"
    app.ALL {{ executable: "*" }}
}}
"""
    task = digest_task(tmp_path, "sh-slurm")
    result = asyncio.run(_run_on(_provider_of(conf, tmp_path, slurm.env()), task))
    assert result.ok, result.message
    assert result.output_digests == expected()
    assert os.path.isdir(tmp_path / "d")
