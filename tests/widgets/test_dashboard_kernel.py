"""The dashboard inside a real IPython kernel (jupyter_client), read from the iopub
channel exactly as a browser receives it, and steered by a comm message as a browser
sends it when a slider is released."""

from __future__ import annotations

import json
import queue

import pytest

from widget_helpers import BAG, SIM_CONF

pytestmark = pytest.mark.timeout(120)

SETUP = f"""
import asyncio, tempfile
from swiftnb.config import load_config_text
from swiftnb.runner import start_run
from swiftnb.widgets import Dashboard
CONF = {SIM_CONF + chr(10) + "jobSubmitThrottle: 4" + chr(10)!r}
run = start_run({BAG % 1000!r}, config=load_config_text(CONF), base_dir=tempfile.mkdtemp())
dash = Dashboard(run)
display(dash)
print("IDS", {{"completed": dash.progress.bars[7].model_id,
              "slider": dash.throttles.sliders["jobSubmitThrottle"].model_id,
              "table": dash.sites.table.model_id}})
"""


def _run_cell(kc, code: str, timeout: float = 60) -> tuple[list[dict], str]:
    """Execute ``code``; the iopub messages it caused and its stdout."""
    msg_id = kc.execute(code)
    msgs, out = [], []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            msgs.append(msg)   # comm traffic of the background run belongs to no cell
            continue
        msgs.append(msg)
        kind = msg["msg_type"]
        if kind == "stream":
            out.append(msg["content"]["text"])
        elif kind == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        elif kind == "status" and msg["content"]["execution_state"] == "idle":
            return msgs, "".join(out)


def _state(msgs: list[dict], comm_id: str) -> dict:
    state: dict = {}
    for m in msgs:
        c = m["content"]
        if c.get("comm_id") != comm_id:
            continue
        if m["msg_type"] == "comm_open":
            state.update(c["data"].get("state", {}))
        elif m["msg_type"] == "comm_msg" and c["data"].get("method") == "update":
            state.update(c["data"].get("state", {}))
    return state


def test_dashboard_through_a_real_kernel(tmp_path):
    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    try:
        msgs, out = _run_cell(kc, SETUP)
        ids = eval(out.split("IDS", 1)[1].strip())  # noqa: S307 - our own print
        # the browser moves the slider while the run goes on in the background
        kc.session.send(kc.shell_channel.socket, "comm_msg", {
            "comm_id": ids["slider"],
            "data": {"method": "update", "state": {"value": 3}, "buffer_paths": []}})
        more, out = _run_cell(kc, "await run\nawait asyncio.sleep(0.3)\n"
                                  "import json\n"
                                  "print(json.dumps([run.ok is not None, "
                                  "run.scheduler.throttles()['jobSubmitThrottle'], "
                                  "[(e['old'], e['new']) for e in run.event_list "
                                  "if e.kind == 'THROTTLE' and e['name'] == 'jobSubmitThrottle'], "
                                  "dash.progress.snapshot()['Completed']]))")
        done, throttle, logged, completed = json.loads(out.strip().splitlines()[-1])
        try:
            while True:
                more.append(kc.get_iopub_msg(timeout=0.5))
        except queue.Empty:
            pass
        msgs += more
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    assert done
    assert throttle == 3 and logged == [[4, 3]]
    # what the browser holds for the Completed bar is the final count
    assert completed > 500
    assert _state(msgs, ids["completed"])["value"] == completed
    assert "flaky" in _state(msgs, ids["table"])["value"]
    updates = sum(1 for m in msgs if m["msg_type"] == "comm_msg"
                  and m["content"].get("comm_id") == ids["completed"])
    assert 1 <= updates < completed / 20
