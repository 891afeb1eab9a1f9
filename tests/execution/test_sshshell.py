"""SSHShell against a real sshd on 127.0.0.1 (tests/sshd.py): one connection shared by
many commands, host keys (unknown, accepted, changed), login refusals, ~/.ssh/config and
auth.defaults, a host that dies mid-command and comes back (or does not).

The Shell contract itself (run, put/get, processes) is checked on both shells in
test_shell.py."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from swiftnb.execution.shell import ShellError, ShellFailure
from swiftnb.execution.sshshell import (AuthDefault, SSHShell, close_shells, read_auth_defaults,
                                        shell_for)

#: no test sees the tester's own ~/.ssh or agent (tests/sshd.py)
pytestmark = [pytest.mark.timeout(90), pytest.mark.usefixtures("no_personal_ssh")]


@pytest.fixture
def restarts(sshd) -> Iterator[None]:
    """For tests that stop the session's sshd: it runs again afterwards."""
    yield
    sshd.start()


def shell(sshd, **options) -> SSHShell:
    """An SSHShell that names everything itself (no config file needed)."""
    settings = {"port": sshd.port, "user": sshd.user, "identity_files": [str(sshd.client_key)],
                "known_hosts": str(sshd.known_hosts), **options}
    return SSHShell(sshd.host, **settings)


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(body())


def _keygen(path: Path) -> Path:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
                   check=True, capture_output=True, timeout=30)
    return path


def _other_host_key_line(tmp_path: Path) -> str:
    key = _keygen(tmp_path / "impostor")
    return " ".join(Path(str(key) + ".pub").read_text().split()[:2])


