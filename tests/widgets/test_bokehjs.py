"""BokehJS reaches the page from the installed bokeh, once per kernel, never from a CDN
(swiftnb.bokehjs): what a real IPython kernel sends when the dashboard builds its charts
and when a notebook asks for bokeh output.  tests/browser shows the charts drawn."""

from __future__ import annotations

from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.manager import KernelManager, start_new_kernel

LOAD = "application/vnd.bokehjs_load.v0+json"


def _execute(kc: BlockingKernelClient, code: str) -> list[dict]:
    """Run ``code``; the display_data contents it sent, until the kernel is idle."""
    msg_id = kc.execute(code)
    shown = []
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "error":
            raise AssertionError("\n".join(msg["content"]["traceback"]))
        if msg["msg_type"] == "display_data":
            shown.append(msg["content"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return shown


def _loads(shown: list[dict]) -> list[str]:
    return [c["data"][LOAD] for c in shown if LOAD in c["data"]]


def test_charts_load_bokehjs_inline_once_per_kernel() -> None:
    km: KernelManager
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        first = _execute(kc, "from swiftnb.widgets.chart import BlockTimeline, ScoreChart\n"
                             "charts = [ScoreChart(), BlockTimeline()]")
        (js,) = _loads(first)
        assert "cdn.bokeh.org" not in js
        assert len(js) > 1_000_000  # the library itself travels in the output
        assert _loads(_execute(kc, "more = [ScoreChart(), BlockTimeline()]")) == []
        asked = _execute(kc, "from swiftnb.bokehjs import output_notebook\n"
                             "output_notebook()")
        (again,) = _loads(asked)
        assert "cdn.bokeh.org" not in again
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)

