"""A process that runs local apps and does other things too (a kernel, pytest) is the
subreaper only while an app of its own runs, and what it adopts then from other code
leaves no zombie; its own children keep their exit codes; an escaped app daemon still
ends with its call (``processes.hold_subreaper``, ``reap_adopted``).

Real processes and a real run on the local site, in a fresh Python process: the
subreaper role and the children list are per process, and pytest's own children (a
test sshd's sessions, earlier tests' leftovers) must not count."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import procs

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")]

TESTS = Path(__file__).resolve().parents[1]

#: the app: it leaves a daemon that escaped its mark, group and session (``env -i``,
#: ``setsid``, the middle sh exits), says it runs, and waits (bounded) for the program
#: to let it end.  The daemon's ``sleep 600.DIGITS`` is the marker; the app's own
#: command line holds the digits only
APP = textwrap.dedent("""\
    env -i /usr/bin/setsid /bin/sh -c "/bin/sleep 600.$3 & exit 0"
    touch "$1"
    i=0
    while [ ! -e "$2" ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done
    echo done
""")

#: the "middle" of another part of the program's double fork: a session of its own, a
#: child that waits for its stdin to close, its pid printed, and gone
MIDDLE = ("import os, sys\nos.setsid()\nchild = os.fork()\nif child == 0:\n"
          "    sys.stdin.buffer.read()\n    os._exit(0)\nprint(child, flush=True)\n")

PROGRAM = textwrap.dedent("""
    import asyncio, ctypes, json, os, subprocess, sys, threading, time
    sys.path.insert(0, TESTS)
    import procs
    from swiftnb.config import load_config_text
    from swiftnb.runner import start_run

    libc = ctypes.CDLL(None, use_errno=True)

    def subreaper():
        value = ctypes.c_int(-1)
        assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
        return value.value

    def zombie_children():
        found = []
        for tid in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{tid}/children") as fh:
                found += [int(p) for p in fh.read().split()]
        return sorted(p for p in found if (procs.stat(p) or procs.Proc(p, "?", 0, 0)).state == "Z")

    def until(what, check):
        deadline = time.monotonic() + 30
        while not check():
            if time.monotonic() > deadline:
                report["gave_up"] = what
                raise SystemExit(f"gave up waiting: {what}")
            time.sleep(0.01)

    report = {}
    # a child of this program's own, started before the run; it exits during the run
    # and is waited for after it: its exit code is its owner's
    own = subprocess.Popen(["sh", "-c", "read line; exit 7"], stdin=subprocess.PIPE)
    report["role_before"] = subreaper()

    def elsewhere():
        # the run's app runs: this process is the subreaper now
        until("the app", lambda: os.path.exists("started"))
        report["role_during"] = subreaper()
        until("the escaped daemon", lambda: procs.running(MARKER))
        report["escaped_ran"] = True
        # other code double-forks: the grandchild is adopted by this process
        middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        grandchild = int(middle.stdout.readline())
        middle.wait(timeout=30)
        until("the adoption", lambda: (procs.stat(grandchild) or procs.Proc(0, "", 0, 0)).ppid
              == os.getpid())
        report["adopted"] = True
        middle.stdin.close()  # the grandchild ends: a zombie no code here waits for
        own.stdin.close()     # and so does our own child, whose owner waits later
        until("both zombies", lambda: {grandchild, own.pid} <= set(zombie_children()))
        report["grandchild"] = grandchild
        open("go", "w").close()

    helper = threading.Thread(target=elsewhere, daemon=True)
    helper.start()

    async def main():
        handle = start_run(SCRIPT, config=load_config_text("", cwd=os.getcwd()),
                           base_dir=os.getcwd())
        await asyncio.wait_for(handle, 90)
        return handle.ok

    report["ok"] = asyncio.run(main())
    helper.join(30)
    report["role_after"] = subreaper()
    report["own_pid"] = own.pid
    report["zombies_after_run"] = zombie_children()
    report["own_code"] = own.wait(timeout=30)
    report["zombies_at_end"] = zombie_children()
    report["escaped_after"] = procs.running(MARKER)
    print(json.dumps(report))
""")


@pytest.fixture
def marker():
    made = str(random.randrange(10**8, 10**9))
    yield made
    for pid in procs.running("600." + made):
        procs.kill(pid, signal.SIGKILL)


def test_strangers_leave_no_zombie_and_the_role_ends_with_the_run(tmp_path, marker):
    (tmp_path / "app.sh").write_text(APP)
    swift = ("type file;\n"
             "app (file o) work (string started, string go, string marker) {\n"
             f'  sh "{tmp_path / "app.sh"}" started go marker stdout=@o;\n'
             "}\n"
             'file o <"o.txt">;\n'
             f'o = work("{tmp_path / "started"}", "{tmp_path / "go"}", "{marker}");\n')
    # a file, not ``-c``: the program's command line must not hold the marker
    (tmp_path / "program.py").write_text(
        f"TESTS = {str(TESTS)!r}\nMARKER = {'600.' + marker!r}\nSCRIPT = {swift!r}\n"
        f"MIDDLE = {MIDDLE!r}\n" + PROGRAM)
    done = subprocess.run([sys.executable, "program.py"], capture_output=True, text=True,
                          timeout=110, cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    report = json.loads(done.stdout.splitlines()[-1])
    assert "gave_up" not in report, report
    assert report["ok"] is True and (tmp_path / "o.txt").read_text() == "done\n"
    assert report["escaped_ran"] and report["adopted"]
    assert report["role_before"] == 0 and report["role_during"] == 1
    assert report["role_after"] == 0
    # the adopted grandchild was reaped; our own exited child waits for its owner
    assert report["zombies_after_run"] == [report["own_pid"]]
    assert report["own_code"] == 7
    assert report["zombies_at_end"] == []
    assert report["escaped_after"] == []  # the app's daemon ended with its call


#: holds counted; at a call's end (``strangers``) only the adopted zombie is reaped, not
#: a child of this process, in its session or leading its own
RULE = textwrap.dedent("""
    import ctypes, json, os, subprocess, sys, time
    from swiftnb.remote.wrap import processes as P

    libc = ctypes.CDLL(None, use_errno=True)

    def subreaper():
        value = ctypes.c_int(-1)
        assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
        return value.value

    def zombie(pid):
        fields = P.proc_stat(pid)
        return fields is not None and fields[0] == b"Z"

    report = {"unheld": P.strangers()}
    P.hold_subreaper()
    P.hold_subreaper()
    in_session = subprocess.Popen(["sh", "-c", "exit 3"])
    leader = subprocess.Popen(["sh", "-c", "exit 4"], start_new_session=True)
    middle = subprocess.Popen([sys.executable, "-c", MIDDLE], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE)
    adopted = int(middle.stdout.readline())
    middle.wait(timeout=30)
    middle.stdin.close()
    deadline = time.monotonic() + 30
    while not all(map(zombie, (in_session.pid, leader.pid, adopted))):
        assert time.monotonic() < deadline, "gave up waiting for the three to exit"
        time.sleep(0.01)
    report["adopted_parent"] = int(P.proc_stat(adopted)[1]) == os.getpid()
    report["left"] = sorted(P.strangers())
    report["expected_left"] = sorted([in_session.pid, leader.pid])
    report["adopted_gone"] = P.proc_stat(adopted) is None
    P.release_subreaper()
    report["after_one_release"] = subreaper()
    P.release_subreaper()
    report["after_both"] = subreaper()
    report["codes"] = [in_session.wait(timeout=30), leader.wait(timeout=30)]
    print(json.dumps(report))
""")


def test_only_an_adopted_zombie_is_reaped_and_holds_are_counted(tmp_path):
    done = subprocess.run([sys.executable, "-c", f"MIDDLE = {MIDDLE!r}\n" + RULE],
                          capture_output=True, text=True, timeout=100, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["unheld"] is None  # not the subreaper: where orphans went is unknown
    assert report["adopted_parent"]
    assert report["left"] == report["expected_left"] and report["adopted_gone"]
    assert report["after_one_release"] == 1 and report["after_both"] == 0
    assert report["codes"] == [3, 4]


#: the wrapper run from Python holds the role for its job only; run as a batch job's
#: process (``alone``), for good
BLOCKING = textwrap.dedent("""
    import ctypes, json, os
    from swiftnb.remote import wrapper

    libc = ctypes.CDLL(None, use_errno=True)

    def subreaper():
        value = ctypes.c_int(-1)
        assert libc.prctl(37, ctypes.byref(value), 0, 0, 0) == 0  # PR_GET_CHILD_SUBREAPER
        return value.value

    base = os.getcwd()
    spec = {"jobid": "true-k0qzzmvr", "tr": "true", "executable": None, "args": [],
            "base_dir": base, "work_dir": os.path.join(base, "swiftwork"),
            "site_run": "script-run001", "site": "local", "stdin": None, "stdout": None,
            "stderr": None, "inputs": [], "outputs": [], "env": {}, "keep": False}
    report = {"ok": wrapper.run_job(spec)["ok"], "after_job": subreaper()}
    report["alone_ok"] = wrapper.run_job(spec, alone=True)["ok"]
    report["after_alone"] = subreaper()
    print(json.dumps(report))
""")


def test_the_blocking_wrapper_holds_the_role_for_its_job(tmp_path):
    done = subprocess.run([sys.executable, "-c", BLOCKING], capture_output=True, text=True,
                          timeout=100, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == {"ok": True, "after_job": 0, "alone_ok": True, "after_alone": 1}
