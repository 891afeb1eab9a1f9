"""The run API: one execution of a checked program inside the caller's event loop.

``Run(program, executor, bus=..., settings=..., base_dir=..., run_dir=..., runid=...)``
and ``await run.execute()`` -> :class:`RunOutcome`.  The run owns the errors policy
(``lazyErrors``), retries (``executionRetries``), the restart log check before each app
call, hang detection, and the engine events of the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import gc
import itertools
import os
import sys
import time
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.appcall import AppCalls
from swiftnb.engine.callgate import CallGate
from swiftnb.engine.filemap import FileMapping, Parts, as_plain_data
from swiftnb.engine.interp import Exec
from swiftnb.engine.mapcheck import MappingChecker
from swiftnb.engine.restart import RestartLog
from swiftnb.engine.scopes import LoweringError
from swiftnb.engine.taskbuild import TaskBuilding
from swiftnb.engine.task import Executor
from swiftnb.engine.values import CLOSED, FAILED, FileNode, Node, SwiftError
from swiftnb.lang import ast as A
from swiftnb.lang.checked import CheckedProgram
from swiftnb.events import EventBus

if TYPE_CHECKING:
    from swiftnb.engine.compiler import Compiler
    from swiftnb.engine.interp import BlockExec
    from swiftnb.engine.pgraph import PGraph
    from swiftnb.engine.scopes import Sym

__all__ = ["EXIT_HANG", "Parts", "Run", "RunOutcome", "RunSettings", "as_plain_data"]

EXIT_HANG = 99
#: Said when evaluating the script's values exhausts Python's stack: an array literal or
#: a path (``a.kids[0].kids[0]...``) written some hundreds of levels deep in the source.
#: Statements, expressions and the data a recursion builds nest as deep as they like.
TOO_DEEP_VALUES = ("a value of the script nests too deeply to be evaluated (an array "
                   "literal or a path such as a.b[0].b[0]... written some hundreds of "
                   "levels deep)")


@dataclass
class RunSettings:
    """What a run needs beyond the program (properties / swift.conf keys)."""

    max_foreach_threads: int = 16384
    lazy_errors: bool = False
    execution_retries: int = 0
    dry_run: bool = False
    #: ``{"n": "3"}`` or the words ``["-n=3"]``
    script_args: dict[str, object] | Sequence[object] | None = field(default_factory=dict)
    dryrun: bool = False          # spelling used by the CLI
    pgraph: str | None = None     # write a Graphviz file of the run's dataflow here
    #: fileGCEnabled: delete temporary files when the scope that declared them ends
    file_gc: bool = True
    #: also clean the top-level variables when a run ends without errors (Swift did;
    #: off by default so that a notebook's later cells can still use the files)
    gc_top_level: bool = False
    #: write the per-iteration / per-compound-call log events (FOREACH_IT_START, SCOPE,
    #: FOREACH_IT_END, STARTCOMPOUND, ENDCOMPOUND): only when someone reads them (-debug)
    unit_events: bool = False
    #: mapped input paths that need not exist here, because a data policy finds them on
    #: the site (CDM DIRECT, LOCAL, BROADCAST); the wrapper there says if one is missing
    found_on_site: Callable[[str], bool] | None = None
    #: mappingCheckerEnabled: two variables mapped to one file are an error; see
    #: swiftnb.engine.mapcheck
    mapping_checker: bool = True


class _FewerCollections:
    """While runs go, collect the youngest generation every 20,000 allocations, not 700,
    and leave what existed before them (the program, its closures, the kernel's own
    objects) out of every collection (``gc.freeze``).  A bag of echo apps spent about a
    tenth of its CPU in the collector; each app call makes a few hundred objects, almost
    none of them in cycles.  The old thresholds and the frozen objects come back when
    the last run ends (a kernel may hold several at once), so that a kernel's garbage is
    still collected."""

    THRESHOLD = 20_000

    def __init__(self) -> None:
        self.runs = 0
        self.saved: tuple[int, int, int] = gc.get_threshold()

    @contextlib.contextmanager
    def during_run(self) -> Iterator[None]:
        if self.runs == 0:
            self.saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(self.THRESHOLD, self.saved[1], self.saved[2])
        self.runs += 1
        try:
            yield
        finally:
            self.runs -= 1
            if self.runs == 0:
                gc.set_threshold(*self.saved)
                gc.unfreeze()


_COLLECTOR = _FewerCollections()


@dataclass
class RunOutcome:
    """How a run ended.  ``exit_code`` is Swift's: 0, 2 (errors), 99 (hang)."""

    ok: bool
    errors: list[str] = field(default_factory=list)
    exit_code: int = 0
    lazy: bool = False
    reported: bool = False


