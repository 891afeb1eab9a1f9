"""Predict a script's time to completion: R runs in virtual time on simulated sites.

Each run uses a bootstrap copy of the model, the samples of one calibrated log (so the
interval holds the spread between runs, and few observations widen it),
and its own seed, runs the script through the ordinary engine and scheduler (the
configuration's throttles, retries, replication and policies) on ``sim`` sites, and
reads its timings back through the one log analysis (LogFrame).  The run's own start-up
and wind-down, which a simulated run does not have, are drawn from the model.
"""

from __future__ import annotations

import asyncio
import io
import os
import random
import tempfile
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from swiftnb.forecast.model import QUEUE_MEMORY, Model
from swiftnb.logs.frame import LogFrame
from swiftnb.forecast.sites import model_config_text, simulated_config

__all__ = ["predict", "whatif", "summarize", "interval", "site_shares", "BREAKDOWN", "SHARE",
           "DRAWN", "DEFAULT_RUNS"]

#: a per-run column holding a site's share of the jobs: ``share:stampede``
SHARE = "share:"

#: simulated runs per prediction: the 10-90% interval's ends are the second and
#: nineteenth of twenty (ten give the first and the tenth, which move more from one
#: prediction to the next); a 2,048-task run of two coaster sites simulates in ~3 s
DEFAULT_RUNS = 20

#: per-run columns holding the calibrated run a simulated run's lists (``drawn:run``)
#: and queue waits (``drawn:queue``) came from: indexes into the model's ``run_starts``
DRAWN = "drawn:"

#: the AIMES timings of the breakdown (docs/logs.md), after TTC
BREAKDOWN = ("Tss", "Tw", "Tq", "Tb", "Tsi", "Te", "Tso", "Tse", "Ta")


def _load_config(config: Any, model: Model, base_dir: str) -> tuple[Any, bool]:
    """(Config, whether its sites are the model's own) from a Config, a path or None."""
    from swiftnb.runner import load_run_config

    if config is not None and not isinstance(config, (str, os.PathLike)):
        return config, False
    if config is not None:
        path = os.path.abspath(os.fspath(config))
        return load_run_config(path, base_dir=os.path.dirname(path)), False
    path = os.path.join(base_dir, "whatif-model.conf")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(model_config_text(model))
    return load_run_config(path, base_dir=base_dir), True


def _one_run(script: str, config: Any, args: Any, base_dir: str) -> dict[str, float]:
    from swiftnb.runner import prepare_run

    handle = prepare_run(script, config=config, args=args, base_dir=base_dir, log=False,
                         ticker=False, stdout=io.StringIO(), keep_events=True)

    async def main() -> Any:
        handle.start()
        return await handle

    _run_to_end(main)
    frame = handle.log_frame()
    row: dict[str, float] = {"ok": float(bool(handle.ok))}
    run = frame.run
    row["TTC"] = float(run.get("ttc") or 0.0)
    summary = frame.summary()
    for name in BREAKDOWN:
        row[name] = float(summary.loc[name, "mean"]) if name in summary.index else np.nan
    row.update(site_shares(frame))
    return row


def _count_calls(script: str, config: Any, args: Any, base_dir: str) -> int | None:
    """How many app calls the script makes (a dry run: nothing is simulated), so that a
    prediction borrows from logs of runs of about its size; None when a dry run cannot
    tell (it failed: the script needs what only a real run makes)."""
    from swiftnb.runner import prepare_run

    handle = prepare_run(script, config=config, args=args, base_dir=base_dir, log=False,
                         ticker=False, stdout=io.StringIO(), keep_events=True, dryrun=True)

    async def main() -> Any:
        handle.start()
        return await handle

    _run_to_end(main)
    if not handle.ok:
        return None
    return sum(event.kind == "JOB_INIT" for event in handle.event_list)


def _run_to_end(main: Callable[[], Coroutine[Any, Any, Any]]) -> None:
    """Run ``main()`` on an event loop of its own: in this thread, or, where a loop is
    already running here (a notebook's kernel), in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(main())
        return
    with ThreadPoolExecutor(1, thread_name_prefix="swiftnb-whatif") as pool:
        pool.submit(lambda: asyncio.run(main())).result()


def site_shares(frame: LogFrame) -> dict[str, float]:
    """``share:<site>`` -> the fraction of the run's jobs that ran there."""
    jobs = frame.jobs
    if not len(jobs):
        return {}
    counts = jobs["host"].dropna().value_counts(normalize=True)
    return {f"{SHARE}{site}": float(part) for site, part in counts.items()}


