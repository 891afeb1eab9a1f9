"""An app that double-forks a daemon out of its process group and session (and drops
the job's mark with ``env -i``) on the local site, where apps run as children of the
`swiftnb` process itself: the daemon must not outlive the run.

Real processes: the daemon is a ``sleep`` whose duration is unique to the test, found
through /proc; every wait is bounded and the teardown kills whatever a failing test
left."""

from __future__ import annotations

import os
import random
import signal
import sys

import pytest

import procs

from robusthelp import swiftnb

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")]

#: a Python program that double-forks: the middle child makes a session of its own and
#: exits, so the grandchild (the daemon) is an orphan in another session and group; the
#: app ends once the daemon runs
DOUBLE_FORK = r"""\
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    os._exit(0)
os.wait()
daemon = ("\0".join(sys.argv[-2:]) + "\0").encode()  # its command line once it runs
for _ in range(2000):  # wait (bounded) until it has dropped what env -i drops
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if fh.read() == daemon:
                    print("forked")
                    sys.exit(0)
        except OSError:
            pass
    time.sleep(0.01)
sys.exit(1)
"""


@pytest.fixture
def marker():
    made = f"300.{random.randrange(10**8, 10**9)}"
    yield made
    for pid in procs.running(made):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.mark.parametrize("unmark", [False, True], ids=["marked", "env-i"])
def test_a_double_forked_daemon_ends_with_its_call(tmp_path, marker, unmark):
    (tmp_path / "fork.py").write_text(DOUBLE_FORK)
    daemon = (["env", "-i"] if unmark else []) + ["sleep", marker]
    words = " ".join(f'"{w}"' for w in [sys.executable, str(tmp_path / "fork.py"), *daemon])
    (tmp_path / "orphan.swift").write_text(
        "type file;\n"
        f'app (file o) orphan() {{ {words} stdout=@o; }}\n'
        # the second call runs after the first: an orphan of the first must be gone by then
        # ([3]00: the pattern does not match this sh's own command line)
        'app (file o) look(file before) { sh "-c" "pgrep -f \'sleep [3]' + marker[1:]
        + '\' || true" stdout=@o; }\n'
        'file o <"o.txt">;\nfile seen <"seen.txt">;\n'
        "o = orphan();\nseen = look(o);\n")
    r = swiftnb("run", "orphan.swift", cwd=tmp_path, timeout=90)
    try:
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "o.txt").read_text() == "forked\n"
        assert (tmp_path / "seen.txt").read_text() == "", "the daemon outlived its call"
    finally:
        assert procs.gone(marker), f"left running after the run: {procs.running(marker)}"
