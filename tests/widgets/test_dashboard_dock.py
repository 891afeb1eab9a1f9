"""dash.dock() in a real IPython kernel (jupyter_client): the dashboard is displayed
inside a sidecar widget, which JupyterLab shows in a side panel beside the notebook."""

from __future__ import annotations

import pytest

from test_dashboard_kernel import _run_cell, _state

pytestmark = pytest.mark.timeout(120)

pytest.importorskip("sidecar", reason="dock() uses the sidecar package (pip install sidecar)")

CELL = """
import tempfile
from swiftnb.runner import start_run
from swiftnb.widgets import Dashboard
run = start_run('trace("docked");', base_dir=tempfile.mkdtemp())
dash = Dashboard(run)
side = dash.dock(anchor="split-bottom")
await run
print("IDS", dash.widget.model_id, side.model_id, side is dash.dock())
"""


def test_dock_displays_the_dashboard_in_a_sidecar(tmp_path):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        msgs, out = _run_cell(kc, CELL)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    dash_id, side_id, same = out.split("IDS", 1)[1].split()
    assert same == "True"                                 # docked once
    side = _state(msgs, side_id)
    assert side["_model_name"] == "SidecarModel"
    assert side["anchor"] == "split-bottom" and side["title"] == "swiftnb run run001"
    cell = msgs[-1]["parent_header"]["msg_id"]
    # the Output protocol: while the sidecar captures, its msg_id is the cell's, and the
    # dashboard's view is displayed in that cell: the front end puts it into the sidecar
    captures = [m["content"]["data"]["state"]["msg_id"] for m in msgs
                if m["msg_type"] == "comm_msg" and m["content"]["comm_id"] == side_id
                and "msg_id" in m["content"]["data"].get("state", {})]
    assert captures[:2] == [cell, ""]
    view = "application/vnd.jupyter.widget-view+json"
    shown = [m["content"]["data"][view]["model_id"] for m in msgs
             if m["msg_type"] == "display_data" and m["parent_header"].get("msg_id") == cell
             and view in m["content"]["data"]]
    assert shown == [dash_id]