def predict(script: str | os.PathLike[str], model: Model | str | os.PathLike[str], *,
            config: Any = None, args: Sequence[str] | Mapping[str, Any] | None = None,
            runs: int = DEFAULT_RUNS, seed: int = 0, at: float | None = None,
            memory: float = QUEUE_MEMORY) -> pd.DataFrame:
    """One row per simulated run: TTC, the mean of each timing of the breakdown and each
    site's share of the tasks (``share:<site>``); ``.attrs["tasks"]``: the script's app
    calls, as a dry run counted them.

    Each run takes its samples from one calibrated log that used as many sites as the
    configuration selects (:meth:`Model.resampled`), the likelier the nearer its number
    of tasks to the script's (counted by a dry run first); with ``at`` (epoch seconds)
    also the nearer that moment (``memory``: the e-folding distance in seconds)."""
    if not isinstance(model, Model):
        model = Model.load(model)
    script = os.path.abspath(os.fspath(script))
    rows = []
    with tempfile.TemporaryDirectory(prefix="swiftnb-whatif-") as scratch:
        base, as_seen = _load_config(config, model, scratch)
        sites = len(base.selected_sites or base.sites)
        dry = os.path.join(scratch, "dryrun")
        os.makedirs(dry)
        tasks = _count_calls(script, base, args, dry)
        for r in range(runs):
            rng = random.Random(f"whatif:{seed}:{r}")
            drawn = model.resampled(rng, at=at, memory=memory, sites=sites, tasks=tasks)
            sim = simulated_config(base, drawn, seed * 10007 + r, as_seen=as_seen)
            where = os.path.join(scratch, f"run{r}")
            os.makedirs(where)
            row = _one_run(script, sim, args, where)
            row["TTC"] += _draw(drawn.run_startup, rng) + _draw(drawn.run_shutdown, rng)
            row.update({f"{DRAWN}{k}": float(v) for k, v in drawn.drawn.items()})
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame.index.name = "run"
    frame.attrs["tasks"] = tasks  # the app calls a dry run counted (None: it could not)
    return frame


def _draw(samples: list[float], rng: random.Random) -> float:
    return rng.choice(samples) if samples else 0.0


#: the interval's percentiles
LOW, HIGH = 0.1, 0.9


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The 10th and 90th percentiles of R simulated runs' values, as a prediction
    interval for the next run rather than the spread of these R.

    The k-th smallest of R draws lies below a new draw with probability k / (R + 1), so
    the percentiles are read at ranks 0.1 (R + 1) and 0.9 (R + 1), interpolated
    (Hyndman and Fan's definition 6).  Read at the usual ranks, 1 + 0.1 (R - 1), ten
    runs would hold an eleventh of the same model 65% of the time, not 80%."""
    data = np.asarray(values, dtype=float)
    low, high = np.quantile(data, [LOW, HIGH], method="weibull")
    return float(low), float(high)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per timing (TTC first): median and the 10-90% interval (:func:`interval`) over
    the runs."""
    names = [n for n in ("TTC", *BREAKDOWN) if n in runs and runs[n].notna().any()]
    bounds = [interval(runs[n].dropna().tolist()) for n in names]
    table = pd.DataFrame({
        "median": [runs[n].median() for n in names],
        "p10": [low for low, _high in bounds],
        "p90": [high for _low, high in bounds],
    }, index=pd.Index(names, name="timing"))
    table.attrs["runs"] = len(runs)
    table.attrs["failed_runs"] = int((runs["ok"] == 0).sum()) if "ok" in runs else 0
    return table


def whatif(script: str | os.PathLike[str], model: Model | str | os.PathLike[str], *,
           config: Any = None, args: Sequence[str] | Mapping[str, Any] | None = None,
           runs: int = DEFAULT_RUNS, seed: int = 0, at: float | None = None,
           memory: float = QUEUE_MEMORY) -> pd.DataFrame:
    """The predicted timings of ``script`` (TTC, Tss, Tw, Tq...: median, p10, p90 in
    seconds); ``.attrs["per_run"]`` holds the per-run table (:func:`predict`)."""
    per_run = predict(script, model, config=config, args=args, runs=runs, seed=seed,
                      at=at, memory=memory)
    table = summarize(per_run)
    table.attrs["per_run"] = per_run
    return table
