"""One run of a Swift program, wired up: the library API of the CLI, the kernel and the
``%%swift`` magic.

``start_run(source_or_program, ...)`` compiles (if given text or a path), loads the
configuration, creates the run directory, the Swift-format log, the restart log and the
executor (scheduler or single local site), and starts the engine as a background task on
the *current* event loop.  It returns a :class:`RunHandle` at once, so a notebook stays
responsive while the workflow runs: ``await handle`` waits for it.

``prepare_run`` does the same without starting; ``handle.start()`` starts it.  The CLI
uses the two steps to print its header in between.  Library code here never calls
``asyncio.run`` and never blocks the loop.

Errors for people: :class:`lang.CompileError` (``.render()``) for a bad script and
:class:`RunSetupError` for a bad configuration, run directory, restart log or site list.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import sys
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from swiftnb.errors import SwiftnbError
from swiftnb.runoptions import RunOptions, ScriptArgs

if TYPE_CHECKING:  # imported where used at run time: `import swiftnb.runner` stays light
    import pandas as pd

    from swiftnb.attempts import Failure, FailureLog
    from swiftnb.config.model import Config
    from swiftnb.engine.task import Executor, TaskResult
    from swiftnb.execution.cdm import CdmPolicy
    from swiftnb.logs.frame import LogFrame
    from swiftnb.logs.ticker import ProgressTicker
    from swiftnb.logs.writer import LogWriter
    from swiftnb.rundir import RunDir
    from swiftnb.runmemo import RunMemo
    from swiftnb.store import Explanation
    from swiftnb.engine.restart import RestartLog
    from swiftnb.engine.run import Run, RunOutcome
    from swiftnb.events import Event, EventBus
    from swiftnb.lang import ast as A
    from swiftnb.lang.checked import CheckedProgram

__all__ = ["RunSetupError", "RunHandle", "prepare_run", "start_run", "load_run_config"]

_Settings = TypeVar("_Settings")


class RunSetupError(SwiftnbError):
    """The run could not start (configuration, run directory, restart log, sites).
    The message is for people (keys, paths, suggestions); the CLI exits with 1."""


# ------------------------------------------------------------------------- helpers


def load_run_config(config_file: str | None = None, *, properties: Mapping[str, Any] | None = None,
                    sites: str | Sequence[str] | None = None, sites_file: str | None = None,
                    tc_file: str | None = None, base_dir: str = ".") -> Config:
    """The typed Config of a run: swift.conf layers, legacy files, properties, ``sites``.

    Raises :class:`RunSetupError` with the loader's message (key, origin, suggestion).
    """
    from swiftnb.config import ConfigError, load_config

    props = dict(properties or {})
    if sites is not None:
        props["sites"] = sites if isinstance(sites, str) else ",".join(sites)
    for option, path in (("-config", config_file), ("-sites.file", sites_file),
                         ("-tc.file", tc_file)):
        if path is not None and not os.path.isfile(os.path.join(base_dir, path)):
            raise RunSetupError(f"{option} {path}: no such file")
    try:
        return load_config(config_file, properties=props, sites_file=sites_file,
                           tc_file=tc_file, cwd=base_dir)
    except ConfigError as exc:
        raise RunSetupError(str(exc)) from None


def load_cdm_policy(config: Config, base_dir: str = ".") -> CdmPolicy | None:
    """The run's CDM policy (``-cdm.file F`` / ``CDMFile``), or None when none was
    given: Swift applied CDM only to a policy file named on the command line or in the
    configuration, never to a stray ``fs.data``."""
    if not config.origin("CDMFile"):
        return None
    from swiftnb.execution.cdm import CdmError, load_policy

    path = os.path.join(base_dir, config.CDM_file)
    try:
        return load_policy(path)
    except OSError as exc:
        raise RunSetupError(f"CDMFile {config.CDM_file}: {exc.strerror or exc}") from None
    except CdmError as exc:
        raise RunSetupError(str(exc)) from None


def build_run_executor(config: Config, bus: EventBus, *, site_run: str, keep: bool = False,
                       dryrun: bool = False, cdm: CdmPolicy | None = None) -> Executor:
    """The executor of a run (scheduling.build_executor, the one builder), with its
    refusals as :class:`RunSetupError`; ``cdm`` is the run's CDM policy, if any."""
    from swiftnb.scheduling.build import build_executor
    from swiftnb.scheduling.errors import SchedulerError

    try:
        return build_executor(config, bus, site_run=site_run, keep_site_dir=keep,
                              dryrun=dryrun, cdm=cdm)
    except SchedulerError as exc:
        raise RunSetupError(str(exc)) from None


