"""nbval support for the notebooks: a private sshd for 06-ssh-site.ipynb, a private
Slurm for 07-batch-and-coasters-on-slurm.ipynb.

06-ssh-site.ipynb runs a workflow on an ``execution.type: "ssh"`` site.  It reads the
host (a ~/.ssh/config Host alias) from ``SWIFTNB_DEMO_SSH_HOST`` and the remote work
directory from ``SWIFTNB_DEMO_SSH_WORKDIR``.  When a pytest run includes that notebook,
this file starts an sshd on 127.0.0.1 exactly as the test suite's ``sshd`` fixture does
(tests/sshd.py: a login user of its own, per-session keys, a fake HOME whose
``.ssh/config`` names the server under the alias ``swiftnb-test``) and points the
notebook's kernel at it through the environment: HOME (so ``~/.ssh/config`` resolves the
alias), the two variables above, and no SSH agent.  The notebook's kernel is a
subprocess started when nbval sets up the notebook, so the environment is set just
before that and restored once the notebook is done, when the sshd is stopped by the PID
that was started (other sshds on the machine, e.g. another test session's, are left
alone).  The other notebooks never see the fake HOME or the sshd.

Why hooks and not an autouse session fixture: nbval's cells are plain ``pytest.Item``s,
not functions, and pytest gives fixtures (autouse ones included) only to functions, so
such a fixture would never run for a notebook.  The hooks below play its part: the sshd
is set up once per session, lazily at the first cell of the notebook (so a run that does
not include it starts nothing), and torn down after its last cell, or at the end of the
session at the latest.

Without sshd, without root, or when the sshd does not start, the notebook's cells are
skipped with the reason; under ``CI=true`` they fail instead, as the test suite's
fixture does (.ci/run installs openssh-server).

07-batch-and-coasters-on-slurm.ipynb gets a one-node Slurm the same way: started lazily
at its first cell by tests/slurm.py's ``start_cluster`` (its own munged, slurmctld and
slurmd, in a temporary directory, on free ports), given to the kernel as
``SWIFTNB_DEMO_SLURM_CONF`` (the notebook makes it its ``SLURM_CONF``) and
``SWIFTNB_DEMO_SLURM_PARTITION``, and stopped by its PIDs after the notebook's last cell
or at the end of the session.  Without Slurm's binaries or root its cells are skipped
with the reason; under ``CI=true`` they fail.

Live outputs are not compared.  The shipped notebooks store no widget views and no bokeh
output (a stored view is a stale snapshot, and without its state JupyterLab shows it as
``VBox(children=...)`` text; tests/browser checks that none is stored), while running a
cell shows them: a dashboard under every ``%%swift`` cell, BokehJS loaded once per kernel
(swiftnb.bokehjs).  So in a cell whose output is checked (``nbval-check-output``),
nbval compares what is left once the outputs carrying one of ``LIVE_MIME_TYPES`` are
taken away on both sides (nbval has no option for it: ``compare_outputs`` is wrapped).
"""

from __future__ import annotations

import abc
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from nbval.plugin import IPyNbCell

_TESTS = Path(__file__).resolve().parent.parent / "tests"
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

import clusters as test_clusters  # noqa: E402  (tests/clusters.py)
import slurm as test_slurm  # noqa: E402  (tests/slurm.py)
import sshd as test_sshd  # noqa: E402  (tests/sshd.py)

#: outputs that are live views (ipywidgets, bokeh), never stored in a shipped notebook
LIVE_MIME_TYPES = ("application/vnd.jupyter.widget-view+json",
                   "application/vnd.bokehjs_load.v0+json",
                   "application/vnd.bokehjs_exec.v0+json")


def _without_live(outputs: list[dict]) -> list[dict]:
    return [o for o in outputs if not any(m in o.get("data", {}) for m in LIVE_MIME_TYPES)]


_compare_outputs = IPyNbCell.compare_outputs


def _compare_without_live(self: IPyNbCell, test: list[dict], ref: list[dict],
                          skip_compare: tuple[str, ...] | None = None) -> bool:
    return _compare_outputs(self, _without_live(test), _without_live(ref), skip_compare)


IPyNbCell.compare_outputs = _compare_without_live

SSH_NOTEBOOK = "06-ssh-site.ipynb"
SLURM_NOTEBOOK = "07-batch-and-coasters-on-slurm.ipynb"
_START_ATTEMPTS = 3  # a free port may be taken between choosing and binding


