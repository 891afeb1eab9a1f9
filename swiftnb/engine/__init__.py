"""Runs a checked Swift program on asyncio: dataflow values, statements, procedures, built-ins, mappers."""


def __getattr__(name: str):
    # lazy, so that importing swiftnb.engine.task stays cheap for the scheduler
    if name in ("Run", "RunSettings", "RunOutcome"):
        from swiftnb.engine import run as _run

        return getattr(_run, name)
    raise AttributeError(name)
