"""Calibrate a what-if model from run logs (ours and Swift/K 0.96's), per site.

Everything is read through the one log reader (swiftnb.logs.LogFrame): block queue
waits (Tq), worker start-up (Tb), the gaps between block requests and the coaster
service's start, how long an idle block lingers, job queue waits on sites without
blocks (Tw), stage-in and stage-out times, task durations per app (as factors of a
numeric argument when the logs show them proportional, e.g. ``sleep 900``), failures
per attempt, and the most blocks, workers and running tasks seen at once.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import IO, Any

import numpy as np
import pandas as pd

from swiftnb.logs.frame import LogFrame
from swiftnb.forecast.model import AppModel, Model, ModelError, SiteModel

__all__ = ["calibrate", "calibrate_run"]

#: an app's durations follow an argument when duration / argument varies this little
PROPORTIONAL_SPREAD = 0.05


def calibrate(logs: Iterable[str | os.PathLike[str] | IO[Any] | LogFrame]) -> Model:
    """A model from any number of logs (paths, open files or LogFrames)."""
    model = Model()
    for log in logs:
        frame = log if isinstance(log, LogFrame) else LogFrame.read(log)
        name = frame.name or str(log)
        runs = frame.runs() or [frame]
        for run in runs:
            calibrate_run(run, model, name)
        model.sources.append(name)
    if not model.sites:
        raise ModelError("no site to model: the logs have no tasks")
    return model


def _seconds(values: Any) -> list[float]:
    series = pd.to_numeric(pd.Series(values, dtype="float64"), errors="coerce").dropna()
    return [round(float(v), 3) for v in series if v >= 0]


def _most_at_once(starts: pd.Series, ends: pd.Series, finish: float) -> int:
    """The most intervals [start, end) open at one time (an open end: the run's end)."""
    frame = pd.DataFrame({"s": starts, "e": ends.fillna(finish)}).dropna()
    if not len(frame):
        return 0
    times = np.concatenate([frame["s"].to_numpy(), frame["e"].to_numpy()])
    steps = np.concatenate([np.ones(len(frame)), -np.ones(len(frame))])
    order = np.lexsort((steps, times))  # an end before a start at the same instant
    return int(np.cumsum(steps[order]).max())


def _job_arguments(frame: LogFrame) -> pd.Series:
    """jobid -> the app's arguments as a list of strings (JOB_START arguments=[...])."""
    ev = frame.events
    if "arguments" not in ev or not len(ev):
        return pd.Series(dtype=object)
    start = ev[(ev["kind"] == "JOB_START") & ev["arguments"].notna()]
    start = start.drop_duplicates("jobid")
    args = start["arguments"].astype(str).str.strip("[]").str.split(",")
    return pd.Series([[a.strip() for a in row] for row in args], index=start["jobid"])


def _app_model(durations: pd.Series, arguments: pd.Series) -> AppModel:
    """Durations as they are, or as factors of the first argument they follow."""
    plain = AppModel(_seconds(durations))
    if not len(arguments) or not len(durations):
        return plain
    width = max((len(a) for a in arguments if isinstance(a, list)), default=0)
    for index in range(width):
        values = pd.to_numeric(arguments.map(
            lambda a, i=index: a[i] if isinstance(a, list) and len(a) > i else None),
            errors="coerce")
        if values.isna().any() or (values <= 0).any():
            continue
        factors = durations / values
        if factors.std(ddof=0) <= PROPORTIONAL_SPREAD * factors.mean() \
                and 0.5 <= factors.median() <= 2.0:
            return AppModel([round(float(f), 6) for f in factors], index)
    return plain


def _site_of_blocks(tasks: pd.DataFrame, blocks: pd.DataFrame, sites: list[str]) -> pd.Series:
    """block id -> the site its tasks ran on (the run's only site if it ran none)."""
    ran = tasks.dropna(subset=["blockid", "site"])
    site = ran.groupby("blockid")["site"].agg(lambda s: s.mode().iloc[0]) if len(ran) \
        else pd.Series(dtype=object)
    found = pd.Series(blocks.index.map(site), index=blocks.index, dtype=object)
    if len(sites) == 1:
        found = found.fillna(sites[0])
    return found


def calibrate_run(frame: LogFrame, model: Model, name: str = "<log>") -> None:
    """Add one run's observations to ``model``."""
    run, jobs, tasks, blocks, workers = (frame.run, frame.jobs, frame.tasks, frame.blocks,
                                         frame.workers)
    if not len(tasks) and not len(blocks):
        raise ModelError(f"{name}: the log has no tasks and no blocks: nothing to calibrate")
    if not len(blocks) and tasks.get("workerid", pd.Series(dtype=object)).notna().any():
        raise ModelError(f"{name}: tasks ran on coaster workers but the log has no blocks "
                         "(no BLOCK_REQUESTED/BLOCK_ACTIVE lines): cannot model its blocks")
    finish = float(run["finish"])
    tasks = tasks.assign(site=tasks["jobid"].map(jobs["host"]) if len(jobs) else None,
                         tr=tasks["jobid"].map(jobs["tr"]) if len(jobs) else None)
    sites = sorted(tasks["site"].dropna().unique().tolist())
    block_site = _site_of_blocks(tasks, blocks, sites) if len(blocks) else pd.Series(dtype=object)
    arguments = _job_arguments(frame)
    first_submit = float(jobs["task"].min()) if len(jobs) else float("nan")
    index = len(model.run_starts)  # this run's number, which its samples carry
    used = sorted(set(sites) | set(block_site.dropna()))
    model.run_starts.append(float(run["start"] if run["start"] is not None else finish))
    model.run_sites.append(len(used))
    model.run_tasks.append(int(jobs.index.nunique()) if len(jobs) else 0)
    if run["start"] is not None and first_submit == first_submit:
        model.add("run_startup", [round(first_submit - float(run["start"]), 3)], index)
    ends = pd.concat([tasks["completed"], tasks["failed"]]).dropna()
    if len(ends) and run["outcome"] is not None:
        model.add("run_shutdown", [round(finish - float(ends.max()), 3)], index)
    for site in used:
        sm = model.sites.setdefault(site, SiteModel())
        sm.logs += 1
        mine = tasks[tasks["site"] == site]
        _add_tasks(sm, mine, arguments, finish, index)
        if len(blocks):
            ids = block_site.index[block_site == site]
            _add_blocks(sm, blocks.loc[ids], workers, mine, jobs, finish, index)
        else:
            sm.add("job_queue", _seconds(mine["active"] - mine["submitted"]), index)


def _add_tasks(sm: SiteModel, tasks: pd.DataFrame, arguments: pd.Series,
               finish: float, run: int) -> None:
    done = tasks["completed"].notna()
    failed = tasks["failed"].notna() & ~done
    sm.attempts += int((done | failed).sum())
    sm.failures += int(failed.sum())
    sm.add("stage_in", _seconds(tasks["active"] - tasks["stage_in"]), run)
    sm.add("stage_out", _seconds(tasks["completed"] - tasks["stage_out"]), run)
    ran = tasks[done & tasks["active"].notna()]
    for app, group in ran.groupby("tr"):
        durations = group["completed"] - group["active"]
        args = group["jobid"].map(arguments) if len(arguments) else pd.Series(dtype=object)
        fresh = _app_model(durations, args.dropna() if len(args.dropna()) == len(group)
                           else pd.Series(dtype=object))
        fresh.runs = [run] * len(fresh.samples)
        old = sm.apps.get(str(app))
        if old is None:
            sm.apps[str(app)] = fresh
        elif old.argument == fresh.argument:
            old.samples += fresh.samples
            old.runs += fresh.runs
        elif old.argument is None or fresh.argument is None:  # keep the plain seconds
            plain = _app_model(durations, pd.Series(dtype=object))
            plain.runs = [run] * len(plain.samples)
            if old.argument is None:
                old.samples += plain.samples
                old.runs += plain.runs
            else:
                sm.apps[str(app)] = plain  # the older factors cannot be turned back
    running = _most_at_once(tasks["active"], tasks["completed"].fillna(tasks["failed"]),
                            finish)
    sm.limits["running"] = max(sm.limits.get("running", 0), running)


def _add_blocks(sm: SiteModel, blocks: pd.DataFrame, workers: pd.DataFrame,
                tasks: pd.DataFrame, jobs: pd.DataFrame, finish: float, run: int) -> None:
    if not len(blocks):
        return
    sm.add("block_queue", _seconds(blocks["active"] - blocks["requested"]), run)
    mine = workers[workers["block"].isin(blocks.index)] if len(workers) else workers
    if len(mine):
        startup = (mine["active"] - mine["block_active"]).groupby(mine["block"]).min()
        sm.add("block_startup", _seconds(startup), run)
    requested = blocks["requested"].dropna().sort_values()
    first_done = blocks["done"].min()
    burst = requested[requested < first_done] if first_done == first_done else requested
    sm.add("block_submit", _seconds(burst.diff().dropna()), run)
    submits = jobs.loc[jobs.index.isin(tasks["jobid"]), "task"]
    if len(requested) and len(submits):
        sm.add("service_start", _seconds([requested.iloc[0] - submits.min()]), run)
    ended = pd.concat([tasks["completed"], tasks["failed"]]).groupby(
        pd.concat([tasks["blockid"], tasks["blockid"]])).max()
    idle = blocks["done"] - blocks.index.map(ended).astype("float64")
    # a block that ended with the run tells how long the run lasted, not the idle time
    last_end = ended.max() if len(ended) else finish
    sm.add("block_idle", _seconds(idle[blocks["done"] < last_end]), run)
    limits = sm.limits
    limits["blocks"] = max(limits.get("blocks", 0),
                           _most_at_once(blocks["requested"], blocks["done"], finish))
    if len(mine):
        limits["workers"] = max(limits.get("workers", 0), _most_at_once(
            mine["active"], mine["shutdown"].fillna(mine["lost"]), finish))
    cores = pd.to_numeric(blocks["cores"], errors="coerce").dropna()
    if len(cores):
        limits["block_slots"] = max(limits.get("block_slots", 0), float(cores.max()))
    walltime = pd.to_numeric(blocks["walltime"], errors="coerce").dropna()
    if len(walltime):
        limits["block_walltime"] = max(limits.get("block_walltime", 0), float(walltime.max()))
