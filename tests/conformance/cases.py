"""What a conformance case is and how its run is judged (README.md in this folder).

Shared by ``test_conformance.py`` (the built-in local site) and
``test_conformance_ssh.py`` (an SSH site), so that a case means the same thing
wherever it runs: the same files, the same expectations, the same verdict.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
SWIFTNB = ROOT / ".venv" / "bin" / "swiftnb"
if not SWIFTNB.exists():  # installed elsewhere (CI venv on PATH)
    SWIFTNB = Path(shutil.which("swiftnb") or SWIFTNB)

CASES = sorted(HERE.glob("*/[0-9]*.swift"))
#: how long check.sh may take (it only looks at files)
CHECK_TIMEOUT = 30

def case_id(script: Path) -> str:
    """``group/NNN-name``: the test id, and the key of per-case tables."""
    return f"{script.parent.name}/{script.stem}"


def expected_exit(script: Path) -> int | None:
    """None means "any non-zero"."""
    code_file = script.with_suffix(".exitcode")
    if code_file.exists():
        return int(code_file.read_text().strip())
    if "THIS-SCRIPT-SHOULD-FAIL" in script.read_text(errors="replace"):
        return None
    return 0


def copy_case(script: Path, base: Path) -> Path:
    """A fresh copy of the case's group folder under ``base`` (a case may read the files
    beside it, and its outputs must never touch the repository)."""
    work = base / script.parent.name
    shutil.copytree(script.parent, work, ignore=shutil.ignore_patterns("__pycache__", "run[0-9]*"))
    return work


def case_argv(script: Path, work: Path) -> list[str]:
    """``swiftnb run NNN-name.swift [words of NNN-name.args]``."""
    name = script.stem
    args_file = work / f"{name}.args"
    args = args_file.read_text().split() if args_file.exists() else []
    return [str(SWIFTNB), "run", f"{name}.swift", *args]


_COMMENT = re.compile(r"//[^\n]*|#[^\n]*|/\*.*?\*/", re.S)
_APP = re.compile(r"\bapp\s*(\(|\{|[A-Za-z_]\w*\s*\()")
_IMPORT = re.compile(r'\bimport\s+"([^"]+)"')


def declares_app(script: Path, _seen: frozenset[Path] = frozenset()) -> bool:
    """Whether running the script may call an app: it declares one (``app (o) f (i)
    {...}``, ``app f (i) {...}``, or the legacy ``app { ... }`` body), itself or in a
    file it imports.  Comments are dropped first, so "an app failure" in prose is not
    a declaration."""
    if script in _seen or not script.exists():
        return False
    text = _COMMENT.sub(" ", script.read_text(errors="replace"))
    if _APP.search(text):
        return True
    for name in _IMPORT.findall(text):
        imported = script.parent / (name if name.endswith(".swift") else f"{name}.swift")
        if declares_app(imported, _seen | {script}):
            return True
    return False


def run_check_sh(script: Path, work: Path) -> subprocess.CompletedProcess | None:
    """Run the case's ``check.sh`` (if any) with ``bash`` in the case folder."""
    check = work / f"{script.stem}.check.sh"
    if not check.exists():
        return None
    return subprocess.run(["bash", check.name], cwd=work, capture_output=True, text=True,
                          timeout=CHECK_TIMEOUT)


#: ``check_run``'s default: run check.sh now
RUN_CHECK_NOW = object()


def check_run(script: Path, work: Path, proc: subprocess.CompletedProcess,
              checked: object = RUN_CHECK_NOW) -> None:
    """Assert everything the case expects of its run (exit code, stdout as a sorted
    multiset of lines, the exact ``.out`` file, ``check.sh``); each failure shows the
    run's stdout and stderr.  ``checked`` is check.sh's result when the caller ran it
    already (right after the run, before another run of the case could touch the same
    absolute paths)."""
    name = script.stem
    detail = f"\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    want = expected_exit(script)
    if want is None:
        assert proc.returncode != 0, "script should fail but exited 0" + detail
    else:
        assert proc.returncode == want, f"exit {proc.returncode}, expected {want}" + detail
    out_expected = script.with_suffix(".stdout.expected")
    if out_expected.exists():
        want_lines = sorted(out_expected.read_text().splitlines())
        got_lines = sorted(proc.stdout.splitlines())
        assert got_lines == want_lines, "stdout differs" + detail
    file_expected = script.with_suffix(".out.expected")
    if file_expected.exists():
        produced = work / f"{name}.out"
        assert produced.exists(), f"{name}.out was not produced" + detail
        assert produced.read_text() == file_expected.read_text(), f"{name}.out differs" + detail
    res = run_check_sh(script, work) if checked is RUN_CHECK_NOW else checked
    if res is not None:
        assert isinstance(res, subprocess.CompletedProcess)
        assert res.returncode == 0, f"{name}.check.sh failed:\n{res.stdout}{res.stderr}" + detail


def selected_params(request, name: str, module: str) -> list:
    """The values of parameter ``name`` of the tests of file ``module`` this session will
    run (after -k and node-id selection), so a session fixture starts only what is asked
    for.  Only that file's: another file's test with a parameter of the same name (the
    SSH cases) would otherwise be run here too, and its later future would stand for
    this file's case of that name, which then waited for the whole queue."""
    return [item.callspec.params[name] for item in request.session.items
            if str(item.path) == module
            and getattr(item, "callspec", None) is not None and name in item.callspec.params]


def start_all(run: Callable[..., object], jobs: Iterable[tuple], workers: int
              ) -> tuple[ThreadPoolExecutor, dict[tuple, Future]]:
    """Submit ``run(*job)`` for every job to a pool of ``workers`` threads: each run is a
    subprocess that mostly waits, so many overlap; each test then takes its own result."""
    pool = ThreadPoolExecutor(max_workers=workers)
    return pool, {job: pool.submit(run, *job) for job in jobs}
