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
import dataclasses
import gc
import itertools
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.formatting import app_arg_str
from swiftnb.engine.interp import CompileError, Exec, _set_binding
from swiftnb.engine.mapcheck import MappingChecker
from swiftnb.engine.mappers import Mapper, MapperContext, create_mapper, reads_file
from swiftnb.engine.restart import RestartLog, RestartLogError
from swiftnb.engine.task import Command, Task
from swiftnb.engine.values import (
    CLOSED,
    FAILED,
    ArrayNode,
    Cell,
    Composite,
    Failed,
    FileNode,
    Node,
    NotReady,
    StructNode,
    SwiftError,
)
from swiftnb.lang import ast as A
from swiftnb.lang.checked import CheckedProgram

__all__ = ["RunSettings", "RunOutcome", "Run", "EXIT_HANG"]

EXIT_HANG = 99
#: Said when evaluating the script's values exhausts Python's stack: an array literal or
#: a path (``a.kids[0].kids[0]...``) written some hundreds of levels deep in the source.
#: Statements, expressions and the data a recursion builds nest as deep as they like.
TOO_DEEP_VALUES = ("a value of the script nests too deeply to be evaluated (an array "
                   "literal or a path such as a.b[0].b[0]... written some hundreds of "
                   "levels deep)")
_B35 = "0123456789abcdefghijklmnopqrstuvxyz"  # base 35: a-z without w
_UID_SPACE = 35**8  # eight base-35 digits


@dataclass
class RunSettings:
    """What a run needs beyond the program (properties / swift.conf keys)."""

    max_foreach_threads: int = 16384
    lazy_errors: bool = False
    execution_retries: int = 0
    dry_run: bool = False
    script_args: Any = field(default_factory=dict)
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


def _parse_args(args: Any) -> dict[str, str]:
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

    def __init__(self, run: "Run") -> None:
        self.run = run
        self.script_args = run.script_args
        self.script_argv = run.script_argv
        self.base_dir = run.base_dir
        self.run_dir = run.run_dir
        self.return_type: Any = None
        self.return_file: Any = None
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
        self.run.bus.emit(kind, fields or {}, text=text,
                          **({"level": "WARN", "logger": "trace"} if kind == "TRACE" else {}))

    def warn(self, message: str) -> None:
        self.run.warn(message)


def _program_of(checked: CheckedProgram | A.Program) -> A.Program:
    return checked if isinstance(checked, A.Program) else checked.program


#: the parts of a value to convert next: (key or member name, node or plain value)
Parts = Sequence[tuple[Any, Any]]


def as_plain_data(n: Any, part: Callable[[Any], tuple[Any, Parts]]) -> Any:
    """A value as plain data (dicts for arrays, ``StructValue``, ``FileValue``), with a
    stack of its own: values may nest thousands deep.  ``part(node)`` converts one node
    and names its parts, which go into the returned dict (or struct's fields) in order."""
    top: dict[Any, Any] = {}
    stack: list[tuple[Any, dict, Any]] = [(n, top, None)]
    while stack:
        node, into, key = stack.pop()
        v, parts = part(node)
        into[key] = v
        if parts:
            slots = v.fields if v.__class__ is D.StructValue else v
            stack.extend((x, slots, k) for k, x in reversed(parts))
    return top[None]


def _plain_part(n: Any) -> tuple[Any, Parts]:
    """One closed node as plain data (see ``Run.plain``)."""
    while n.__class__ is Cell and isinstance(n.value, Node):
        n = n.value
    c = n.__class__
    if c is Cell:
        return n.value, ()
    if c is FileNode:
        return D.FileValue(n.name, n.tname, n.path), ()
    if c is ArrayNode:
        return {}, list(n.items.items())
    if c is StructNode:
        return (D.StructValue(n.tinfo.name, n.name, {}),
                [(k, x) for k, x in n.fields.items() if x.state == CLOSED])
    return n, ()


