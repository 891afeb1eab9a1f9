"""SSH site throughput, against raw asyncssh and an ``ssh host cmd`` loop, in one run.

    .venv/bin/python benchmarks/ssh.py [--tasks 1000] [--parallel 16] [--files 200]

Starts a private sshd on 127.0.0.1 exactly as the tests do (tests/sshd.py: needs root and
Debian's openssh-server), then measures:

1. a foreach of N short apps (``echo``, each output staged back) on an
   ``execution.type: "ssh"`` site, run in this process through ``swiftnb.start_run`` (as a
   notebook runs it: compile, connection, worker, log, staging back of N outputs), and
   the same as a whole ``swiftnb run`` process (interpreter start and imports included);
2. raw asyncssh: one connection, the same N commands (``echo i`` into a file on the
   host), ``--parallel`` channels at once (the best a client that opens a channel per
   command can do; it brings no file back);
3. ``ssh host echo`` per task, one after another (a fresh connection each; timed on
   ``--loop`` tasks and given as a rate);
4. staging: ``--files`` inputs of 1 MB each through swift staging and back.

Prints each figure and the ratios swiftnb/raw (target >= 0.5; raw asyncssh is timed in
this process too, so the in-process run is the like-for-like figure) and swiftnb/loop
(target >= 10).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import sshd as test_sshd  # noqa: E402  (the tests' sshd, started the same way)


def start_server() -> test_sshd.SSHD:
    reason = test_sshd.unavailable()
    if reason:
        print(f"skipped: cannot start an sshd here: {reason}")
        sys.exit(0)
    user = test_sshd._ensure_login_user()
    d = Path(tempfile.mkdtemp(prefix="swiftnb-bench-sshd-"))
    server = test_sshd._write_files(d, test_sshd._free_port(), user)
    server.start()
    return server


def conf(server: test_sshd.SSHD, parallel: int) -> str:
    return f"""
