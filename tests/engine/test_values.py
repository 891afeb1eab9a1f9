"""Dataflow values: cells, monotonic arrays, structs, failure propagation, trampoline."""

from __future__ import annotations

import pytest

from swiftnb.engine import values as V
from swiftnb.engine.values import ArrayNode, Cell, StructNode, SwiftError, TypeInfo

INT = TypeInfo("int", "prim")
INTS = TypeInfo("int[]", "array", elem=INT)


def test_cell_callbacks_run_once_after_set() -> None:
    c = Cell("x")
    seen: list[int] = []
    c.when_closed(lambda: seen.append(c.value))
    assert seen == []
    c.set(5)
    assert seen == [5]
    c.when_closed(lambda: seen.append(-1))  # already closed: runs at once
    assert seen == [5, -1]


def test_cell_is_single_assignment() -> None:
    c = Cell("x")
    c.set(1)
    with pytest.raises(SwiftError, match="written to twice"):
        c.set(2)


def test_long_dependency_chain_does_not_recurse() -> None:
    cells = [Cell("c") for _ in range(50_000)]
    for a, b in zip(cells, cells[1:]):
        a.when_closed(lambda a=a, b=b: b.set(a.value + 1))
    cells[0].set(0)
    assert cells[-1].value == 49_999


def test_array_closes_when_writers_finish_and_announces_keys() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer(2)
    keys: list[int] = []
    closed: list[bool] = []
    arr.subscribe(lambda k, n: keys.append(k))
    arr.when_keys_closed(lambda: closed.append(True))
    arr.set_value(3, 30)
    arr.remove_writer()
    assert keys == [3] and not closed and not arr.closed
    arr.set_value(1, 10)
    arr.remove_writer()
    assert closed == [True] and arr.closed and arr.state == V.CLOSED
    assert arr.sorted_keys() == [1, 3]


def test_deep_closure_waits_for_open_elements() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    el = arr.element(0)
    arr.remove_writer()
    assert arr.closed and arr.state == V.OPEN  # keys final, element still open
    el.set(7)
    assert arr.state == V.CLOSED


def test_reading_missing_key_waits_then_fails_when_closed() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    with pytest.raises(V.NotReady) as info:
        arr.lookup(4)
    fired: list[int] = []
    info.value.wait(lambda: fired.append(1))
    arr.set_value(4, 1)
    assert fired == [1]
    arr.remove_writer()
    assert fired == [1]  # fired once, not again at closing
    with pytest.raises(SwiftError, match=r"Invalid index \[9\] for a"):
        arr.lookup(9)


def test_failed_element_fails_the_array_for_whole_value_readers() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    el = arr.element(0)
    el.fail(SwiftError("boom"))
    assert arr.state == V.FAILED
    with pytest.raises(V.Failed):
        V.deep_ready(arr)


def test_struct_members_are_independent() -> None:
    st_type = TypeInfo("S", "struct", fields={"a": INT, "b": INT})
    s = StructNode(st_type, "s")
    s.add_writer()
    s.fields["a"].set(1)
    assert s.fields["a"].value == 1 and s.state == V.OPEN
    s.fields["b"].set(2)
    s.remove_writer()
    assert s.state == V.CLOSED
    assert V.to_python(s) == {"a": 1, "b": 2}


def test_auto_array_append_keys() -> None:
    arr = ArrayNode(TypeInfo("int[auto]", "array", elem=INT, keytype="auto"), "q")
    arr.add_writer()
    for v in (5, 6, 7):
        arr.append(v)
    arr.remove_writer()
    assert V.to_python(arr) == {0: 5, 1: 6, 2: 7}
