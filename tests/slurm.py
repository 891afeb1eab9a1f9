"""A real one-node Slurm 22.05 on 127.0.0.1 for the batch tests (session fixture ``slurm``).

Why a real one: what an adapter must get right (sbatch's refusals, squeue's states and its
errors for jobs it no longer lists, a controller that stops answering) is Slurm's own
behaviour.  How it runs follows /work/shared/reference/test-clusters.md: a private munged
(own key and socket), ``slurmctld -D -i -c`` and ``slurmd -D -N localhost``, each under
setsid with output to files, in the directory and on the ports that ``clusters.py`` chose
at import (the test sshd exports ``SLURM_CONF`` to its sessions, so a login there finds
this cluster too); ``start_cluster`` starts one in a directory and on ports of the
caller's, for a program outside pytest (benchmarks/batch.py).  Ready once ``sinfo`` says
the node is idle; stopped by the PIDs this module started, after cancelling every job and
killing the step daemons (slurmstepd detaches into its own session, so stopping slurmd
leaves them running).

Jobs are submitted by root and by the sshd's login user: the cluster's directory is
readable by all, the munge socket's directory is 0711 (munged requires every directory
above the socket to be searchable by all), the key stays private.

Tests that need it skip on a machine without the binaries or without root, and fail
under CI=true, where .ci/run installs them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest


import procs
from clusters import SLURM_CONF, SLURM_DIR, SLURMCTLD_PORT, SLURMD_PORT

PARTITION = "debug"
NODE = "localhost"
CPUS = 8
_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")
_READY_WITHIN = 30.0   # seconds from start to an idle node (measured 0.2-1.4 s)
_STOP_WITHIN = 15.0


def _config(d: Path, munge_socket: Path, ctld_port: int, slurmd_port: int) -> str:
    """slurm.conf: the lines the reference lists, everything else under ``d``."""
    return f"""\
