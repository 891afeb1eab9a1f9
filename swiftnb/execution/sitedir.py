"""The site run directory on another machine: check its Python, make it, fill it.

Every provider that runs the stdlib-only wrapper (and worker) on a machine reached
through a shell starts the same way: ask the remote Python for its version and for the
absolute path of ``workDirectory`` (``~`` and relative paths are the remote side's), then
make ``WORKDIR/SCRIPT-RUNID/shared`` and copy the wrapper there.  The ssh provider and the
batch provider share this module, so a missing or too old Python, or a work directory
that cannot be written, reads the same on every kind of site.
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Mapping, Sequence

from swiftnb.engine.task import FailureKind
from swiftnb.execution.shell import CommandResult, Shell, ShellError
from swiftnb.execution.staging import shell_failure_kind
from swiftnb.scheduling.provider import ProviderError

__all__ = ["MIN_REMOTE_PYTHON", "remote_work_dir", "prepare_site_dir"]

#: The oldest remote Python the wrapper and the worker run on.
MIN_REMOTE_PYTHON = (3, 8)
#: the probe's exit status when the remote Python is not on the PATH (not 127, which a
#: missing `timeout` or `sh` would give too)
_NO_PYTHON = 97
_PROBE = ("import os,sys;print('%d.%d'%sys.version_info[:2]);"
          "print(os.path.abspath(os.path.expanduser(sys.argv[1])))")

#: runs a command on the site's machine, ``doing`` says what for (ProviderError if the
#: shell fails): the ssh provider's goes through its session rate limiter
Runner = Callable[[Sequence[str], str], Awaitable[CommandResult]]


async def remote_work_dir(run: Runner, *, python: str, work_dir: str, where: str) -> str:
    """The absolute path of ``work_dir`` on the machine, once its ``python`` is known to
    be Python 3.8 or newer.  ProviderError(SUBMIT_REFUSED) says what is wrong and what
    to set (``execution.options.python``); ``where`` names the site and host."""
    result = await run(
        ["sh", "-c", f'command -v {shlex.quote(python)} >/dev/null || exit {_NO_PYTHON}; '
         f'exec {shlex.quote(python)} -c "$0" "$1"', _PROBE, work_dir],
        "checking the remote Python")
    if result.returncode == _NO_PYTHON:
        raise ProviderError(FailureKind.SUBMIT_REFUSED, (
            f"{where}: no remote Python 3 ({python!r} is not on the host's PATH); install "
            "python3 there or set the site's execution.options.python to its path"))
    if result.returncode != 0:
        raise ProviderError(FailureKind.SUBMIT_REFUSED, (
            f"{where}: checking the remote Python failed (exit code {result.returncode}): "
            f"{result.stderr.strip()[-500:]}"))
    version, resolved = (result.stdout.splitlines() + ["", ""])[:2]
    if tuple(int(p) for p in version.split(".")[:2] if p.isdigit()) < MIN_REMOTE_PYTHON:
        raise ProviderError(FailureKind.SUBMIT_REFUSED, (
            f"{where}: the remote {python} is Python {version}; swiftnb's wrapper needs "
            f"{'.'.join(map(str, MIN_REMOTE_PYTHON))} or newer (set "
            "execution.options.python to a newer one)"))
    return resolved.rstrip("/")


async def prepare_site_dir(shell: Shell, site_dir: str, files: Mapping[str, str], *,
                           where: str) -> None:
    """Make ``site_dir/shared`` and copy ``files`` (name there -> local path) into it."""
    try:
        await shell.makedirs(f"{site_dir}/shared")
        for name, source in files.items():
            await shell.put(source, f"{site_dir}/shared/{name}")
    except ShellError as exc:
        raise ProviderError(shell_failure_kind(exc), (
            f"{where}: preparing the work directory {site_dir} (is workDirectory writable "
            f"there, with room left?): {exc}")) from None
