"""The external mapper ``ext``: a script prints ``PATH FILE`` lines."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
from typing import Any

from swiftnb.engine.data import FileValue, parse_path, path_str
from swiftnb.engine.formatting import java_str
from swiftnb.engine.mappers.base import Mapper, MapperContext, MapperError, register_mapper


def _interpreted(cmd: str) -> list[str]:
    """``[cmd]``, or, for a script file that lost its execute bit (test suites copied
    without modes, ``.sh.in`` templates), the interpreter of its ``#!`` line (``/bin/sh``
    without one) followed by the script."""
    if not os.path.isfile(cmd) or os.access(cmd, os.X_OK):
        return [cmd]
    try:
        with open(cmd, "rb") as fh:
            first = fh.readline(256).decode("utf-8", "replace").strip()
    except OSError:
        return [cmd]
    if first.startswith("#!"):
        return first[2:].split() + [cmd]
    return ["/bin/sh", cmd]


@register_mapper
class ExtMapper(Mapper):
    """``<ext; exec="mapper.sh", a=1, b="x">``: runs ``exec -a 1 -b x`` (every parameter
    but ``exec`` becomes ``-name value``, in Java HashMap order as Swift passed them) in
    the base directory and
    reads its stdout: one ``PATH FILE`` line per leaf, PATH being ``$`` (the variable),
    ``[2]``, ``[0].f``, ``fld``, ``a.b``, ``[0][1]``.  The script runs once, in
    ``prepare()``, without blocking the event loop.  A script without its execute bit
    is run through its ``#!`` interpreter (Swift would have failed to start it)."""

    name = "Ext"
    aliases = ("ext",)
    params = None
    required = ("exec",)
    fixed = True
    needs_prepare = True
    reads_files = None  # the script may read any file it is given

    def __init__(self, params: dict[str, Any], ctx: MapperContext, spelled: str | None = None) -> None:
        super().__init__(params, ctx, spelled)
        self._map: dict[tuple, str] | None = None
        self._order: list[tuple] = []

    def describe(self) -> str:
        return "the paths its script printed"

    def argv(self) -> list[str]:
        exe = self.str_param("exec") or ""
        local = self.local(exe)
        if os.sep in exe or os.path.exists(local):
            cmd = os.path.abspath(local)
        else:
            cmd = shutil.which(exe) or exe
        argv = _interpreted(cmd)
        # Swift kept the other parameters in a java.util.HashMap: same order here
        from swiftnb.engine.datafiles import java_hash_order

        for k in java_hash_order([k for k in self.p if k != "exec"]):
            argv += ["-" + k, self._arg(self.p[k])]
        return argv

    def _arg(self, v: Any) -> str:
        if isinstance(v, dict):
            from swiftnb.engine.data import sorted_items
            return " ".join(java_str(x) for _, x in sorted_items(v))
        if isinstance(v, FileValue):
            return v.path or ""
        return java_str(v)

    def parse_output(self, text: str) -> None:
        mapping: dict[tuple, str] = {}
        order: list[tuple] = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            parts = line.strip().split(None, 1)
            if len(parts) != 2:
                raise MapperError(f"{self.spelled}: line {n} of the mapper output is not 'PATH FILE': {line!r}")
            try:
                p = parse_path(parts[0])
            except ValueError as e:
                raise MapperError(f"{self.spelled}: line {n}: {e}") from None
            if p not in mapping:
                order.append(p)
            mapping[p] = parts[1]
        self._map, self._order = mapping, order

    async def prepare(self) -> None:
        if self._map is not None:
            return
        argv = self.argv()
        env = dict(os.environ, **(self.ctx.env or {}))
        try:
            proc = await self._start(argv, env)
        except OSError as e:
            if e.errno != errno.ENOEXEC:
                raise MapperError(f"{self.spelled}: cannot run {argv[0]}: {e.strerror}") from None
            # an executable script without a #! line: Java's Runtime.exec (as execvp)
            # then ran it with /bin/sh, and the test suites' .sh.in mappers rely on it
            try:
                proc = await self._start(["/bin/sh"] + argv, env)
            except OSError as e2:
                raise MapperError(f"{self.spelled}: cannot run {argv[0]}: {e2.strerror}") from None
        out, err = await proc.outputs()
        if proc.returncode != 0:
            lines = err.decode("utf-8", "replace").splitlines()
            raise MapperError(f"External executable failed. Exit code: {proc.returncode}\n\t"
                              + "".join(ln + "\n\t" for ln in lines).rstrip("\n\t"))
        self.parse_output(os.fsdecode(out))  # names are bytes: kept as they are

    async def _start(self, argv: list[str], env: dict[str, str]) -> _Program:
        loop = asyncio.get_running_loop()
        program = _Program(loop)
        await loop.subprocess_exec(
            lambda: program, *argv, cwd=self.ctx.base_dir, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, start_new_session=True)
        return program

    def _need(self) -> dict[tuple, str]:
        if self._map is None:
            raise MapperError(f"{self.spelled}: used before prepare() ran its script")
        return self._map

    def map(self, path: tuple = ()) -> str:
        m = self._need()
        if path in m:
            return m[path]
        if not path and m:
            return " ".join(m[p] for p in self._order)
        raise MapperError(f"{self.spelled}: the mapper script gave no file for "
                          f"{path_str(self.ctx.var_name, path)}")

    def existing(self) -> list[tuple[tuple, str]]:
        m = self._need()
        return [(p, m[p]) for p in self._order]


def _kill_session(pid: int) -> None:
    """Kill the mapper program's process group (its own session): it and its children."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:  # all gone
        pass


#: how long a mapper program's pipes are still read after it exited and its session was
#: killed: a writer holding them then escaped the session (setsid) and is not waited for
PIPE_GRACE = 1.0


class _Program(asyncio.subprocess.SubprocessStreamProtocol):
    """The mapper program, heard of when it exits (asyncio's ``Process.wait`` also waits
    for its pipes to close, which a child it left in the background may hold open)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2 ** 16, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.returncode: int | None = None
        self._ours: asyncio.SubprocessTransport | None = None  # the base class drops its own

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._ours = transport

    def process_exited(self) -> None:
        assert self._ours is not None
        self.returncode = self._ours.get_returncode()
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)

    async def outputs(self) -> tuple[bytes, bytes]:
        """Its stdout and stderr, read until it exits; what it left running in the
        background is then killed with its session (a batch system ends a job's processes
        so), and a writer that escaped the session is not waited for past PIPE_GRACE.
        Cancelled (the run stopped: Ctrl-C, SIGTERM), it kills the program too."""
        transport = self._ours
        assert transport is not None and self.stdout is not None and self.stderr is not None
        out, err = bytearray(), bytearray()
        readers = asyncio.ensure_future(asyncio.gather(_drain(self.stdout, out),
                                                       _drain(self.stderr, err)))
        try:
            await self.exited
        finally:
            _kill_session(transport.get_pid())
            try:
                if not self.exited.done():  # cancelled: reap what was killed
                    await asyncio.shield(self.exited)
                await asyncio.wait({readers}, timeout=PIPE_GRACE)
            finally:
                readers.cancel()
                readers.add_done_callback(_retrieved)
                transport.close()
        return bytes(out), bytes(err)


async def _drain(stream: asyncio.StreamReader, into: bytearray) -> None:
    while chunk := await stream.read(65536):
        into += chunk


def _retrieved(future: asyncio.Future) -> None:
    """Marks a cancelled reader's outcome seen (nothing to report)."""
    if not future.cancelled():
        future.exception()
