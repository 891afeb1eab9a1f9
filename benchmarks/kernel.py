"""The Swift kernel's cost per cell: checking a cell against a session that has grown.

Every cell is checked together with the declarations of all earlier cells (the prelude),
so the check of a small cell grows with the notebook.  This prints the time to check one
small cell after 10, 100 and 400 earlier cells (each declaring an app and two variables
with values), against the baseline of checking the same cell alone with
``lang.compile_source`` in the same run, and the ratio.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from swiftnb import lang  # noqa: E402
from swiftnb.engine import values as V  # noqa: E402
from swiftnb.kernel.session import SwiftSession, VarEntry, top_declared  # noqa: E402

CELL = 'type file;\napp (file o) cat(file i) { cat @i stdout=@o; }\nint a = 1;\ntrace(a + 1);\n'


def best(fn, n: int = 20) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def grown(cells: int, base: str) -> SwiftSession:
    """A session after ``cells`` cells, with their values as a run would leave them."""
    s = SwiftSession(base)
    for i in range(cells):
        cell = s.compile_cell(f"type file;\napp (file o) app{i}(string s) {{ echo s stdout=@o; }}\n"
                              f"int v{i} = {i};\nstring w{i} = \"x\";\n")
        s.commit(cell)
        decls = dict(top_declared(cell.cell_ast))
        s.vars[f"v{i}"] = VarEntry(f"v{i}", decls[f"v{i}"], V.closed_cell(i))
        s.vars[f"w{i}"] = VarEntry(f"w{i}", decls[f"w{i}"], V.closed_cell("x"))
    return s


def main() -> None:
    base = tempfile.mkdtemp(prefix="swiftnb-bench-kernel-")
    baseline = best(lambda: lang.compile_source(CELL, "cell", base))
    print(f"baseline: compile_source of one small cell: {baseline * 1e3:.2f} ms")
    for cells in (10, 100, 400):
        s = grown(cells, base)
        t = best(lambda: s.compile_cell(CELL), n=10)
        print(f"after {cells:4d} cells ({len(s.procs)} procedures, {len(s.vars)} values): "
              f"{t * 1e3:.2f} ms per cell check, ratio {t / baseline:.1f}x")


if __name__ == "__main__":
    main()
