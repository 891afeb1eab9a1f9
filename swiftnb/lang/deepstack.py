"""Run a tree walk on a stack as deep as the program it walks.

The checker and the compiler are recursive over the syntax tree, as lark's and CPython's
own passes are: that keeps each construct's rule in one readable function.  A program
may nest an expression or a block thousands of levels deep (a generated 5,000-term sum,
5,000 nested ``if``), which is valid Swift and must compile.  So those passes run here:
in a helper thread whose C stack is large (reserved address space; only the pages the
walk touches are used) and whose recursion limit is raised for the duration.  What is
deeper still ends in :class:`TooDeep`, which callers turn into a located error: never a
``RecursionError`` and never a C stack overflow.

Run time does not use this: the engine keeps its stack flat by itself (statements and
completions past a fixed nesting go through the trampoline, and long expressions are
split into hidden statements when compiled).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from swiftnb.errors import SwiftnbError

R = TypeVar("R")

#: Python frames allowed during a walk: about 30 per nesting level for the deepest
#: constructs, so programs nested some 30,000 levels deep still compile.
RECURSION_LIMIT = 1_000_000
#: Bytes of C stack for the walking thread (reserved, committed only as used).
STACK_BYTES = 1 << 30
#: Smaller stacks to try when the address space is limited (ulimit -v).
_FALLBACK_STACKS = (256 << 20, 64 << 20)

_lock = threading.Lock()  # the recursion limit is per interpreter: one deep walk at a time


class TooDeep(SwiftnbError):
    """The program nests deeper than even the deep stack allows."""


def run_deep(fn: Callable[[], R]) -> R:
    """``fn()`` on a deep stack; its exception, if any, is raised here.

    A ``RecursionError`` becomes :class:`TooDeep`.  Nested calls (a walk that starts
    another walk) run inline on the stack they already have."""
    if threading.current_thread().name == _THREAD_NAME:
        return _guarded(fn)
    box: list = []

    def body() -> None:
        try:
            box.append((True, _guarded(fn)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box.append((False, exc))

    with _lock:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        try:
            thread = _start(body)
            if thread is not None:
                thread.join()
        finally:
            sys.setrecursionlimit(limit)
    if thread is None:  # no thread could be made: walk here, at the usual depth
        return _guarded(fn)
    ok, value = box[0]
    if ok:
        return value
    raise value


_THREAD_NAME = "swiftnb-deep-walk"


def _guarded(fn: Callable[[], R]) -> R:
    try:
        return fn()
    except RecursionError:
        raise TooDeep() from None


def _start(body: Callable[[], None]) -> threading.Thread | None:
    """Start ``body`` in a thread with the largest stack the system grants."""
    for size in (STACK_BYTES, *_FALLBACK_STACKS):
        try:
            old = threading.stack_size(size)
        except (ValueError, RuntimeError):
            continue
        try:
            thread = threading.Thread(target=body, name=_THREAD_NAME, daemon=True)
            thread.start()
            return thread
        except RuntimeError:  # "can't start new thread": the reservation was refused
            continue
        finally:
            threading.stack_size(old)
    return None