ClusterName=swiftnbtest
SlurmctldHost={NODE}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge_socket}
StateSaveLocation={d / 'state'}
SlurmdSpoolDir={d / 'spool'}
SlurmctldPidFile={d / 'slurmctld.pid'}
SlurmdPidFile={d / 'slurmd.pid'}
SlurmctldLogFile={d / 'slurmctld.log'}
SlurmdLogFile={d / 'slurmd.log'}
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={d / 'jobcomp.txt'}
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
KillWait=2
InactiveLimit=0
MpiDefault=none
MailProg=/bin/true
NodeName={NODE} NodeAddr=127.0.0.1 NodeHostname={NODE} CPUs={CPUS} Sockets=1 \
CoresPerSocket={CPUS} ThreadsPerCore=1 RealMemory=1024 State=UNKNOWN
PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP
"""


@dataclass
class Slurm:
    """The session's Slurm: its files, its daemons and helpers for tests.

    ``env()`` is this process's environment with ``SLURM_CONF`` (all a client needs);
    ``run`` runs a Slurm command with it.  ``stop_controller``/``start_controller`` stop
    slurmctld by its PID and start it again on its saved state (jobs survive), for the
    "slurmctld restarted during a run" fault."""

    dir: Path
    conf: Path
    ctld_port: int = SLURMCTLD_PORT
    slurmd_port: int = SLURMD_PORT
    partition: str = PARTITION
    node: str = NODE
    cpus: int = CPUS
    _procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict, repr=False)

    @property
    def munge_socket(self) -> Path:
        return self.dir / "munge" / "munge.sock"

    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, argv: Sequence[str], timeout: float = 30.0,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                              env=self.env(), input=input, check=False)

    def pid(self, daemon: str) -> int | None:
        """The PID of ``munged``, ``slurmctld`` or ``slurmd`` while it runs."""
        proc = self._procs.get(daemon)
        return proc.pid if proc is not None and proc.poll() is None else None

    # -- daemons ---------------------------------------------------------------------------
    def _daemon(self, name: str, argv: list[str]) -> None:
        """Start one daemon in a session of its own (setsid), output to DIR/NAME.out."""
        with open(self.dir / f"{name}.out", "ab") as out:
            self._procs[name] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=self.env(),
                start_new_session=True, preexec_fn=procs.dies_with_pytest())

    def _stop_daemon(self, name: str) -> None:
        proc = self._procs.pop(name, None)
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=_STOP_WITHIN)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_STOP_WITHIN)

    def _log_tail(self, name: str) -> str:
        parts = []
        for path in (self.dir / f"{name}.log", self.dir / f"{name}.out"):
            if path.exists():
                parts.append(path.read_text(errors="replace")[-1500:])
        return "\n".join(parts)

    def start(self) -> None:
        """munged, slurmctld (clearing old state), slurmd; return once the node is idle."""
        d = self.dir
        key_dir = d / "munge-key"
        key_dir.mkdir(mode=0o700, exist_ok=True)
        key = key_dir / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            key.chmod(0o400)
        sock_dir = self.munge_socket.parent
        sock_dir.mkdir(exist_ok=True)
        sock_dir.chmod(0o711)   # other users reach the socket, never list the directory
        for sub in ("state", "spool"):
            (d / sub).mkdir(mode=0o755, exist_ok=True)
        self.conf.write_text(_config(d, self.munge_socket, self.ctld_port, self.slurmd_port))
        self.conf.chmod(0o644)
        self._daemon("munged", ["munged", "-F", f"--socket={self.munge_socket}",
                                f"--key-file={key}", f"--pid-file={key_dir / 'munged.pid'}",
                                f"--log-file={key_dir / 'munged.log'}",
                                f"--seed-file={key_dir / 'munged.seed'}"])
        deadline = time.monotonic() + _READY_WITHIN
        while not self.munge_socket.exists():
            if self._procs["munged"].poll() is not None or time.monotonic() > deadline:
                log = key_dir / "munged.log"
                words = log.read_text(errors="replace")[-1500:] if log.exists() else "no log"
                raise RuntimeError(f"munged did not start:\n{words}")
            time.sleep(0.05)
        self._daemon("slurmctld", ["slurmctld", "-D", "-i", "-c", "-f", str(self.conf)])
        self._daemon("slurmd", ["slurmd", "-D", "-N", NODE, "-f", str(self.conf)])
        self.wait_idle()

    def node_state(self) -> str:
        r = self.run(["sinfo", "-h", "-N", "-n", NODE, "-o", "%t"], timeout=15)
        return r.stdout.strip() if r.returncode == 0 else ""

    def wait_idle(self) -> None:
        """Until ``sinfo`` says the node is idle (resumed if it came up down or drained)."""
        deadline = time.monotonic() + _READY_WITHIN
        state = ""
        while time.monotonic() < deadline:
            for name, proc in self._procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}):\n{self._log_tail(name)}")
            state = self.node_state()
            if state.rstrip("*") in ("idle", "mix", "alloc"):
                return
            if state.rstrip("*").startswith(("down", "drain", "drng")):
                self.run(["scontrol", "update", f"nodename={NODE}", "state=resume"])
            time.sleep(0.1)
        raise RuntimeError(f"the test Slurm's node is '{state}', not idle, after "
                           f"{_READY_WITHIN:.0f} s:\n{self._log_tail('slurmctld')}\n"
                           f"{self._log_tail('slurmd')}")

    def stop_controller(self) -> None:
        """Stop slurmctld (SIGTERM to the PID started here; it saves its state)."""
        self._stop_daemon("slurmctld")

    def start_controller(self) -> None:
        """Start slurmctld again on its saved state (no ``-c``: jobs are kept); return
        once ``sinfo`` answers."""
        if self.pid("slurmctld") is not None:
            return
        self._daemon("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        deadline = time.monotonic() + _READY_WITHIN
        while time.monotonic() < deadline:
            if self.node_state():
                return
            proc = self._procs["slurmctld"]
            if proc.poll() is not None:
                raise RuntimeError(f"slurmctld exited ({proc.returncode}):\n"
                                   f"{self._log_tail('slurmctld')}")
            time.sleep(0.1)
        raise RuntimeError("slurmctld did not answer sinfo after a restart:\n"
                           + self._log_tail("slurmctld"))

    def cancel_all(self) -> None:
        """Cancel every job of this cluster (any user's)."""
        if self.pid("slurmctld") is None:
            return
        r = self.run(["squeue", "-h", "-o", "%i"], timeout=15)
        ids = r.stdout.split() if r.returncode == 0 else []
        if ids:
            self.run(["scancel", *ids], timeout=15)

    def step_daemons(self) -> list[int]:
        """Live slurmstepd processes of this cluster: found through /proc, their
        environment holds this cluster's SLURM_CONF."""
        needle = f"SLURM_CONF={self.conf}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                exe = os.readlink(f"/proc/{entry}/exe")
                if os.path.basename(exe) != "slurmstepd":
                    continue
                environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            except OSError:
                continue
            if needle in environ and procs.alive(int(entry)):
                found.append(int(entry))
        return found

    def stop(self) -> None:
        """Cancel every job, stop the daemons by their PIDs, kill leftover step daemons
        with their sessions; the processes are gone (not zombies) afterwards."""
        try:
            self.cancel_all()
            deadline = time.monotonic() + 5
            while self.step_daemons() and time.monotonic() < deadline:
                time.sleep(0.1)
        finally:
            for name in ("slurmd", "slurmctld", "munged"):
                self._stop_daemon(name)
            steps = self.step_daemons()
            sessions = {st.sid for st in map(procs.stat, steps) if st is not None}
            doomed = set(steps) | set(procs.in_sessions(sessions))
            for pid in doomed:
                procs.kill(pid, signal.SIGKILL)
            left = procs.wait_gone(sorted(doomed), _STOP_WITHIN)
            if left:
                raise RuntimeError(f"processes of the test Slurm outlived SIGKILL: {left}")


def start_cluster(d: Path, ctld_port: int, slurmd_port: int) -> Slurm:
    """A cluster of its own in directory ``d`` (made 0755 if missing) on the given ports,
    started and idle, for a program outside pytest (benchmarks/batch.py); the caller
    stops it with ``stop()``.  If it does not come up, what it started is stopped."""
    d.mkdir(mode=0o755, parents=True, exist_ok=True)
    d.chmod(0o755)   # whatever the umask: other users reach the cluster
    cluster = Slurm(dir=d, conf=d / "slurm.conf", ctld_port=ctld_port, slurmd_port=slurmd_port)
    try:
        cluster.start()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def unavailable() -> str | None:
    """Why no Slurm can run here, or None."""
    missing = [b for b in _BINARIES if shutil.which(b) is None
               and not os.path.exists(f"/usr/sbin/{b}")]
    if missing:
        return (f"{', '.join(missing)} missing (Debian: apt-get install slurm-wlm "
                "slurm-client munge)")
    if os.geteuid() != 0:
        return "the test Slurm needs root (its daemons run jobs of other users)"
    return None


@pytest.fixture(scope="session")
def slurm() -> Iterator[Slurm]:
    """A real one-node Slurm for the whole session (see the module docstring)."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the test Slurm cannot run: {reason}")
        pytest.skip(reason)
    SLURM_DIR.parent.mkdir(mode=0o755, exist_ok=True)
    SLURM_DIR.parent.chmod(0o755)  # whatever the umask: other users reach the cluster
    SLURM_DIR.mkdir(mode=0o755, parents=True, exist_ok=True)
    SLURM_DIR.chmod(0o755)
    cluster = Slurm(dir=SLURM_DIR, conf=SLURM_CONF)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(SLURM_DIR, ignore_errors=True)
        try:  # the session's cluster directory, once the other cluster has gone too
            SLURM_DIR.parent.rmdir()
        except OSError:
            pass
