"""The four real AIMES Stampede logs the what-if tests calibrate on (tests/data/aimes),
by task count, and the examples' folder of all 32 runs."""

from __future__ import annotations

import os

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
DATA = os.path.join(ROOT, "tests", "data", "aimes")
EXAMPLE = os.path.join(ROOT, "examples", "aimes")
RUNS = {n: os.path.join(DATA, f"stampede-exp-0{e}", "swift.log.bz2")
        for n, e in ((32, 17), (256, 18), (2048, 19), (8, 20))}