sites: [remote]
site.remote {{
    execution {{ type: "ssh", URL: "{server.alias}" }}
    filesystem {{ type: "ssh" }}
    workDirectory: "{server.remote_work}/swiftwork"
    maxParallelTasks: {parallel}
    initialParallelTasks: {parallel}
    app.ALL {{ executable: "*" }}
}}
jobSubmitThrottle: off
hostJobSubmitThrottle: off
fileTransfersThrottle: 8
"""


def swiftnb_run(server: test_sshd.SSHD, work: Path, script: str, parallel: int) -> float:
    (work / "wf.swift").write_text(script)
    (work / "swift.conf").write_text(conf(server, parallel))
    began = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "wf.swift"], cwd=work,
                       env=server.env(), capture_output=True, text=True, timeout=1800)
    took = time.perf_counter() - began
    if r.returncode != 0:
        sys.exit(f"swiftnb run failed:\n{r.stdout}{r.stderr}")
    return took


async def in_process(server: test_sshd.SSHD, work: Path, script: str, parallel: int) -> float:
    """The same workflow through the library API, in this process (HOME is the test
    sshd's fake home, so ~/.ssh/config resolves the alias)."""
    from swiftnb.runner import start_run

    (work / "wf.swift").write_text(script)
    (work / "swift.conf").write_text(conf(server, parallel))
    os.environ["HOME"] = str(server.home)
    began = time.perf_counter()
    handle = start_run(str(work / "wf.swift"), config_file="swift.conf", base_dir=str(work))
    outcome = await handle
    took = time.perf_counter() - began
    if handle.run.canceled or not getattr(outcome, "ok", True):
        sys.exit(f"the in-process run failed: {outcome}")
    return took


async def raw_asyncssh(server: test_sshd.SSHD, n: int, parallel: int) -> float:
    """The same commands as the workflow's apps, ``echo i`` into a file of its own on the
    host, each on a channel of one connection, ``parallel`` at once."""
    import asyncssh

    began = time.perf_counter()
    async with asyncssh.connect(server.host, port=server.port, username=server.user,
                                client_keys=[str(server.client_key)],
                                known_hosts=str(server.known_hosts), agent_path=None,
                                config=[]) as conn:
        out = f"{server.remote_work}/raw"
        await conn.run(f"mkdir -p {out}", check=True)
        gate = asyncio.Semaphore(parallel)

        async def one(i: int) -> None:
            async with gate:
                await conn.run(f"echo {i} > {out}/{i:04d}.txt", check=True)

        await asyncio.gather(*(one(i) for i in range(n)))
        await conn.run(f"rm -rf {out}", check=True)
    return time.perf_counter() - began


def ssh_loop(server: test_sshd.SSHD, n: int) -> float:
    began = time.perf_counter()
    for i in range(n):
        subprocess.run(server.ssh_argv("echo", str(i)), check=True, capture_output=True,
                       env=server.env(), timeout=60)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=16)
    parser.add_argument("--loop", type=int, default=40, help="tasks for the ssh-per-task loop")
    parser.add_argument("--files", type=int, default=200, help="1 MB files staged in and out")
    parser.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                        help="where the runs write (default tmpfs: raw asyncssh writes no "
                             "files, and on this VM's ext4 creating one costs 0.7 ms)")
    args = parser.parse_args()
    server = start_server()
    work = Path(tempfile.mkdtemp(prefix="swiftnb-bench-ssh-", dir=args.dir))
    print(f"runs write in {work.parent}")
    try:
        n = args.tasks
        echo = f"""
type file;
app (file o) echo (int i) {{ echo i stdout=@o; }}
file outs[] <simple_mapper; prefix="o/", suffix=".txt">;
foreach i in [0:{n - 1}] {{ outs[i] = echo(i); }}
"""
        home = os.environ.get("HOME")
        t_lib = asyncio.run(in_process(server, work, echo, args.parallel))
        if home is not None:
            os.environ["HOME"] = home
        assert len(list((work / "o").iterdir())) == n
        shutil.rmtree(work / "o")
        t_swiftnb = swiftnb_run(server, work, echo, args.parallel)
        assert len(list((work / "o").iterdir())) == n
        t_raw = asyncio.run(raw_asyncssh(server, n, args.parallel))
        t_loop = ssh_loop(server, args.loop)
        r_lib, r_swiftnb = n / t_lib, n / t_swiftnb
        r_raw, r_loop = n / t_raw, args.loop / t_loop
        print(f"{n} short apps, {args.parallel} at once, on one SSH host (127.0.0.1):")
        print(f"  swiftnb, in this process     {t_lib:7.2f} s  {r_lib:7.1f} tasks/s")
        print(f"  swiftnb run (whole process)  {t_swiftnb:7.2f} s  {r_swiftnb:7.1f} tasks/s")
        print(f"  raw asyncssh, one connection {t_raw:7.2f} s  {r_raw:7.1f} tasks/s")
        print(f"  ssh host cmd per task        {t_loop:7.2f} s  {r_loop:7.1f} tasks/s "
              f"({args.loop} tasks)")
        print(f"  ratio swiftnb (in process) / raw asyncssh: {r_lib / r_raw:.2f} (target >= 0.5)")
        print(f"  ratio swiftnb run (process) / raw asyncssh: {r_swiftnb / r_raw:.2f}")
        print(f"  ratio swiftnb run (process) / ssh loop:     {r_swiftnb / r_loop:.1f} "
              "(target >= 10)")

        files = args.files
        data = work / "data"
        data.mkdir()
        for i in range(files):
            (data / f"f{i:04d}.bin").write_bytes(os.urandom(1 << 20))
        stage = """
type file;
app (file o) copy (file i) { cp @i @o; }
file ins[] <filesys_mapper; location="data", suffix=".bin">;
file outs[] <simple_mapper; prefix="back/", suffix=".bin">;
foreach f, i in ins { outs[i] = copy(f); }
"""
        t_stage = swiftnb_run(server, work, stage, args.parallel)
        back = sorted((work / "back").iterdir())
        assert len(back) == files and all(p.stat().st_size == 1 << 20 for p in back)
        mb = 2 * files  # in and out
        print(f"staging {files} files of 1 MB in and back (swift staging, SFTP): "
              f"{t_stage:.2f} s, {mb / t_stage:.1f} MB/s moved")
    finally:
        server.stop()
        shutil.rmtree(server.remote_work, ignore_errors=True)
        shutil.rmtree(server.dir, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
