"""Benchmark (issue 30): the file-system operations one app call costs, per site.

On a cluster's shared file system every path operation (an open, a stat, a mkdir, a
rename) is a round trip to its server, about a millisecond: a run's own operations per
call bound its rate there.  This counts them with ``strace -f -ff`` (one trace file per
thread or process) on a whole ``swiftnb run`` of N ``echo`` calls (default 1,000), on:

* ``local``: the default local site;
* ``coaster``: a local coaster block (``jobManager: "local:local"``, 2 workers);
* ``ssh``: an SSH site on the tests' private sshd (tests/sshd.py: root and Debian's
  openssh-server); the host side (sshd's session, the remote worker and its apps) is
  traced by attaching to the sshd listener.

Each call's share is marginal: (operations of an N-call run - those of a 10-call run) /
(N - 10), so start-up (imports, configuration) is left out.  The operations are split by
who makes them: ``swiftnb`` (the run's process and threads, coaster workers, the remote
worker, a child before it execs the app) or the ``app`` itself (``echo`` loading its
libraries: the same under xargs, not ours to remove); and by kind: ``shared`` (a path
under the run's directories: what a shared file system serves), ``proc`` (/proc, local
to the node), ``system`` (any other path) and ``fd`` (operations on descriptors: read,
write, close, fstat...).  The most frequent per-call path operations of swiftnb are
listed.

``--baseline TREE`` runs the same with ``PYTHONPATH=TREE`` (e.g. a git worktree of the
code before a change) and prints both, so a change's effect is read in one run.

Run: ``.venv/bin/python benchmarks/fileops.py [-n 1000] [--sites local,coaster,ssh]
[--baseline /tmp/base]``.  Needs strace (``apt-get install strace``); without it, says
so and exits 0.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from workloads import COASTER_CONF, ECHO_BAG  # noqa: E402  (benchmarks/workloads.py)

ROOT = Path(__file__).resolve().parent.parent
SMALL = 10


SSH_CONF = """sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{work}/swiftwork"
    maxParallelTasks: 4
    initialParallelTasks: 4
    app.ALL {{ executable: "*" }}
}}
"""

#: a syscall line of strace: its name and first argument
_CALL = re.compile(r"^(\w+)\((.*)")
#: the path a syscall names (first quoted string after an optional dir fd)
_PATH = re.compile(r'^(?:AT_FDCWD, |\d+, )?"([^"]*)"')
_EXEC = re.compile(r'^execve\("([^"]+)".*= 0$')


@dataclass
class Counts:
    """Operations of one traced run, by who made them and by kind."""

    by_kind: collections.Counter[str] = field(default_factory=collections.Counter)
    paths: collections.Counter[str] = field(default_factory=collections.Counter)

    def minus(self, other: Counts, calls: int) -> dict[str, float]:
        return {k: (self.by_kind[k] - other.by_kind[k]) / calls
                for k in sorted(set(self.by_kind) | set(other.by_kind))}


#: the syscalls that name a path (the rest act on descriptors)
_PATH_CALLS = frozenset({
    "open", "openat", "openat2", "creat", "stat", "lstat", "newfstatat", "statx", "access",
    "faccessat", "faccessat2", "mkdir", "mkdirat", "rename", "renameat", "renameat2",
    "unlink", "unlinkat", "rmdir", "chdir", "readlink", "readlinkat", "symlink",
    "symlinkat", "link", "linkat", "chmod", "fchmodat", "chown", "fchownat", "lchown",
    "utimensat", "utimes", "execve", "execveat", "truncate", "statfs", "getxattr",
    "lgetxattr", "setxattr", "lsetxattr", "listxattr", "llistxattr", "mknodat",
})


def _kind(name: str, args: str, shared_roots: tuple[str, ...]) -> str:
    found = _PATH.match(args) if name in _PATH_CALLS else None
    if found is None or not found.group(1):  # an fd, or "" with AT_EMPTY_PATH
        return "fd"
    path = found.group(1)
    if path.startswith("/proc"):
        return "proc"
    if not path.startswith("/") or path.startswith(shared_roots):
        return "shared"
    return "system"


def count_traces(trace_dir: Path, app: str, shared_roots: tuple[str, ...]) -> Counts:
    """Classify every syscall of every trace file (one per thread or process)."""
    counts = Counts()
    for trace in trace_dir.iterdir():
        who = "swiftnb"
        for line in trace.read_text(errors="replace").splitlines():
            executed = _EXEC.match(line)
            if executed is not None:
                who = "app" if os.path.basename(executed.group(1)) == app else "swiftnb"
            found = _CALL.match(line)
            if found is None:  # +++ exited, --- signals
                continue
            name, args = found.groups()
            kind = _kind(name, args, shared_roots)
            counts.by_kind[f"{who} {kind}"] += 1
            if who == "swiftnb" and kind in ("shared", "proc"):
                path = _PATH.match(args)
                assert path is not None
                shape = re.sub(r"echo-[0-9a-z]+", "echo-JOB", _shorten(path.group(1),
                                                                       shared_roots))
                # atomicfile's temporary names: one shape, so that they add up
                shape = re.sub(r"\.swiftnb-\w+\.part", ".swiftnb-TMP.part", shape)
                shape = re.sub(r"\d+", "N", shape)
                counts.paths[f"{name} {shape}"] += 1
    return counts


def _shorten(path: str, roots: tuple[str, ...]) -> str:
    for root in roots:
        if path.startswith(root):
            return "BASE" + path[len(root):]
    return path


def traced_run(site: str, n: int, pythonpath: str | None, sshd_listener: int | None,
               env: dict[str, str], extra_conf: str) -> Counts:
    """One ``swiftnb run`` of ``n`` echo calls under strace; its counts."""
    base = Path(tempfile.mkdtemp(prefix=f"swiftnb-fileops-{site}-", dir=_disk_tmp()))
    traces = base / "traces"
    traces.mkdir()
    work = base / "work"
    work.mkdir()
    (work / "wf.swift").write_text(ECHO_BAG.format(n=n))
    (work / "c.conf").write_text(extra_conf)
    run_env = dict(env)
    if pythonpath:
        run_env["PYTHONPATH"] = pythonpath
    attached = None
    if sshd_listener is not None:  # the host side: sshd's session and what it runs
        attached = subprocess.Popen(["strace", "-f", "-ff", "-e", "trace=%file,%desc",
                                     "-o", str(traces / "host"), "-p", str(sshd_listener)],
                                    stderr=subprocess.DEVNULL)
        time.sleep(0.5)  # attached before the run connects
    try:
        argv = ["strace", "-f", "-ff", "-e", "trace=%file,%desc", "-o", str(traces / "t"),
                sys.executable, "-m", "swiftnb.cli", "run", "-config", "c.conf", "wf.swift"]
        done = subprocess.run(argv, cwd=work, env=run_env, capture_output=True, text=True,
                              timeout=3600)
        if done.returncode != 0:
            sys.exit(f"{site}: swiftnb run failed:\n{done.stdout}{done.stderr}")
        made = len(list((work / "out").iterdir()))
        if made != n:
            sys.exit(f"{site}: {made} outputs, not {n}")
    finally:
        if attached is not None:
            attached.send_signal(signal.SIGINT)
            attached.wait(timeout=30)
    roots = (str(work), str(work.resolve()), env.get("SWIFTNB_FILEOPS_REMOTE", "\0"))
    counts = count_traces(traces, "echo", roots)
    shutil.rmtree(base, ignore_errors=True)
    return counts


def _disk_tmp() -> str:
    """A directory on the disk (not tmpfs): where users' files live."""
    for candidate in (os.environ.get("TMPDIR"), "/var/tmp", tempfile.gettempdir()):
        if candidate and os.path.isdir(candidate):
            return candidate
    return tempfile.gettempdir()


