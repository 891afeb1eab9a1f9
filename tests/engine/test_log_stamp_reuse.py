"""The log writer's time stamp (logs/writer.py ``_Stamp``), which a busy run asks for on
every line and which reuses the last one while the time stays inside its millisecond:
every stamp must be what the plain formula gives, at the millisecond's edges (exact
halves, which round() takes to the even side), across seconds and back in time."""

from __future__ import annotations

import random
import time

from swiftnb.logs.writer import _Stamp


def _reference(t: float) -> str:
    millis = int(round(t * 1000.0))
    sec, ms = divmod(millis, 1000)
    return f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(sec))},{ms:03d}+0000"


def test_stamps_are_the_formulas_inside_at_the_edges_and_out_of_order() -> None:
    rng = random.Random(30)
    base = 1795935291.0
    times = [base + k / 1000.0 for k in range(3000)]          # each millisecond
    times += [base + (k + 0.5) / 1000.0 for k in range(2000)]  # its edges
    times += [(2 * k + 1) / 2000.0 for k in range(2000)]       # exact halves near 0
    times += [base + rng.uniform(0, 5) for _ in range(20000)]  # anywhere, any order
    walk = base
    for _ in range(20000):                                     # a run's lines: mostly forward
        walk += rng.choice((0.0, 0.0, 0.0001, 0.0004999, 0.0005, 0.0005001, 0.3, -0.002))
        times.append(walk)
    stamp = _Stamp()
    wrong = [(t, stamp(t), _reference(t)) for t in times if stamp(t) != _reference(t)]
    assert wrong == []
