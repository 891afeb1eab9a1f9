"""A WAITING event says itself whether its wait is the normal state of a busy run
(``expected``, set by whoever emits it); the console ticker decides by that field alone:
an expected wait is printed once it has lasted, any other at once, whatever its reason
code.  The field survives the log: written, read back, it says the same."""

from __future__ import annotations

import io
import time

import pytest

from swiftnb.events import Event, EventBus
from swiftnb.logs.reader import parse_text, to_events
from swiftnb.logs.ticker import ProgressTicker
from swiftnb.logs.writer import format_message
from swiftnb.scheduling.waiting import THROTTLE_FULL, SiteWaits, Waiting, emit_waiting, is_expected

pytestmark = pytest.mark.timeout(30)


def _printed(out: io.StringIO) -> list[str]:
    return [line for line in out.getvalue().splitlines() if line.startswith("Waiting:")]


def test_the_ticker_delays_by_the_field_not_by_the_reason_code():
    bus = EventBus()
    out = io.StringIO()
    ticker = ProgressTicker(bus, stream=out, log=False, force_every=0.2)
    # an expected wait of any reason waits its turn; an unexpected throttle-full does not
    emit_waiting(bus, "queue", "c1", "c1", Waiting("slots-full", "busy", expected=True))
    emit_waiting(bus, "site", "s1", "s1", Waiting(THROTTLE_FULL, "stuck", expected=False))
    assert _printed(out) == ["Waiting: site s1 waits: throttle-full - stuck"]
    time.sleep(0.25)
    ticker.tick()
    assert _printed(out) == ["Waiting: site s1 waits: throttle-full - stuck",
                             "Waiting: queue c1 waits: slots-full - busy"]
    ticker.stop(final=False)


def test_a_full_throttle_is_emitted_as_expected():
    bus = EventBus()
    events: list[Event] = []
    bus.subscribe(events.append)
    waits = SiteWaits(bus)
    waits.full("local", 2)
    waits.clear("local")
    assert [(e.fields["reason"], e.fields["expected"]) for e in events] == [
        (THROTTLE_FULL, True), ("", False)]


@pytest.mark.parametrize("expected", [True, False])
def test_the_field_survives_the_log(expected):
    event = Event(1.0, "WAITING", {"subject": "block", "id": "b1", "site": "slurm",
                                    "reason": "Priority", "lrm": "slurm", "job": "42",
                                    "expected": expected, "detail": "jobs ahead of it"})
    level, logger, message = format_message(event)
    assert f"expected={str(expected).lower()} detail=jobs ahead of it" in message
    line = f"2026-11-29 07:00:00,000+0000 {level} {logger} {message}\n"
    [read] = to_events(parse_text(line))
    assert read.fields["detail"] == "jobs ahead of it"
    assert read.fields["job"] == "42"
    assert is_expected(read.fields) is expected


def test_a_log_written_before_the_field_reads_as_not_expected():
    line = ("2026-11-29 07:00:00,000+0000 INFO  swift WAITING subject=site id=local "
            "site=local reason=throttle-full detail=site local runs its limit\n")
    [read] = to_events(parse_text(line))
    assert read.fields["detail"] == "site local runs its limit"
    assert not is_expected(read.fields)
