"""Helpers for running scripts in-process through the engine."""

from __future__ import annotations

import asyncio
import io
import sys
from dataclasses import dataclass, field
from typing import Any

import pytest

from swiftnb.engine.run import Run, RunOutcome, RunSettings
from swiftnb.events import EventBus
from swiftnb.lang.parser import parse

from engine_support import RecordingRestartLog, SubprocessTestExecutor  # noqa: F401


@dataclass
class Result:
    outcome: RunOutcome
    stdout: str
    run: Run
    events: list = field(default_factory=list)
    executor: Any = None

    @property
    def lines(self) -> list[str]:
        return self.stdout.splitlines()


@pytest.fixture
def swift(tmp_path):
    """swift(src, **settings) -> Result: runs a script in tmp_path."""

    def run(src: str, executor: Any = None, restart: Any = None, timeout: float = 20,
            **settings: Any) -> Result:
        program = parse(src, "test.swift")
        out = io.StringIO()
        bus = EventBus()
        events: list = []
        bus.subscribe(events.append)
        ex = executor or SubprocessTestExecutor()

        async def main() -> Result:
            r = Run(program, ex, bus=bus, settings=RunSettings(**settings),
                    base_dir=str(tmp_path), run_dir=str(tmp_path / "run001"), runid="run001",
                    restart=restart, stdout=out)
            outcome = await asyncio.wait_for(r.execute(), timeout)
            return Result(outcome, out.getvalue(), r, events, ex)

        old_err = sys.stderr
        sys.stderr = io.StringIO()
        try:
            return asyncio.run(main())
        finally:
            sys.stderr = old_err

    return run
