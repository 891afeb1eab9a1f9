"""Apps started without Popen (remote/wrap/spawn.py): what Popen guaranteed still holds on
the local site's both start paths (the loop, runner threads): an exec failure's kind and
message, a vanished working directory, exit codes of signals, the environment (this
process's as the run began, a job's own variables, the job's mark once), and the Popen
path a CPython with another ``fork_exec`` falls back to."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from swiftnb.engine.task import FailureKind, Task
from swiftnb.events import EventBus
from swiftnb.execution.local import LocalProvider
from swiftnb.remote.wrap import spawn
from swiftnb.remote.wrap.processes import MARK_VAR
from swiftnb.scheduling.single import SingleSiteExecutor

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(autouse=True, params=["loop", "threads"])
def start_path(request, monkeypatch):
    if request.param == "threads":  # as on a busy machine, or one without pidfds
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    return request.param


def _task(tmp_path, jobid, tr, args, **kw):
    return Task(jobid=jobid, tr=tr, args=args, base_dir=str(tmp_path),
                run_dir=str(tmp_path / "run001"), **kw)


def _submit(provider, *tasks):
    ex = SingleSiteExecutor(provider, EventBus(), max_parallel=2)

    async def main():
        try:
            return await asyncio.gather(*(ex.submit(t) for t in tasks))
        finally:
            await ex.close()

    return asyncio.run(main())


def test_a_program_the_kernel_cannot_exec_is_not_executable(tmp_path):
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF\x00\x00 not really")
    garbage.chmod(0o755)
    [result] = _submit(LocalProvider(), _task(tmp_path, "g-1", "g", [],
                                              executable=str(garbage)))
    assert not result.ok
    assert result.failure is FailureKind.NOT_EXECUTABLE and not result.retryable
    assert f"Caused by: Cannot execute {garbage}: Exec format error" in result.message
    assert not (tmp_path / "swiftwork").exists()  # its job directory went with it


def test_exit_codes_and_signals_as_popen_reported_them(tmp_path):
    code, killed = _submit(
        LocalProvider(),
        _task(tmp_path, "sh-3", "sh", ["-c", "exit 3"]),
        _task(tmp_path, "sh-9", "sh", ["-c", "kill -KILL $$"]))
    assert (code.ok, code.exit_code) == (False, 3)
    assert "exit code of 3" in code.message
    assert not killed.ok and killed.exit_code == 128 + signal.SIGKILL
    assert "SIGKILL" in killed.message


def test_apps_see_the_environment_the_run_began_with_and_their_mark_once(
        tmp_path, monkeypatch):
    monkeypatch.setenv("HPARSL_BEFORE", "seen")
    provider = LocalProvider()

    async def started():
        await provider.start()
    asyncio.run(started())
    monkeypatch.setenv(MARK_VAR, "a stale mark from a parent")
    [result] = _submit(provider, _task(tmp_path, "env-1", "env", [], stdout="env.txt",
                                       outputs=["env.txt"],
                                       env={"HPARSL_OWN": "job's own"}))
    assert result.ok, result.message
    lines = (tmp_path / "env.txt").read_text().splitlines()
    names = [line.split("=", 1)[0] for line in lines]
    assert len(names) == len(set(names)), "a variable given twice"
    values = dict(line.split("=", 1) for line in lines)
    assert values["HPARSL_OWN"] == "job's own"
    assert values["HPARSL_BEFORE"] == "seen"
    assert values[MARK_VAR] != "a stale mark from a parent"
    assert values[MARK_VAR].startswith(f"{os.getpid()}.")


def test_an_environment_without_the_jobs_own_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("HPARSL_PLAIN", "plain")
    [result] = _submit(LocalProvider(), _task(tmp_path, "env-2", "env", [],
                                              stdout="env.txt", outputs=["env.txt"]))
    assert result.ok, result.message
    values = dict(line.split("=", 1) for line in
                  (tmp_path / "env.txt").read_text().splitlines())
    assert values["HPARSL_PLAIN"] == "plain" and MARK_VAR in values


def test_a_working_directory_gone_before_the_start_names_the_directory(tmp_path):
    gone = tmp_path / "gone"
    environment = spawn.AppEnvironment().with_var(MARK_VAR, "m")
    with pytest.raises(FileNotFoundError) as caught:
        spawn.start_app(["/bin/true"], str(gone), environment, (0, 1, 2))
    assert caught.value.filename == str(gone)


def test_another_cpythons_fork_exec_falls_back_to_popen(tmp_path, monkeypatch):
    def other_signature(*args):  # a fake: a fork_exec that takes other arguments
        raise TypeError("fork_exec() takes exactly 22 arguments")

    monkeypatch.setattr(spawn._posixsubprocess, "fork_exec", other_signature)
    monkeypatch.setattr(spawn, "_direct", True)
    code, written = _submit(
        LocalProvider(),
        _task(tmp_path, "sh-5", "sh", ["-c", "exit 5"]),
        _task(tmp_path, "echo-f", "echo", ["fallback"], stdout="f.txt", outputs=["f.txt"]))
    assert spawn._direct is False
    assert (code.ok, code.exit_code) == (False, 5)
    assert written.ok and (tmp_path / "f.txt").read_text() == "fallback\n"
