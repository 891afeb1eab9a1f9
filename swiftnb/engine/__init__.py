"""Runs a checked Swift program on asyncio: dataflow values, statements, procedures, built-ins, mappers.

Public API (``from swiftnb.engine import Run, RunSettings, RunOutcome``)::

    run = Run(checked_program, executor, bus=bus, settings=RunSettings(...),
              base_dir=".", run_dir="run001", runid="run001", restart=None, stdout=sys.stdout)
    outcome = await run.execute()     # inside the caller's running loop
    outcome.ok, outcome.errors, outcome.exit_code   # exit_code: 0, 1, 2 or 99 (hang)
    run.values                        # top-level variables as plain Python
    run.cancel()

Modules: ``values`` (cells, arrays, structs, files, the callback trampoline),
``compiler`` (AST -> closures), ``interp`` (statements), ``procedures`` (calls, apps),
``run`` (the Run API, errors, retries, restart, hang detection), ``pgraph``.
"""


def __getattr__(name: str):
    # lazy, so that importing swiftnb.engine.task stays cheap for the scheduler
    if name in ("Run", "RunSettings", "RunOutcome"):
        from swiftnb.engine import run as _run

        return getattr(_run, name)
    raise AttributeError(name)
