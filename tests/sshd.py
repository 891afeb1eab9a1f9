"""A real OpenSSH server on 127.0.0.1 for the SSH tests (session fixture ``sshd``).

Why a real one: the SSH layer's hard parts (host keys, ~/.ssh/config, many channels on
one connection, a host dying mid-command, SFTP errors) are sshd's behaviour, which no
fake reproduces.  How it is run follows /work/shared/reference/test-clusters.md: keys made
per session, a login user of its own (``useradd -m -p '*'``: a locked account is refused
even with a key; root's .bashrc is slow), ``sshd -D -e`` in its own process group, ready
once a key login succeeds, stopped by the PID this module started.

sshd forks a child per connection and that child calls setsid(), so neither the
listener's process group nor its session holds the connections; they are found through
/proc by parent pid (``procs.descendants``) and killed with the listener.

Tests that need it skip on a machine without /usr/sbin/sshd or without root, and fail
under CI=true, where the service must be there (.ci/run installs openssh-server).
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest


import procs
from clusters import environment as cluster_environment

SSHD_BINARY = "/usr/sbin/sshd"  # absolute: sshd re-execs itself
LOGIN = "swiftnbtest"
ALIAS = "swiftnb-test"  # the Host alias written into the fake home's ~/.ssh/config
_READY_WITHIN = 15.0  # seconds from start to a working key login
_STOP_WITHIN = 10.0


def _run(argv: list[str], timeout: float = 30.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)


def _keygen(path: Path) -> None:
    """A fresh ed25519 key pair at ``path`` (stale files first removed, or ssh-keygen asks)."""
    for p in (path, path.with_name(path.name + ".pub")):
        p.unlink(missing_ok=True)
    r = _run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "swiftnb-test", "-f", str(path)])
    if r.returncode != 0:
        raise RuntimeError(f"ssh-keygen failed: {r.stderr.strip()}")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ensure_login_user() -> pwd.struct_passwd:
    """The login user, made if missing ('*' in the password field: not locked)."""
    try:
        return pwd.getpwnam(LOGIN)
    except KeyError:
        pass
    r = _run(["useradd", "-m", "-s", "/bin/sh", "-p", "*", LOGIN])
    try:  # another test session may have made it at the same moment
        return pwd.getpwnam(LOGIN)
    except KeyError:
        raise RuntimeError(f"useradd {LOGIN} failed: {r.stderr.strip()}") from None


@dataclass
class SSHD:
    """One sshd of this test session, and a client side prepared for it.

    ``home`` is a fake HOME for the client: ``.ssh/config`` (Host ``alias`` with
    HostName, Port, User, IdentityFile), ``.ssh/known_hosts`` (the host key, in the
    ``[127.0.0.1]:PORT`` form) and ``.ssh/id_ed25519``.  ``remote_work`` is a directory
    of the login user that only the remote side uses."""

    dir: Path  # sshd_config, host key, authorized_keys, pid file, log
    host: str
    port: int
    user: str
    client_key: Path
    host_key_line: str  # "ssh-ed25519 AAAA..." of the server
    home: Path
    remote_work: str
    alias: str = ALIAS
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def known_hosts(self) -> Path:
        return self.home / ".ssh" / "known_hosts"

    @property
    def ssh_config(self) -> Path:
        return self.home / ".ssh" / "config"

    @property
    def address(self) -> str:
        """host:port, as the SSH layer names a host in its messages."""
        return f"{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def env(self) -> dict[str, str]:
        """This process's environment with HOME set to the fake home and no agent."""
        env = dict(os.environ)
        env["HOME"] = str(self.home)
        env.pop("SSH_AUTH_SOCK", None)
        return env

    def ssh_argv(self, *command: str) -> list[str]:
        """An OpenSSH client command line for the alias; nothing of root's ~/.ssh is read
        (OpenSSH takes ~ from the password database, not HOME)."""
        return ["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={self.known_hosts}",
                "-o", "IdentitiesOnly=yes", "-o", "ConnectTimeout=5", self.alias, *command]

    def connection_pids(self) -> list[int]:
        """The per-connection sshd processes (direct children of the listener): one per
        client connection that is open now."""
        if not self.running:
            return []
        assert self.proc is not None
        listener = self.proc.pid
        return [proc.pid for proc in procs.processes() if proc.ppid == listener]

    def start(self) -> None:
        """Start sshd (again) on the same port and keys; return once a key login works."""
        if self.running:
            return
        run_dir = Path("/run/sshd")  # privilege separation directory, as root
        run_dir.mkdir(mode=0o755, exist_ok=True)
        run_dir.chmod(0o755)
        log = open(self.dir / "sshd.log", "ab")
        try:
            self.proc = subprocess.Popen(
                [SSHD_BINARY, "-D", "-e", "-f", str(self.dir / "sshd_config")],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                preexec_fn=procs.dies_with_pytest())
        finally:
            log.close()
        deadline = time.monotonic() + _READY_WITHIN
        last = ""
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            r = _run(self.ssh_argv("true"), timeout=10)
            if r.returncode == 0:
                return
            last = r.stderr.strip()
            time.sleep(0.1)
        log_tail = (self.dir / "sshd.log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"sshd on {self.address} did not accept a key login within "
                           f"{_READY_WITHIN:.0f} s; ssh said: {last}\nsshd log:\n{log_tail}")

    def stop(self) -> None:
        """Kill the listener and every connection's processes at once, as if the host
        died: clients see their connections drop.

        The tree is frozen first (SIGSTOP, repeated until no new process shows up: a
        stopped process cannot fork), then killed: killing a parent first would hand its
        children to PID 1, out of sight.  Processes in the sessions of the killed ones
        (sshd's children call setsid) are swept too."""
        if self.proc is None:
            return
        listener = self.proc.pid
        if self.proc.poll() is None:
            os.kill(listener, signal.SIGSTOP)  # no new connections meanwhile
            frozen: set[int] = set()
            deadline = time.monotonic() + _STOP_WITHIN
            while time.monotonic() < deadline:
                new = [pid for pid in procs.descendants(listener) if pid not in frozen]
                if not new:
                    break
                for pid in new:
                    procs.kill(pid, signal.SIGSTOP)
                    frozen.add(pid)
            sessions = frozen | {listener}
            for pid in [*frozen, *procs.in_sessions(sessions)]:
                procs.kill(pid, signal.SIGKILL)
            os.kill(listener, signal.SIGKILL)
            try:
                self.proc.wait(timeout=_STOP_WITHIN)
            except subprocess.TimeoutExpired:
                pass
        self.proc = None


