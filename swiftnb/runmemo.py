"""One run's memoization, wired up: the run store opened where the configuration says,
the run recorded in it from start to end, and the memo handed to the engine.

Why apart from runner.py: the runner wires many things, and this one has its own
failure policy.  A store that cannot be used (damaged, written by a newer swiftnb,
unwritable, locked) never stops a run: the run is warned and goes on unmemoized, and
the store's files are left as they were for the person to look at.
"""

from __future__ import annotations

import hashlib
import os
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from swiftnb.store import RunRecord, RunStore, StoreError
from swiftnb.store.memo import AppSettings, StoreMemo

if TYPE_CHECKING:
    from swiftnb.config.model import Config
    from swiftnb.engine.task import Executor

__all__ = ["RunMemo", "memoize_wanted", "open_run_memo"]


def memoize_wanted(config: Config, default: bool | None) -> bool:
    """``memoize`` as the configuration sets it; where no file nor the command line set
    it, ``default`` when given (the Swift kernel and ``%%swift`` say True)."""
    if default is not None and not config.origin("memoize"):
        return default
    return bool(config.memoize)


def app_settings(config: Config) -> Callable[[str], AppSettings]:
    """The catalogue entry of an app (the first selected site that lists it, else the
    global one) as what memoization keys on: env, and options and keys as profiles."""
    from swiftnb.config.types import flatten_options

    def settings(tr: str) -> AppSettings:
        for site in [*config.selected_sites, ""]:
            entry = config.app_for(site, tr)
            if entry is not None:
                profiles = flatten_options(entry.options)
                profiles.update(flatten_options(entry.attributes))
                return AppSettings(dict(entry.env), profiles)
        return AppSettings()

    return settings


class RunMemo:
    """The store and the memo of one run; :meth:`end` records how the run ended."""

    def __init__(self, store: RunStore, memo: StoreMemo, warn: Callable[[str], None]):
        self.store = store
        self.memo = memo
        self._warn = warn
        self._ended = False

    def end(self, status: str) -> None:
        """Record the run's end (``success``, ``failure``, ``canceled``) with its counts
        and close the store; once."""
        if self._ended:
            return
        self._ended = True
        try:
            self.memo.close()
            self.store.end_run(self.memo.run_id, status, time.time(), dict(self.memo.counts))
        except StoreError as exc:
            self._warn(f"{exc}; this run's end is not recorded in it")
        finally:
            try:
                self.store.close()
            except StoreError:
                pass


def open_run_memo(config: Config, *, base_dir: str, runid: str, script: str,
                  args: Sequence[str], executor: Executor,
                  warn: Callable[[str], None]) -> RunMemo | None:
    """The run's memo on the store ``memoizeStore`` (under ``base_dir``), its run begun;
    None (and a warning) when the store cannot be used."""
    directory = os.path.join(base_dir, config.memoize_store)
    try:
        store = RunStore.open(directory, object_limit=int(config.memoize_cache_size))
    except StoreError as exc:
        warn(f"run store {directory}: {exc}; this run goes on without memoization")
        return None
    # run ids repeat (run001 of each directory, of each kernel session): the store's is
    # the run's with a suffix of its own
    run_id = f"{runid}-{uuid.uuid4().hex[:6]}"
    try:
        store.begin_run(RunRecord(
            run_id, script, list(args),
            "sha256:" + hashlib.sha256(config.dump().encode("utf-8", "surrogateescape"))
            .hexdigest(), base_dir, time.time()))
        memo = StoreMemo(store, run_id, app_executable=executor.app_executable,
                         app_settings=app_settings(config), warn=warn)
    except StoreError as exc:
        try:
            store.close()
        except StoreError:
            pass
        warn(f"run store {directory}: {exc}; this run goes on without memoization")
        return None
    return RunMemo(store, memo, warn)
