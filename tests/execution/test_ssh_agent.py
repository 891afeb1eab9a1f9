"""Authentication by an ssh-agent: with no key file named anywhere and none in ~/.ssh,
the key the agent holds logs in (a real ``ssh-agent``, started and stopped here)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import time

import pytest

from swiftnb.execution.shell import ShellError, ShellFailure
from swiftnb.execution.sshshell import SSHShell

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def agent(tmp_path, sshd, monkeypatch):
    """An ssh-agent holding the test key, as SSH_AUTH_SOCK; HOME has no key of its own."""
    if shutil.which("ssh-agent") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but ssh-agent is missing (Debian: openssh-client)")
        pytest.skip("ssh-agent is missing")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    shutil.copy(sshd.known_hosts, home / ".ssh" / "known_hosts")
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while not sock.exists():
            assert proc.poll() is None and time.monotonic() < deadline, "ssh-agent did not start"
            time.sleep(0.05)
        env = {**os.environ, "SSH_AUTH_SOCK": str(sock)}
        subprocess.run(["ssh-add", "-q", str(sshd.client_key)], env=env, check=True, timeout=10,
                       capture_output=True)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        yield sock
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def test_the_agents_key_logs_in(sshd, agent):
    async def main() -> str:
        shell = SSHShell(sshd.host, port=sshd.port, user=sshd.user)
        try:
            return (await shell.run(["id", "-un"], timeout=20)).stdout.strip()
        finally:
            await shell.close()

    assert asyncio.run(main()) == sshd.user


def test_without_the_agent_the_same_login_is_refused(sshd, agent, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK")

    async def main() -> None:
        shell = SSHShell(sshd.host, port=sshd.port, user=sshd.user)
        try:
            await shell.run(["true"], timeout=20)
        finally:
            await shell.close()

    with pytest.raises(ShellError) as info:
        asyncio.run(main())
    assert info.value.kind is ShellFailure.AUTH_REFUSED
