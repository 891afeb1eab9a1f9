"""How values read for people, wherever they are shown (the notebook's panels, the
terminal and web monitors): numbers, times, spans, rates.  Free of any display library,
so that a monitor imports it without loading ipywidgets."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import SupportsFloat

__all__ = ["fmt", "cell", "when", "duration", "num", "rate_eta", "run_time", "progress_parts",
           "last_lines", "EPOCH_2001"]

#: times below this are run-relative (a simulated grid's virtual clock), not epoch seconds
EPOCH_2001 = 978307200.0


def fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "off"
        return f"{value:.2f}"
    return str(value)


def cell(value: object) -> object:
    """A table cell of the monitors: whole numbers as ints, others to two decimals,
    infinity (a saturated score, a throttle that is off) as ∞, nothing blank."""
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isinf(value):
            return "∞"
        return int(value) if value.is_integer() else round(value, 2)
    return value


def when(t: float | None, *, day: bool = True) -> str:
    """A time as people read it: a local date and time for wall-clock seconds, ``t=12.5 s``
    for a virtual clock (a simulated grid starts at 0), never a bare epoch float."""
    if t is None or t != t:
        return ""
    if t < EPOCH_2001:
        return f"t={t:.1f} s"
    stamp = time.localtime(t)
    return time.strftime("%Y-%m-%d %H:%M:%S" if day else "%H:%M:%S", stamp)


def duration(seconds: float | None) -> str:
    """``1 h 02 min``, ``3 min 05 s``, ``4.2 s``: a span without float noise."""
    if seconds is None or seconds != seconds or math.isinf(seconds):
        return ""
    s = max(0.0, seconds)
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def num(value: object, default: float | None = None) -> float | None:
    """A number from an event's field or a snapshot (text or a number), else ``default``."""
    if not isinstance(value, (str, SupportsFloat)):
        return default
    try:
        return float(value)
    except ValueError:
        return default


def last_lines(text: str | None, lines: int = 6) -> str:
    """The end of an app's stderr as a failure shows it: its last ``lines`` lines."""
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


def rate_eta(done: int, known: int, elapsed: float) -> tuple[float | None, float | None]:
    """Calls per second and seconds left (None when there is nothing to tell yet)."""
    if elapsed <= 0 or done <= 0:
        return None, None
    rate = done / elapsed
    left = known - done
    return rate, (left / rate if left > 0 else 0.0)


def run_time(t0: float | None, last: float | None, ended_at: float | None,
             clock: Callable[[], float] | None) -> float:
    """A run's time so far from its first event ``t0``: to its end once it ended, to the
    clock's now while it goes (a live run), else to its ``last`` event (a log)."""
    if t0 is None:
        return 0.0
    if ended_at is not None:
        end = ended_at
    elif clock is not None:
        end = clock()
    else:
        end = last if last is not None else t0
    return max(0.0, end - t0)


def progress_parts(done: int, known: int, cached: int, failed: int, elapsed: float,
                   rate: float | None, eta: float | None,
                   ended: bool) -> tuple[str, str, list[str]]:
    """The headline of a run's progress, in parts a panel styles and joins: the count
    ``37 of 120 done``, its notes `` (5 cached, 2 failed)`` (or nothing), then
    ``elapsed 1 min 05 s``, ``0.57/s``, ``ETA 25 s`` (``finished`` once it ended)."""
    notes = [f"{n} {what}" for n, what in ((cached, "cached"), (failed, "failed")) if n]
    rest = [f"elapsed {duration(elapsed)}"]
    if rate is not None:
        rest.append(f"{rate:.3g}/s")
    if ended:
        rest.append("finished")
    else:
        rest.append(f"ETA {duration(eta)}" if eta is not None else "ETA unknown")
    return (f"{done} of {known} done", f" ({', '.join(notes)})" if notes else "", rest)