async def _until(predicate: Callable[[], bool], within: float = 10.0) -> None:
    for _ in range(int(within / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition not reached in time")


def _running_as_login_user(sshd, token: str) -> bool:
    r = subprocess.run(["pgrep", "-u", sshd.user, "-f", token], capture_output=True, timeout=10)
    return r.returncode == 0


# --- one connection ---------------------------------------------------------------------


def test_many_commands_at_once_share_one_connection(sshd, tmp_path):
    src = tmp_path / "f"
    src.write_text("content")
    work = f"{sshd.remote_work}/many-{secrets.token_hex(3)}"

    async def body() -> None:
        sh = shell(sshd)
        assert not sh.connected
        await sh.connect()
        assert sh.connected
        conn = sh.connection
        # each command reports its parent: the sshd process serving its connection
        results = await asyncio.gather(*(sh.run(["sh", "-c", "echo $PPID; sleep 0.3"])
                                         for _ in range(60)))
        assert {r.returncode for r in results} == {0}
        assert len({r.stdout for r in results}) == 1, "commands ran on more than one connection"
        await sh.makedirs(work)
        await asyncio.gather(*(sh.put(str(src), f"{work}/f{i}") for i in range(30)))
        assert all(await asyncio.gather(*(sh.exists(f"{work}/f{i}") for i in range(30))))
        assert sh.connection is conn
        await sh.close()
        assert not sh.connected
    run(body)


def test_shell_for_gives_every_caller_the_same_shell(sshd):
    a = shell_for(sshd.host, port=sshd.port, user=sshd.user,
                  identity_files=[str(sshd.client_key)], known_hosts=str(sshd.known_hosts))
    b = shell_for(sshd.host, port=sshd.port, user=sshd.user,
                  identity_files=[str(sshd.client_key)], known_hosts=str(sshd.known_hosts))
    c = shell_for(sshd.host, port=sshd.port, user="someone-else")
    assert a is b and a is not c

    async def body() -> None:
        await asyncio.gather(a.run(["true"]), b.run(["true"]))
        assert a.connection is b.connection is not None
        await close_shells()
    run(body)
    assert shell_for(sshd.host, port=sshd.port, user="someone-else") is not c  # forgotten


def test_a_timeout_kills_the_remote_command(sshd):
    token = f"1000.{secrets.randbelow(10**6)}7"

    async def body() -> None:
        sh = shell(sshd)
        with pytest.raises(ShellError) as err:
            await sh.run(["sleep", token], timeout=0.5)
        assert err.value.kind is ShellFailure.TIMEOUT
        assert err.value.host == sshd.address
        await sh.close()
    run(body)
    assert not _running_as_login_user(sshd, token)


# --- failures to connect ------------------------------------------------------------------


def test_a_port_nobody_listens_on_is_unreachable():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there

    async def body() -> None:
        sh = SSHShell("127.0.0.1", port=port, user="nobody")
        with pytest.raises(ShellError) as err:
            await sh.run(["true"])
        assert err.value.kind is ShellFailure.UNREACHABLE
        assert err.value.retryable
        assert err.value.host == f"127.0.0.1:{port}"
        assert f"127.0.0.1:{port}" in str(err.value) and f"port {port}" in str(err.value)
    run(body)


def test_a_host_that_never_speaks_ssh_is_a_timeout():
    with socket.socket() as silent:  # accepts connections (the kernel does) and says nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]

        async def body() -> None:
            sh = SSHShell("127.0.0.1", port=port, user="nobody", connect_timeout=0.5)
            with pytest.raises(ShellError) as err:
                await sh.connect()
            assert err.value.kind is ShellFailure.TIMEOUT
            assert err.value.retryable
            assert f"127.0.0.1:{port}" in str(err.value)
        run(body)


def test_a_wrong_key_is_auth_refused(sshd, tmp_path):
    wrong = _keygen(tmp_path / "wrong_key")

    async def body() -> None:
        with pytest.raises(ShellError) as err:
            await shell(sshd, identity_files=[str(wrong)]).connect()
        assert err.value.kind is ShellFailure.AUTH_REFUSED
        assert not err.value.retryable
        message = str(err.value)
        assert sshd.user in message and str(wrong) in message and sshd.address in message
    run(body)


def test_a_missing_key_file_is_a_config_error(sshd, tmp_path):
    async def body() -> None:
        with pytest.raises(ShellError) as err:
            await shell(sshd, identity_files=[str(tmp_path / "no-such-key")]).connect()
        assert err.value.kind is ShellFailure.CONFIG
        assert "no-such-key" in str(err.value)
    run(body)


# --- host keys ----------------------------------------------------------------------------


def test_a_host_missing_from_known_hosts_is_unknown(sshd, tmp_path):
    empty = tmp_path / "known_hosts"
    empty.write_text("")

    async def body() -> None:
        for known_hosts in (str(empty), None):  # None: ~/.ssh/known_hosts, absent here
            with pytest.raises(ShellError) as err:
                await shell(sshd, known_hosts=known_hosts).connect()
            assert err.value.kind is ShellFailure.HOST_KEY_UNKNOWN
            assert not err.value.retryable
            message = str(err.value)
            assert f"ssh -p {sshd.port}" in message and "acceptNewHostKeys" in message
    run(body)
    assert empty.read_text() == ""


def test_accept_new_host_keys_records_the_key_and_connects(sshd, tmp_path):
    known = tmp_path / "new dir" / "known_hosts"  # neither file nor directory exists yet

    async def body() -> None:
        sh = shell(sshd, known_hosts=str(known), accept_new_host_keys=True)
        assert (await sh.run(["id", "-un"])).stdout == f"{sshd.user}\n"
        await sh.close()
        # recorded as OpenSSH writes it: the next shell needs no accept_new
        again = shell(sshd, known_hosts=str(known))
        assert (await again.run(["true"])).returncode == 0
        await again.close()
    run(body)
    assert known.read_text() == f"[127.0.0.1]:{sshd.port} {sshd.host_key_line}\n"


def test_a_changed_host_key_is_refused_even_with_accept_new(sshd, tmp_path):
    known = tmp_path / "known_hosts"
    content = f"[127.0.0.1]:{sshd.port} {_other_host_key_line(tmp_path)}\n"
    known.write_text(content)

    async def body() -> None:
        for accept_new in (False, True):
            with pytest.raises(ShellError) as err:
                await shell(sshd, known_hosts=str(known), accept_new_host_keys=accept_new).connect()
            assert err.value.kind is ShellFailure.HOST_KEY_CHANGED
            assert not err.value.retryable
            message = str(err.value)
            assert "ssh-keygen -R" in message and f"[127.0.0.1]:{sshd.port}" in message
    run(body)
    assert known.read_text() == content


# --- ~/.ssh/config and auth.defaults --------------------------------------------------------


def test_a_host_alias_of_ssh_config_gives_hostname_port_user_and_key(sshd, monkeypatch):
    monkeypatch.setenv("HOME", str(sshd.home))

    async def body() -> None:
        sh = SSHShell(sshd.alias)
        assert (await sh.run(["id", "-un"])).stdout == f"{sshd.user}\n"
        assert sh.name == sshd.address
        await sh.close()
        # an argument of the constructor wins over the file
        with pytest.raises(ShellError) as err:
            await SSHShell(sshd.alias, user="root").connect()
        assert err.value.kind is ShellFailure.AUTH_REFUSED
        assert "root" in str(err.value) and sshd.alias in str(err.value)
    run(body)


def test_proxy_jump_of_ssh_config_is_followed(sshd, no_personal_ssh):
    ssh_dir = no_personal_ssh / ".ssh"
    ssh_dir.mkdir()
    shutil.copy(sshd.known_hosts, ssh_dir / "known_hosts")
    login = (f"    HostName 127.0.0.1\n    Port {sshd.port}\n    User {sshd.user}\n"
             f"    IdentityFile {sshd.client_key}\n")
    (ssh_dir / "config").write_text(f"Host gateway\n{login}Host behind\n{login}"
                                    "    ProxyJump gateway\n")

    async def client_port_seen_by_sshd(sh: SSHShell) -> tuple[int, int]:
        """(the client port sshd saw, the port of this process's TCP socket)"""
        r = await sh.run(["sh", "-c", "echo $SSH_CONNECTION"])
        assert r.returncode == 0
        conn = sh.connection
        assert conn is not None
        return int(r.stdout.split()[1]), conn.get_extra_info("sockname")[1]

    async def body() -> None:
        direct, behind = SSHShell("gateway"), SSHShell("behind")
        seen, ours = await client_port_seen_by_sshd(direct)
        assert seen == ours
        # through the gateway, sshd sees the gateway's own connection, not ours
        seen, ours = await client_port_seen_by_sshd(behind)
        assert seen != ours
        assert behind.name == sshd.address
        await direct.close()
        await behind.close()
    run(body)


def test_user_known_hosts_file_of_ssh_config_is_read_and_written(sshd, no_personal_ssh, tmp_path):
    ssh_dir = no_personal_ssh / ".ssh"
    ssh_dir.mkdir()
    elsewhere = tmp_path / "elsewhere_known_hosts"
    (ssh_dir / "config").write_text(
        f"Host target\n    HostName 127.0.0.1\n    Port {sshd.port}\n    User {sshd.user}\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {elsewhere}\n")

    async def body() -> None:
        with pytest.raises(ShellError) as err:
            await SSHShell("target").connect()
        assert err.value.kind is ShellFailure.HOST_KEY_UNKNOWN
        assert str(elsewhere) in str(err.value)
        sh = SSHShell("target", accept_new_host_keys=True)
        await sh.connect()
        await sh.close()
    run(body)
    assert elsewhere.read_text() == f"[127.0.0.1]:{sshd.port} {sshd.host_key_line}\n"
    assert not (ssh_dir / "known_hosts").exists()


def test_read_auth_defaults(tmp_path):
    path = tmp_path / "auth.defaults"
    path.write_text("# Swift 0.96 login settings\n\n"
                    "login.cluster.org.type=key\n"
                    "login.cluster.org.username=alice\n"
                    "login.cluster.org.key=~/.ssh/cluster_key\n"
                    "login.cluster.org.passphrase=p=q\n"
                    "other.type = password\n"
                    "other.password = secret\n")
    entries = read_auth_defaults(str(path))
    assert entries == {
        "login.cluster.org": AuthDefault(host="login.cluster.org", type="key", username="alice",
                                         key=os.path.expanduser("~/.ssh/cluster_key"),
                                         passphrase="p=q"),
        "other": AuthDefault(host="other", type="password", password="secret")}
    assert read_auth_defaults(str(tmp_path / "absent")) == {}


@pytest.mark.parametrize("line", ["no equals sign", "host.colour=blue", "typeonly=key",
                                  "host.type=kerberos"])
def test_a_malformed_auth_defaults_line_is_a_config_error(tmp_path, line):
    path = tmp_path / "auth.defaults"
    path.write_text(f"good.username=u\n{line}\n")
    with pytest.raises(ShellError) as err:
        read_auth_defaults(str(path))
    assert err.value.kind is ShellFailure.CONFIG
    assert f"{path}:2" in str(err.value)


def test_auth_defaults_give_the_user_and_key(sshd, no_personal_ssh):
    ssh_dir = no_personal_ssh / ".ssh"
    ssh_dir.mkdir()
    shutil.copy(sshd.known_hosts, ssh_dir / "known_hosts")
    (ssh_dir / "auth.defaults").write_text(
        f"127.0.0.1.type=key\n127.0.0.1.username={sshd.user}\n127.0.0.1.key={sshd.client_key}\n")

    async def body() -> None:
        sh = SSHShell("127.0.0.1", port=sshd.port)
        assert (await sh.run(["id", "-un"])).stdout == f"{sshd.user}\n"
        await sh.close()
        (ssh_dir / "auth.defaults").write_text("127.0.0.1.username\n")
        with pytest.raises(ShellError) as err:
            await SSHShell("127.0.0.1", port=sshd.port).connect()
        assert err.value.kind is ShellFailure.CONFIG
        assert f"{ssh_dir / 'auth.defaults'}:1" in str(err.value)
    run(body)


# --- remote refusals ---------------------------------------------------------------------------


def test_a_directory_the_login_user_cannot_write_is_remote(sshd, tmp_path):
    ro = Path(sshd.remote_work) / f"read-only-{secrets.token_hex(3)}"
    ro.mkdir()
    (ro / "kept").write_text("x")
    ro.chmod(0o555)  # owned by root
    src = tmp_path / "f"
    src.write_text("x")

    async def body() -> None:
        sh = shell(sshd)
        for attempt in (sh.put(str(src), f"{ro}/new"), sh.makedirs(f"{ro}/sub/dir"),
                        sh.remove_tree(f"{ro}/kept")):
            with pytest.raises(ShellError) as err:
                await attempt
            assert err.value.kind is ShellFailure.REMOTE
            assert err.value.host == sshd.address
            assert str(ro) in str(err.value)
        await sh.close()
    run(body)
    assert (ro / "kept").exists()


# --- a host that dies ---------------------------------------------------------------------------


def test_a_host_dying_mid_command_is_connection_lost_and_reconnect_brings_it_back(sshd, restarts):
    token = f"1000.{secrets.randbelow(10**6)}3"

    async def body() -> None:
        sh = shell(sshd)
        command = asyncio.create_task(sh.run(["sleep", token]))
        proc = await sh.start(["sh", "-c", "echo ready; exec sleep 30"])
        assert await proc.readline() == b"ready\n"
        await _until(lambda: _running_as_login_user(sshd, token))
        await asyncio.to_thread(sshd.stop)
        with pytest.raises(ShellError) as err:
            await command
        assert err.value.kind is ShellFailure.CONNECTION_LOST
        assert err.value.retryable and err.value.host == sshd.address
        assert await proc.wait() is None  # its end is unknown
        assert not sh.connected
        with pytest.raises(ShellError) as err:  # the next operation tries again, and fails
            await sh.run(["true"])
        assert err.value.kind is ShellFailure.UNREACHABLE
        # the host comes back while reconnect() waits for it
        back = asyncio.create_task(asyncio.to_thread(sshd.start))
        await sh.reconnect(give_up_after=60)
        await back
        assert sh.connected
        assert (await sh.run(["echo", "again"])).stdout == "again\n"
        await sh.close()
    run(body)


def test_the_next_operation_after_a_lost_connection_connects_again(sshd, restarts):
    async def body() -> None:
        sh = shell(sshd)
        await sh.connect()
        first = sh.connection
        await asyncio.to_thread(sshd.stop)
        await asyncio.to_thread(sshd.start)
        assert (await sh.run(["echo", "fresh"])).stdout == "fresh\n"
        assert sh.connection is not first
        await sh.close()
    run(body)


def test_reconnect_gives_up_when_the_host_stays_down(sshd, restarts):
    async def body() -> None:
        sh = shell(sshd)
        await sh.connect()
        await asyncio.to_thread(sshd.stop)
        with pytest.raises(ShellError) as err:
            await sh.reconnect(give_up_after=1.5)
        assert err.value.kind is ShellFailure.UNREACHABLE
        assert err.value.host == sshd.address
        assert sshd.address in str(err.value) and f"port {sshd.port}" in str(err.value)
    run(body)


def test_reconnect_does_not_retry_a_refused_login(sshd, tmp_path):
    wrong = _keygen(tmp_path / "wrong_key")

    async def body() -> None:
        with pytest.raises(ShellError) as err:
            await shell(sshd, identity_files=[str(wrong)]).reconnect(give_up_after=60)
        assert err.value.kind is ShellFailure.AUTH_REFUSED
    run(body)


def test_a_shell_used_from_a_new_event_loop_connects_there(sshd):
    sh = shell(sshd)

    async def once() -> None:
        assert (await sh.run(["true"])).returncode == 0

    asyncio.run(once())
    asyncio.run(once())  # the first loop's connection cannot serve this one
    asyncio.run(sh.close())


# --- the fixture itself ----------------------------------------------------------------------


@pytest.mark.parametrize("ci", ["", "true"])
def test_the_sshd_fixture_skips_without_sshd_and_fails_under_ci(tmp_path, ci):
    tests_dir = Path(__file__).resolve().parents[1]
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(tests_dir)!r})\n"
        "import sshd as fixture_module\n"
        "fixture_module.SSHD_BINARY = '/nonexistent/sshd'\n"
        "from sshd import sshd  # noqa: F401\n")
    (tmp_path / "test_needs_sshd.py").write_text("def test_it(sshd):\n    pass\n")
    env = {**os.environ, "CI": ci}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        "-p", "no:randomly", str(tmp_path)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert "/nonexistent/sshd is missing" in r.stdout
    if ci:
        assert r.returncode != 0 and "1 error" in r.stdout and "CI=true" in r.stdout
    else:
        assert r.returncode == 0 and "1 skipped" in r.stdout
