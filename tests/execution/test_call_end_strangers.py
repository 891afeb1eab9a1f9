"""The end of a call looks at this process's children once (``processes.strangers``)
and searches for what the app left only when one is no running app of ours.

Real processes in a fresh Python process (the subreaper setting is per process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.timeout(60)

PROGRAM = textwrap.dedent("""
    import json, os, subprocess, signal, time
    from swiftnb.remote.wrap import processes as P
    P.become_subreaper()
    report = {"alone": P.strangers()}
    app = subprocess.Popen(["sleep", "30"], start_new_session=True)
    P._APPS.add(app.pid)
    report["app_running"] = P.strangers()
    # an app that leaves a child and a grandchild running: both reparent to us
    subprocess.run(["sh", "-c", "sh -c 'sleep 31 & sleep 32' & exit 0"], check=True)
    def commands(tree):
        return sorted(open(f"/proc/{p}/cmdline", "rb").read().replace(b"\\0", b" ")
                      .decode().strip() for p in tree)

    # until all three run their own programs (a child forked but not yet exec'd shows
    # its parent's command line)
    deadline = time.monotonic() + 10
    while commands(P.with_descendants(P.strangers() or [])) != [
            "sh -c sleep 31 & sleep 32", "sleep 31", "sleep 32"] \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    left = P.strangers() or []
    tree = P.with_descendants(left)
    report["left"] = len(left)
    report["tree"] = commands(tree)
    for pid in tree:
        os.kill(pid, signal.SIGKILL)
    for pid in tree:  # each is our child once its parent is gone
        for _ in range(500):
            try:
                if os.waitpid(pid, os.WNOHANG)[0]:
                    break
            except ChildProcessError:
                time.sleep(0.01)  # not reparented to us yet
                continue
            time.sleep(0.01)
    app.kill(); app.wait(); P._APPS.discard(app.pid)
    report["after"] = P.strangers()
    print(json.dumps(report))
""")


def test_strangers_are_the_children_that_are_no_running_app(tmp_path):
    done = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          timeout=50, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["alone"] == [] and report["app_running"] == []
    assert report["left"] == 1  # the inner sh, reparented to this subreaper
    assert report["tree"] == ["sh -c sleep 31 & sleep 32", "sleep 31", "sleep 32"]
    assert report["after"] == []
