"""A run's handle keeps its events for the notebook (``event_list``, ``events``,
``timings``) unless told not to, as ``swiftnb run`` does: its log has them, and in
memory they grow with every app call."""

from __future__ import annotations

import asyncio

import pytest

from swiftnb.runner import start_run

pytestmark = pytest.mark.timeout(60)

SCRIPT = """type file;
app (file o) echo (int i) {
  echo i stdout=@o;
}
file f[] <simple_mapper; prefix="f", suffix=".txt">;
foreach i in [1:3] {
  f[i] = echo(i);
}
"""


def _run(tmp_path, **kwargs):
    async def main():
        handle = start_run(SCRIPT, base_dir=str(tmp_path), **kwargs)
        await handle
        return handle

    return asyncio.run(main())


def test_events_are_kept_by_default(tmp_path):
    handle = _run(tmp_path)
    assert handle.ok
    starts = [e for e in handle.event_list if e.kind == "JOB_START"]
    assert len(starts) == 3
    assert len(handle.events) == len(handle.event_list) > 3


def test_keep_events_false_keeps_none_but_the_log_has_them(tmp_path):
    handle = _run(tmp_path, keep_events=False)
    assert handle.ok
    assert [(tmp_path / f"f{i:04d}.txt").read_text() for i in (1, 2, 3)] == ["1\n", "2\n", "3\n"]
    assert handle.event_list == []
    log = open(handle.run_dir.log_file, encoding="utf-8").read()
    assert log.count(" JOB_START ") == 3 and log.count(" JOB_END ") == 3
