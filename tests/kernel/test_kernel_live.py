"""What a notebook shows of a run, through jupyter_client and real kernels: the %%swift
handle's live status and a failed app's error text under its own cell, "canceled"; the
Swift kernel's dashboard only for cells that start apps; warnings at cell:line:col."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import pytest
from jupyter_client.manager import start_new_kernel

from kernelhelp import Kernel

pytestmark = pytest.mark.timeout(180)

WIDGET = "application/vnd.jupyter.widget-view+json"
FAILING = ('type file;\napp (file o) bad() { sh "-c" "sleep 0.3; echo oops-on-stderr >&2; '
           'exit 3" stdout=@o; }\nfile f <"f.txt"> = bad();\n')
SLOW = ('type file;\napp (file o) slow() { sh "-c" "exec sleep 60" stdout=@o; }\n'
        'file g <"g.txt"> = slow();\n')


@dataclass
class Cell:
    msg_id: str
    reply: dict
    #: every iopub message of this cell so far, including those that arrive later
    outputs: list[tuple[str, dict]] = field(default_factory=list)

    def displays(self) -> dict[str, dict]:
        """display_id -> the data it shows now (display_data, then its updates)."""
        shown: dict[str, dict] = {}
        for kind, content in self.outputs:
            display_id = content.get("transient", {}).get("display_id")
            if kind == "display_data" and display_id:
                shown[display_id] = content["data"]
            elif kind == "update_display_data" and display_id in shown:
                shown[display_id] = content["data"]
        return shown

    def stderr(self) -> str:
        return "".join(c["text"] for k, c in self.outputs
                       if k == "stream" and c["name"] == "stderr")


class Notebook:
    """A python3 kernel whose iopub messages are filed under the cell they belong to
    (their parent), as a notebook front end does, including those that come later."""

    def __init__(self, cwd: str) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd)
        self.cells: dict[str, Cell] = {}

    def _pump(self, until: str | None = None, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.05, deadline - time.monotonic()))
            except Exception:  # noqa: BLE001  queue.Empty: nothing more for now
                if until is not None:
                    raise AssertionError(f"the cell did not finish in {timeout} s") from None
                return
            parent = msg["parent_header"].get("msg_id")
            if parent in self.cells:
                self.cells[parent].outputs.append((msg["msg_type"], msg["content"]))
            if until is not None and parent == until and msg["msg_type"] == "status" \
                    and msg["content"]["execution_state"] == "idle":
                return

    def run(self, code: str, timeout: float = 60) -> Cell:
        msg_id = self.kc.execute(code)
        cell = self.cells[msg_id] = Cell(msg_id, {})
        self._pump(until=msg_id, timeout=timeout)
        cell.reply = self.kc.get_shell_msg(timeout=timeout)["content"]
        return cell

    def wait_for(self, cell: Cell, predicate, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not predicate(cell):
            assert time.monotonic() < deadline, cell.outputs
            self._pump(timeout=0.2)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


@pytest.fixture
def notebook(tmp_path):
    nb = Notebook(str(tmp_path))
    try:
        assert nb.run("%load_ext swiftnb").reply["status"] == "ok"
        yield nb
    finally:
        nb.close()


def _only_display(cell: Cell) -> str:
    shown = cell.displays()
    assert len(shown) == 1, cell.outputs
    return next(iter(shown.values()))["text/plain"]


def test_failed_app_error_text_appears_under_its_own_cell(notebook):
    cell = notebook.run("%%swift --no-dashboard -o r\n" + FAILING)
    assert cell.reply["status"] == "ok"
    assert _only_display(cell) == "<RunHandle run001: running>"
    later = notebook.run("x = 1")  # the run ends while another cell is the current one
    notebook.wait_for(cell, lambda c: "failed" in _only_display(c))
    text = _only_display(cell)
    assert text.startswith("<RunHandle run001: failed>\nExecution failed:\n")
    assert "oops-on-stderr" in text and "exit code of 3" in text and "at cell:3:22" in text
    html = next(iter(cell.displays().values()))["text/html"]
    assert "oops-on-stderr" in html and "Execution failed:" in html
    assert not later.displays() and "oops" not in later.stderr()


def test_handle_shows_running_then_ok(notebook):
    cell = notebook.run('%%swift --no-dashboard -o r\ntype file;\napp (file o) hi() '
                        '{ echo "hi" stdout=@o; }\nfile f <"f.txt"> = hi();\n')
    assert _only_display(cell) == "<RunHandle run001: running>"
    notebook.run("await r")
    notebook.wait_for(cell, lambda c: _only_display(c) == "<RunHandle run001: ok>")
    again = notebook.run("r")  # a handle shown later shows its state then
    assert _only_display(again) == "<RunHandle run001: ok>"


def test_canceled_run_says_canceled(notebook):
    cell = notebook.run("%%swift --no-dashboard -o c\n" + SLOW)
    assert _only_display(cell) == "<RunHandle run001: running>"
    done = notebook.run("import asyncio\nawait asyncio.sleep(0.5)\nc.cancel()\nawait c\n"
                        "print(c.status())")
    assert done.reply["status"] == "ok", done.outputs
    notebook.wait_for(cell, lambda c: "canceled" in _only_display(c))
    text = _only_display(cell)
    assert text.startswith("<RunHandle run001: canceled>\n")
    assert "cancel" in text.split("\n", 1)[1].lower() and "failed" not in text


def test_at_warning_of_a_swift_cell_carries_cell_line_col(notebook):
    cell = notebook.run('%%swift --no-dashboard -o w\nint n = 2;\nstring s = @strcat("a", n);'
                        "\ntrace(s);\n")
    err = cell.stderr()
    assert err.startswith("cell:3:12: Warning: The @ syntax for function invocation is "
                          "deprecated\n"), err
    assert 'string s = @strcat("a", n);' in err


@pytest.fixture
def swift_kernel(tmp_path):
    k = Kernel(str(tmp_path), dashboard=True)
    yield k
    k.close()


def test_swift_kernel_no_dashboard_without_apps(swift_kernel):
    r = swift_kernel.run('int x = 6 * 7;\ntrace(x);\n')
    assert r.status == "ok" and "42" in r.stream()
    assert not r.data(WIDGET) and not [t for t, _ in r.outputs if t == "comm_open"]
    r = swift_kernel.run('type file;\napp (file o) hi() { echo "hi" stdout=@o; }\n'
                         'file f <"f.txt"> = hi();\n')
    assert r.status == "ok"
    assert len(r.data(WIDGET)) == 1  # a cell that starts an app has its panels


def test_swift_kernel_says_what_the_configuration_sets_to_no_effect(swift_kernel, tmp_path):
    (tmp_path / "c.conf").write_text("site.local.execution.options.maxJobs: 2\n")
    r = swift_kernel.run("%swift_config c.conf --no-dashboard\ntrace(1);\n")
    assert r.status == "ok"
    assert "Warning: c.conf:1: site.local.execution.options.maxJobs: a coaster option (blocks " \
        "of pilot jobs), with no effect for execution type \"local\"" in r.stream("stderr")


def test_swift_kernel_warning_carries_cell_line_col(swift_kernel):
    r = swift_kernel.run('%swift_config --no-dashboard\nstring s = @strcat("a", "b");\n'
                         "trace(s);\n")
    assert r.status == "ok"
    assert r.stream("stderr") == ('cell:2:12: Warning: The @ syntax for function invocation '
                                  'is deprecated\n    string s = @strcat("a", "b");\n'
                                  "               ^\n")
    r = swift_kernel.run('string t = @strcat("c", "d");\ntrace(t);\n')
    assert r.stream("stderr").startswith("cell:1:12: Warning: The @ syntax")
    assert r.stream("stderr").count("Warning") == 1  # not said again without a place
