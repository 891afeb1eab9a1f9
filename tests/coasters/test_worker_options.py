"""The worker's command line as batch blocks and people use it: ``--id auto`` from the
launcher's rank variable, ``--secret-file`` (mode 0600), ``--log-level``/``--log-dir``.
Real worker processes against a real (passive, in-process) coaster service."""

from __future__ import annotations

import ast
import asyncio
import os
import sys
from pathlib import Path

import pytest

from coaster_services import LIMIT, Recorder, passive_service, spec, start_worker, stop, until
from swiftnb.remote import worker as worker_module

pytestmark = pytest.mark.timeout(120)


def test_worker_id_from_the_launchers_rank_variable():
    wid = worker_module.worker_id
    assert wid("000042", {"SLURM_PROCID": "3"}) == "000042"  # given: kept
    assert wid("auto", {"SLURM_PROCID": "3"}) == "000003"
    assert wid("auto", {"PMI_RANK": "12"}) == "000012"
    assert wid("auto", {"OMPI_COMM_WORLD_RANK": "7"}) == "000007"
    assert wid("auto", {"ALPS_APP_PE": "1234"}) == "001234"
    assert wid("auto", {}) == "000000"
    # srun's variable first; a variable that is not a number is skipped
    assert wid("auto", {"PMI_RANK": "5", "SLURM_PROCID": "2"}) == "000002"
    assert wid("auto", {"SLURM_PROCID": "", "PMI_RANK": "x", "ALPS_APP_PE": "9"}) == "000009"


def test_worker_stays_python_3_8():
    """Cluster nodes have old Pythons: the worker's grammar must be 3.8's."""
    source = Path(worker_module.__file__).read_text()
    tree = ast.parse(source, feature_version=(3, 8))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0}
    # swiftnb only as load_wrapper's fallback inside an installation
    assert imported - sys.stdlib_module_names == {"swiftnb"}
    assert source.count("from swiftnb") == 1


@pytest.mark.parametrize("variable", ["SLURM_PROCID", "PMI_RANK", "OMPI_COMM_WORLD_RANK",
                                      "ALPS_APP_PE"])
def test_id_auto_names_the_worker_by_rank(tmp_path, variable):
    service, events = passive_service(tmp_path)

    async def main():
        await service.start()
        service.write_secret_file()
        command = service.worker_command()
        assert "--id auto" in command
        workers = [await start_worker(command, env={variable: str(rank)}) for rank in (4, 11)]
        try:
            await until(lambda: len([e for e in events if e.kind == "WORKER_ACTIVE"]) == 2,
                        "two workers connect")
        finally:
            await service.shutdown()
            for w in workers:
                await stop(w)

    asyncio.run(main())
    ids = sorted(e["id"] for e in events if e.kind == "WORKER_ACTIVE")
    assert ids == ["000004", "000011"]


def test_secret_file_must_be_private(tmp_path):
    service, events = passive_service(tmp_path)

    async def main():
        await service.start()
        path = service.write_secret_file()
        assert os.stat(path).st_mode & 0o777 == 0o600
        assert Path(path).read_text().strip() == service.secret
        command = service.worker_command()
        assert service.secret not in command
        # a copy that others may read is refused before any connection
        shared = tmp_path / "shared-secret"
        shared.write_text(service.secret)
        shared.chmod(0o644)
        loose = await start_worker(command, "--secret-file", str(shared))
        _, err = await asyncio.wait_for(loose.communicate(), LIMIT)
        # the environment still works (blocks of older block providers use it)
        by_env = await start_worker(command.split(" --secret-file")[0],
                                    env={worker_module.SECRET_ENV: service.secret})
        try:
            await until(lambda: any(e.kind == "WORKER_ACTIVE" for e in events), "env worker")
        finally:
            await service.shutdown()
            await stop(by_env)
        assert not os.path.exists(path)  # the service removed its secret file
        return loose.returncode, err.decode()

    code, err = asyncio.run(main())
    assert code == 2
    assert f"the secret file {tmp_path / 'shared-secret'} has mode 644: others may read it" in err
    assert len([e for e in events if e.kind == "WORKER_ACTIVE"]) == 1


def test_wrong_secret_file_is_not_welcome(tmp_path):
    service, events = passive_service(tmp_path)

    async def main():
        await service.start()
        service.write_secret_file()
        wrong = tmp_path / "wrong"
        wrong.write_text("0" * 32)
        wrong.chmod(0o600)
        # the worker's own retries (1+2+4+8 s) are its business: bounded by LIMIT here
        proc = await start_worker(service.worker_command(), "--secret-file", str(wrong))
        try:
            _, err = await asyncio.wait_for(proc.communicate(), LIMIT)
        finally:
            await stop(proc)
            await service.shutdown()
        return proc.returncode, err.decode()

    code, err = asyncio.run(main())
    assert code == 3
    assert "closed the connection without an answer" in err
    assert not [e for e in events if e.kind == "WORKER_ACTIVE"]


@pytest.mark.parametrize("level", ["DEBUG", "TRACE", "NONE"])
def test_worker_log_file(tmp_path, level):
    service, events = passive_service(tmp_path)
    logs = tmp_path / "logs"

    async def main():
        await service.start()
        service.write_secret_file()
        proc = await start_worker(service.worker_command(), "--log-level", level,
                                  "--log-dir", str(logs), env={"SLURM_PROCID": "2"})
        report = Recorder()
        try:
            result = await asyncio.wait_for(service.submit(
                "t1", 60, spec(tmp_path, "echo-1", ["echo", "hi"], stdout="out.txt"), report),
                LIMIT)
        finally:
            await service.shutdown()
            await stop(proc)
        return result, report

    result, report = asyncio.run(main())
    assert result.ok, result.message
    assert report.codes == [1, 16, 2, 17, 7]
    block = service._passive_block
    path = logs / f"worker-{block}-000002.log"
    if level == "NONE":
        assert not logs.exists()
        return
    text = path.read_text()
    assert f"INFO worker {block}:000002, pid " in text
    assert f"INFO connected to 127.0.0.1:{service.port} as worker {block}:000002" in text
    assert "DEBUG task 1 (echo-1) begins" in text and "DEBUG task 1 ended: ok" in text
    assert service.secret not in text
    assert ("TRACE received {\"op\": \"run\"" in text) == (level == "TRACE")
