"""Several configurations predicted side by side, with the actual run where there is one.

The question people ask of a what-if model is rarely "how long" but "which": Stampede
alone or with Gordon, replication on or off.  :func:`compare` predicts each
configuration with the same model, seed and draws, and puts the answers in one table
(the model behind :class:`swiftnb.widgets.whatif.WhatIfPanel`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from swiftnb.config.model import Config
from swiftnb.forecast.model import QUEUE_MEMORY, Model
from swiftnb.forecast.prediction import (DEFAULT_RUNS, SHARE, predict, site_shares,
                                        summarize)
from swiftnb.logs.frame import LogFrame

__all__ = ["Scenario", "compare", "ACTUAL", "ACTUAL_SHARE"]

#: the columns of an actual run: its TTC, and a site's share of its jobs (``actual share:x``)
ACTUAL = "actual"
ACTUAL_SHARE = "actual " + SHARE

ConfigLike = Config | str | os.PathLike[str] | None
LogLike = str | os.PathLike[str] | LogFrame


@dataclass(frozen=True)
class Scenario:
    """One configuration to predict: a swift.conf (path or Config; None: the sites as the
    model saw them), the script's arguments, and the log of a real run of it, if any."""

    config: ConfigLike = None
    args: Sequence[str] | Mapping[str, Any] | None = None
    actual: LogLike | None = None


def _scenario(value: Scenario | ConfigLike) -> Scenario:
    return value if isinstance(value, Scenario) else Scenario(config=value)


def compare(script: str | os.PathLike[str], model: Model | str | os.PathLike[str],
            scenarios: Mapping[str, Scenario | ConfigLike], *,
            args: Sequence[str] | Mapping[str, Any] | None = None, runs: int = DEFAULT_RUNS,
            seed: int = 0, at: float | None = None,
            memory: float = QUEUE_MEMORY) -> pd.DataFrame:
    """One row per scenario (by its label): the predicted TTC (``median``, ``p10``,
    ``p90``), ``failed_runs``, each site's mean share of the tasks (``share:<site>``), and
    for a scenario with a log its ``actual`` TTC and shares (``actual share:<site>``).

    ``args`` are the script's arguments for the scenarios that do not give their own."""
    if not isinstance(model, Model):
        model = Model.load(model)
    rows: dict[str, dict[str, float]] = {}
    for label, value in scenarios.items():
        scenario = _scenario(value)
        per_run = predict(script, model, config=scenario.config,
                          args=scenario.args if scenario.args is not None else args,
                          runs=runs, seed=seed, at=at, memory=memory)
        ttc = summarize(per_run).loc["TTC"]
        row = {"median": float(ttc["median"]), "p10": float(ttc["p10"]),
               "p90": float(ttc["p90"]), "failed_runs": float((per_run["ok"] == 0).sum())}
        shares = [c for c in per_run.columns if c.startswith(SHARE)]
        row.update({c: float(per_run[c].fillna(0.0).mean()) for c in shares})
        if scenario.actual is not None:
            frame = scenario.actual if isinstance(scenario.actual, LogFrame) \
                else LogFrame.read(scenario.actual)
            row[ACTUAL] = float(frame.run["ttc"])
            row.update({"actual " + k: v for k, v in site_shares(frame).items()})
        rows[label] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "configuration"
    share_columns = sorted(c for c in table.columns if c.startswith((SHARE, ACTUAL_SHARE)))
    table[share_columns] = table[share_columns].fillna(0.0)
    if ACTUAL not in table:
        table[ACTUAL] = float("nan")
    first = ["median", "p10", "p90", ACTUAL, "failed_runs"]
    table = table[first + share_columns]
    table.attrs.update(runs=runs, seed=seed)
    return table
