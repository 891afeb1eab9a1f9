"""The call gate (engine/callgate.py): a foreach stops starting iterations while the
executor holds many more calls than it has slots, and every iteration still runs, also
when iterations wait on each other.  Real subprocesses (engine_support's executor); the
gate's thresholds made small so that a few hundred calls cross them."""

from __future__ import annotations

import functools

import pytest

from swiftnb.engine import run as run_module
from swiftnb.engine.callgate import CallGate
from swiftnb.engine.task import Task, TaskResult

from engine_support import SubprocessTestExecutor

SLOTS = 2
HOLD = 8
REOPEN = 4


class CountingExecutor(SubprocessTestExecutor):
    """engine_support's executor with a capacity, counting the calls inside ``submit``
    (waiting for a slot or running) at their most."""

    def __init__(self, slots: int) -> None:
        super().__init__(max_parallel=slots)
        self.slots = slots
        self.inside = 0
        self.most_inside = 0

    def capacity(self) -> float:
        return float(self.slots)

    async def submit(self, task: Task) -> TaskResult:
        self.inside += 1
        self.most_inside = max(self.most_inside, self.inside)
        try:
            return await super().submit(task)
        finally:
            self.inside -= 1


@pytest.fixture
def small_gate(monkeypatch):
    monkeypatch.setattr(run_module, "CallGate",
                        functools.partial(CallGate, hold_above=HOLD, reopen_above=REOPEN))


BAG = """type file;
app (file o) echo (int i) { echo i stdout=@filename(o); }
file f[] <simple_mapper; prefix="out/f", suffix=".txt">;
foreach i in [1:200] { f[i] = echo(i); }
"""


def test_a_foreach_waits_while_the_executor_is_full(swift, tmp_path, small_gate) -> None:
    ex = CountingExecutor(SLOTS)
    r = swift(BAG, executor=ex, timeout=120)
    assert r.outcome.ok, r.outcome.errors
    assert len(ex.tasks) == 200
    for i in range(1, 201):
        assert (tmp_path / "out" / f"f{i:04d}.txt").read_text() == f"{i}\n"
    # held at SLOTS + HOLD calls in the executor (without the gate: all 200 at once)
    assert SLOTS + REOPEN <= ex.most_inside <= SLOTS + HOLD
    assert not r.run.gate.holding and r.run.active == 0


def test_without_a_gate_every_iteration_reaches_the_executor(swift, small_gate) -> None:
    """The counter above can see the difference: an executor of unlimited capacity
    gets every call of the foreach at once."""
    ex = CountingExecutor(SLOTS)
    ex.capacity = lambda: float("inf")  # type: ignore[method-assign]
    r = swift(BAG, executor=ex, timeout=120)
    assert r.outcome.ok, r.outcome.errors
    assert ex.most_inside == 200


CHAIN_BACKWARDS = """type file;
app (file o) echo (int i) { echo i stdout=@filename(o); }
app (file o) cat (file a, int i) { cat @filename(a) stdout=@filename(o); }
file f[] <simple_mapper; prefix="out/c", suffix=".txt">;
foreach i in [0:60] {
    if (i == 60) { f[i] = echo(i); } else { f[i] = cat(f[i + 1], i); }
}
"""


def test_iterations_waiting_on_later_ones_all_run(swift, tmp_path, small_gate) -> None:
    """Each iteration waits on the next one's file, only the last runs at once: the
    iterations waiting for inputs are not in the executor, so they never hold the gate."""
    ex = CountingExecutor(1)
    r = swift(CHAIN_BACKWARDS, executor=ex, timeout=120)
    assert r.outcome.ok, r.outcome.errors
    assert (tmp_path / "out" / "c0000.txt").read_text() == "60\n"
    assert len(ex.tasks) == 61


NESTED = """type file;
app (file o) echo (int i, int j) { echo i j stdout=@filename(o); }
file f[][] <simple_mapper; prefix="out/n", suffix=".txt">;
foreach i in [0:9] {
    foreach j in [0:19] { f[i][j] = echo(i, j); }
}
"""


def test_nested_loops_are_held_and_all_resume(swift, tmp_path, small_gate) -> None:
    ex = CountingExecutor(SLOTS)
    r = swift(NESTED, executor=ex, timeout=120)
    assert r.outcome.ok, r.outcome.errors
    assert len(ex.tasks) == 200
    assert ex.most_inside <= SLOTS + HOLD
    made = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert len(made) == 200


SELF_FEEDING = """type file;
app (file o) echo (int i) { echo i stdout=@filename(o); }
int a[];
a[0] = 0;
file f[] <simple_mapper; prefix="out/s", suffix=".txt">;
foreach v, i in a {
    f[i] = echo(v);
    if (i < 120) { a[i + 1] = v + 1; }
}
"""


def test_a_loop_feeding_its_own_array_is_held_and_closes(swift, tmp_path, small_gate) -> None:
    """The foreach writes the array it iterates: held with keys waiting, it still lets
    the array close once every key has started, and the run ends."""
    ex = CountingExecutor(SLOTS)
    r = swift(SELF_FEEDING, executor=ex, timeout=120)
    assert r.outcome.ok, r.outcome.errors
    assert len(ex.tasks) == 121
    assert (tmp_path / "out" / "s0120.txt").read_text() == "120\n"
    assert ex.most_inside <= SLOTS + HOLD
