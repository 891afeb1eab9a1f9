"""The kernel tests run the installed kernelspec: install it into this venv (sys.prefix),
never into the user's home, and make Jupyter look there first."""

from __future__ import annotations

import os

import pytest

from kernelhelp import SHARE, ensure_kernelspec

os.environ["JUPYTER_PATH"] = SHARE + (os.pathsep + os.environ["JUPYTER_PATH"]
                                      if os.environ.get("JUPYTER_PATH") else "")


@pytest.fixture(scope="session", autouse=True)
def swiftnb_kernelspec() -> str:
    return ensure_kernelspec()
