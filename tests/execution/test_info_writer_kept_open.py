"""The background ``-info`` writer keeps the run's records file open from its first batch
to ``close()`` (one open per run, not one per batch), closes it there, and a batch it
cannot write is said once and leaves no descriptor behind."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from swiftnb.events import Event, EventBus
from swiftnb.execution.joblog import RECORDS_FILE, InfoWriter, records

pytestmark = pytest.mark.timeout(60)

SPEC = {"site_run": "wf-run001", "site": "local", "executable": "echo"}


def _descriptors_on(path: Path) -> int:
    """How many of this process's descriptors are open on ``path``."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == str(path):
                count += 1
        except OSError:  # the descriptor listdir itself used, closed by now
            pass
    return count


def _wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + 20
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_one_descriptor_serves_every_batch_until_close(tmp_path):
    writer = InfoWriter(background=True)
    path = tmp_path / "wf-run001.d" / RECORDS_FILE
    writer.write(str(tmp_path), {**SPEC, "jobid": "echo-1"}, {"exit_code": 0})
    _wait_for(lambda: path.exists() and b"echo-1" in path.read_bytes(), "first batch")
    assert _descriptors_on(path) == 1
    writer.write(str(tmp_path), {**SPEC, "jobid": "echo-2"}, {"exit_code": 0})
    _wait_for(lambda: b"echo-2" in path.read_bytes(), "second batch")
    assert _descriptors_on(path) == 1       # the same one: not opened again
    writer.close()
    assert _descriptors_on(path) == 0
    assert [name for name, _ in records(str(path))] == ["echo-1", "echo-2"]
    # a provider started again writes on after its close
    writer.write(str(tmp_path), {**SPEC, "jobid": "echo-3"}, {"exit_code": 1})
    writer.close()
    assert [name for name, _ in records(str(path))] == ["echo-1", "echo-2", "echo-3"]
    assert _descriptors_on(path) == 0


def test_a_batch_that_cannot_be_written_is_said_once_and_closes_its_file(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full to fill")
    info_dir = tmp_path / "wf-run001.d"
    info_dir.mkdir()
    (info_dir / RECORDS_FILE).symlink_to("/dev/full")  # every write: ENOSPC
    bus = EventBus()
    said: list[Event] = []
    bus.subscribe(said.append)
    writer = InfoWriter(background=True, bus=bus)
    writer.write(str(tmp_path), {**SPEC, "jobid": "echo-1"}, {"exit_code": 0})
    time.sleep(3 * InfoWriter.BATCH_SECONDS)
    writer.write(str(tmp_path), {**SPEC, "jobid": "echo-2"}, {"exit_code": 0})
    writer.close()
    lost = [e for e in said if e.kind == "RECORDS_LOST"]
    assert len(lost) == 1 and RECORDS_FILE in (lost[0].text or "")
    assert _descriptors_on(Path("/dev/full")) == 0