class _NotebookDaemon(abc.ABC):
    """A daemon one notebook needs (its sshd, its Slurm): started at most once, at the
    notebook's first cell, stopped once; the notebook's kernel learns where it is from
    environment variables set meanwhile (``env_keys``)."""

    notebook: str
    what: str                      # "an sshd", "Slurm", for messages
    env_keys: tuple[str, ...]      # the variables set (None in ``environment()``: removed)

    def __init__(self) -> None:
        self.dir: Path | None = None
        self.problem: str | None = None  # why there is none, once that is known
        self.started = False
        self._saved_env: dict[str, str | None] | None = None

    @abc.abstractmethod
    def unavailable(self) -> str | None:
        """Why it cannot run here, or None."""

    @abc.abstractmethod
    def start(self) -> None:
        """Start it (RuntimeError if it does not come up)."""

    @abc.abstractmethod
    def environment(self) -> dict[str, str | None]:
        """What the kernel is given (None: the variable is removed)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop it by the PIDs started."""

    def setup(self) -> None:
        """Start it and set the environment, the first time only; skip or fail (under
        CI=true) the calling cell when it cannot run."""
        if not self.started:
            self.started = True
            self.problem = self.unavailable()
            if self.problem is None:
                try:
                    self.start()
                except RuntimeError as exc:
                    self.problem = f"the notebook's {self.what} did not start: {exc}"
            if self.problem is None:
                self._saved_env = {key: os.environ.get(key) for key in self.env_keys}
                for key, value in self.environment().items():
                    if value is None:
                        os.environ.pop(key, None)
                    else:
                        os.environ[key] = value
        if self.problem is not None:
            if os.environ.get("CI") == "true":
                pytest.fail(f"CI=true but no {self.what} can run for {self.notebook}: "
                            f"{self.problem}", pytrace=False)
            pytest.skip(f"{self.notebook} needs {self.what}: {self.problem}")

    def teardown(self) -> None:
        """Restore the environment, stop the daemon, remove its files."""
        if self._saved_env is not None:
            for key, value in self._saved_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            self._saved_env = None
        try:
            self.stop()
        finally:
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None


class _NotebookSSHD(_NotebookDaemon):
    notebook = SSH_NOTEBOOK
    what = "an sshd"
    env_keys = ("HOME", "SSH_AUTH_SOCK", "SWIFTNB_DEMO_SSH_HOST", "SWIFTNB_DEMO_SSH_WORKDIR")

    def __init__(self) -> None:
        super().__init__()
        self.server: test_sshd.SSHD | None = None

    def unavailable(self) -> str | None:
        return test_sshd.unavailable()

    def start(self) -> None:
        user = test_sshd._ensure_login_user()
        self.dir = Path(tempfile.mkdtemp(prefix="swiftnb-nb-sshd-"))
        for attempt in range(_START_ATTEMPTS):
            if self.server is not None:  # the last attempt's files, before new ones
                shutil.rmtree(self.server.remote_work, ignore_errors=True)
                shutil.rmtree(self.dir / "home", ignore_errors=True)
            self.server = test_sshd._write_files(self.dir, test_sshd._free_port(), user)
            try:
                self.server.start()
                return
            except RuntimeError:
                if attempt == _START_ATTEMPTS - 1:
                    raise

    def environment(self) -> dict[str, str | None]:
        assert self.server is not None
        return {"HOME": str(self.server.home),
                "SSH_AUTH_SOCK": None,  # only the fake home's key, as tests/sshd.py
                "SWIFTNB_DEMO_SSH_HOST": self.server.alias,
                "SWIFTNB_DEMO_SSH_WORKDIR": self.server.remote_work}

    def stop(self) -> None:
        server, self.server = self.server, None
        if server is not None:
            server.stop()
            shutil.rmtree(server.remote_work, ignore_errors=True)


class _NotebookSlurm(_NotebookDaemon):
    notebook = SLURM_NOTEBOOK
    what = "Slurm"
    env_keys = ("SWIFTNB_DEMO_SLURM_CONF", "SWIFTNB_DEMO_SLURM_PARTITION")

    def __init__(self) -> None:
        super().__init__()
        self.cluster: test_slurm.Slurm | None = None

    def unavailable(self) -> str | None:
        return test_slurm.unavailable()

    def start(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="swiftnb-nb-slurm-"))
        self.dir.chmod(0o755)  # munged: every directory above its socket searchable by all
        for attempt in range(_START_ATTEMPTS):
            ctld_port, slurmd_port = test_clusters.free_ports(2)
            try:  # start_cluster stops what it started when the node does not come up
                self.cluster = test_slurm.start_cluster(self.dir / f"try{attempt}",
                                                        ctld_port, slurmd_port)
                return
            except RuntimeError:
                if attempt == _START_ATTEMPTS - 1:
                    raise

    def environment(self) -> dict[str, str | None]:
        assert self.cluster is not None
        return {"SWIFTNB_DEMO_SLURM_CONF": str(self.cluster.conf),
                "SWIFTNB_DEMO_SLURM_PARTITION": self.cluster.partition}

    def stop(self) -> None:
        cluster, self.cluster = self.cluster, None
        if cluster is not None:
            cluster.stop()


_sshd = _NotebookSSHD()
_slurm = _NotebookSlurm()
#: each notebook that needs a daemon, and that daemon's keeper
_SERVICES: dict[str, _NotebookDaemon] = {SSH_NOTEBOOK: _sshd, SLURM_NOTEBOOK: _slurm}


def _notebook(item: pytest.Item | None) -> str | None:
    return None if item is None else Path(str(item.path)).name


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # before the runner sets up the notebook (nbval starts its kernel there)
    service = _SERVICES.get(_notebook(item) or "")
    if service is not None:
        service.setup()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None):
    try:
        return (yield)  # the runner tears the notebook down (nbval stops its kernel)
    finally:
        name = _notebook(item)
        service = _SERVICES.get(name or "")
        if service is not None and _notebook(nextitem) != name:
            service.teardown()


def pytest_sessionfinish(session: pytest.Session) -> None:
    # an interrupted run: nothing of the daemons is left behind
    try:
        _sshd.teardown()
    finally:
        _slurm.teardown()
