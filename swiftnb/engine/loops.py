"""The loops: ``foreach`` (over an array as its elements arrive, or a range, at most
``foreach.max.threads`` iterations at once) and ``iterate ... until``, each iteration
a frame of its own.  Statements of the executable tree (see
:mod:`swiftnb.engine.interp`)."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from swiftnb.engine import values as V
from swiftnb.engine.bulkloop import BulkBody, BulkFeed
from swiftnb.engine.denseitems import DenseItems
from swiftnb.engine.runtime import Runtime
from swiftnb.engine.interp import (
    ITER,
    BlockExec,
    Done,
    Exec,
    frame_thread,
    from_plain,
    nested,
)
from swiftnb.engine.values import (
    CLOSED,
    FAILED,
    ArrayNode,
    Cell,
    Failed,
    Node,
    NotReady,
    SwiftError,
)
from swiftnb.lang import ast as A

__all__ = ["ForeachExec", "IterateExec", "range_items"]


class ForeachExec(Exec):
    """``foreach v, k in e``: iterations start as keys arrive, at most
    ``maxForeachThreads`` at a time; done when the array is closed and all are done."""

    __slots__ = ("iterable", "rng", "body", "vslot", "kslot", "self_ref", "bulk")

    def __init__(self, rt: Runtime, pos: A.Pos, body: BlockExec, vslot: int, kslot: int,
                 iterable: Callable | None, rng: tuple | None) -> None:
        Exec.__init__(self, rt, pos)
        self.iterable = iterable
        self.rng = rng
        self.body = body
        self.vslot = vslot
        self.kslot = kslot
        self.self_ref = False
        #: the body as the compiler proved it may run in bulk (engine/bulkloop.py)
        self.bulk: BulkBody | None = None

    self_release = True

    def run(self, f: list, done: Done) -> None:
        try:
            if self.rng is not None:
                start, stop, step = (e(f) if e is not None else None for e in self.rng)
                # a range object only for a loop that may run in bulk (it reads it so)
                ints = int_range(start, stop, step) if self.bulk is not None else None
                src: ArrayNode | RangeItems | range = (
                    ints if ints is not None else range_items(start, stop, step))
            else:
                src = self.iterable(f)  # type: ignore[misc]  # no range: an iterable
                if isinstance(src, dict):
                    src = from_plain(src)
                if not isinstance(src, ArrayNode):
                    if isinstance(src, Node) and src.state == FAILED:
                        raise Failed(src.error)  # type: ignore[arg-type]  # FAILED: its error is set
                    raise SwiftError("foreach needs an array")
        except NotReady as nr:
            nr.wait(lambda: self.run(f, done))
            return
        except Failed as e:
            self.rt.skip_block(self, f, e.error)
            self.release(f)
            done()
            return
        except SwiftError as e:
            self.rt.runtime_error(e, self.pos)
            self.release(f)
            done()
            return
        nested(_ForeachRun(self, f, src, done).start)


#: a range's (key, value) pairs, as a foreach over ``[a:b:c]`` iterates them
RangeItems = Iterator[tuple[int, float]]


def int_range(start: Any, stop: Any, step: Any) -> range | None:
    """A range of ints ``[start:stop:step]`` as a ``range`` (for a bulk run), else None."""
    if step is None:
        step = 1
    if step == 0 or not all(x.__class__ is int for x in (start, stop, step)):
        return None
    return range(start, stop + (1 if step > 0 else -1), step)


def range_items(start: Any, stop: Any, step: Any) -> RangeItems:
    if step is None:
        step = 1
    if step == 0:
        raise SwiftError("range step is 0")
    if all(isinstance(x, int) and not isinstance(x, bool) for x in (start, stop, step)):
        return enumerate(range(start, stop + (1 if step > 0 else -1), step))
    return _float_range(float(start), float(stop), float(step))


def _float_range(start: float, stop: float, step: float) -> RangeItems:
    i = 0
    x = start
    while (step > 0 and x <= stop) or (step < 0 and x >= stop):
        yield i, x
        i += 1
        x = start + i * step


_DRIVE_SLICE = 2000


class _ForeachRun:
    __slots__ = ("st", "f", "src", "done", "running", "queue", "driving", "finished",
                 "closed", "max", "it", "arr", "vslot", "kslot", "body", "others",
                 "released", "arr_held", "self_ref", "count", "thread", "due", "held",
                 "feed", "paused")

    def __init__(self, st: ForeachExec, f: list, src: ArrayNode | RangeItems | range,
                 done: Done) -> None:
        self.st = st
        self.f = f
        self.done = done
        self.running = 0
        self.driving = False
        #: a drive is queued on the trampoline (keys arriving in a burst share it)
        self.due = False
        self.finished = False
        #: waiting for the run's call gate to reopen (engine/callgate.py)
        self.held = False
        #: a slice ended and gave the event loop its turn (``_resume`` is queued there):
        #: an iteration ending meanwhile must not start the next slice itself
        self.paused = False
        self.max = st.rt.max_foreach_threads
        self.vslot = st.vslot
        self.kslot = st.kslot
        self.body = st.body
        self.count = 0
        #: the enclosing thread name when iteration events are logged, else None
        self.thread = f"{frame_thread(f)}-{st.pos.line}" if st.rt.unit_events else None
        #: the iterations run in bulk (engine/bulkloop.py) before the ordinary drive
        self.feed: BulkFeed | None = None
        if isinstance(src, range):
            # only a loop with a bulk body gets one (ForeachExec.run)
            if st.bulk is not None and self.thread is None:
                self.feed = st.bulk.feed(f, src)
            pairs: RangeItems = enumerate(src) if self.feed is None else iter(())
            src = pairs
        if isinstance(src, ArrayNode):
            self.arr: ArrayNode | None = src
            self.it = None
            self.queue: deque = deque()
            self.closed = False
        else:
            self.arr = None
            self.it = src
            self.queue = deque()
            self.closed = True

    def start(self) -> None:
        arr = self.arr
        held = [g(self.f) for g in self.st.holds]
        # a foreach that writes the array it iterates holds that array only while it has
        # keys not yet started (their iterations will hold it themselves)
        self.self_ref = arr is not None and any(n is arr for n in held)
        self.arr_held = self.self_ref
        self.others = [n for n in held if n is not arr] if self.self_ref else held
        self.released = False
        if arr is not None:
            bulk = self.st.bulk
            if (bulk is not None and self.thread is None and arr.closed
                    and isinstance(arr.items, DenseItems)):
                self.feed = bulk.feed(self.f, arr)
            if self.feed is not None:
                # its keys are all there: the feed and the ordinary drive take them
                self.it = iter(())
                self.closed = True
            else:
                arr.subscribe(self._key)
                arr.when_keys_closed(self._closed)
        self._drive()

    def _key(self, k: Any, node: Node) -> None:
        self.queue.append((k, node))
        if self.self_ref and not self.arr_held and not self.finished:
            self.arr.add_writer()  # type: ignore[union-attr]  # self_ref: arr is set
            self.arr_held = True
        if not self.driving and not self.due:
            self.due = True
            V.schedule(self._drive)

    def _closed(self) -> None:
        self.closed = True
        self._drive()

    def _drive(self) -> None:
        self.due = False
        if self.finished or self.driving:
            return
        self.driving = True
        try:
            feed = self.feed
            if feed is not None:
                self.feed = None
                self.it = feed.run()
            body = self.body
            start = body.starter()
            done = self._it_done
            logged = self.thread is not None
            # an iteration's frame: the enclosing frame, the loop variables, and last
            # the iteration's key (temporary names, unit events)
            blank: list[Any] = [None] * (body.scope.nslots + 1)
            blank[0] = self.f
            vslot = self.vslot
            kslot = self.kslot
            it = self.it
            q = self.queue
            rt = self.st.rt
            gate = rt.gate
            budget = _DRIVE_SLICE
            while self.running < self.max:
                if rt.active >= gate.limit and (it is not None or q):
                    # the executor holds many calls more than it runs: start no more
                    # until they drain (the iterations not started cost nothing)
                    if self.held:
                        return
                    if gate.hold(rt.active, self._unhold):
                        self.held = True
                        return
                budget -= 1
                if budget < 0:
                    # a long synchronous stretch: let the event loop breathe (Jupyter,
                    # app completions), then go on
                    try:
                        asyncio.get_running_loop().call_soon(self._resume)
                        self.st.rt.busy += 1  # the hang detector must not count this idle
                        self.paused = True
                        return
                    except RuntimeError:
                        budget = _DRIVE_SLICE
                if it is not None:
                    nxt = next(it, None)
                    if nxt is None:
                        self.it = it = None
                        break
                    k, v = nxt
                elif q:
                    k, node = q.popleft()
                    if node.__class__ is Cell and node.state == CLOSED:
                        v = node.value
                    else:
                        v = node
                else:
                    break
                fr = blank[:]
                fr[vslot] = v
                if kslot:
                    fr[kslot] = k
                if logged:
                    self.running += 1
                    self._logged_iteration(fr, k)
                else:
                    fr[-1] = (ITER, k)
                    # counted only if it goes on (its end may come before this count,
                    # from the trampoline: the sum is right once this returns)
                    if not start(fr, done):
                        self.running += 1
        finally:
            self.driving = False
        if self.finished:
            return
        if self.arr_held and not self.queue:
            self.arr_held = False
            self.arr.remove_writer()  # type: ignore[union-attr]  # self_ref: arr is set
            if self.finished:
                return
        if self.it is None and not self.queue and self.closed:
            if not self.released:
                # every iteration has started and holds what it writes
                self.released = True
                for n in self.others:
                    n.remove_writer()
            if self.running == 0 and not self.finished:
                self.finished = True
                if self.arr is not None:
                    self.arr.unsubscribe(self._key)
                nested(self.done)

    def _unhold(self) -> None:
        self.held = False
        if not self.st.rt.aborted:
            self._drive()

    def _resume(self) -> None:
        self.st.rt.busy -= 1
        self.paused = False
        if self.st.rt.aborted:
            return  # the run is over: start no more iterations
        V.schedule(self._drive)  # from the run's queue: an exception reaches the run

    def _it_done(self) -> None:
        self.running -= 1
        if not self.driving and not self.paused:
            self._drive()

    def _logged_iteration(self, fr: list, k: Any) -> None:
        """One iteration with Swift's unit events around it (only when they are read)."""
        thread = f"{self.thread}-{self.count}"
        self.count += 1
        fr[-1] = (ITER, k, thread)
        emit = self.st.rt.bus.emit
        line = self.st.pos.line
        emit("FOREACH_IT_START", {"line": line, "thread": thread}, level="DEBUG")
        emit("SCOPE", {"thread": thread}, level="DEBUG")

        def it_done() -> None:
            emit("FOREACH_IT_END", {"line": line, "thread": thread}, level="DEBUG")
            self._it_done()

        self.body.run_in(fr, it_done)