def _make_settings(settings_cls: type[_Settings], values: dict[str, Any]) -> _Settings:
    """RunSettings from the values it knows (its fields are the engine's choice)."""
    if dataclasses.is_dataclass(settings_cls):
        names = {f.name for f in dataclasses.fields(settings_cls)}
    else:
        names = set(inspect.signature(settings_cls).parameters)
    return settings_cls(**{k: v for k, v in values.items() if k in names})


def raise_open_file_limit() -> None:
    """Each running app holds a few descriptors (its captured stdout/stderr); a site
    with a high maxParallelTasks needs more than the usual soft limit of 1024."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 65536 if hard == resource.RLIM_INFINITY else min(hard, 65536)
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    except (ImportError, ValueError, OSError):
        pass


def _args_list(args: ScriptArgs) -> list[str]:
    """Script arguments: ``{"n": 3}`` or ``["-n=3"]`` -> ``["-n=3"]``."""
    if args is None:
        return []
    if isinstance(args, Mapping):
        return [f"-{k}={v}" for k, v in args.items()]
    return [str(a) for a in args]


# ------------------------------------------------------------------------- the handle


class RunHandle:
    """A run in progress or finished.  Awaitable: ``outcome = await handle``."""

    def __init__(self, *, program: CheckedProgram | A.Program, config: Config, bus: EventBus,
                 run_dir: RunDir, executor: Executor, engine_run: Run, restart: RestartLog,
                 writer: LogWriter | None = None,
                 detach_log: Callable[[], None] | None = None,
                 ticker: ProgressTicker | None = None,
                 base_dir: str = ".", failure_log: FailureLog | None = None,
                 keep_events: bool = True, memo: RunMemo | None = None) -> None:
        """``keep_events=False``: do not keep the event stream in memory (``event_list``,
        ``events`` and ``timings`` are then empty): a command-line run writes it to its
        log, and a long run's events would grow by some 5 KB per app call."""
        from swiftnb.attempts import FailureLog

        self.program = program
        self.config = config
        self.bus = bus
        self.run_dir = run_dir
        self.executor = executor
        self.run = engine_run
        self.restart = restart
        self.base_dir = base_dir
        #: memoization's store and memo (None: memoize off, or its store unusable)
        self.memo = memo
        self._writer = writer
        self._detach_log = detach_log
        self._ticker = ticker
        self._events: list[Event] = []
        self._unsubscribe = bus.subscribe(self._events.append) if keep_events else (
            lambda: None)
        self.outcome: RunOutcome | None = None
        self.interrupted = False
        self._task: asyncio.Task[RunOutcome] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._done_callbacks: list[Callable[[RunHandle], None]] = []
        # filled by the RecordingExecutor the engine submits through (prepare_run)
        self._failures = failure_log if failure_log is not None else FailureLog(
            bus.clock)
        self._executor_closed = False
        #: canceled before it started: nothing ran, and what its setup made is gone
        self._discarded = False

    # ---------------------------------------------------------------- identity
    @property
    def runid(self) -> str:
        return self.run_dir.runid

    @property
    def log_path(self) -> str | None:
        return self.run_dir.log_file if self._writer is not None else None

    @property
    def scheduler(self) -> Executor:
        """The live scheduler (``set_throttle``, ``throttles()``, ``state()``), or the
        executor when the run has a single local site."""
        return self.executor

    # ---------------------------------------------------------------- lifecycle
    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> RunHandle:
        """Start the run as a task on ``loop`` (default: the running loop, else the
        current one, which the caller then runs)."""
        if self._task is not None or self._discarded:
            return self
        if loop is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                try:
                    loop = asyncio.get_event_loop_policy().get_event_loop()
                except RuntimeError:  # after an asyncio.run(): a fresh loop for wait()
                    loop = asyncio.new_event_loop()
                    asyncio.set_event_loop(loop)
        self._loop = loop
        self._task = loop.create_task(self._main())
        self._task.add_done_callback(self._finished)
        return self

    async def _main(self) -> RunOutcome:
        ticker = self._ticker
        if ticker is not None:
            ticker.start()
        try:
            outcome = await self.run.execute()
        except asyncio.CancelledError:
            self.interrupted = True
            if not self.run.canceled:
                self.run.canceled = True
                self.bus.emit("MESSAGE", {}, text="Execution interrupted", level="WARN")
            try:
                await asyncio.shield(self._close())
            except asyncio.CancelledError:
                pass
            # the engine was stopped before it could say how the run ended: say it, so
            # the log ends as Swift's did ("Swift finished with errors")
            self.bus.emit("RUN_FAILURE", {})
            self._end(ok=False)
            raise
        await self._close()
        outcome = self.run.with_lost_records(outcome)  # records written as the sites closed
        self.outcome = outcome
        self._end(ok=outcome.ok)
        return outcome

    async def _close(self) -> None:
        self._executor_closed = True   # from now on a retry needs an executor of its own
        try:
            await self.executor.close()
        finally:
            if self._ticker is not None:
                self._ticker.stop()

    def _end(self, ok: bool) -> None:
        from swiftnb.rundir import release_run_dir

        self._end_records(ok)
        release_run_dir(self.run_dir)

    def _end_records(self, ok: bool) -> None:
        if self.memo is not None:
            self.memo.end("success" if ok else "canceled" if self.interrupted else "failure")
        if self.restart is not None:
            try:
                if ok:
                    self.restart.delete()
                else:
                    self.restart.close()
            except OSError:
                pass
        if self._detach_log is not None:
            self._detach_log()
            self._detach_log = None
        if self._writer is not None:
            try:
                self._writer.close()
            except (OSError, AttributeError):
                pass

    def _finished(self, task: asyncio.Task[RunOutcome]) -> None:
        for cb in list(self._done_callbacks):
            try:
                cb(self)
            except Exception:  # noqa: BLE001  a widget's callback must not break the run
                pass

    def add_done_callback(self, callback: Callable[[RunHandle], None]) -> None:
        """Call ``callback(handle)`` when the run has ended (at once if it has)."""
        if self.done:
            callback(self)
        else:
            self._done_callbacks.append(callback)

    def __await__(self) -> Generator[Any, None, RunOutcome | None]:
        return self._wait().__await__()

    async def _wait(self) -> RunOutcome | None:
        if self._discarded:
            return None
        if self._task is None:
            self.start()
        assert self._task is not None
        try:
            return await asyncio.shield(self._task)
        except asyncio.CancelledError:
            if self._task.cancelled():
                return self.outcome
            # the waiter was interrupted (the notebook's stop button on `await run`):
            # stop the run too, cleanly
            if not self._task.done():
                self.cancel("Execution interrupted by the user")
            raise

    def wait(self, timeout: float | None = None) -> RunOutcome | None:
        """Block until the run ends (scripts, not notebooks: there use ``await run``)."""
        if self._discarded:
            return None
        if self._task is None:
            self.start()
        assert self._task is not None and self._loop is not None
        if self._loop.is_running():
            raise RuntimeError("the event loop is running (a notebook?): use `await run` "
                               "instead of run.wait()")
        coro = asyncio.wait_for(asyncio.shield(self._task), timeout)
        try:
            return self._loop.run_until_complete(coro)
        except asyncio.CancelledError:
            return self.outcome

    def cancel(self, message: str = "Execution canceled by the user") -> None:
        """Stop the run: running apps are killed, blocks shut down, the log says so."""
        if self.done:
            return
        if self._task is None:
            self._discard()
            return
        self.bus.emit("MESSAGE", {}, text=message, level="WARN")
        self.interrupted = True
        self.run.cancel()

    def _discard(self) -> None:
        """Cancel a run that has not started: nothing runs, and what its setup made (the
        run directory with its log and restart log, the lock) is removed, as a refused
        run's is; a restart log given to ``-resume`` is kept as it was."""
        from swiftnb.rundir import discard_run_dir

        self._discarded = True
        self.interrupted = True
        if self._ticker is not None:
            self._ticker.stop()
        resumed = self.restart is not None and self.restart.resumed
        self._end_records(ok=not resumed)  # a fresh restart log is deleted, a resumed one kept
        self._close_executor_soon()
        discard_run_dir(self.run_dir)

    def _close_executor_soon(self) -> None:
        """The executor of a discarded run holds nothing yet; closed on the running loop
        if there is one (its close is a coroutine)."""
        self._executor_closed = True
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        loop.create_task(self.executor.close())

    # ---------------------------------------------------------------- failures
    @property
    def failures(self) -> list[Failure]:
        """The failed app attempts so far (:class:`swiftnb.attempts.Failure`), oldest
        first: task, result, site, time and Swift source position of each."""
        return list(self._failures.items)

    def failure(self, failure_id: int) -> Failure:
        """The failure numbered ``failure_id`` (``Failure.id``, from 1)."""
        return self._failures.get(failure_id)

    def on_failure(self, callback: Callable[[Failure], None]) -> Callable[[], None]:
        """Call ``callback(failure)`` for each new failed attempt, from the event loop, as
        it is recorded (keep it cheap).  Returns the function that unsubscribes."""
        return self._failures.subscribe(callback)

    async def retry(self, failure: Failure | int) -> TaskResult:
        """Submit a failed call again, as a new attempt; its TaskResult.

        ``failure``: a :class:`~swiftnb.attempts.Failure` of this run or its id.  While
        the run goes the attempt goes through the run's own executor (site selection,
        scores, throttles; its events are in the run's stream); once the run has closed
        its sites, through a fresh executor built from the run's configuration, closed
        again after the call.  A successful retry is recorded in the run's restart log
        (if it still exists), so ``-resume`` skips the call; it does not change the
        outcome of the Swift run.  The result is appended to ``failure.retries``; a retry
        that fails again is not a new entry of :attr:`failures`.
        """
        if isinstance(failure, int):
            failure = self._failures.get(failure)
        elif failure not in self._failures.items:
            raise ValueError(f"{failure!r} is not a failure of run {self.runid}")
        log = self._failures
        task = dataclasses.replace(failure.task, attempt=log.next_attempt(failure.jobid))
        log.saw_attempt(task)
        if not self._executor_closed:
            result = await self.executor.submit(task)
        else:
            fresh = build_run_executor(self.config, self.bus, site_run=self.run_dir.site_run,
                                       keep=self.config.keep_site_dir,
                                       cdm=load_cdm_policy(self.config, self.base_dir))
            try:
                result = await fresh.submit(task)
            finally:
                await fresh.close()
        failure.retries.append(result)
        if result.ok and task.outputs:
            self._record_restart(task.outputs)
        return result

    def _record_restart(self, outputs: Sequence[str]) -> None:
        """A retried call's outputs into the restart log: the open one while the run goes,
        else the one the run left behind (a failed run keeps it for ``-resume``)."""
        from swiftnb.engine.restart import RestartLog, RestartLogError

        restart = self.restart
        if restart is None:
            return
        try:
            if not restart.closed:
                restart.record(outputs)
            elif os.path.isfile(restart.path):
                again = RestartLog(restart.path, resume=True)
                try:
                    again.record(outputs)
                finally:
                    again.close()
        except (OSError, RestartLogError) as exc:  # said: a -resume would run the call again
            message = f"Warning: the retried call is not recorded in the restart log: {exc}"
            print(message, file=sys.stderr)
            self.bus.emit("WARNING", {}, text=message, level="WARN")

    # ---------------------------------------------------------------- results
    @property
    def done(self) -> bool:
        return self._discarded or (self._task is not None and self._task.done())

    @property
    def ok(self) -> bool | None:
        """True/False once done, None while running."""
        if not self.done:
            return None
        return self.outcome is not None and self.outcome.ok

    @property
    def errors(self) -> list[str]:
        return list(self.outcome.errors) if self.outcome is not None else []

    @property
    def exit_code(self) -> int | None:
        """Swift's return code: 0, 2 (errors or interrupted), 99 (hang); None while running."""
        if not self.done:
            return None
        if self.outcome is None:
            return 2
        code = self.outcome.exit_code
        return 0 if self.ok else (code if code == 99 else 2)

    @property
    def values(self) -> dict[str, Any]:
        """Top-level Swift variables as Python: scalars, dicts for arrays and structs,
        paths for files (open values are None)."""
        return self.run.values

    @property
    def outputs(self) -> list[str]:
        """Paths of the files held by top-level variables that exist now."""
        from swiftnb.engine.values import Node, file_leaves

        out: list[str] = []
        compiler = self.run.compiler
        if compiler is None:
            return out
        frame = self.run.top_frame
        for sym in compiler.top.syms.values():
            node = frame[sym.slot] if sym.slot < len(frame) else None
            if not isinstance(node, Node):
                continue
            for leaf in file_leaves(node):
                path = leaf.path
                if path and os.path.exists(self.run.local(path)) and path not in out:
                    out.append(path)
        return out

    @property
    def event_list(self) -> list[Event]:
        """The events so far (swiftnb.events.Event), in emission order."""
        return self._events

    @property
    def events(self) -> pd.DataFrame:
        """The event stream as a pandas DataFrame (the schema of swiftnb.logs)."""
        from swiftnb.logs.frame import events_frame

        return events_frame(list(self._events))

    def log_frame(self) -> LogFrame:
        from swiftnb.logs.frame import LogFrame

        return LogFrame.from_events(list(self._events), name=self.runid)

    def timings(self, names: Sequence[str] | None = None) -> pd.DataFrame:
        """The AIMES timings (TTC, Tss, Tse, Tw, Te, ...) of this run, a DataFrame."""
        return self.log_frame().timings(names)

    def report(self, path: str | os.PathLike[str] | None = None, *, title: str | None = None) -> str:
        """Write the offline HTML report (default ``RUNDIR/report.html``); its path."""
        from swiftnb.logs.report import write_report

        if path is None:
            path = os.path.join(self.run_dir.path, "report.html")
        return write_report(self.log_frame(), path, title=title or f"swiftnb run {self.runid}")

    def explain(self, path: str, why: bool = False) -> Explanation:
        """The calls behind ``path`` from the run store (``print()`` it); with ``why``,
        whether each call of the latest run ran or was reused, and why."""
        from swiftnb.store import RunStore, explain

        if self.memo is not None and not self.done:
            self.memo.store.flush()
        directory = os.path.join(self.base_dir, self.config.memoize_store)
        with RunStore.open(directory, create=False) as store:
            return explain(store, os.path.join(self.base_dir, path), why)

    def serve(self, *, port: int = 0, address: str | None = None) -> Any:
        """Show this run's panels in a browser: a token-guarded web monitor on this
        loop (docs/monitors.md); prints its URL and returns it (``.url``, ``.stop()``).
        ``address`` defaults to the configuration's ``monitorListenAddress``."""
        from swiftnb.monitor.web import serve_run

        return serve_run(self, port=port, address=address)

    def status(self) -> str:
        if not self.done:
            return "running" if self._task is not None else "not started"
        if self.interrupted and not self.ok:
            return "canceled"
        return "ok" if self.ok else "failed"

    def __repr__(self) -> str:
        return f"<RunHandle {self.runid}: {self.status()}>"


