"""The items of an array whose keys are 0, 1, 2, ... (or k, k + 1, k + 2, ...: ``[1:n]``
is as usual as ``[0:n]``) in the order they arrived.

That is the usual array: ``foreach i in [0:n] { a[i] = ...; }`` or one that reads
another array in key order.  A dict of two million entries takes some 80 MB for its
hash table and another 56 MB for its key objects; a list takes 16 MB and no keys.  An
``int[]`` whose elements are all plain ints keeps them in an ``array('q')``: 8 bytes
each instead of a pointer and a 28-byte int object (the ints are made again as they are
read); the first element that does not fit (a node, an int past 64 bits) turns that
into a list.
:class:`~swiftnb.engine.values.ArrayNode` starts every array with these and switches
to a dict the first time a key arrives that is not the next one (a gap, a string, a
boolean, a key out of order), so iteration order (insertion order) is the same either
way and the switch is invisible to readers: :class:`DenseItems` reads like that dict.
An array whose first key is another int ``k`` keeps its items in :class:`OffsetItems`
(keys from ``k``); the engine's fast paths take only :class:`DenseItems` itself.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableSequence
from typing import Any

_MISSING: Any = object()


class DenseItems:
    """Array items keyed 0..len-1, stored by position; a dict's read interface."""

    __slots__ = ("vals",)

    #: the first key (an :class:`OffsetItems` has another)
    first = 0

    def __init__(self, ints: bool = False) -> None:
        #: element i: a node, or the plain value of a closed primitive element; for
        #: ``ints`` (an ``int[]``) plain ints in machine words until one does not fit
        self.vals: MutableSequence[Any] = array("q") if ints else []

    def append(self, item: Any) -> None:
        """Add the next element (the key ``len(self)``)."""
        vals = self.vals
        if vals.__class__ is list or item.__class__ is int:
            try:
                vals.append(item)
                return
            except OverflowError:
                pass
        self.vals = vals = list(vals)  # a node, or an int wider than 64 bits
        vals.append(item)

    def extend(self, items: list[Any], ints: bool) -> None:
        """Add the next elements (keys from ``len(self)`` on); ``ints``: all of them
        are ints of 32 bits (they stay machine words)."""
        vals = self.vals
        if vals.__class__ is list:
            vals.extend(items)
            return
        if ints:
            try:
                vals.extend(array("q", items))
                return
            except OverflowError:  # a literal past 64 bits: made whole by append
                pass
        for item in items:
            self.append(item)

    def index(self, key: Any) -> int:
        """The position of ``key``, or -1 if no element has it (a dict's rule of key
        equality: ``1``, ``1.0`` and ``True`` are one key)."""
        if key.__class__ is not int:
            try:
                if key != int(key):
                    return -1
            except (TypeError, ValueError, OverflowError):
                return -1
            key = int(key)
        i = key - self.first
        return i if 0 <= i < len(self.vals) else -1

    def next_key(self) -> int:
        """The key that :meth:`append` adds."""
        return self.first + len(self.vals)

    def get(self, key: Any, default: Any = None) -> Any:
        i = self.index(key)
        return self.vals[i] if i >= 0 else default

    def __getitem__(self, key: Any) -> Any:
        i = self.index(key)
        if i < 0:
            raise KeyError(key)
        return self.vals[i]

    def __contains__(self, key: Any) -> bool:
        return self.index(key) >= 0

    def __len__(self) -> int:
        return len(self.vals)

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys())

    def __bool__(self) -> bool:
        return bool(self.vals)

    def keys(self) -> range:
        return range(self.first, self.first + len(self.vals))

    def values(self) -> MutableSequence[Any]:
        return self.vals

    def all_plain(self) -> bool:
        """Whether every element is a plain value for sure (no nodes among them)."""
        return self.vals.__class__ is array

    def items(self) -> Iterator[tuple[int, Any]]:
        return enumerate(self.vals, self.first)

    def to_dict(self) -> dict[Any, Any]:
        """The same items as a dict (the array is about to get a key out of order)."""
        return dict(enumerate(self.vals, self.first))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.vals)} from {self.first})"


class OffsetItems(DenseItems):
    """Array items keyed ``first``, ``first + 1``, ...: an array whose first key was
    not 0 (``foreach i in [1:n] { f[i] = ...; }``)."""

    __slots__ = ("first",)

    def __init__(self, empty: DenseItems, first: int) -> None:
        """Take over ``empty``'s (empty) storage, keys from ``first``."""
        self.vals = empty.vals
        self.first = first