class IterateExec(Exec):
    """``iterate i { body } until (cond);`` - i from 0; cond sees i + 1."""

    __slots__ = ("body", "until", "vslot")

    self_release = True

    def __init__(self, rt: Runtime, pos: A.Pos, body: BlockExec, until: Callable, vslot: int) -> None:
        Exec.__init__(self, rt, pos)
        self.body = body
        self.until = until
        self.vslot = vslot
        body.defer_gc = True  # see run: after the body *and* the condition

    def run(self, f: list, done: Done) -> None:
        state = {"pending": 0, "stopped": False}
        cleanups = self.body.cleanups if self.rt.file_gc else ()
        clean_scope = self.rt.clean_scope

        def body_done() -> None:
            state["pending"] -= 1
            if state["stopped"] and state["pending"] == 0:
                nested(done)

        def step(i: int) -> None:
            fr: list[Any] = [None] * (self.body.scope.nslots + 1)
            fr[0] = f
            fr[-1] = (ITER, i)
            fr[self.vslot] = i
            state["pending"] += 1
            gate = None
            if cleanups:
                # the iteration's files go once its body is done and the condition
                # (which may read them) has been evaluated
                gate = [2]

                def it_done() -> None:
                    gate[0] -= 1
                    if gate[0] == 0:
                        clean_scope(fr, cleanups)
                    body_done()

                self.body.run_in(fr, it_done)
            else:
                self.body.run_in(fr, body_done)
            fu = fr[:]
            fu[self.vslot] = i + 1
            check(fu, i, gate, fr)

        def check(fu: list, i: int, gate: list | None, fr: list) -> None:
            try:
                c = self.until(fu)
            except NotReady as nr:
                nr.wait(lambda: check(fu, i, gate, fr))
                return
            except Failed:
                c = True
            except SwiftError as e:
                self.rt.runtime_error(e, self.pos)
                c = True
            if gate is not None:
                gate[0] -= 1
                if gate[0] == 0:
                    clean_scope(fr, cleanups)
            if c:
                state["stopped"] = True
                self.release(f)  # no more iterations: they hold what they write
                if state["pending"] == 0:
                    nested(done)
            else:
                V.schedule(lambda: step(i + 1))

        nested(lambda: step(0))