# ------------------------------------------------------------------------- building


def _compile(source: str | os.PathLike | CheckedProgram | A.Program,
             base_dir: str) -> CheckedProgram | A.Program:
    from swiftnb import lang

    if not isinstance(source, (str, os.PathLike)):
        return source  # already a CheckedProgram (or an ast.Program)
    text = os.fspath(source)
    if "\n" not in text and text.endswith(".swift"):
        path = text if os.path.isabs(text) else os.path.join(base_dir, text)
        if os.path.isfile(path):
            return lang.load(path)
    return lang.compile_source(text, "<string>", base_dir)


def prepare_run(source: str | os.PathLike | CheckedProgram | A.Program,
                options: RunOptions | None = None, **keywords: Any) -> RunHandle:
    """Everything of a run but starting it (see :func:`start_run`).

    The settings: ``options`` (a :class:`swiftnb.runoptions.RunOptions`), or its fields
    as keywords (``config_file=``, ``logfile=``, ``dryrun=``...: see the groups there),
    not both."""
    if options is None:
        options = RunOptions.from_keywords(**keywords)
    elif keywords:
        raise TypeError("prepare_run() takes options or keywords, not both")
    from swiftnb.engine import run as run_mod
    from swiftnb.engine.restart import RestartLog, RestartLogError
    from swiftnb.events import EventBus
    from swiftnb.lang.checked import CheckedProgram
    from swiftnb.rundir import RunDirError, discard_run_dir, make_run_dir
    from swiftnb.runfiles import written_files_problem

    choice, log, execution = options.config, options.logging, options.execution
    resume, pgraph, dryrun = execution.resume, execution.pgraph, execution.dryrun
    base_dir = os.path.abspath(options.where.base_dir)
    program = _compile(source, base_dir)
    config, sites = choice.config, choice.sites
    if config is None:
        config = load_run_config(choice.config_file, properties=choice.properties,
                                 sites=sites, sites_file=choice.sites_file,
                                 tc_file=choice.tc_file, base_dir=base_dir)
    elif sites is not None:
        config = dataclasses.replace(config, selected_sites=(
            sites.split(",") if isinstance(sites, str) else list(sites)))
    if resume is not None and not os.path.isfile(resume):
        raise RunSetupError(f"-resume {resume}: no such restart log")
    script_name = execution.script_name
    if script_name is None:
        tree = program.program if isinstance(program, CheckedProgram) else program
        script_name = tree.filename
        if script_name.startswith("<"):
            script_name = "swift"
    if pgraph is not None and isinstance(program, CheckedProgram):
        # the command line's check (swiftnb.runfiles), before the run directory exists
        tree_name = program.program.filename
        problem = written_files_problem(
            [("-pgraph", pgraph)],
            [("the script", None if tree_name.startswith("<") else tree_name),
             ("-config", choice.config_file), ("-sites.file", choice.sites_file),
             ("-tc.file", choice.tc_file),
             ("-resume", resume)], base_dir, program)
        if problem:
            raise RunSetupError(problem)
    try:
        run_dir = make_run_dir(script_name, cwd=base_dir, runid=options.where.runid,
                               logfile=log.logfile, parent=options.where.run_parent)
    except RunDirError as exc:  # its message names the option and the directory
        raise RunSetupError(str(exc)) from None
    except OSError as exc:
        raise RunSetupError(f"cannot create the run directory: {exc}") from None
    try:
        raise_open_file_limit()
        bus = log.bus if log.bus is not None else EventBus()
        writer = detach_log = None
        if log.log:
            from swiftnb.logs.writer import LogWriter

            writer = LogWriter(run_dir.log_file, minimal=log.minimal_logging,
                               reduced=log.reduced_logging, compact=log.compact_logging)
            detach_log = writer.attach(bus)
            writer.write_header(run_id=run_dir.runid,
                                arguments=list(log.log_arguments if log.log_arguments is not None
                                               else _args_list(execution.args)),
                                cwd=base_dir,
                                config_text=config.dump())

        def undo() -> None:
            if detach_log:
                detach_log()
            if writer is not None:
                writer.close()

        try:
            restart = RestartLog(resume, resume=True) if resume else RestartLog(run_dir.restart_file)
        except RestartLogError as exc:
            undo()
            raise RunSetupError(str(exc)) from None
        keep = bool(config.keep_site_dir)
        try:
            cdm = None if dryrun else load_cdm_policy(config, base_dir)
            executor = build_run_executor(config, bus, site_run=run_dir.site_run, keep=keep,
                                          dryrun=dryrun, cdm=cdm)
        except RunSetupError:
            restart.close() if resume else restart.delete()  # nothing ran: nothing to resume
            undo()
            raise
        if pgraph == "true":
            pgraph = f"{run_dir.stem}-{run_dir.runid}.dot"
        script_args = _args_list(execution.args)
        settings = _make_settings(run_mod.RunSettings, {
            "lazy_errors": bool(config.lazy_errors),
            "execution_retries": int(config.execution_retries),
            "max_foreach_threads": int(config.max_foreach_threads),
            "script_args": script_args,
            "args": script_args,
            "dryrun": dryrun,
            "pgraph": pgraph,
            "keep_site_dir": keep,
            "file_gc": bool(config.file_GC_enabled),
            "mapping_checker": bool(config.mapping_checker_enabled),
            "verbose": log.verbose,
            "found_on_site": None if cdm is None else cdm.found_on_site,
        })
        run_kwargs: dict[str, Any] = {}
        if options.console.stdout is not None:
            run_kwargs["stdout"] = options.console.stdout
        if execution.seed:
            run_kwargs["seed"] = dict(execution.seed)
        from swiftnb.attempts import FailureLog, RecordingExecutor

        failure_log = FailureLog(bus.clock)
        engine_run = run_mod.Run(program, RecordingExecutor(executor, failure_log), bus=bus,
                                 settings=settings, base_dir=base_dir, run_dir=run_dir.path,
                                 runid=run_dir.runid, restart=restart,
                                 **run_kwargs)
        if writer is not None:  # a log that cannot be written fails the run, said at once
            writer.on_failure = engine_run.records_lost
        from swiftnb.runmemo import memoize_wanted, open_run_memo

        run_memo = None
        if not dryrun and memoize_wanted(config, choice.memoize_default):
            run_memo = open_run_memo(config, base_dir=base_dir, runid=run_dir.runid,
                                     script=script_name, args=script_args,
                                     executor=executor, warn=engine_run.warn)
            if run_memo is not None:
                engine_run.memo = run_memo.memo
        bus.subscribe(lambda event: _records_lost(engine_run, event))  # the sites' -info records
        if log.keep_events and engine_run.pgraph is None:
            # the calls and files between them, for the dashboard's dataflow graph (what
            # -pgraph writes; the engine writes a file only when -pgraph asks for one)
            from swiftnb.engine.pgraph import PGraph

            engine_run.pgraph = PGraph()
        progress = None
        if options.console.ticker and config.ticker_enabled:
            from swiftnb.logs.ticker import ProgressTicker, java_date_format, ticker_date

            date = (java_date_format(config.ticker_date_format)
                    if config.ticker_date_format else ticker_date)
            progress = ProgressTicker(bus, stream=options.console.ticker_stream or sys.stderr, date=date,
                                      prefix=config.ticker_prefix or "Progress: ")
        return RunHandle(program=program, config=config, bus=bus, run_dir=run_dir,
                         executor=executor, engine_run=engine_run, restart=restart, writer=writer,
                         detach_log=detach_log, ticker=progress, base_dir=base_dir,
                         failure_log=failure_log, keep_events=log.keep_events, memo=run_memo)
    except BaseException:
        # refused (a restart log in use, a site that cannot be built...) or interrupted
        # before the run started: no empty run directory is left behind
        discard_run_dir(run_dir)
        raise


def _records_lost(engine_run: Run, event: Event) -> None:
    """A site could not write one of the run's records (RECORDS_LOST): the run says so
    and fails at its end."""
    if event.kind == "RECORDS_LOST" and event.text:
        engine_run.records_lost(event.text)


def start_run(source: str | os.PathLike[str] | CheckedProgram | A.Program,
              **kwargs: Any) -> RunHandle:
    """Compile, configure and start a run on the current event loop; the handle at once.

    ``source``: a CheckedProgram, Swift source text, or the path of a ``.swift`` file.
    Keywords: ``config`` (a Config) or ``config_file``/``properties``/``sites``/
    ``sites_file``/``tc_file``; ``runid``; ``args`` (``{"n": 3}`` or ``["-n=3"]``);
    ``base_dir``; ``bus``; ``log``/``logfile``; ``ticker``; ``stdout``; ``dryrun``;
    ``resume``; ``script_name``; ``seed`` (top-level values given in advance).
    Raises ``lang.CompileError`` and :class:`RunSetupError`.
    """
    return prepare_run(source, **kwargs).start()
