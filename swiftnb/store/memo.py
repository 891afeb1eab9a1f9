"""StoreMemo: memoized app calls kept in the run store (docs/memoization.md).

A call is reused when an earlier call had the same *key* and every output that call
made is in place with the content it made (or can be restored from the content store).
The key is sha256 over a canonical JSON of its parts, each part a digest (its text
made from a template per app: :mod:`swiftnb.store.callkey`):

* ``app``: each command's app name, the program the site catalogue gives for it, and
  the content digest of that program when it is a file here (editing the program makes
  its calls run again);
* ``args``: the argument vectors; a mapped input's relative name stays (the app sees it),
  an absolute one is the word ``<input>`` (its content and path are in its own part, so a
  changed input is said once, as the input it is, not also as a changed argument);
* ``input:<path>``: each input file's content digest;
* ``stdio`` (redirections), ``outputs`` (the declared output paths), ``env`` (the app's
  environment from the task and the site catalogue) and ``profiles`` (the profiles that
  change what the app does: every one but :data:`SCHEDULING_PROFILES`).

Why parts and not one digest: when a call runs, the reason given is the first part that
differs from the earlier call that made the same outputs ("input changed: data/a.txt"),
and ``swiftnb explain -why`` compares the same parts.

A re-run's reuses are decided on the event loop, at once: the successful calls of the
script's earlier runs are read into memory when the run starts (:mod:`swiftnb.store.known`),
and a call whose key is among them, whose inputs' and outputs' digests are remembered for
the files as they are (a ``stat`` each) and whose files are the earlier call's is reused
with no thread, query or file read (:meth:`StoreMemo.decide_now`); its row is the earlier
one's, copied by the store's flushing thread (:class:`~swiftnb.store.db.ReusedCall`).
Every other decision (a call that runs, an output to restore, a digest to read) is the
worker thread's:

Digests are read through the store's stat-keyed cache, in one worker thread that takes
the calls' requests in batches (:mod:`swiftnb.store.batches`: one SQL query for the keys
of a batch, one thread hop for all its calls), so the event loop is never blocked by file
reads or SQLite; the parts that depend only on the app (its program's digest, its
environment and profiles) are made once a run; why a call runs is found for a batch in
two queries; the outputs' digests the wrapper reported are remembered (a re-run reads
none of them); a reused call's row takes the texts of the row it reuses
(:mod:`swiftnb.store.callrows`); the outputs are kept in the content store after the
calls are recorded, in batches (:mod:`swiftnb.store.copies`).  A problem of the store
itself (a full disk, a lock held too long) is said once; the run's later calls then run
unmemoized.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from swiftnb.engine.memo import CallMemo, MemoDecision
from swiftnb.engine.task import Task, TaskResult
from swiftnb.store.batches import BatchWorker
from swiftnb.store.callrows import CallRow, FileEntry, files_text
from swiftnb.store.callkey import AppParts, CallKey, digest_text
from swiftnb.store.canonical import ascii_text, sorted_text
from swiftnb.store.copies import OutputCopies
from swiftnb.store.db import ReusedCall, RunStore
from swiftnb.store.digests import absolute
from swiftnb.store.errors import StoreError
from swiftnb.store.known import KnownCall, KnownCalls

__all__ = ["StoreMemo", "AppSettings", "SCHEDULING_PROFILES", "MEMOIZE_PROFILE"]

#: the profile (script ``profile "memoize" = "false"``, or the key in swift.conf's app
#: entry) that opts an app out: its calls always run
MEMOIZE_PROFILE = "memoize"

#: profiles that choose where, when or how long a call runs, not what it computes: left
#: out of the key (lower case; compared without case)
SCHEDULING_PROFILES = frozenset({
    MEMOIZE_PROFILE, "maxwalltime", "maxtime", "walltime", "jobqueue", "queue",
    "jobproject", "project", "priority", "retries", "executionretries", "throttle",
    "site", "host", "exclusive", "slots", "nodegranularity", "maxnodes", "maxjobs",
    "jobspernode", "tasksperworker", "lowoverallocation", "highoverallocation",
    "reserve", "jobtime", "maxsubmitrate", "joboptions",
})

#: what a part is called in a reason (the args and its kin say it as one)
_PART_REASONS = {"args": "argument changed", "outputs": "argument changed",
                 "stdio": "argument changed", "env": "environment changed",
                 "profiles": "profiles changed"}


@dataclass(frozen=True)
class AppSettings:
    """What a site catalogue's app entry adds to the app's job: its environment, and its
    other keys and options as profiles (``memoize: false`` among them)."""

    env: Mapping[str, str] = field(default_factory=dict)
    profiles: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Decide:
    task: Task


@dataclass(frozen=True, slots=True)
class _Remember:
    task: Task
    result: TaskResult
    decision: MemoDecision
    started: float
    ended: float


class StoreMemo(CallMemo):
    """Memoization on a :class:`RunStore` for one run (``run_id``).

    ``app_executable``: the executor's program for an app (None: not listed; its name is
    then looked up on PATH); ``app_settings``: the catalogue's entry; ``warn``: how a
    problem of the store is said (once)."""

    def __init__(self, store: RunStore, run_id: str, *,
                 app_executable: Callable[[str], str | None],
                 app_settings: Callable[[str], AppSettings] | None = None,
                 warn: Callable[[str], None] | None = None):
        self.store = store
        self.run_id = run_id
        self._app_executable = app_executable
        self._app_settings = app_settings or (lambda tr: AppSettings())
        self._warn = warn or (lambda message: None)
        self._pending: dict[str, CallKey] = {}
        self._copies = OutputCopies(store.objects)
        self._worker: BatchWorker[_Decide | _Remember, MemoDecision | None] = BatchWorker(
            self._handle, self._copies.keep, name="swiftnb-memo")
        self._apps: dict[str, list[str]] = {}   # tr -> [tr, program, program digest]
        self._settings: dict[str, AppSettings] = {}
        self._app_parts_known: dict[str | tuple[object, ...], AppParts] = {}
        self._lock = threading.Lock()
        self._broken = False
        runs = store.run_records()
        #: a store with no earlier call needs no look for what changed ("no earlier call")
        self._history = any(run.run_id != run_id for run in runs)
        self._known = KnownCalls(store, next((run.script for run in runs
                                              if run.run_id == run_id), None), run_id,
                                 learn_apps=self._learn_apps)
        self.counts = {"ran": 0, "cached": 0, "failed": 0}
        self._app_learning: dict[str | tuple[object, ...], asyncio.Future[object]] = {}
        #: without history: the keys decided in this run, on the loop or by the worker
        #: (a key seen twice in one run is the worker's: it may be the earlier call's)
        self._seen: set[str] = set()

    # ------------------------------------------------------------------ contract
    def decide_now(self, task: Task) -> MemoDecision | None:
        """A reuse of an earlier run's call decided from memory (see the module's
        docstring); None for anything else (a call that may run, an output changed or
        missing, a digest not remembered, a call of this run or of another script)."""
        if self._broken or not self._known.ready or not len(self._known):
            return None  # nothing to reuse from memory: no key made for nothing
        pending = self._loop_key(task)
        return None if pending is None else self._reuse_known(task, pending)

    def _loop_key(self, task: Task) -> CallKey | None:
        """The call's key made on the loop (no file read); None when it cannot be, or
        the call is not to be remembered."""
        if task.output_globs:
            return None
        pending = self._key(task, on_loop=True)
        return None if pending is None or pending.app.opted_out else pending

    def _reuse_known(self, task: Task, pending: CallKey) -> MemoDecision | None:
        """The reuse of the earlier call of this key, if one is known and still holds."""
        earlier = self._known.get(pending.key)
        return None if earlier is None else self._reuse_now(task, pending, earlier)

    def _reuse_now(self, task: Task, pending: CallKey, earlier: KnownCall) -> MemoDecision | None:
        files = pending.inputs  # extended in place: pending is not kept
        known = self.store.digests.known
        base = task.base_dir
        for path in task.outputs:
            full = absolute(path if path[:1] == "/" else f"{base}/{path}")
            found = known(full)
            if found is None:
                return None
            files.append(["out", full, found[0], found[1]])
        if files_text(files) != earlier.files_json:
            return None  # another directory, or an output changed: decide() says which
        reason = f"same as {earlier.jobid} of run {earlier.run_id}"
        self.store.record_reuse(ReusedCall(self.run_id, task.jobid, time.time(), reason,
                                           earlier.call_id))
        with self._lock:
            self.counts["cached"] += 1
        return MemoDecision(True, reason)

    async def decide(self, task: Task) -> MemoDecision:
        if self._broken:
            return MemoDecision(False, "run store unusable")
        if not self._known.ready:
            await self._known.loaded()
        if self._known.ready and not self._broken:
            decision = self._decide_on_loop(task)
            if decision is None and self._app_parts_known.get(_app_cache_key(task)) is None:
                await self._learn_app(task)  # then made from memory as the others
                decision = self._decide_on_loop(task)
            if decision is not None:
                return decision
        try:
            decision = await self._worker.submit(_Decide(task))
        except StoreError as exc:
            return self._store_failed(exc)
        assert decision is not None
        return decision

    async def remember(self, task: Task, result: TaskResult, decision: MemoDecision,
                       started: float, ended: float) -> None:
        if self._broken:
            return
        # not waited for: the call's end needs nothing of its record; a problem of the
        # store in writing it comes back with the next decision's batch, or at close
        self._worker.post(_Remember(task, result, decision, started, ended))

    def _decide_on_loop(self, task: Task) -> MemoDecision | None:
        """:meth:`decide_now`, or in a store that had no earlier run the decision to run
        a call whose key is made without reading a file and not yet seen in this run
        (no thread hop for it either); None: the worker decides."""
        pending = self._loop_key(task)
        if pending is None:
            return None
        if self._history:
            return self._reuse_known(task, pending)
        with self._lock:
            if pending.key in self._seen:
                return None
            self._seen.add(pending.key)
            self._pending[task.jobid] = pending
        return MemoDecision(False, "no earlier call")

    def _learn_apps(self, apps: set[str]) -> None:
        """In the thread that reads the earlier calls: digest the programs of their apps,
        so that a re-run's calls make their keys on the loop from the first."""
        for tr in apps:
            try:
                self._app(tr)
            except StoreError:
                return  # the worker's decisions say it

    async def _learn_app(self, task: Task) -> None:
        """Make an app's parts of the key (its program's digest: a file read) in a
        thread, once for all the calls that wait for them."""
        cache_key = _app_cache_key(task)
        learning = self._app_learning.get(cache_key)
        if learning is None:
            learning = self._app_learning[cache_key] = asyncio.ensure_future(
                asyncio.to_thread(self._app_parts, task, False))
        try:
            await asyncio.shield(learning)
        except StoreError:
            pass  # the worker's decision says it

    def close(self) -> None:
        """Finish the queued requests and copies, and flush the buffered calls (the
        store itself is closed by its opener)."""
        self._known.wait()
        self._worker.close()
        self._copies.keep(everything=True)
        if not self._broken:
            try:
                self.store.flush()
            except StoreError as exc:
                self._store_failed(exc)

    # ------------------------------------------------------------------ batches
    def _handle(self, requests: Sequence[_Decide | _Remember]) -> list[MemoDecision | None]:
        """In the worker thread, in the order asked: the calls that ended are recorded
        before the decisions that follow them are looked up."""
        results: list[MemoDecision | None] = []
        for is_decide, group in itertools.groupby(requests, lambda r: isinstance(r, _Decide)):
            if is_decide:
                results += self._decide_all([r.task for r in group if isinstance(r, _Decide)])
            else:
                for r in group:
                    assert isinstance(r, _Remember)
                    self._remember(r.task, r.result, r.decision, r.started, r.ended)
                    results.append(None)
        return results

    # ------------------------------------------------------------------ deciding
    def _decide_all(self, tasks: Sequence[Task]) -> list[MemoDecision]:
        keyed = [(task, self._key_of(task)) for task in tasks]
        if not self._history:
            with self._lock:
                self._seen.update(pending.key for _, pending in keyed)
        earlier = self.store.earlier_rows([pending.key for _, pending in keyed])
        decisions = [self._decide(task, pending, earlier.get(pending.key))
                     for task, pending in keyed]
        unexplained = [index for index, decision in enumerate(decisions) if decision is None]
        reasons = self._why_not_all([keyed[index] for index in unexplained])
        for index, reason in zip(unexplained, reasons):
            decisions[index] = self._runs(*keyed[index], reason)
        return [decision for decision in decisions if decision is not None]

    def _decide(self, task: Task, pending: CallKey,
                earlier: CallRow | None) -> MemoDecision | None:
        """The decision; None when the call runs because no earlier call has its key
        (why is found for a whole batch at once: :meth:`_why_not_all`)."""
        if pending.app.opted_out:
            return self._runs(task, pending, f"opted out ({MEMOIZE_PROFILE}: false)")
        if task.output_globs:
            return self._runs(task, pending, "dynamic outputs")
        if any(entry[2] == "" for entry in pending.inputs):
            return self._runs(task, pending, "input missing")
        made = earlier.outputs() if earlier is not None else []
        if earlier is None or len(made) != len(task.outputs):
            return None
        restored = False
        outputs: list[FileEntry] = []
        for path, (_, _, digest, size) in zip(task.outputs, made):
            full = self._local(task, path)
            found = self._digest_or_none(full)
            if found != digest:
                if not self._restore(str(digest), full):
                    what = "missing" if found is None else "changed"
                    return self._runs(task, pending, f"output {what}: {path}")
                restored = True
            outputs.append(["out", os.path.abspath(full), digest, size])
        reason = f"same as {earlier.jobid} of run {earlier.run_id}"
        if restored:
            reason += " (outputs restored)"
        files = pending.inputs + outputs
        now = time.time()
        # the same key: the same command and parts as the earlier call (the texts as
        # they are), and the same files unless they are in another directory
        self._record(CallRow(self.run_id, task.jobid, pending.key, task.tr, earlier.command,
                             earlier.site, now, now, earlier.exit_code, "cached", reason,
                             earlier.key_parts, earlier.files_json if files == earlier.files
                             else files_text(files), files))
        return MemoDecision(True, reason, restored)

    def _restore(self, digest: str, full: str) -> bool:
        """Bring the output ``full`` back from the content store, remembering its digest
        (the store checked the bytes)."""
        if not self.store.objects.restore(digest, full):
            return False
        try:
            self.store.digests.learn(full, os.stat(full), digest)
        except OSError:
            pass
        return True

    def _runs(self, task: Task, pending: CallKey, reason: str) -> MemoDecision:
        with self._lock:
            self._pending[task.jobid] = pending
        return MemoDecision(False, reason)

    def _why_not_all(self, calls: Sequence[tuple[Task, CallKey]]) -> list[str]:
        """Why no earlier call is reused, for each call of a batch: what changed against
        the latest call that made the same outputs, or that the same call failed before
        (two queries a batch, not two a call)."""
        if not calls:
            return []
        if not self._history:
            return ["no earlier call"] * len(calls)
        last = self.store.last_decisions([pending.key for _, pending in calls])
        outputs = [[os.path.abspath(self._local(task, p)) for p in task.outputs]
                   for task, _ in calls]
        producers = self.store.latest_producers([p for paths in outputs for p in paths])
        reasons: list[str] = []
        for (_, pending), paths in zip(calls, outputs):
            if last.get(pending.key) == "failed":
                reasons.append("earlier call failed")
                continue
            made = [producers[p] for p in paths if p in producers]
            if not made:
                reasons.append("no earlier call")
                continue
            reasons.append(_changed(max(made, key=lambda found: found[0])[1], pending))
        return reasons

    def _opted_out(self, task: Task) -> bool:
        opted_out = (task.profiles[MEMOIZE_PROFILE] if MEMOIZE_PROFILE in task.profiles
                     else self._settings_of(task.tr).profiles.get(MEMOIZE_PROFILE, ""))
        return opted_out.strip().lower() in ("false", "no", "off")

    # ------------------------------------------------------------------ the key
    def _key_of(self, task: Task) -> CallKey:
        """The key in the worker thread, reading what it must."""
        pending = self._key(task, on_loop=False)
        assert pending is not None
        return pending

    def _key(self, task: Task, on_loop: bool) -> CallKey | None:
        """The call's key and what remember() needs of it.  ``on_loop``: no file is read
        (None when an input's or the program's digest is not remembered)."""
        app = self._app_parts(task, on_loop)
        if app is None:
            return None
        digests: dict[str, str] = {}
        inputs: list[FileEntry] = []
        if task.inputs:
            known = self.store.digests.known
            for path in dict.fromkeys(task.inputs):
                full = absolute(self._local(task, path))
                if on_loop:
                    found = known(full)
                    if found is None:
                        return None
                    digest, size = found
                else:
                    digest, size = self._measure(full)
                digests[path] = digest
                inputs.append(["in", full, digest, size])
        if task.more_commands:
            argvs = [task.args, *(c.args for c in task.more_commands)]
            stdio = [[task.stdin, task.stdout, task.stderr],
                     *([c.stdin, c.stdout, c.stderr] for c in task.more_commands)]
        else:
            argvs = [task.args]
            stdio = [[task.stdin, task.stdout, task.stderr]]
        if digests:
            argvs = [[_arg(a, digests) for a in args] for args in argvs]
        return CallKey.make(app, digest_text(sorted_text(argvs)), digest_text(sorted_text(stdio)),
                            digest_text(sorted_text(task.outputs)), digests, inputs)

    def _app_parts(self, task: Task, on_loop: bool) -> AppParts | None:
        """The parts of the key that depend on the app alone: the same for every call
        of an app with the same environment and profiles, so made once a run for each
        (a call's key is otherwise made afresh); ``on_loop``: None when not made yet
        (that reads the program)."""
        cache_key = _app_cache_key(task)
        known = self._app_parts_known.get(cache_key)
        if known is not None or (on_loop and not all(tr in self._apps for tr in task.apps)):
            return known  # on the loop, a program not digested yet: None
        apps = [self._app(tr) for tr in task.apps]
        env: dict[str, str] = {}
        profiles: dict[str, str] = {}
        for tr in task.apps:
            settings = self._settings_of(tr)
            env.update(settings.env)
            profiles.update(settings.profiles)
        env.update(task.env)
        profiles.update(task.profiles)
        known = AppParts(apps[0][1], digest_text(sorted_text(apps)), digest_text(sorted_text(env)),
                         digest_text(sorted_text({k: v for k, v in profiles.items()
                                                  if k.lower() not in SCHEDULING_PROFILES})),
                         self._opted_out(task))
        self._app_parts_known[cache_key] = known
        return known

    def _app(self, tr: str) -> list[str]:
        """[tr, program, its digest ("" when it is not a file here)], once a run."""
        known = self._apps.get(tr)
        if known is not None:
            return known
        program = self._app_executable(tr) or tr
        if not os.path.isabs(program):
            program = shutil.which(program) or program
        digest = self._digest_or_none(program) or "" if os.path.isabs(program) else ""
        known = [tr, program, digest]
        self._apps[tr] = known
        return known

    def _settings_of(self, tr: str) -> AppSettings:
        known = self._settings.get(tr)
        if known is None:
            known = self._settings[tr] = self._app_settings(tr)
        return known

    def _measure(self, path: str) -> tuple[str, int]:
        """(digest, size) of an input, ("", 0) when it is missing."""
        try:
            return self.store.digests.measure(path)
        except OSError:
            return "", 0

    def _digest_or_none(self, path: str) -> str | None:
        try:
            return self.store.digests.digest(path)
        except OSError:
            return None

    @staticmethod
    def _local(task: Task, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(task.base_dir, path)

    # ------------------------------------------------------------------ remembering
    def _remember(self, task: Task, result: TaskResult, decision: MemoDecision,
                  started: float, ended: float) -> None:
        with self._lock:
            pending = self._pending.pop(task.jobid, None)
        if pending is None:
            return
        if not result.ok:
            self._record_new(task, pending, "failed", result.message.splitlines()[0]
                             if result.message else decision.reason, [], result.exit_code,
                             result.site, started, ended)
            return
        outputs: list[FileEntry] = []
        for path in task.outputs:
            full = self._local(task, path)
            outputs.append(self._output(full, result.output_digests.get(path)))
        self._record_new(task, pending, "ran", decision.reason, outputs, result.exit_code,
                         result.site, started, ended)

    def _output(self, full: str, reported: str | None) -> FileEntry:
        """The record of an output of a call that ran, its digest remembered (as the
        wrapper reported it: the file is not read) and its copy queued."""
        try:
            st = os.stat(full)
        except OSError:
            return ["out", os.path.abspath(full), reported or "", 0]
        if reported and stat.S_ISREG(st.st_mode):
            self.store.digests.learn(full, st, reported)
            digest = reported
        else:
            digest = reported or self._digest_or_none(full) or ""
        if digest and self._copies.wanted:
            self._copies.add(full, digest, st)
        return ["out", os.path.abspath(full), digest, st.st_size]

    def _record_new(self, task: Task, pending: CallKey, decision: str, reason: str,
                    outputs: list[FileEntry], exit_code: int | None, site: str,
                    started: float, ended: float) -> None:
        files = pending.inputs + outputs
        self._record(CallRow(self.run_id, task.jobid, pending.key, task.tr,
                             ascii_text([pending.app.program, *task.args]), site, started, ended, exit_code,
                             decision, reason, pending.parts_text,
                             files_text(files), files))

    def _record(self, row: CallRow) -> None:
        self.store.record_row(row)
        with self._lock:
            self.counts[row.decision] += 1

    def _store_failed(self, exc: StoreError) -> MemoDecision:
        if not self._broken:
            self._broken = True
            self._warn(f"{exc}; the rest of this run goes on without memoization")
        return MemoDecision(False, "run store unusable")


def _app_cache_key(task: Task) -> str | tuple[object, ...]:
    """What the app's parts of a key depend on (:meth:`StoreMemo._app_parts`): the app
    alone for the usual call (one command, no environment or profiles of its own)."""
    if not task.env and not task.profiles and not task.more_commands:
        return task.tr
    return (task.apps, tuple(task.env.items()), tuple(task.profiles.items()))


def _changed(old: Mapping[str, str], pending: CallKey) -> str:
    """What differs between an earlier call's key parts and this call's, as a reason."""
    new = pending.parts
    if old.get("app") != new.get("app"):
        return f"app changed: {pending.app.program}"
    for name in sorted(set(old) | set(new)):
        if name.startswith("input:") and old.get(name) != new.get(name):
            return f"input changed: {name.removeprefix('input:')}"
    for name, reason in _PART_REASONS.items():
        if old.get(name) != new.get(name):
            return reason
    return "no earlier call"


def _arg(word: str, digests: Mapping[str, str]) -> str:
    return "<input>" if word in digests and os.path.isabs(word) else word
