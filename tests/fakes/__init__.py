"""FAKE batch systems for tests: PBS/Torque, LSF, HTCondor and Cobalt stand-ins.

These are NOT the real batch systems.  Slurm and Grid Engine run for real on the test
machine (tests/slurm.py, tests/gridengine.py); PBS, LSF, HTCondor and Cobalt cannot, so
their adapters are tested against small stdlib programs named exactly like their commands
(``bin/pbs/qsub``, ``bin/lsf/bjobs``, ``bin/condor/condor_q``, ``bin/cobalt/qstat``...;
PBS's and Cobalt's ``qsub``/``qstat``/``qdel`` live in separate directories since the
names collide).  They print the documented output formats of the real commands (each
``*_fake.py`` says where from), and really run the submitted job scripts in the background
(``fakelrm.py``), so jobs really run, finish, fail, get cancelled and hit their walltime.

The ``fake_lrm`` fixture (parametrize it indirectly with ``"pbs"``, ``"lsf"``,
``"condor"`` or ``"cobalt"``) puts that system's directory first on ``PATH`` and gives it
a state directory, for this test process: ``LocalShell`` starts commands with the
process's environment, so ``qsub`` is then the fake.  At teardown every job still alive
is cancelled, then its runner and process group are killed by their recorded ids.

The commands are ``sh`` scripts that ``exec`` Python (``$SWIFTNB_FAKE_PYTHON``, else
``python3``): the fixture names this test process's interpreter, which starts at once
where a ``python3`` found on PATH may be a slow version-manager shim.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from . import fakelrm

__all__ = ["FakeLRM", "fake_lrm", "SYSTEMS", "BIN"]

BIN = Path(__file__).resolve().parent / "bin"
SYSTEMS = ("pbs", "lsf", "condor", "cobalt", "moab")


@dataclass
class FakeLRM:
    """One fake batch system on PATH: its name, its commands' directory, its state."""

    system: str
    bin: Path
    state: Path

    def records(self) -> list[dict]:
        """Every job it was given (the fake's own records, for checking what it saw)."""
        directory = self.state / self.system
        out = []
        for path in sorted(directory.glob("*.json"), key=lambda p: int(p.stem)):
            out.append(json.loads(path.read_text()))
        return out

    def stop(self) -> None:
        fakelrm.stop_all(self.state)


@pytest.fixture
def fake_lrm(request: pytest.FixtureRequest, tmp_path: Path,
             monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLRM]:
    """A FAKE batch system (``request.param``) first on PATH, with walltime minutes of
    one second and a short queue wait (see ``fakelrm`` for the knobs)."""
    system = request.param
    if system not in SYSTEMS:
        raise ValueError(f"no fake batch system {system!r} (one of {', '.join(SYSTEMS)})")
    state = tmp_path / "fake-lrm"
    state.mkdir()
    fake = FakeLRM(system, BIN / system, state)
    monkeypatch.setenv("PATH", f"{fake.bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv(fakelrm.ENV_DIR, str(state))
    monkeypatch.setenv(fakelrm.ENV_PYTHON, sys.executable)
    monkeypatch.setenv(fakelrm.ENV_MINUTE, "1")
    monkeypatch.setenv(fakelrm.ENV_DELAY, "0.2")
    try:
        yield fake
    finally:
        fake.stop()