class Run:
    """One execution of a program."""

    def __init__(self, checked_program: CheckedProgram | A.Program, executor: Any, *,
                 bus: Any, settings: RunSettings,
                 base_dir: str, run_dir: str, runid: str, restart: RestartLog | None = None,
                 stdout: Any = None, seed: Mapping[str, Any] | None = None) -> None:
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
        #: mapped inputs whose file was missing when they were mapped: the error is
        #: raised only when something needs the file (see demand)
        self._missing: dict[FileNode, tuple[SwiftError, A.Pos | None]] = {}
        self._thread = itertools.count(1)
        self.compiler: Any = None
        self.top_frame: list = []
        self.pgraph: Any = None
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
        except CompileError as e:
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
            except asyncio.TimeoutError:
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

    def _apply_seed(self, block: Any) -> None:
        """Put the seeded values in their top-level slots; the block does not create
        those nodes (they are closed already)."""
        seeded = []
        for name, value in self.seed.items():
            sym = self.compiler.top.syms.get(name)
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

    def spawn(self, coro: Any) -> asyncio.Task:
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

    # ------------------------------------------------------------------ file GC

    def clean_scope(self, f: list, slots: tuple[int, ...]) -> None:
        """A scope ended: clean its variables' files, as Swift's ``cleanDataset`` did.

        A file is deleted when it was made by a temporary mapping (unmapped variables,
        concurrent_mapper, test_mapper with temp="true") and this was the last variable
        referring to it: a file that another variable took (an alias in an outer array,
        a procedure's output) or that is shared by an outer array lives until that one
        is cleaned too.  Files of user mappings are never deleted.  After an error the
        run cleans nothing more, so that ``-resume`` finds the files of completed calls.
        """
        if self.errors or self.aborted:
            return
        for slot in slots:
            root = f[slot]
            if root is None or root.__class__ is Cell:
                continue
            m = root.mapped_by if root.__class__ is FileNode else root.mapper
            if m.__class__ is Cell:
                m = m.value if m.state == CLOSED else None
                if m is None:
                    continue  # the mapping never resolved: nothing was made
            test = m is not None and m.reports_cleaning
            if m is not None and not test and not m.temp:
                continue  # a user mapping: the files are the script's results
            for leaf in V.file_leaves(root):
                path = leaf.path
                if path is None:
                    continue
                owner = leaf.gc_of or leaf
                temp = owner.gc_temp
                if test:
                    if temp and m.temp:
                        self.ctx.write_stdout(f"Cleaning file {path}\n")
                    else:
                        self.ctx.write_stdout(f"Not cleaning {path} (not temporary)\n")
                if owner.gc_refs > 0:
                    owner.gc_refs -= 1  # another variable still refers to the file
                    continue
                if temp:
                    owner.gc_temp = False  # deleted once
                    try:
                        os.unlink(self.local(path))
                    except OSError:
                        pass

    def remapped(self, node: FileNode, path: str | None) -> None:
        """A remappable mapper's variable took another variable's file."""
        m = node.mapped_by
        if m.__class__ is Cell:
            m = m.value
        if isinstance(m, Mapper) and m.reports_cleaning:
            self.ctx.write_stdout(f"Remapping $ -> {path}\n")

    # ------------------------------------------------------------------ values

    def plain(self, v: Any) -> Any:
        """A value for a builtin: primitives as they are, nodes deep-closed as plain data."""
        if not isinstance(v, Node):
            return v
        V.deep_ready(v)
        return as_plain_data(v, _plain_part)

    def mapping_data(self, n: Any) -> Any:
        """Plain data of a value's *mapping* (paths), without waiting for the files."""
        return as_plain_data(n, self._mapping_part)

    def _mapping_part(self, n: Any) -> tuple[Any, Parts]:
        while n.__class__ is Cell:
            if n.state == CLOSED:
                n = n.value
            elif n.state == FAILED:
                raise Failed(n.error)  # type: ignore[arg-type]
            else:
                raise NotReady(n)
        c = n.__class__
        if c is FileNode:
            return D.FileValue(n.name, n.tname, self.path_of(n)), ()
        if c is ArrayNode:
            if not n.closed and not self._fixed_elements(n):
                if n.state == FAILED:
                    raise Failed(n.error)  # type: ignore[arg-type]
                raise NotReady(n, keys=True)
            return {}, list(n.items.items())
        if c is StructNode:
            return (D.StructValue(n.tinfo.name, n.name, {}),
                    [(k, x) for k, x in n.fields.items() if not isinstance(x, Cell)])
        return n, ()

    def mapper_param(self, mapper: str, param: str, v: Any, is_input: bool = False) -> Any:
        """A mapper parameter: primitives as they are, files and composites as their
        mapping (paths).  A file the mapper reads is waited for (Swift waited for every
        open parameter): ``<csv_mapper; file=t>`` reads ``t`` once the app making it
        has run; a file whose name is all the mapper takes (regexp's ``source``) is not,
        so it need not exist.  A structured_regexp_mapper source that is still being
        written is passed as a live view, so the mapper can name each element as it
        arrives (the outputs of the same foreach)."""
        if isinstance(v, ArrayNode) and not v.closed and not is_input and (
                mapper.lower().replace("_", "") == "structuredregexpmapper"):
            return _LiveArray(self, v)
        if v.__class__ is FileNode and v.state != V.CLOSED and reads_file(mapper, param):
            self.demand(v)
            if v.state == V.FAILED:
                raise Failed(v.error)  # type: ignore[arg-type]
            raise NotReady(v)
        return self.mapping_data(v)

    @staticmethod
    def _fixed_elements(n: ArrayNode) -> bool:
        """Its mapper fixes the elements (they exist already, open): the names are known
        before the array is written, e.g. for ``@filenames(o)`` in the app making o."""
        root: Any = n
        while root.parent is not None and root.parent.__class__ is not str:
            root = root.parent
        m = _now(root.mapper)  # the mapping may still be evaluated
        return m is not None and m.fixed

    def filename_of(self, n: Any) -> str:
        data = self.mapping_data(n)
        if isinstance(data, D.FileValue):
            return data.path or ""
        if isinstance(data, str):
            return data
        return " ".join(fv.path or "" for fv in D.leaf_files(data))

    def local(self, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(self.base_dir, path)

    def path_of(self, node: Any) -> str:
        """The mapped file name of a file node (asks its root's mapper; unmapped files
        get a unique temporary name, as the concurrent mapper did)."""
        if node.__class__ is FileNode and node.path is not None:
            return node.path
        steps: list[Any] = []
        n = node
        while n.parent is not None and n.parent.__class__ is not str:
            p = n.parent
            steps.append(D.Field(n.key) if p.__class__ is StructNode else D.Index(n.key))
            n = p
        steps.reverse()
        b = _now(n.mapped_by if n.__class__ is FileNode else n.mapper)
        if b is None:
            tag = n.temporary if n.__class__ is FileNode else n.tag
            if not isinstance(tag, str):
                root = n.parent if n.parent.__class__ is str else "temp"
                tag = f"{root}-t{next(self._temp)}".replace("?", "tmp")
            suffix = "".join(
                f"-{s.name}" if isinstance(s, D.Field) else f"-{s.key}" for s in steps)
            rel = os.path.relpath(self.run_dir, self.base_dir)
            if rel.startswith(".."):
                rel = self.run_dir
            path = os.path.join(rel, "_concurrent", f"{tag}{suffix}")
            temp = True
        else:
            try:
                path = b.map(tuple(steps))
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            temp = b.temp
            if self.mapcheck is not None and node.__class__ is FileNode:
                self.mapcheck.claim(node, path, b)
        if node.__class__ is FileNode:
            node.path = path
            node.gc_temp = temp
        return path

    def bind_mapper(self, mexec: Any, node: Node, sym: Any, name: str, params: dict,
                    pending: Cell, done: Any) -> None:
        mctx = MapperContext(base_dir=self.base_dir, run_dir=self.run_dir, var_name=sym.name,
                             type=D.as_data_type(sym.ltype),
                             where=f"{os.path.basename(sym.pos.file)}:{sym.pos.line}",
                             writes=not mexec.is_input)
        try:
            m = create_mapper(name, params, mctx)
        except D.BuiltinError as e:
            err = SwiftError(e.message)
            self.runtime_error(err, mexec.pos)
            node.fail(SwiftError(e.message, dependency=True))
            pending.fail(SwiftError(e.message, dependency=True))
            done()
            return
        if m.needs_prepare:
            async def prep() -> None:
                try:
                    await m.prepare()
                except D.BuiltinError as e:
                    err = SwiftError(e.message)
                    self.runtime_error(err, mexec.pos)
                    node.fail(SwiftError(e.message, dependency=True))
                    pending.fail(SwiftError(e.message, dependency=True))
                    done()
                    V.drain()
                    return
                self._bound(mexec, node, sym, m, pending, done)
                V.drain()

            self.spawn(prep())
            return
        self._bound(mexec, node, sym, m, pending, done)

    def _bound(self, mexec: Any, node: Node, sym: Any, m: Mapper, pending: Cell,
               done: Any) -> None:
        _set_binding(node, m)
        try:
            if mexec.is_input:
                self._populate_input(node, sym, m, mexec.pos)
            elif isinstance(node, Composite) and m.fixed:
                # the mapper fixes the elements of an output array: they exist (open)
                # now, so an app producing the whole array stages every one back
                self._create_fixed(node, m)
        except SwiftError as e:
            self.runtime_error(e, mexec.pos)
            node.fail(SwiftError(e.message, dependency=True))
        pending.set(m)  # only now: waiters see the elements the mapping made
        done()

    def _create_fixed(self, node: Composite, m: Any) -> None:
        try:
            leaves = m.existing()
        except NotReady:
            return  # a live source: elements are named as they arrive
        except D.BuiltinError as e:
            raise SwiftError(e.message) from None
        for steps, fname in leaves:
            target = _leaf_at(node, steps)
            if isinstance(target, FileNode) and target.path is None:
                if self.mapcheck is not None:
                    self.mapcheck.claim(target, fname, m)
                target.path = fname

    def _found_on_site(self, path: str) -> bool:
        found = self.settings.found_on_site
        return found is not None and found(path)

    def _populate_input(self, node: Node, sym: Any, m: Any, pos: A.Pos | None) -> None:
        if isinstance(node, FileNode):
            try:
                path = m.map(())
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            if self.mapcheck is not None:
                self.mapcheck.claim(node, path, m)
            node.path = path
            self._input_found(node, sym.name, pos)
            return
        if isinstance(node, ArrayNode) or isinstance(node, StructNode):
            try:
                leaves = m.existing()
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            for steps, fname in leaves:
                target = _leaf_at(node, steps)
                if isinstance(target, FileNode):
                    if self.mapcheck is not None:
                        self.mapcheck.claim(target, fname, m)
                    target.path = fname
                    if not target.state:
                        target.set()
                elif isinstance(target, Cell) and not target.state:
                    target.set(fname)
            if isinstance(node, StructNode):
                # struct members not listed: map them individually
                for leaf in V.file_leaves(node):
                    if not leaf.state:
                        self.path_of(leaf)
                        self._input_found(leaf, leaf.name, pos)

    def _input_found(self, leaf: FileNode, name: str, pos: A.Pos | None) -> None:
        """Close a mapped input whose file exists.  A missing one stays open and is
        remembered: Swift/K said ``File not found for variable`` only for an input
        something used, so one that only names a file (``@f`` as a mapper's source, an
        app argument string) need not exist."""
        path = leaf.path or ""
        if self.dry_run or os.path.exists(self.local(path)) or self._found_on_site(path):
            leaf.set()
        else:
            self._missing[leaf] = (SwiftError(f"File not found for variable {name}: {path}"), pos)

    def demand(self, leaf: FileNode) -> None:
        """Something needs the file of ``leaf``: if it is a missing input, fail it now
        with its ``File not found`` error (and whatever waits on it, as dependants)."""
        missing = self._missing.pop(leaf, None)
        if missing is None:
            return
        err, pos = missing
        self.runtime_error(err, pos)
        leaf.fail(SwiftError(err.message, dependency=True))

    def _demand_awaited(self) -> None:
        """Fail the missing inputs that something waits on (an app's input, a
        builtin's argument, a struct that holds one)."""
        for leaf in list(self._missing):
            n: Any = leaf
            while n is not None and n.__class__ is not str:
                if n.waiters or (isinstance(n, Composite) and n.key_waiters):
                    self.demand(leaf)
                    break
                n = n.parent

    def _demand_all(self) -> None:
        for leaf in list(self._missing):
            self.demand(leaf)

    # ------------------------------------------------------------------ apps

    def _jobid(self, tr: str) -> str:
        # a bijection of the per-run counter mod 35**8 (7919 is prime to 35): ids look
        # scattered like Swift's but never repeat within a run
        n = (next(self._uid) * 7919) % _UID_SPACE
        s = ""
        for _ in range(8):
            s += _B35[n % 35]
            n //= 35
        clean = "".join(ch if ch.isalnum() or ch in "_-" else "_" for ch in os.path.basename(tr))
        return f"{clean}-{s}"

    def _words(self, v: Any, out: list[str]) -> None:
        if isinstance(v, Node):
            c = v.__class__
            if c is Cell:
                self._words(v.value, out)
            elif c is FileNode:
                out.append(self.path_of(v))
            elif c is ArrayNode:
                for k in v.sorted_keys():
                    x = v.items[k]
                    self._words(x, out)
            elif c is StructNode:
                raise SwiftError("Cannot pass a structure as an application parameter")
            return
        if isinstance(v, dict):
            for k in D.sorted_keys(v):
                self._words(v[k], out)
            return
        if isinstance(v, D.FileValue):
            out.append(v.path or "")
            return
        out.append(app_arg_str(v))

    def build_task(self, info: Any, frame: list, outs: list[Node], pos: A.Pos) -> Task:
        if not info.commands:
            raise SwiftError(f"app {info.name} has no command")
        exe, args, redir, cpos = info.commands[0]
        argv, rd = self._command_line(args, redir, frame)
        profiles: dict[str, str] = {}
        for k, v in info.profiles:
            profiles[app_arg_str(self.plain(k(frame)))] = app_arg_str(self.plain(v(frame)))
        inputs: list[str] = []
        for slot in info.in_slots:
            x = frame[slot]
            if isinstance(x, Node):
                for leaf in V.file_leaves(x):
                    inputs.append(self.path_of(leaf))
        outputs: list[str] = []
        globs: list[str] = []
        for o in outs:
            for leaf in V.file_leaves(o):
                outputs.append(self.path_of(leaf))
            if isinstance(o, Composite) and not o.closed:
                # dynamic output: the app decides the elements; the mapper names the
                # files it may create, the wrapper brings back whatever matches
                m = _now(o.mapper)
                if m is not None and not m.fixed:
                    try:
                        globs.extend(m.stage_out_globs())
                    except D.BuiltinError:
                        pass
        made = self._made_dirs
        for p in outputs:
            d = os.path.dirname(p)
            if d and d not in made:
                made.add(d)
                try:
                    os.makedirs(self.local(d), exist_ok=True)
                except OSError:
                    pass
        maxwall = None
        mw = profiles.get("maxwalltime") or profiles.get("maxWallTime")
        if mw:
            maxwall = _walltime(mw)
        tr = exe
        task = Task(
            jobid=self._jobid(tr), tr=tr, args=argv, base_dir=self.base_dir, run_dir=self.run_dir,
            stdin=rd[0], stdout=rd[1], stderr=rd[2], inputs=inputs, outputs=outputs,
            profiles=profiles, maxwalltime=maxwall,
            source=_source(cpos), thread=f"R-{next(self._thread)}", output_globs=globs,
        )
        if len(info.commands) > 1:
            task.more_commands = self._more_commands(info.commands[1:], frame)
        return task

    def _more_commands(self, commands: list[Any], frame: list) -> tuple[Command, ...]:
        """The commands after the first of an app body of several (trunk runs them in
        order in the one job directory), each with its own words and redirections."""
        more = []
        for exe, args, redir, cpos in commands:
            argv, streams = self._command_line(args, redir, frame)
            more.append(Command(tr=exe, args=argv, stdin=streams[0], stdout=streams[1],
                                stderr=streams[2], source=_source(cpos)))
        return tuple(more)

    def _command_line(self, args: list[Any], redir: list[Any],
                      frame: list) -> tuple[list[str], list[str | None]]:
        """One command's words, and its stdin, stdout and stderr (None: not redirected)."""
        argv: list[str] = []
        for ev in args:
            self._words(ev(frame), argv)
        streams: list[str | None] = []
        for r in redir:
            if r is None:
                streams.append(None)
            else:
                words: list[str] = []
                self._words(r(frame), words)
                streams.append(" ".join(words))
        return argv, streams

    def submit(self, call: Any, task: Task) -> None:
        if self.aborted:
            call.finish(False, "run aborted")
            return
        self.active += 1
        self.spawn(self._run_app(call, task))

    async def _run_app(self, call: Any, task: Task) -> None:
        emit = self.bus.emit
        info = call.info
        thread = task.thread or f"R-{next(self._thread)}"
        ok = False
        message = ""
        try:
            if self.pgraph is not None:
                self.pgraph.call(info.name, task)
            emit("JOB_INIT", {"jobid": task.jobid, "tr": task.tr})
            if self.restart is not None and task.outputs and self.restart.is_done(task.outputs):
                emit("JOB_RESTARTED", {"jobid": task.jobid})
                ok = True
                return
            if self.dry_run:
                ok = True
                return
            emit("PROCEDURE", {"line": info.proc.pos.line, "thread": thread, "name": info.name},
                 level="DEBUG")
            result = None
            for attempt in range(1 + self.retries):
                # each attempt is its own Task (executors may keep the one they ran)
                attempt_task = dataclasses.replace(task, attempt=attempt)
                result = await self.executor.submit(attempt_task)
                if result.ok or result.canceled:
                    break
                emit("APPLICATION_EXCEPTION", {"jobid": task.jobid, "message": result.message})
                if not result.retryable:
                    break  # e.g. no executable bit: Swift did not retry, nothing would differ
            assert result is not None
            emit("JOB_END", {"jobid": task.jobid})
            emit("PROCEDURE_END", {"line": info.proc.pos.line, "thread": thread, "name": info.name},
                 level="DEBUG")
            if result.ok:
                ok = True
                emit("END_SUCCESS", {"thread": thread, "tr": task.tr})
                if self.restart is not None and task.outputs:
                    try:
                        self.restart.record(task.outputs)
                    except RestartLogError as exc:
                        self.records_lost(str(exc))
            else:
                emit("END_FAILURE", {"thread": thread, "tr": task.tr})
                message = result.message or (
                    f"Exception in {task.tr}:\n    Arguments: [{', '.join(task.args)}]\n"
                    f"Caused by: Application {task.tr} failed with an exit code of "
                    f"{result.exit_code}")
                if not result.canceled:
                    self._error(message)
        except asyncio.CancelledError:
            message = "canceled"
            raise
        except Exception as exc:  # noqa: BLE001 - a bug below must end the run, visibly
            self._engine_bug(exc, f" in the call of {info.name} ({task.source})")
        finally:
            self.active -= 1
            try:
                if not self.aborted or ok:
                    call.finish(ok, message)
                V.drain()
            except Exception as exc:  # noqa: BLE001 - an engine bug must end the run
                self._engine_bug(exc)


class _LiveArray(Mapping):
    """A read-only view of an array that may still grow; reading a key that has not
    arrived raises NotReady (the caller waits for it)."""

    def __init__(self, run: Run, node: ArrayNode) -> None:
        self.run = run
        self.node = node

    def __getitem__(self, k: Any) -> Any:
        n = self.node.items.get(k)
        if n is None:
            if self.node.closed:
                raise KeyError(k)
            raise NotReady(self.node, key=k)
        return self.run.mapping_data(n)

    def __iter__(self):
        return iter(list(self.node.items))

    def __len__(self) -> int:
        return len(self.node.items)


def _seed_node(sym: Any, value: Any) -> Any:
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


def _leaf_at(node: Composite, steps: tuple) -> Node | None:
    """The part of ``node`` at a mapper's path; None when the path does not fit the
    variable's type (a file the mapper listed that no member or element stands for)."""
    target: Node = node
    try:
        for s in steps:
            if isinstance(s, D.Field):
                if not isinstance(target, StructNode):
                    return None
                target = target.fields[s.name]
            elif isinstance(target, ArrayNode):
                target = target.element(s.key)
            else:
                return None
    except (SwiftError, KeyError):
        return None
    return target


def _now(x: Any) -> Any:
    """``x``, or the value of a Cell that has closed; Failed or NotReady (wait for it)
    when the Cell failed or is still open."""
    if x.__class__ is not Cell:
        return x
    if x.state == CLOSED:
        return x.value
    if x.state == FAILED:
        raise Failed(x.error)  # type: ignore[arg-type]
    raise NotReady(x)


def _source(pos: A.Pos) -> str:
    """``script.swift:12:5``: a command's place, as failure messages name it."""
    return f"{os.path.basename(pos.file)}:{pos.line}:{pos.column}"


def _walltime(text: str) -> float | None:
    """``maxwalltime`` profile: minutes, ``MM:SS`` or ``HH:MM:SS``."""
    try:
        parts = [float(p) for p in str(text).split(":")]
    except ValueError:
        return None
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