def _write_files(d: Path, port: int, user: pwd.struct_passwd) -> SSHD:
    host_key = d / "host_ed25519"
    _keygen(host_key)
    home = d / "home"
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(parents=True, mode=0o700)
    client_key = ssh_dir / "id_ed25519"
    _keygen(client_key)
    # sshd reads authorized_keys as the login user: the directory must be reachable
    d.chmod(0o755)
    auth = d / "authorized_keys"
    auth.write_text(Path(str(client_key) + ".pub").read_text())
    auth.chmod(0o644)
    (d / "sshd_config").write_text(
        f"Port {port}\n"
        "ListenAddress 127.0.0.1\n"
        f"HostKey {host_key}\n"
        f"PidFile {d / 'sshd.pid'}\n"
        f"AuthorizedKeysFile {auth}\n"
        "StrictModes no\n"
        "PubkeyAuthentication yes\n"
        "PasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\n"
        "UsePAM no\n"
        "PermitRootLogin prohibit-password\n"
        f"AllowUsers {user.pw_name}\n"
        "UseDNS no\n"
        "MaxSessions 200\n"
        "MaxStartups 100:30:200\n"
        "Subsystem sftp internal-sftp\n"
        # sessions find the test session's Slurm and Grid Engine (tests/clusters.py)
        "SetEnv " + " ".join(f'"{k}={v}"' for k, v in cluster_environment().items()) + "\n")
    host_key_line = " ".join(Path(str(host_key) + ".pub").read_text().split()[:2])
    (ssh_dir / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_key_line}\n")
    (ssh_dir / "config").write_text(
        f"Host {ALIAS}\n"
        "    HostName 127.0.0.1\n"
        f"    Port {port}\n"
        f"    User {user.pw_name}\n"
        f"    IdentityFile {client_key}\n")
    remote_work = os.path.join(user.pw_dir, f"work-{secrets.token_hex(4)}")
    os.makedirs(remote_work, mode=0o755)
    os.chown(remote_work, user.pw_uid, user.pw_gid)
    return SSHD(dir=d, host="127.0.0.1", port=port, user=user.pw_name, client_key=client_key,
                host_key_line=host_key_line, home=home, remote_work=remote_work)


def unavailable() -> str | None:
    """Why no sshd can run here, or None."""
    if not os.path.exists(SSHD_BINARY):
        return f"{SSHD_BINARY} is missing (Debian: apt-get install openssh-server)"
    if os.geteuid() != 0:
        return "sshd for tests needs root (it runs a login user's sessions)"
    for tool in ("ssh", "ssh-keygen", "useradd"):
        if shutil.which(tool) is None:
            return f"{tool} is missing (Debian: apt-get install openssh-client passwd)"
    return None


@pytest.fixture(scope="session")
def sshd() -> Iterator[SSHD]:
    """A real sshd on 127.0.0.1 for the whole session (see the module docstring)."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no test sshd can run: {reason}")
        pytest.skip(reason)
    user = _ensure_login_user()
    d = Path(tempfile.mkdtemp(prefix="swiftnb-sshd-"))
    server: SSHD | None = None
    try:
        for attempt in range(3):  # a free port may be taken between choosing and binding
            if server is not None:
                shutil.rmtree(server.remote_work, ignore_errors=True)
                shutil.rmtree(d / "home", ignore_errors=True)
            server = _write_files(d, _free_port(), user)
            try:
                server.start()
                break
            except RuntimeError:
                if attempt == 2:
                    raise
        assert server is not None
        yield server
    finally:
        if server is not None:
            server.stop()
            shutil.rmtree(server.remote_work, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def no_personal_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME and no agent: nothing of the tester's own ~/.ssh leaks into a test
    of the SSH layer.  The empty home is returned for tests that write a config there."""
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home
