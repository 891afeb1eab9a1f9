"""Helpers of the widget tests: they see the widgets as a browser would: through their comm messages.

``browser`` replaces ``comm.create_comm`` (what ipywidgets calls to open a widget's comm
when there is no kernel) with a comm that records every message it would send to the
front end.  ``Browser.state(widget)`` rebuilds a widget model's state from the ``open``
message and the ``update`` messages that followed, which is exactly what a front end
receives; ``Browser.send(widget, **state)`` delivers a message the other way, as a moved
slider or a clicked button would.  Runs are real: ``swiftnb.runner.start_run`` on sim
sites (virtual time) or on the local site / a local coaster site (real processes).
"""

from __future__ import annotations

import asyncio
from typing import Any

from comm import DummyComm


class _RecordingComm(DummyComm):
    def __init__(self, *args: Any, browser: Browser, **kwargs: Any) -> None:
        self.browser = browser  # before super().__init__, which sends comm_open
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type: str, data: Any = None, metadata: Any = None,
                    buffers: Any = None, **keys: Any) -> None:
        self.browser.messages.append((msg_type, self.comm_id, data or {}, buffers or []))


class Browser:
    """The front end's view of every widget created while it is installed."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str, dict, list]] = []

    def create_comm(self, *args: Any, **kwargs: Any) -> DummyComm:
        return _RecordingComm(*args, browser=self, **kwargs)

    def of(self, widget: Any) -> list[tuple[str, dict]]:
        return [(t, d) for t, cid, d, _b in self.messages if cid == widget.model_id]

    def state(self, widget: Any) -> dict[str, Any]:
        """The model state the front end holds for ``widget``."""
        state: dict[str, Any] = {}
        for msg_type, data in self.of(widget):
            if msg_type == "comm_open":
                state.update(data.get("state", {}))
            elif msg_type == "comm_msg" and data.get("method") in ("update", "echo_update"):
                state.update(data.get("state", {}))
        return state

    def updates(self, widget: Any) -> int:
        return sum(1 for t, d in self.of(widget)
                   if t == "comm_msg" and d.get("method") == "update")

    def customs(self, widget: Any) -> list[dict]:
        return [d.get("content", {}) for t, d in self.of(widget)
                if t == "comm_msg" and d.get("method") == "custom"]

    def count(self, msg_type: str = "comm_msg") -> int:
        return sum(1 for m in self.messages if m[0] == msg_type)

    def send(self, widget: Any, **state: Any) -> None:
        """A state update from the front end (a slider moved, a dropdown chosen)."""
        widget._handle_msg({"content": {"data": {"method": "update", "state": state,
                                                 "buffer_paths": []}},
                            "buffers": []})

    def click(self, button: Any) -> None:
        button._handle_msg({"content": {"data": {"method": "custom",
                                                 "content": {"event": "click"}}},
                            "buffers": []})


SIM_CONF = """
sites: [good, flaky]
site.good {
  execution { type: "sim", options { slots: 8, taskDuration: "uniform:5:15", seed: 1 } }
  maxParallelTasks: 16
  initialParallelTasks: 4
}
site.flaky {
  execution { type: "sim", options { slots: 8, taskDuration: 10, failureProbability: 0.3,
                                     seed: 2 } }
  maxParallelTasks: 16
  initialParallelTasks: 4
}
lazyErrors: true
siteSelectionOptions { seed: 7 }
"""

BAG = """type file;
app (file o) work (int i) {
  work i stdout=@o;
}
file f[] <simple_mapper; prefix="simout/f", suffix=".txt">;
foreach i in [1:%d] {
  f[i] = work(i);
}
"""


def start(source: str, conf: str, base_dir: Any, **kwargs: Any) -> Any:
    """A real run through the runner API, on the running loop."""
    from swiftnb.config import load_config_text
    from swiftnb.runner import start_run

    return start_run(source, config=load_config_text(conf, cwd=str(base_dir)),
                     base_dir=str(base_dir), **kwargs)


def run_async(coro: Any, timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))
