"""Memoization on by default in notebooks: re-executing a cell of the Swift kernel, or a
``%%swift`` cell in an IPython kernel, runs nothing new (both through jupyter_client)."""

from __future__ import annotations

import os
import sys
from collections import Counter

import pytest

from workflow import SCRIPT, Workflow

pytestmark = pytest.mark.timeout(240)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "kernel"))

from kernelhelp import CellResult, Kernel, ensure_kernelspec  # noqa: E402

CELL = SCRIPT.replace("PROFILE", "")


def _ran(flow: Workflow, before: int) -> Counter[str]:
    return Counter(line.split()[0] for line in flow.counter()[before:])


def test_re_executing_a_swift_kernel_cell_runs_nothing_new(tmp_path):
    ensure_kernelspec()
    flow = Workflow(tmp_path)
    kernel = Kernel(str(tmp_path))
    try:
        first = kernel.run(CELL, timeout=120)
        assert first.status == "ok", first.errors
        assert _ran(flow, 0) == Counter({"up": 3, "combine": 1, "summary": 1})
        seen = len(flow.counter())
        again = kernel.run(CELL, timeout=120)
        assert again.status == "ok", again.errors
        assert _ran(flow, seen) == Counter()
        counts = kernel.run("%%python\nprint(swift_run.memo.memo.counts)")
        assert "'cached': 5" in counts.stream()
        # the cell's own configuration wins: -memoize false runs everything
        assert kernel.run("%swift_config -memoize false").status == "ok"
        assert kernel.run(CELL, timeout=120).status == "ok"
        assert _ran(flow, seen) == Counter({"up": 3, "combine": 1, "summary": 1})
    finally:
        kernel.close()


def test_re_executing_a_swift_magic_cell_runs_nothing_new(tmp_path):
    from jupyter_client.manager import start_new_kernel

    flow = Workflow(tmp_path)
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))

    def run(code: str, timeout: float = 120) -> CellResult:
        outputs: list[tuple[str, dict]] = []
        msg = kc.execute_interactive(code, timeout=timeout, output_hook=lambda m: outputs.append(
            (m["msg_type"], m["content"])))
        return CellResult(msg["content"], outputs)

    cell = "%%swift -o r --no-dashboard\n" + CELL
    try:
        assert run("%load_ext swiftnb").status == "ok"
        assert run(cell).status == "ok"
        done = run("print((await r).ok)")
        assert done.stream().strip() == "True", done.outputs
        seen = len(flow.counter())
        assert seen == 5
        assert run(cell).status == "ok"
        assert run("print((await r).ok, r.memo.memo.counts)").stream().strip() == (
            "True {'ran': 0, 'cached': 5, 'failed': 0}")
        assert len(flow.counter()) == seen
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
