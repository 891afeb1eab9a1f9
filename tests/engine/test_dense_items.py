"""Arrays keyed 0, 1, 2, ... are stored by position (DenseItems) and switch to a dict at
the first key out of order; either way they read alike, and scripts print the same."""

from __future__ import annotations

from array import array

import pytest

from swiftnb.engine.denseitems import DenseItems
from swiftnb.engine.values import ArrayNode, SwiftError, TypeInfo

INT = TypeInfo("int", "prim")
INTS = TypeInfo("int[]", "array", elem=INT)
STRINGS = TypeInfo("string[]", "array", elem=TypeInfo("string", "prim"))


def test_dense_items_read_like_the_dict_they_replace() -> None:
    d = DenseItems()
    for v in ("a", "b", "c"):
        d.append(v)
    as_dict = {0: "a", 1: "b", 2: "c"}
    assert list(d) == list(as_dict) and len(d) == 3
    assert list(d.items()) == list(as_dict.items())
    assert list(d.values()) == list(as_dict.values())
    for key in (0, 2, 1.0, True, 3, -1, "1", 2.5, None):
        assert d.get(key) == as_dict.get(key), key
        assert (key in d) == (key in as_dict), key
    with pytest.raises(KeyError):
        d[3]  # noqa: B018 - the lookup is the test
    assert d.to_dict() == as_dict


def test_an_int_array_keeps_machine_words_until_a_node_arrives() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    for i in range(5):
        arr.set_value(i, i * 7)
    items = arr.items
    assert isinstance(items, DenseItems) and isinstance(items.vals, array)
    cell = arr.element(5)  # an element still to be computed: a node among the ints
    assert isinstance(items.vals, list) and items.vals[:5] == [0, 7, 14, 21, 28]
    cell.set(35)
    arr.remove_writer()
    assert arr.closed and [arr.lookup(k) for k in range(5)] == [0, 7, 14, 21, 28]
    assert arr.lookup(5) is cell and cell.value == 35


def test_a_key_out_of_order_switches_to_a_dict_in_arrival_order() -> None:
    arr = ArrayNode(STRINGS, "s")
    arr.add_writer()
    seen: list[int] = []
    arr.subscribe(lambda k, _n: seen.append(k))
    arr.set_value(0, "x")
    arr.set_value(1, "y")
    arr.set_value(5, "z")
    arr.set_value(2, "w")
    assert isinstance(arr.items, dict) and list(arr.items) == [0, 1, 5, 2]
    assert seen == [0, 1, 5, 2] and arr.sorted_keys() == [0, 1, 2, 5]
    with pytest.raises(SwiftError, match="written to twice"):
        arr.set_value(1, "again")
    arr.remove_writer()
    with pytest.raises(SwiftError, match="Invalid index"):
        arr.lookup(3)


def test_writing_a_dense_key_twice_or_after_closing_is_refused() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    arr.set_value(0, 1)
    with pytest.raises(SwiftError, match="written to twice"):
        arr.set_value(0, 2)
    arr.remove_writer()
    with pytest.raises(SwiftError, match="closed"):
        arr.set_value(1, 2)
    with pytest.raises(SwiftError, match="written to twice"):
        arr.element(0)


def test_a_reader_waiting_for_a_dense_key_wakes_when_it_arrives() -> None:
    arr = ArrayNode(INTS, "a")
    arr.add_writer()
    got: list[int] = []
    arr.wait_key(1, lambda: got.append(arr.lookup(1)))
    arr.set_value(0, 10)
    assert got == []
    arr.set_value(1, 11)
    assert got == [11]


def test_scripts_print_the_same_whatever_the_storage(swift) -> None:
    r = swift("""
int c[];
foreach i in [0:5] { c[i] = i * 3; }
c[9] = 1;
int e[];
foreach v, k in c { e[k] = v + 1; }
float g[];
foreach i in [0:2] { g[i] = i; }
string s[];
foreach i in [0:2] { s[i] = strcat("s", toString(i)); }
int big[];
foreach i in [0:99999] { big[i] = i; }
int rev[];
foreach j in [0:99999] { rev[j] = big[99999 - j]; }
trace(c, length(c), sum(e), g, s, rev[0], rev[99999], length(rev), sum(rev));
""")
    assert r.outcome.ok, r.outcome.errors
    assert r.lines == [
        "SwiftScript trace: {0 = 0, 1 = 3, 2 = 6, 3 = 9, 4 = 12, 5 = 15, 9 = 1}, 7, 53, "
        "{0 = 0.0, 1 = 1.0, 2 = 2.0}, {0 = s0, 1 = s1, 2 = s2}, 99999, 0, 100000, 4999950000",
    ]
