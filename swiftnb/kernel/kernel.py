"""The Swift kernel: an IPython kernel whose cells are Swift.

It subclasses ipykernel's ``IPythonKernel``, so comms, widgets, bokeh output and
``%%python`` cells work as in any IPython kernel, and replaces execution, completion,
inspection and is_complete for Swift cells.  Each Swift cell is checked against the
declarations and values of earlier cells (:mod:`swiftnb.kernel.session`) and runs as a
run of its own (:func:`swiftnb.runner.start_run`) on the kernel's event loop; the cell
waits for it, and an interrupt cancels it cleanly.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from ipykernel.ipkernel import IPythonKernel

from swiftnb import __version__
from swiftnb.events import Event
from swiftnb.kernel import assist
from swiftnb.kernel.livestatus import show_dashboard
from swiftnb.kernel.session import SwiftSession
from swiftnb.kernel.settings import SettingsError, SwiftSettings
from swiftnb.runner import RunHandle

__all__ = ["SwiftKernel", "split_magics", "make_session_dir", "SESSIONS_DIR"]

#: the directory, beside the notebook, that holds one directory per kernel session
SESSIONS_DIR = ".swiftnb"

BANNER = f"""swiftnb {__version__}: Swift (Swift/K 0.9x) parallel scripting.
Cells are Swift; %python / %%python run Python; %swift_config shows the configuration."""


def _python_cell(code: str) -> str | None:
    """The Python of a ``%%python`` cell, or None."""
    stripped = code.lstrip()
    if not stripped.startswith("%%python"):
        return None
    first, _, rest = stripped.partition("\n")
    if first.strip() != "%%python":
        return None
    return rest


def split_magics(code: str) -> tuple[list[tuple[str, str]], str]:
    """Line magics (``%name args``) out of a Swift cell; the Swift text keeps its line
    numbers (a magic line becomes an empty line)."""
    magics: list[tuple[str, str]] = []
    lines = code.split("\n")
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("%") and not s.startswith("%%"):
            name, _, args = s[1:].partition(" ")
            magics.append((name, args.strip()))
            lines[i] = ""
    return magics, "\n".join(lines)


class SwiftKernel(IPythonKernel):
    implementation = "swiftnb"
    implementation_version = __version__
    language = "swift"
    language_version = "0.96"
    language_info = {
        "name": "swift",
        "version": "0.96",
        "mimetype": "text/x-swift-script",
        "file_extension": ".swift",
        "pygments_lexer": "swift-script",
        "codemirror_mode": "swift",
        "nbconvert_exporter": "script",
    }
    banner = BANNER
    help_links = [{"text": "swiftnb in Jupyter", "url": "https://swift-lang.org/guides/"}]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.swift = SwiftSession(os.getcwd())
        self.swift_settings = SwiftSettings()
        self.current_run: RunHandle | None = None
        #: where this session's runs go, made at its first run (:meth:`_session_dir`)
        self.session_dir: str | None = None
        if self.shell is not None:
            self.shell.user_ns["swift_session"] = self.swift
            self._register_python_magics()

    def _register_python_magics(self) -> None:
        """``%%python`` cells run as ordinary IPython cells (the header line is dropped by
        an input transformer, so history keeps the cell as typed); ``%python LINE`` is a
        line magic running LINE in this namespace (IPython's own ``%%python`` would start
        a separate interpreter)."""
        shell = self.shell
        assert shell is not None  # the kernel app gives the kernel its shell first

        def drop_header(lines: list[str]) -> list[str]:
            if lines and lines[0].strip() == "%%python":
                return lines[1:]
            return lines

        shell.input_transformers_cleanup.insert(0, drop_header)

        def python(line: str) -> None:
            shell.run_cell(line, store_history=False)

        shell.register_magic_function(python, "line", "python")

    # ---------------------------------------------------------------- execute
    async def do_execute(self, code, silent, store_history=True, user_expressions=None,
                         allow_stdin=False, *, cell_meta=None, cell_id=None):
        if _python_cell(code) is not None:
            return await super().do_execute(code, silent, store_history, user_expressions,
                                            allow_stdin, cell_meta=cell_meta, cell_id=cell_id)
        shell = self.shell
        assert shell is not None  # the kernel app gives the kernel its shell first
        count = shell.execution_count
        try:
            reply = await self._execute_swift(code, silent)
        except Exception as exc:  # noqa: BLE001  a bug of ours: a message, not a traceback
            reply = self._error(type(exc).__name__, str(exc),
                                f"swiftnb internal error: {exc!r}", silent)
        finally:
            if store_history:
                shell.history_manager.store_inputs(count, code, code)
                shell.execution_count += 1
        reply["execution_count"] = count
        if reply["status"] == "ok" and user_expressions:
            reply["user_expressions"] = shell.user_expressions(user_expressions)
        reply.setdefault("user_expressions", {})
        reply.setdefault("payload", [])
        return reply

    def _error(self, ename: str, evalue: str, text: str, silent: bool = False) -> dict:
        content = {"ename": ename, "evalue": evalue, "traceback": text.split("\n")}
        if not silent:
            self.send_response(self.iopub_socket, "error", content)
        return {"status": "error", **content}

    def _run_python(self, code: str) -> dict | None:
        shell = self.shell
        assert shell is not None  # the kernel app gives the kernel its shell first
        result = shell.run_cell(code, store_history=False)
        if result.success:
            return None
        err = result.error_before_exec or result.error_in_exec
        return {"status": "error", "ename": type(err).__name__, "evalue": str(err),
                "traceback": shell._last_traceback or []}

    def _magic(self, name: str, args: str, silent: bool) -> dict | None:
        if name == "python":
            return self._run_python(args)
        if name == "swift_config":
            from swiftnb.runner import RunSetupError

            try:
                text = self.swift_settings.apply(args, os.getcwd())
            except (SettingsError, RunSetupError) as exc:
                return self._error(type(exc).__name__, str(exc), str(exc), silent)
            if not silent:
                print(text)
            return None
        if name in ("swift_reset", "reset"):
            self.swift.reset()
            if not silent:
                print("Swift declarations and values forgotten.")
            return None
        if name in ("who", "swift_who"):
            if not silent:
                print(self.swift.describe())
            return None
        return self._run_python(f"%{name} {args}")

    async def _execute_swift(self, code: str, silent: bool) -> dict:
        from swiftnb import lang
        from swiftnb.runner import RunSetupError, start_run

        shell = self.shell
        assert shell is not None  # the kernel app gives the kernel its shell first
        magics, text = split_magics(code)
        for name, args in magics:
            failed = self._magic(name, args, silent)
            if failed is not None:
                return failed
        if not _has_code(text):
            return {"status": "ok"}
        self.swift.base_dir = os.getcwd()  # imports resolve where the runs go
        try:
            cell = self.swift.compile_cell(text, shell.user_ns)
        except lang.CompileError as exc:
            return self._error("CompileError", exc.render_short(), exc.render(), silent)
        for note in cell.notes:
            print(note, file=sys.stderr)
        try:
            run_parent = self._session_dir()
        except OSError as exc:
            return self._error("RunSetupError", str(exc), "Could not start execution:\n\t"
                               f"cannot create the session directory: {exc}", silent)
        try:
            handle = start_run(cell.checked, seed=cell.seed, base_dir=os.getcwd(),
                               run_parent=run_parent, stdout=sys.stdout,
                               **self.swift_settings.run_kwargs())
        except RunSetupError as exc:
            return self._error("RunSetupError", str(exc),
                               f"Could not start execution:\n\t{exc}", silent)
        for warning in handle.config.warnings:  # what the configuration says to no effect
            print(f"Warning: {warning}", file=sys.stderr)
        self.current_run = handle
        stop_watching = (_dashboard_at_first_app(handle)
                         if not silent and self.swift_settings.dashboard else None)
        try:
            await self._wait(handle)
        finally:
            if stop_watching is not None:
                stop_watching()
        values = self.swift.commit(cell, handle)
        shell.user_ns.update(values)
        shell.user_ns["swift_run"] = handle
        sys.stdout.flush()
        sys.stderr.flush()
        if handle.ok:
            return {"status": "ok"}
        errors = handle.errors or ["Execution failed"]
        if handle.interrupted:
            return self._error("KeyboardInterrupt", "Execution interrupted",
                               "Execution interrupted: " + "\n".join(errors), silent)
        return self._error("ExecutionError", errors[0],
                           "Execution failed:\n" + "\n".join(errors), silent)

    def _session_dir(self) -> str:
        """``.swiftnb/session-DATE-ID`` in the working directory: the runs of one kernel
        session (``run001``, ``run002``...) go there, not beside the notebook."""
        if self.session_dir is None or not os.path.isdir(self.session_dir):
            self.session_dir = make_session_dir(os.getcwd())
        return self.session_dir

    async def _wait(self, handle: RunHandle) -> None:
        """Wait for the run; SIGINT (the interrupt button) cancels it cleanly."""
        loop = asyncio.get_running_loop()
        previous = None
        if threading.current_thread() is threading.main_thread():
            def on_sigint(signum, frame):  # noqa: ARG001
                loop.call_soon_threadsafe(handle.cancel, "Execution interrupted by the user")

            previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            await handle
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    # ---------------------------------------------------------------- assist
    def do_complete(self, code, cursor_pos):
        if _python_cell(code) is not None or _on_python_line(code, cursor_pos):
            return super().do_complete(code, cursor_pos)
        return assist.complete(code, cursor_pos, self.swift)

    def do_inspect(self, code, cursor_pos, detail_level=0, omit_sections=()):
        if _python_cell(code) is not None or _on_python_line(code, cursor_pos):
            return super().do_inspect(code, cursor_pos, detail_level, omit_sections)
        return assist.inspect(code, cursor_pos, self.swift)

    def do_is_complete(self, code):
        python = _python_cell(code)
        if python is not None:
            return super().do_is_complete(python)
        return assist.is_complete(code)


def _on_python_line(code: str, cursor_pos: int) -> bool:
    start = code.rfind("\n", 0, cursor_pos) + 1
    return code[start:cursor_pos].lstrip().startswith("%python ")


def _has_code(text: str) -> bool:
    for line in text.split("\n"):
        s = line.strip()
        if s and not s.startswith("//") and not s.startswith("#"):
            return True
    return False


def make_session_dir(base: str) -> str:
    """A new ``BASE/.swiftnb/session-YYYYmmdd-HHMMSS-XXXX`` (XXXX: random hex, so two
    kernels started in the same second never share one)."""
    parent = os.path.join(base, SESSIONS_DIR)
    os.makedirs(parent, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    while True:
        path = os.path.join(parent, f"session-{stamp}-{secrets.token_hex(2)}")
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            continue


def _dashboard_at_first_app(handle: RunHandle) -> Callable[[], None]:
    """Show the live panels under the cell when the run starts its first app (a cell
    that only computes or traces gets none); returns what stops watching."""
    def on_event(event: Event) -> None:
        if event.kind == "JOB_INIT":
            unsubscribe()
            show_dashboard(handle)   # it replays the events so far

    unsubscribe = handle.bus.subscribe(on_event)
    return unsubscribe
