"""A real Son of Grid Engine on this machine for the SGE tests (session fixture ``gridengine``).

Why a real one: what an adapter must get right (qsub's refusals, qstat's states, qacct's
lag and its ``failed`` codes, a walltime kill) is Grid Engine's behaviour, which no fake
reproduces.  How it is built follows /work/shared/reference/test-clusters.md: the package's
own cell is unusable, so a private ``SGE_ROOT`` (``clusters.SGE_ROOT``, ports from
``clusters.py``, so the test sshd can export them before this starts) links to the
installed binaries and holds a classic-spooling cell made with ``spoolinit`` and
``spooldefaults``; ``host_aliases`` maps this machine's name to ``localhost`` (its name
resolves to 127.0.0.1, which reverse-resolves to localhost, and qmaster would reject
clients); qmaster and execd run in the foreground (``SGE_ND=1``) in sessions of their own,
so this module owns their PIDs.  Once qmaster answers, this host becomes a submit host,
the scheduler runs every second, a PE ``smp`` is added and then queue ``all.q`` (8 slots,
``pe_list smp``, no load thresholds: a 2-core host would otherwise go into alarm after two
jobs).  ``min_uid 0`` lets root's jobs run; accounting is flushed at once, so ``qacct``
lags a job's end by about a second instead of 15.

The test sshd's login user (``sshd.LOGIN``) submits too: everything under ``clusters.ROOT``
is readable by all, and this host is a submit host for every user.

Stopping: ``qdel`` everything, SIGTERM both daemons (qmaster takes about 9 s to exit),
SIGKILL what is left after a bound, then kill the job processes left behind: each job runs
under an ``sge_shepherd`` (whose working directory is in this cell's execd spool) in a
session of its own, and shepherds outlive execd by design.

Tests that need it skip on a machine without Grid Engine or without root, and fail under
CI=true, where it must be there (.ci/run installs gridengine-master, -exec and -client).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import clusters
import procs
import pytest


QMASTER = "/usr/sbin/sge_qmaster"
EXECD = "/usr/sbin/sge_execd"
GE_LIB = Path("/usr/lib/gridengine")             # spoolinit, spooldefaults, gethostname
PACKAGE_ROOT = Path("/var/lib/gridengine")        # the package's bin, lib, utilbin
UTIL = Path("/usr/share/gridengine/util")
DEFAULT_CONFIGURATION = Path("/usr/share/gridengine/default-configuration")
CLIENTS = ("qsub", "qstat", "qdel", "qacct", "qconf")

QUEUE = "all.q"
PE = "smp"
SLOTS = 8
#: the daemons' whole environment: execd hands its own to every job, and this process's
#: (a tester's PATH, proxies, tokens) has no business there
_DAEMON_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               "LANG": "C.UTF-8"}
_READY_WITHIN = 30.0   # seconds for qmaster to answer, then for the queue to be usable
_STOP_WITHIN = 15.0    # qmaster takes about 9 s on SIGTERM


def unavailable() -> str | None:
    """Why no Grid Engine can run here, or None."""
    needed = [QMASTER, EXECD, str(GE_LIB / "spoolinit"), str(GE_LIB / "spooldefaults"),
              str(GE_LIB / "gethostname"), str(DEFAULT_CONFIGURATION), str(UTIL / "resources")]
    for path in needed:
        if not os.path.exists(path):
            return (f"{path} is missing (Debian: apt-get install gridengine-master "
                    "gridengine-exec gridengine-client)")
    for tool in CLIENTS:
        if shutil.which(tool) is None:
            return f"{tool} is missing (Debian: apt-get install gridengine-client)"
    if os.geteuid() != 0:
        return "Grid Engine for tests needs root (execd runs jobs as their owners)"
    return None


@dataclass
class GridEngine:
    """One Grid Engine cell of this test session: qmaster and execd on this host.

    ``env()`` is what a client needs (the SGE part of ``clusters.environment()``);
    ``run(argv)`` runs a client command with it; ``queue`` is the queue jobs go to."""

    root: Path = clusters.SGE_ROOT
    cell: str = clusters.SGE_CELL
    queue: str = QUEUE
    pe: str = PE
    slots: int = SLOTS
    host: str = ""                       # this machine's name as Grid Engine sees it
    qmaster: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    execd: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def common(self) -> Path:
        return self.root / self.cell / "common"

    @property
    def spool(self) -> Path:
        return self.root / self.cell / "spool"

    def env(self) -> dict[str, str]:
        return {k: v for k, v in clusters.environment().items() if k.startswith("SGE_")}

    def run(self, argv: Sequence[str], *, input: str | None = None, timeout: float = 30.0,
            extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run a Grid Engine command with this cell's environment."""
        env = {**os.environ, **self.env(), **(extra_env or {})}
        return subprocess.run(list(argv), input=input, capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=str(self.root), check=False)

    def _must(self, argv: Sequence[str], *,
              extra_env: Mapping[str, str] | None = None) -> str:
        r = self.run(argv, extra_env=extra_env)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({r.returncode}): "
                               f"{r.stderr.strip() or r.stdout.strip()}")
        return r.stdout

    # -- building the cell -------------------------------------------------------------
    def build(self) -> None:
        """A fresh SGE_ROOT with a classic-spooling cell, before any daemon starts."""
        if self.root.exists():
            shutil.rmtree(self.root)
        self.root.parent.mkdir(mode=0o755, exist_ok=True)
        self.root.parent.chmod(0o755)  # whatever the umask: other users reach the cluster
        for d in (self.common, self.spool / "qmaster", self.spool / "execd"):
            d.mkdir(parents=True, mode=0o755)
        for name in ("bin", "lib", "utilbin"):
            (self.root / name).symlink_to(PACKAGE_ROOT / name)
        (self.root / "util").symlink_to(UTIL)
        name = subprocess.run([str(GE_LIB / "gethostname"), "-name"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        self.host = name
        spooling = f"{self.common};{self.spool / 'qmaster'}"
        self._write(self.common / "bootstrap", "".join(f"{k:<24}{v}\n" for k, v in [
            ("admin_user", "root"), ("default_domain", "none"), ("ignore_fqdn", "true"),
            ("spooling_method", "classic"), ("spooling_lib", "libspoolc"),
            ("spooling_params", spooling), ("binary_path", "/usr/sbin"),
            ("qmaster_spool_dir", str(self.spool / "qmaster")), ("security_mode", "none"),
            ("listener_threads", "2"), ("worker_threads", "2"), ("scheduler_threads", "1"),
            ("jvm_threads", "0")]))
        self._write(self.common / "act_qmaster", f"{name}\n")
        self._write(self.common / "host_aliases", f"{name} localhost\n")
        templates = self.root / "templates"
        (templates / "adminhosts").mkdir(parents=True)
        overrides = {
            "execd_spool_dir": str(self.spool / "execd"),
            "mailer": "/bin/true",
            "min_uid": "0",
            "min_gid": "0",
            "reporting_params": "accounting=true reporting=false flush_time=00:00:01 "
                                "joblog=false sharelog=00:00:00 accounting_flush_time=00:00:00",
        }
        lines = []
        for line in DEFAULT_CONFIGURATION.read_text().splitlines():
            key = line.split(None, 1)[0] if line.strip() else ""
            lines.append(f"{key:<22} {overrides[key]}" if key in overrides else line)
        self._write(templates / "configuration", "\n".join(lines) + "\n")
        self._write(templates / "adminhosts" / name, f"hostname {name}\n")
        tool = str(GE_LIB / "spooldefaults")
        self._must([str(GE_LIB / "spoolinit"), "classic", "libspoolc", spooling, "init"])
        self._must([tool, "configuration", str(templates / "configuration")])
        self._must([tool, "complexes", str(UTIL / "resources" / "centry")])
        self._must([tool, "usersets", str(UTIL / "resources" / "usersets")])
        self._must([tool, "managers", "root"])
        self._must([tool, "adminhosts", str(templates / "adminhosts")])

    @staticmethod
    def _write(path: Path, text: str) -> None:
        path.write_text(text)
        path.chmod(stat.S_IRUSR | stat.S_IWUSR | stat.S_IRGRP | stat.S_IROTH)

    # -- daemons -------------------------------------------------------------------------
    def _daemon(self, binary: str, log: str) -> subprocess.Popen[bytes]:
        out = open(self.root / log, "ab")
        try:
            return subprocess.Popen(
                [binary], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                env={**_DAEMON_ENV, **self.env(), "SGE_ND": "1"}, cwd=str(self.root),
                start_new_session=True, umask=0o022, preexec_fn=procs.dies_with_pytest())
        finally:
            out.close()

    def _log_tail(self, name: str) -> str:
        parts = []
        for path in (self.root / name, self.spool / "qmaster" / "messages"):
            if path.exists():
                parts.append(f"{path}:\n{path.read_text(errors='replace')[-1500:]}")
        return "\n".join(parts)

    def _wait(self, what: str, proc: subprocess.Popen[bytes], log: str,
              ready: Callable[[], str | None]) -> None:
        """Poll ``ready`` (None when ready, else what it saw) until it holds."""
        deadline = time.monotonic() + _READY_WITHIN
        last = ""
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited ({proc.returncode}) while starting:\n"
                                   f"{self._log_tail(log)}")
            seen = ready()
            if seen is None:
                return
            last = seen
            time.sleep(0.1)
        raise RuntimeError(f"{what} not ready within {_READY_WITHIN:.0f} s; last: {last}\n"
                           f"{self._log_tail(log)}")

    def _qmaster_answers(self) -> str | None:
        r = self.run(["qconf", "-sh"], timeout=10)
        return None if r.returncode == 0 else (r.stderr.strip() or r.stdout.strip())

    def _queue_usable(self) -> str | None:
        """None once this host's queue instance is up (no 'u'nknown state)."""
        r = self.run(["qstat", "-f", "-q", self.queue], timeout=10)
        for line in r.stdout.splitlines():
            parts = line.split()
            if parts and parts[0].startswith(f"{self.queue}@"):
                states = parts[5] if len(parts) > 5 else ""
                return None if "u" not in states and "a" not in states else line
        return r.stderr.strip() or r.stdout.strip() or "no queue instance yet"

    def start(self) -> None:
        """Build the cell, start qmaster, configure it, start execd; return once a job
        can be scheduled."""
        self.build()
        self.qmaster = self._daemon(QMASTER, "qmaster.out")
        self._wait("sge_qmaster", self.qmaster, "qmaster.out", self._qmaster_answers)
        self._configure()
        self.execd = self._daemon(EXECD, "execd.out")
        self._wait("sge_execd", self.execd, "execd.out", self._queue_usable)

    def _configure(self) -> None:
        templates = self.root / "templates"
        self._must(["qconf", "-as", self.host])
        sched = {"schedule_interval": "0:0:1", "flush_submit_sec": "1", "flush_finish_sec": "1",
                 "job_load_adjustments": "NONE", "load_adjustment_decay_time": "0:0:0"}
        lines = []
        for line in self._must(["qconf", "-ssconf"]).splitlines():
            key = line.split(None, 1)[0] if line.strip() else ""
            lines.append(f"{key:<33} {sched[key]}" if key in sched else line)
        self._write(templates / "sched", "\n".join(lines) + "\n")
        self._must(["qconf", "-Msconf", str(templates / "sched")])
        self._write(templates / "pe", "".join(f"{k:<18} {v}\n" for k, v in [
            ("pe_name", self.pe), ("slots", str(self.slots)), ("user_lists", "NONE"),
            ("xuser_lists", "NONE"), ("start_proc_args", "NONE"), ("stop_proc_args", "NONE"),
            ("allocation_rule", "$pe_slots"), ("control_slaves", "TRUE"),
            ("job_is_first_task", "TRUE"), ("urgency_slots", "min"),
            ("accounting_summary", "TRUE"), ("qsort_args", "NONE")]))
        self._must(["qconf", "-Ap", str(templates / "pe")])
        # qconf -aq hands the queue template to $EDITOR: a script that sets our values
        editor = templates / "edit-queue"
        edits = {"hostlist": self.host, "slots": str(self.slots), "pe_list": self.pe,
                 "load_thresholds": "NONE"}
        editor.write_text("#!/bin/sh\nsed -i " + " ".join(
            f"-e 's|^{k} .*|{k} {v}|'" for k, v in edits.items()) + ' "$1"\n')
        editor.chmod(0o755)
        self._must(["qconf", "-aq", self.queue], extra_env={"EDITOR": str(editor)})

    def config(self, key: str) -> str:
        """A value of the global configuration (``qconf -sconf``; long values are
        continued over lines ending in a backslash)."""
        return self._global_config()[key]

    def set_config(self, key: str, value: str) -> None:
        """Change one value of the global configuration (``qconf -Mconf``)."""
        values = self._global_config()
        values[key] = value
        path = self.root / "templates" / "global"   # -Mconf takes the name from the file
        self._write(path, "".join(f"{k:<28} {v}\n" for k, v in values.items()))
        self._must(["qconf", "-Mconf", str(path)])

    def _global_config(self) -> dict[str, str]:
        text = self._must(["qconf", "-sconf", "global"]).replace("\\\n", " ")
        values = {}
        for line in text.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and not line.startswith("#"):
                values[parts[0]] = " ".join(parts[1].split())
        return values

    # -- stopping ------------------------------------------------------------------------
    def stop(self) -> None:
        """qdel every job, stop both daemons by their PIDs (KILL after a bound), kill
        the job processes left behind."""
        if self.qmaster is not None and self.qmaster.poll() is None:
            try:
                self.run(["qdel", "-u", "*"], timeout=10)
            except subprocess.TimeoutExpired:
                pass
        daemons = [p for p in (self.execd, self.qmaster) if p is not None]
        for p in daemons:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + _STOP_WITHIN
        for p in daemons:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        self.execd = self.qmaster = None
        self.kill_jobs()

    def shepherds(self) -> list[int]:
        """Live sge_shepherd processes of this cell (their working directory is in its
        execd spool)."""
        found = []
        spool = str(self.spool / "execd")
        for pid in (proc.pid for proc in procs.processes()):
            try:
                exe = os.readlink(f"/proc/{pid}/exe")
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if os.path.basename(exe) == "sge_shepherd" and cwd.startswith(spool + "/"):
                found.append(pid)
        return found

    def kill_jobs(self) -> None:
        """SIGKILL this cell's shepherds, their descendants and the sessions those lead
        (a job's processes live in a session of their own)."""
        shepherds = self.shepherds()
        if not shepherds:
            return
        live = procs.processes()
        children: dict[int, list[int]] = {}
        for proc in live:
            children.setdefault(proc.ppid, []).append(proc.pid)
        tree: set[int] = set()
        todo = list(shepherds)
        while todo:
            pid = todo.pop()
            if pid not in tree:
                tree.add(pid)
                todo.extend(children.get(pid, []))
        for proc in live:
            if proc.sid in tree:
                tree.add(proc.pid)
        for pid in tree:
            procs.kill(pid, signal.SIGSTOP)  # no new processes while we kill
        for pid in tree:
            procs.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(procs.alive(p) for p in tree):
            time.sleep(0.05)


@pytest.fixture(scope="session")
def gridengine() -> Iterator[GridEngine]:
    """A real Grid Engine cell (qmaster and execd on this host) for the whole session."""
    reason = unavailable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but no test Grid Engine can run: {reason}")
        pytest.skip(reason)
    ge = GridEngine()
    try:
        ge.start()
        yield ge
    finally:
        ge.stop()
        shutil.rmtree(ge.root, ignore_errors=True)
        try:  # the session's cluster directory, once the other cluster has gone too
            clusters.ROOT.rmdir()
        except OSError:
            pass