def per_call(site: str, n: int, pythonpath: str | None, sshd_listener: int | None,
             env: dict[str, str], conf: str) -> tuple[dict[str, float], list[tuple[str, float]]]:
    big = traced_run(site, n, pythonpath, sshd_listener, env, conf)
    small = traced_run(site, SMALL, pythonpath, sshd_listener, env, conf)
    top = [(what, (count - small.paths[what]) / (n - SMALL))
           for what, count in big.paths.most_common(20)]
    return big.minus(small, n - SMALL), top


def _start_sshd() -> tuple[object, dict[str, str], str] | None:
    sys.path.insert(0, str(ROOT / "tests"))
    import sshd as test_sshd  # the tests' sshd, started the same way

    reason = test_sshd.unavailable()
    if reason:
        print(f"ssh: skipped ({reason})")
        return None
    user = test_sshd._ensure_login_user()
    d = Path(tempfile.mkdtemp(prefix="swiftnb-fileops-sshd-"))
    server = test_sshd._write_files(d, test_sshd._free_port(), user)
    server.start()
    conf = SSH_CONF.format(alias=server.alias, work=server.remote_work)
    return server, server.env(), conf


def _show(label: str, figures: dict[str, float]) -> str:
    keys = ("swiftnb shared", "swiftnb proc", "swiftnb system", "swiftnb fd", "app shared",
            "app system", "app fd")
    return f"  {label:<9}" + "".join(f"{figures.get(k, 0.0):>9.1f}" for k in keys)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=1000, help="calls per run (default 1000)")
    parser.add_argument("--sites", default="local,coaster,ssh")
    parser.add_argument("--baseline", help="a source tree to compare with (PYTHONPATH)")
    args = parser.parse_args()
    if shutil.which("strace") is None:
        print("strace is not installed (apt-get install strace): nothing measured")
        return
    trees = [("after", str(ROOT))]
    if args.baseline:
        trees.insert(0, ("before", args.baseline))
    print(f"file-system operations per call (marginal, {args.n} vs {SMALL} calls)")
    header = ("swiftnb: shared proc system fd | app: shared system fd")
    for site in args.sites.split(","):
        env = dict(os.environ)
        conf = {"local": "", "coaster": COASTER_CONF}.get(site, "")
        server = None
        if site == "ssh":
            started = _start_sshd()
            if started is None:
                continue
            server, env, conf = started
            env["SWIFTNB_FILEOPS_REMOTE"] = server.remote_work  # type: ignore[attr-defined]
        try:
            print(f"{site}: {header}")
            tops = []
            for label, tree in trees:
                listener = server.proc.pid if server is not None else None  # type: ignore[attr-defined]
                figures, top = per_call(site, args.n, tree, listener, env, conf)
                print(_show(label, figures), flush=True)
                tops.append((label, top))
            for label, top in tops:
                print(f"  swiftnb's most frequent path operations per call ({label}):")
                for what, count in top:
                    print(f"    {count:6.2f}  {what}")
        finally:
            if server is not None:
                server.stop()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
