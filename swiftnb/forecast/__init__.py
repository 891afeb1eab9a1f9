"""Forecasts (what if): calibrate a model of sites from run logs, then predict a
script's time to completion on simulated sites that behave like them (docs/whatif.md).

``calibrate(logs)`` -> :class:`Model`; ``whatif(script, model=...)`` -> a DataFrame of the
predicted timings; ``compare(script, model, {label: config})`` -> one row per
configuration (the table the ``WhatIfPanel`` widget shows).  Imports are lazy: pandas only when asked.
"""

from __future__ import annotations

from swiftnb.lazy import exported, lazy_exports

_LAZY = {
    "swiftnb.forecast.model": ("Model", "SiteModel", "ModelError"),
    "swiftnb.forecast.calibration": ("calibrate",),
    "swiftnb.forecast.prediction": ("whatif", "predict"),
    "swiftnb.forecast.comparison": ("compare", "Scenario"),
}

__all__ = exported(_LAZY)


__getattr__ = lazy_exports("swiftnb.forecast", _LAZY)
