"""What the compiled program (compiler, interp, procedures) uses of the run executing it.

:class:`Runtime` is the contract :class:`swiftnb.engine.run.Run` meets for the statements
it runs: the statements hold it as ``rt`` and never import the run module.  Values are
Swift values (primitives, :class:`~swiftnb.engine.values.Node`\\ s) and stay ``Any``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol

from swiftnb.engine.data import BuiltinContext

if TYPE_CHECKING:  # types only: the statements import this module
    from swiftnb.engine.callgate import CallGate
    from swiftnb.engine.interp import Exec, MapExec, Sym
    from swiftnb.engine.procedures import AppCall, ProcInfo
    from swiftnb.engine.task import Task
    from swiftnb.engine.values import Cell, FileNode, Node, SwiftError
    from swiftnb.events import EventBus
    from swiftnb.lang import ast as A
    from swiftnb.lang.checked import CheckedProgram


class RunContext(BuiltinContext, Protocol):
    """The run's one :class:`BuiltinContext`: the statement calling a built-in sets the
    call's fields (``return_type``, ``arg_names``, ...) and its script line first."""

    line: int


class Runtime(Protocol):
    """The running program, as its statements see it."""

    @property
    def checked(self) -> CheckedProgram | A.Program:
        """The checked program (or a bare AST, as some tools run it)."""

    @property
    def ctx(self) -> RunContext:
        """The context built-ins are called with."""

    @property
    def bus(self) -> EventBus: ...

    max_foreach_threads: int
    file_gc: bool
    unit_events: bool
    aborted: bool
    #: engine work handed back to the event loop, still to resume
    busy: int
    #: app calls in the executor (submitted, not ended)
    active: int
    #: holds loops while the executor has many more calls than slots (callgate.py)
    gate: CallGate

    # errors
    def runtime_error(self, err: SwiftError, pos: A.Pos | None) -> None: ...

    def dependency_error(self, tr: str, pos: A.Pos | None) -> None: ...

    def skip_block(self, st: Exec, f: list, err: SwiftError) -> None: ...

    def warn(self, message: str) -> None: ...

    def left_open(self, what: str) -> None: ...

    # work on the event loop
    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task: ...

    # values and files
    def plain(self, v: Any) -> Any: ...

    def mapping_data(self, n: Any) -> Any: ...

    def mapper_param(self, mapper: str, param: str, v: Any, is_input: bool = False) -> Any: ...

    def filename_of(self, n: Any) -> str: ...

    def local(self, path: str) -> str: ...

    def path_of(self, node: Any) -> str: ...

    def remapped(self, node: FileNode, path: str | None) -> None: ...

    def clean_scope(self, f: list, slots: tuple[int, ...]) -> None: ...

    def bind_mapper(self, mexec: MapExec, node: Node, sym: Sym, name: str, params: dict,
                    pending: Cell, done: Callable[[], None]) -> None: ...

    # app calls
    def build_task(self, info: ProcInfo, frame: list, outs: list[Node], pos: A.Pos) -> Task: ...

    def submit(self, call: AppCall, task: Task) -> None: ...
