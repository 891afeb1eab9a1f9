"""swiftnb: Swift parallel scripting (Swift/K 0.9x) in Python and Jupyter."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: The Swift/K release whose language, options, messages and logs swiftnb follows.
SWIFT_VERSION = "0.96.2"

if TYPE_CHECKING:
    import pandas as pd

    from swiftnb.forecast.model import Model
    from swiftnb.store import Explanation, RunStore
    from swiftnb.widgets.whatif import WhatIfPanel  # noqa: F401  (lazy, below)


def __getattr__(name: str) -> ModuleType | type:
    """``swiftnb.store`` and ``swiftnb.WhatIfPanel`` on first use, so that importing
    swiftnb stays cheap."""
    if name == "store":
        return importlib.import_module("swiftnb.store")
    if name == "WhatIfPanel":
        return importlib.import_module("swiftnb.widgets.whatif").WhatIfPanel
    raise AttributeError(f"module 'swiftnb' has no attribute {name!r}")


def explain(path: str, why: bool = False, store: RunStore | str | None = None) -> Explanation:
    """The calls behind ``path``, from the run store (default ``.swiftnb`` here); print it."""
    from swiftnb.store import DEFAULT_DIR, RunStore
    from swiftnb.store import explain as explain_in

    if isinstance(store, RunStore):
        return explain_in(store, path, why)
    with RunStore.open(DEFAULT_DIR if store is None else store, create=False) as opened:
        return explain_in(opened, path, why)


def whatif(script: str | os.PathLike[str], model: Model | str | os.PathLike[str],
           **keywords: Any) -> pd.DataFrame:
    """The predicted timings of ``script`` on sites that behave as ``model`` (a
    ``swiftnb calibrate`` file or a Model) says: a DataFrame (docs/whatif.md)."""
    from swiftnb.forecast.prediction import whatif as predict_timings

    return predict_timings(script, model, **keywords)


def load_ipython_extension(ipython):  # noqa: ANN001  (IPython's hook)
    """``%load_ext swiftnb``: the ``%%swift`` and ``%swift_config`` magics."""
    from swiftnb.kernel.magic import load_ipython_extension as load

    load(ipython)
