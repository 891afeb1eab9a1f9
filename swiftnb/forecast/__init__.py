"""Forecasts (what if): calibrate a model of sites from run logs, then predict a
script's time to completion on simulated sites that behave like them (docs/whatif.md).

``calibrate(logs)`` -> :class:`Model`; ``whatif(script, model=...)`` -> a DataFrame of the
predicted timings.  Imports are lazy: pandas only when asked.
"""

from __future__ import annotations

from swiftnb.lazy import lazy_exports

_LAZY = {
    "Model": "swiftnb.forecast.model",
    "SiteModel": "swiftnb.forecast.model",
    "ModelError": "swiftnb.forecast.model",
    "calibrate": "swiftnb.forecast.calibration",
    "whatif": "swiftnb.forecast.prediction",
    "predict": "swiftnb.forecast.prediction",
}

__all__ = sorted(_LAZY)


__getattr__ = lazy_exports("swiftnb.forecast", _LAZY)
