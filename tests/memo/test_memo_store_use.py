"""The run store as memoized runs leave it: ``swiftnb explain`` on a memoized run, two
runs sharing one store at the same time, and ``RunHandle.explain``."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from swiftnb.store import RunStore
from workflow import SWIFTNB, Workflow

pytestmark = pytest.mark.timeout(300)


def test_explain_names_the_producer_its_inputs_and_the_upstream_call(tmp_path):
    flow = Workflow(tmp_path)
    flow.memo()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    r = subprocess.run([*SWIFTNB, "explain", "out/all.txt"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    tree = r.stdout
    with RunStore.open(tmp_path / ".swiftnb", create=False) as store:
        digests = {f.path: f.digest for call in store.call_records() for f in call.outputs}
    assert tree.splitlines()[0].startswith(f"{tmp_path}/out/all.txt  ")
    assert re.search(r"combine  ran  on local  exit 0", tree)
    for name in "abc":  # each input with its short hash, and the call that made it
        up = f"{tmp_path}/out/up-{name}.txt"
        assert f"{up}  {digests[up].removeprefix('sha256:')[:12]}" in tree
    assert tree.count("up  ran  on local") == 3
    assert f"$ {tmp_path}/bin/up.sh data/a.txt" in tree
    assert "(source file)" in tree


def test_two_runs_share_one_store_at_the_same_time(tmp_path):
    shared = tmp_path / "shared-store"
    flows = [Workflow(tmp_path / name) for name in ("one", "two")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    procs = [subprocess.Popen([*SWIFTNB, "run", "-memoize", "true", "-memoizeStore",
                               str(shared), "wf.swift"], cwd=f.root, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for f in flows]
    for p in procs:
        out, err = p.communicate(timeout=200)
        assert p.returncode == 0, err
    with RunStore.open(shared, create=False) as store:
        runs = store.run_records()
        calls = store.call_records()
    assert [r.status for r in runs] == ["success", "success"]
    assert sum(r.counts["ran"] + r.counts["cached"] for r in runs) == 10
    assert len(calls) == 10 and len({(c.run_id, c.jobid) for c in calls}) == 10
    # a third run in either directory reuses everything
    again = flows[0].memo("-memoizeStore", str(shared))
    assert not again.ran and again.cached == 5


def test_a_run_handle_explains_a_file(tmp_path, monkeypatch):
    import asyncio

    from swiftnb.runner import prepare_run

    Workflow(tmp_path)
    monkeypatch.chdir(tmp_path)

    async def main():
        handle = prepare_run("wf.swift", base_dir=str(tmp_path), config_file="swift.conf",
                             memoize_default=True, log=False)
        outcome = await handle.start()
        return handle, outcome

    handle, outcome = asyncio.run(main())
    assert outcome.ok
    assert handle.memo is not None and handle.memo.memo.counts["ran"] == 5
    text = str(handle.explain("out/summary.txt", why=True))
    assert "summary  ran" in text and "why: ran: no earlier call" in text
