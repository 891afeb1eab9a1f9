"""A real Swift kernel (installed kernelspec, jupyter_client) and a cell runner."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any

from jupyter_client.manager import start_new_kernel

SHARE = os.path.join(sys.prefix, "share", "jupyter")


def ensure_kernelspec() -> str:
    spec = os.path.join(SHARE, "kernels", "swiftnb", "kernel.json")
    ok = False
    if os.path.isfile(spec):
        with open(spec, encoding="utf-8") as fh:
            ok = json.load(fh)["argv"][0] == sys.executable
    if not ok:
        subprocess.run([sys.executable, "-m", "swiftnb.kernel", "install", "--sys-prefix"],
                       check=True, capture_output=True, timeout=60)
    return spec


@dataclass
class CellResult:
    reply: dict
    outputs: list[tuple[str, dict]] = field(default_factory=list)

    @property
    def status(self) -> str:
        return self.reply["status"]

    def stream(self, name: str = "stdout") -> str:
        return "".join(c["text"] for t, c in self.outputs if t == "stream" and c["name"] == name)

    @property
    def errors(self) -> list[dict]:
        return [c for t, c in self.outputs if t == "error"]

    def data(self, mime: str) -> list[Any]:
        return [c["data"][mime] for t, c in self.outputs
                if t in ("display_data", "execute_result") and mime in c["data"]]


class Kernel:
    def __init__(self, cwd: str, dashboard: bool = False) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="swiftnb", cwd=cwd)
        if not dashboard:
            assert self.run("%swift_config --no-dashboard").status == "ok"

    def run(self, code: str, timeout: float = 60) -> CellResult:
        outputs: list[tuple[str, dict]] = []
        msg = self.kc.execute_interactive(
            code, timeout=timeout, output_hook=lambda m: outputs.append(
                (m["msg_type"], m["content"])))
        return CellResult(msg["content"], outputs)

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
