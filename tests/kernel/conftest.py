"""The kernel tests run the installed kernelspec: install it into this venv (sys.prefix),
never into the user's home, and make Jupyter look there first."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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


os.environ["JUPYTER_PATH"] = SHARE + (os.pathsep + os.environ["JUPYTER_PATH"]
                                      if os.environ.get("JUPYTER_PATH") else "")


@pytest.fixture(scope="session", autouse=True)
def swiftnb_kernelspec() -> str:
    return ensure_kernelspec()