def _parse_args(args: dict[str, object] | Sequence[object] | None) -> dict[str, str]:
    if isinstance(args, dict):
        return {str(k): str(v) for k, v in args.items()}
    out: dict[str, str] = {}
    for a in args or ():
        a = str(a)
        if a.startswith("-"):
            a = a.lstrip("-")
            name, eq, value = a.partition("=")
            out[name] = value if eq else "true"
    return out


class _Context:
    """The BuiltinContext the library sees."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.script_args = run.script_args
        self.script_argv = run.script_argv
        self.base_dir = run.base_dir
        self.run_dir = run.run_dir
        self.return_type: D.SwiftType | None = None
        self.return_file: D.FileValue | None = None
        self.arg_names: list | None = None
        self.arg_types: list | None = None  # set per call for needs_arg_types builtins
        self.line = 0

    def write_stdout(self, text: str) -> None:
        out = self.run.stdout
        try:
            out.write(text)
        except UnicodeEncodeError:  # a file name that is not UTF-8: its bytes as \xff
            out.write(text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))
        out.flush()

    def emit(self, kind: str, fields: dict | None = None, text: str | None = None) -> None:
        if kind == "TRACE":
            self.run.bus.emit(kind, fields or {}, text=text, level="WARN", logger="trace")
        else:
            self.run.bus.emit(kind, fields or {}, text=text)

    def warn(self, message: str) -> None:
        self.run.warn(message)


def _program_of(checked: CheckedProgram | A.Program) -> A.Program:
    return checked if isinstance(checked, A.Program) else checked.program


class Run(FileMapping, TaskBuilding, AppCalls):
    """One execution of a program: its lifecycle, errors and hang detection here; its
    file mapping (filemap), task building (taskbuild) and app calls (appcall) in the
    mixins."""

    def __init__(self, checked_program: CheckedProgram | A.Program, executor: Executor, *,
                 bus: EventBus, settings: RunSettings,
                 base_dir: str, run_dir: str, runid: str, restart: RestartLog | None = None,
                 stdout: TextIO | None = None, seed: Mapping[str, Any] | None = None) -> None:
        self.checked = checked_program
        #: top-level values given in advance (the notebook kernel: values of earlier
        #: cells, Python values); name -> closed Node or plain Python value
        self.seed = dict(seed or {})
        self.program = _program_of(checked_program)
        self.executor = executor
        self.bus = bus
        self.settings = settings
        self.base_dir = os.path.abspath(base_dir)
        self.run_dir = os.path.abspath(run_dir)
        self.runid = runid
        self.restart = restart
        self.stdout = stdout if stdout is not None else sys.stdout
        self.script_args = _parse_args(settings.script_args)
        #: the words as given, for ``args()`` (``-n:7``, ``-n 7``); None for a mapping
        self.script_argv: list[str] | None = (
            None if isinstance(settings.script_args, dict)
            else [str(a) for a in settings.script_args or ()])
        self.max_foreach_threads = max(1, int(settings.max_foreach_threads))
        self.lazy = bool(settings.lazy_errors)
        self.retries = max(0, int(settings.execution_retries))
        self.dry_run = bool(settings.dry_run or settings.dryrun)
        self.ctx = _Context(self)
        #: fileGCEnabled (see clean_scope)
        self.file_gc = bool(settings.file_gc)
        self.gc_top_level = bool(settings.gc_top_level)
        #: the mapping checker (None when mappingCheckerEnabled is false)
        self.mapcheck = MappingChecker(self.base_dir) if settings.mapping_checker else None
        #: emit FOREACH_IT_START/SCOPE/FOREACH_IT_END and STARTCOMPOUND/ENDCOMPOUND; may be
        #: switched on after construction (the CLI's -debug), before execute()
        self.unit_events = bool(settings.unit_events)
        self.errors: list[str] = []
        #: the run's records that could not be written (restart log, log): the run goes
        #: on, so that no work is lost, and fails at its end (see records_lost)
        self.lost_records: list[str] = []
        #: procedure outputs left unassigned when their procedure ended (the first few),
        #: for the hang report
        self.open_outputs: list[str] = []
        self.tasks: set[asyncio.Task] = set()
        self.active = 0
        #: loops wait while the executor holds many more calls than it runs at once
        self.gate = CallGate(self._capacity)
        self.busy = 0  # engine work handed back to the event loop, still to resume
        self.finished = False
        self.aborted = False
        self.canceled = False
        # the checker's warnings are printed by whoever compiled the program (cli, kernel)
        self._warned: set[str] = set(checked_program.warnings if isinstance(
            checked_program, CheckedProgram) else ())
        self._done_fut: asyncio.Future | None = None
        #: this run's callback queue (never shared: see values.Trampoline)
        self.tramp = V.Trampoline()
        self.tramp.error_sink = self._engine_bug
        self._uid = itertools.count(int(time.time() * 1000) % (35**6))
        self._temp = itertools.count(1)
        self._made_dirs: set[str] = set()
        self._call_paths: dict[FileNode, str] | None = None
        #: mapped inputs whose file was missing when they were mapped: the error is
        #: raised only when something needs the file (see demand)
        self._missing: dict[FileNode, tuple[SwiftError, A.Pos | None]] = {}
        self._thread = itertools.count(1)
        self.compiler: Compiler | None = None
        self.top_frame: list = []
        self.pgraph: PGraph | None = None
        if settings.pgraph:
            from swiftnb.engine.pgraph import PGraph

            self.pgraph = PGraph()

    # ------------------------------------------------------------------ public

    @property
    def values(self) -> dict[str, Any]:
        """Top-level variables as plain Python (scalars, dicts, file paths)."""
        out: dict[str, Any] = {}
        if self.compiler is None:
            return out
        for name, sym in self.compiler.top.syms.items():
            if sym.slot < len(self.top_frame):
                node = self.top_frame[sym.slot]
                if isinstance(node, Node):
                    out[name] = V.to_python(node) if node.state != FAILED else None
                elif node is not None:
                    out[name] = node
        return out

    def cancel(self) -> None:
        """Stop the run: cancel running apps; execute() returns a failed outcome."""
        self.canceled = True
        self._finish_abort("Execution canceled")

    async def execute(self) -> RunOutcome:
        token = V.use(self.tramp)
        try:
            with _COLLECTOR.during_run():
                return await self._execute()
        finally:
            V.leave(token)

    async def _execute(self) -> RunOutcome:
        loop = asyncio.get_running_loop()
        self._done_fut = loop.create_future()
        self.bus.emit("RUN_START", {})
        for warning in self.restart.warnings if self.restart is not None else ():
            self.warn(warning)
        from swiftnb.engine.compiler import Compiler

        try:
            self.compiler = Compiler(self.program, self)
            block = self.compiler.compile_program()
        except LoweringError as e:
            self.errors.append(e.message if e.pos is None else f"{e.pos}: {e.message}")
            self.bus.emit("RUN_FAILURE", {})
            return RunOutcome(False, list(self.errors), 1)  # Swift: could not start
        clashes = self._constant_clashes()
        if clashes:  # before anything runs: nothing is lost
            for message in clashes:
                self.errors.append(message)
                self.bus.emit("MESSAGE", {}, text=message, level="ERROR")
            self.bus.emit("RUN_FAILURE", {})
            return RunOutcome(False, list(self.errors), 2)
        self.top_frame = self.compiler.top_frame
        self.top_frame.extend([None] * block.scope.nslots)
        if self.seed:
            self._apply_seed(block)
        if not self.gc_top_level or self.seed:
            block.cleanups = ()
        try:
            # from the trampoline, so that deep programs can hand steps back to it
            self.tramp.ready.append(lambda: block.run_in(self.top_frame, self._top_done))
            self.tramp.drain()
        except Exception as e:  # noqa: BLE001
            self._engine_bug(e)
        idle = 0
        while not self._done_fut.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._done_fut), timeout=0.25)
            except TimeoutError:
                pass
            if self._done_fut.done():
                break
            if self._missing:
                self._demand_awaited()
            if (not self.tasks and not self.tramp.ready and self.active == 0
                    and self.busy == 0):
                idle += 1
                if idle >= 2:
                    if self._missing:
                        # nothing else can run: what waits may wait for a missing input
                        self._demand_all()
                        idle = 0
                        continue
                    self._hang()
            else:
                idle = 0
        outcome: RunOutcome = self._done_fut.result()
        if self.tasks:
            # an aborted run: let the cancelled app calls end (processes killed) first
            for t in list(self.tasks):
                t.cancel()
            await asyncio.wait(list(self.tasks), timeout=10)
        if self.pgraph is not None and self.settings.pgraph:
            try:
                self.pgraph.write(os.path.join(self.base_dir, self.settings.pgraph))
            except OSError:
                pass
        outcome = self.with_lost_records(outcome)
        self.bus.emit("RUN_SUCCESS" if outcome.ok else "RUN_FAILURE", {})
        return self.with_lost_records(outcome)  # the log's last flush may fail too

    def _capacity(self) -> float:
        return self.executor.capacity()

    def records_lost(self, message: str) -> None:
        """The restart log or the log could not be written (a full disk): say so now,
        and fail the run at its end.  Swift failed the call whose restart log entry could
        not be written; here the call's outputs are kept and the run goes on (stopping
        would lose the work of the running apps), but a run that lost its records never
        ends with exit code 0: a -resume would redo the calls, or the log tools would
        read an incomplete log."""
        if message in self.lost_records:
            return
        self.lost_records.append(message)
        self.warn(message)

    def with_lost_records(self, outcome: RunOutcome) -> RunOutcome:
        """``outcome``, failed with exit code 2 when records were lost (the runner asks
        again once the executor has closed: its last records are written then)."""
        lost = [m for m in self.lost_records if m not in outcome.errors]
        if not lost:
            return outcome
        code = outcome.exit_code if outcome.exit_code == EXIT_HANG else 2
        return RunOutcome(False, [*outcome.errors, *lost], code, lazy=outcome.lazy,
                          reported=outcome.reported)

    def _constant_clashes(self) -> list[str]:
        """The mapping checker's errors about files the program names by literals."""
        if self.mapcheck is None or not isinstance(self.checked, CheckedProgram):
            return []
        return self.mapcheck.check_program(self.checked, self.seed)

    def _apply_seed(self, block: BlockExec) -> None:
        """Put the seeded values in their top-level slots; the block does not create
        those nodes (they are closed already)."""
        compiler = self.compiler
        assert compiler is not None  # the program compiled before its seed is applied
        seeded = []
        for name, value in self.seed.items():
            sym = compiler.top.syms.get(name)
            if sym is None:
                continue
            self.top_frame[sym.slot] = _seed_node(sym, value)
            seeded.append(sym)
        if seeded:
            block.decls = [s for s in block.decls if s not in seeded]

    # ------------------------------------------------------------------ ending

    def _top_done(self) -> None:
        if self._done_fut is None or self._done_fut.done():
            return
        if self.errors:
            self._done_fut.set_result(RunOutcome(False, list(self.errors), 2, lazy=self.lazy))
        else:
            self._done_fut.set_result(RunOutcome(True, [], 0))

    def _finish_abort(self, message: str | None = None) -> None:
        self.aborted = True
        self.tramp.stop()  # the aborted run's pending statements must not run later
        for t in list(self.tasks):
            t.cancel()
        if self._done_fut is not None and not self._done_fut.done():
            errs = list(self.errors) or ([message] if message else [])
            self._done_fut.set_result(RunOutcome(False, errs, 2, lazy=self.lazy))

    def left_open(self, what: str) -> None:
        """A procedure ended with an output unassigned (see ``_hang``)."""
        if len(self.open_outputs) < 10 and what not in self.open_outputs:
            self.open_outputs.append(what)

    def _hang(self) -> None:
        if self._done_fut is None or self._done_fut.done():
            return
        if self.errors:
            # with lazy errors, what cannot progress waits on failed work
            self._done_fut.set_result(RunOutcome(False, list(self.errors), 2, lazy=self.lazy))
            return
        waiting = []
        if self.compiler is not None:
            for name, sym in self.compiler.top.syms.items():
                node = self.top_frame[sym.slot] if sym.slot < len(self.top_frame) else None
                if isinstance(node, Node) and node.state == V.OPEN:
                    waiting.append(f"Thread: R-0, waiting on {name} (declared on line {sym.pos.line})")
        waiting += [f"Thread: R-0, waiting on {what}" for what in self.open_outputs]
        lines = ["Waiting threads:"] + (waiting or ["Thread: R-0, waiting on an open value"])
        lines.append("Irrecoverable error found. Exiting.")
        text = "\n".join(lines)
        sys.stderr.write(text + "\n")
        self.bus.emit("MESSAGE", {}, text=text)
        self._done_fut.set_result(RunOutcome(False, ["Deadlock detected: " + "; ".join(waiting)],
                                             EXIT_HANG, reported=True))

    def _engine_bug(self, exc: BaseException, where: str = "") -> None:
        """An exception nothing else handled: the run fails and names it (the traceback
        goes to the log), whatever the lazyErrors setting."""
        if isinstance(exc, SwiftError):
            self.runtime_error(exc, None)
            return
        import traceback

        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        self.bus.emit("MESSAGE", {}, text=f"swiftnb engine error: {text}", level="ERROR")
        if isinstance(exc, RecursionError):  # the script's values, not an engine bug
            self.errors.append(TOO_DEEP_VALUES)
        else:
            self.errors.append(f"swiftnb internal error{where}: {exc!r}")
        self._finish_abort()

    # ------------------------------------------------------------------ errors

    def runtime_error(self, err: SwiftError, pos: A.Pos | None) -> None:
        if err.dependency:
            return
        msg = err.message
        if err.where:
            msg = f"{msg}\n\t{err.where}"
        elif pos is not None and pos.line:
            msg = f"{msg}\n\t{os.path.basename(pos.file)}, line: {pos.line}"
        self._error(msg)
        if err.fatal and not self.aborted:
            # Swift's lazyErrors only defer app failures: a failed assert ends the run
            # (and with it any loop still going, e.g. an `iterate ... until (false)`)
            self._finish_abort()

    def dependency_error(self, tr: str, pos: A.Pos | None) -> None:
        if not self.aborted:  # 0.96 logged the call (it stays "Initializing" in the ticker)
            self.bus.emit("JOB_INIT", {"jobid": self._jobid(tr), "tr": tr})
        self._error(f"Swift: Application {tr} not executed due to errors in dependencies")

    def _error(self, msg: str) -> None:
        if self.aborted:
            return
        self.errors.append(msg)
        self.bus.emit("MESSAGE", {}, text=msg, level="ERROR" if not self.lazy else "INFO")
        if not self.lazy:
            self._finish_abort()

    def skip_block(self, st: Exec, f: list, err: SwiftError) -> None:
        """A condition or iterable failed: the block does not run (lazy errors)."""
        st.fail_writes(f, err)

    def warn(self, message: str) -> None:
        if message in self._warned:
            return
        self._warned.add(message)
        sys.stderr.write(f"Warning: {message}\n")
        sys.stderr.flush()
        self.bus.emit("WARNING", {}, text=f"Warning: {message}", level="WARN")

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        loop = asyncio.get_running_loop()
        if V._current.get() is self.tramp:
            t = loop.create_task(coro)  # inherits this run's context
        else:  # started from elsewhere (a foreign callback): still this run's queue
            ctx = contextvars.copy_context()
            ctx.run(V.use, self.tramp)
            t = loop.create_task(coro, context=ctx)
        self.tasks.add(t)
        t.add_done_callback(self._spawned_done)
        return t

    def _spawned_done(self, t: asyncio.Task) -> None:
        """A task of the run ended: an exception it raised fails the run (it must not be
        dropped as "Task exception was never retrieved", with the run ending 0)."""
        self.tasks.discard(t)
        if t.cancelled():
            return
        exc = t.exception()
        if exc is not None:
            self._engine_bug(exc)


def _seed_node(sym: Sym, value: Any) -> Node:
    """A closed node of ``sym``'s type holding ``value`` (a Node is used as it is):
    numbers/strings/booleans, lists or dicts for arrays, paths for files."""
    from swiftnb.engine.interp import from_plain

    if isinstance(value, Node):
        return value
    kind = sym.tinfo.kind
    if kind == "file":
        node = FileNode(sym.name, None, os.fspath(value), sym.tinfo.name)
        node.state = CLOSED
        return node
    if kind == "array":
        if isinstance(value, (list, tuple)):
            value = dict(enumerate(value))
        elem = sym.tinfo.elem
        if elem is not None and elem.kind == "file":
            value = {k: D.FileValue("", "file", os.fspath(v)) for k, v in value.items()}
        return from_plain(dict(value), sym.name, None)
    return V.closed_cell(value, sym.name, None)
