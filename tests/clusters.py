"""Where this test session's batch systems live: chosen once, before any daemon starts.

The test sshd (``sshd.py``) is a cluster's login node for the ``ssh-cl:`` tests, so its
sessions need the environment that finds the session's Slurm and Grid Engine
(``SLURM_CONF``, ``SGE_ROOT``...).  sshd reads ``SetEnv`` only when it starts, and it may
start before or after the batch systems; so the directories and ports of both clusters
are decided here, at import, and the fixtures (``slurm.py``, ``gridengine.py``) start their
daemons there when first asked.
"""

from __future__ import annotations

import os
import secrets
import socket
import tempfile
from pathlib import Path


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [int(s.getsockname()[1]) for s in socks]
    finally:
        for s in socks:
            s.close()


#: one directory per test session (per pytest process): only named here; the fixture
#: that first starts a cluster makes it (mode 0755: the sshd's login user runs jobs whose
#: files live here) and the last one to stop removes it
ROOT = Path(tempfile.gettempdir()) / f"swiftnb-clusters-{os.getpid()}-{secrets.token_hex(3)}"

SLURM_DIR = ROOT / "slurm"
SLURM_CONF = SLURM_DIR / "slurm.conf"
SLURMCTLD_PORT, SLURMD_PORT = free_ports(2)

SGE_ROOT = ROOT / "sge"
SGE_CELL = "default"
SGE_QMASTER_PORT, SGE_EXECD_PORT = free_ports(2)


def environment() -> dict[str, str]:
    """What a client of either cluster needs in its environment."""
    return {
        "SLURM_CONF": str(SLURM_CONF),
        "SGE_ROOT": str(SGE_ROOT),
        "SGE_CELL": SGE_CELL,
        "SGE_QMASTER_PORT": str(SGE_QMASTER_PORT),
        "SGE_EXECD_PORT": str(SGE_EXECD_PORT),
    }
