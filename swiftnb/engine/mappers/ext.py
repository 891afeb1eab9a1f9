"""The external mapper ``ext``: a script prints ``PATH FILE`` lines."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
from typing import Any

from swiftnb.engine.data import FileValue, parse_path, path_str
from swiftnb.engine.formatting import java_str
from swiftnb.engine.mappers.base import Mapper, MapperError, register_mapper


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

    def __init__(self, params: dict[str, Any], ctx: Any, spelled: str | None = None) -> None:
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
        out, err = await proc.communicate()
        if proc.returncode != 0:
            lines = err.decode("utf-8", "replace").splitlines()
            raise MapperError(f"External executable failed. Exit code: {proc.returncode}\n\t"
                              + "".join(ln + "\n\t" for ln in lines).rstrip("\n\t"))
        self.parse_output(out.decode("utf-8", "replace"))

    async def _start(self, argv: list[str], env: dict[str, str]) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            *argv, cwd=self.ctx.base_dir, env=env, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

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
