"""Dataflow values: single-assignment cells, monotonic arrays, structs and files.

Every Swift variable, array element and struct member is a node that is *open* until its
value is known and then *closed* for good (or *failed*, carrying the error that stopped
it: with lazyErrors the dependants of a failed value are skipped, not run).  Readers that
find a node open register a callback; callbacks never run re-entrantly inside ``set``
but through one trampoline queue (:func:`schedule` / :func:`drain`), so a chain of a
hundred thousand dependent cells neither recurses nor creates an asyncio task each.

Arrays are sparse and monotonic: keys arrive one by one (each arrival is announced to
key subscribers, which is how ``foreach`` starts iterations as elements appear) and the
array *closes* when its writer count drops to zero: no statement can add a key any more.
``length`` and other whole-array consumers wait for that.  For composites, ``state``
means *deep* closure (closed and every element closed), which is what built-ins, traces
and app calls taking the whole value need; ``closed`` means the key set is final.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, cast

from swiftnb.engine.data import Field, Index, Step
from swiftnb.engine.denseitems import DenseItems, OffsetItems
from swiftnb.engine.filerare import FileRarities, Rare, rarities
from swiftnb.errors import SwiftnbError

if TYPE_CHECKING:
    from swiftnb.engine.mappers.base import Mapper

OPEN = 0
CLOSED = 1
FAILED = 2

Callback = Callable[[], None]

# ----------------------------------------------------------------------------- trampoline

#: Callbacks run per drain before the rest is handed back to the event loop, so that a
#: long pure-dataflow stretch does not starve the loop (Jupyter, app completions).
SLICE = 20000


class Trampoline:
    """One run's callback queue.  Each :class:`~swiftnb.engine.run.Run` owns one, so two
    runs sharing an event loop (two notebook cells) neither run nor clear each other's
    pending statements, and an escaping exception is reported to the run it belongs to."""

    __slots__ = ("ready", "draining", "error_sink")

    def __init__(self) -> None:
        self.ready: deque[Callback] = deque()
        self.draining = False
        self.error_sink: Callable[[BaseException], None] | None = None

    def stop(self) -> None:
        """The run is over (aborted): drop what is queued and whatever is queued later,
        so no loop of the script (``iterate``, a self-feeding ``foreach``) goes on."""
        self.ready.clear()
        self.ready = deque(maxlen=0)  # appends vanish: nothing of the run runs again

    def drain(self) -> None:
        """Run queued callbacks until the queue is empty or a slice is used up."""
        global _active
        if self.draining:
            return
        self.draining = True
        outer = _active
        _active = self  # callbacks that wake other callbacks queue them here
        ready = self.ready
        popleft = ready.popleft
        n = 0
        try:
            while ready:
                cb = popleft()
                try:
                    cb()
                except BaseException as exc:  # noqa: BLE001 - reported, never swallowed silently
                    if self.error_sink is None:
                        raise
                    self.error_sink(exc)
                n += 1
                if n >= SLICE and ready:
                    try:
                        loop = asyncio.get_running_loop()
                    except RuntimeError:
                        n = 0
                        continue
                    loop.call_soon(self.drain)
                    break
        finally:
            self.draining = False
            _active = outer


_default = Trampoline()
#: The trampoline of the run whose code is executing: set by ``Run.execute`` and
#: inherited by the tasks and loop callbacks it starts (asyncio copies the context).
_current: ContextVar[Trampoline] = ContextVar("swiftnb_trampoline", default=_default)
#: The trampoline draining right now (the fast path: no context lookup inside a drain).
_active: Trampoline | None = None


def current() -> Trampoline:
    """The trampoline callbacks go to from here: the draining one, else the context's."""
    t = _active
    return t if t is not None else _current.get()


def use(tramp: Trampoline) -> Token:
    """Make ``tramp`` current in this context (undo with :func:`leave`)."""
    return _current.set(tramp)


def leave(token: Token) -> None:
    _current.reset(token)


def set_error_sink(sink: Callable[[BaseException], None] | None) -> None:
    """Where an exception escaping a callback of the current trampoline goes."""
    current().error_sink = sink


def schedule(cb: Callback) -> None:
    """Queue ``cb`` to run from the trampoline (now, if nothing is running)."""
    t = _active
    if t is None:
        t = _current.get()
    t.ready.append(cb)
    if not t.draining:
        t.drain()


def _wake(cbs: Iterable[Callback]) -> None:
    """Queue callbacks without draining (the caller drains when its update is done)."""
    t = _active
    if t is None:
        t = _current.get()
    t.ready.extend(cbs)


def drain() -> None:
    """Run the current trampoline's queued callbacks."""
    t = _active
    if t is None:
        t = _current.get()
    if t.ready and not t.draining:
        t.drain()


def pending_callbacks() -> int:
    return len(current().ready)


# ----------------------------------------------------------------------------- errors


class SwiftError(SwiftnbError):
    """A run-time error of the script (not an engine bug); ``str`` is for people."""

    def __init__(self, message: str, *, dependency: bool = False, where: str | None = None,
                 fatal: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.dependency = dependency
        #: ends the run even with lazyErrors (a failed ``assert``: lazy errors are for apps)
        self.fatal = fatal
        #: set on the error of a value whose writing statement was skipped (an `if` on a
        #: failed condition): Swift left such a value open, so a trace of it prints nothing
        self.skipped = False
        #: Swift's location line for the report, e.g. ``assert @ script.swift, line: 3``
        self.where = where


_NOKEY = object()


class NotReady(SwiftnbError):
    """Raised by an evaluation that met an open node; the caller waits on ``node``:
    for it to close (default), for its key set to close (``keys``), or for one ``key``
    to arrive."""

    def __init__(self, node: Node, deep: bool = False, keys: bool = False,
                 key: Any = _NOKEY) -> None:
        self.node = node
        self.deep = deep
        self.keys = keys
        self.key = key

    def wait(self, cb: Callback) -> None:
        """Register ``cb`` to run when the awaited condition may hold."""
        node = self.node
        if self.key is not _NOKEY:
            node.wait_key(self.key, cb)  # type: ignore[attr-defined]  # an ArrayNode (a key given)
        elif self.keys:
            node.when_keys_closed(cb)  # type: ignore[attr-defined]  # an ArrayNode (keys given)
        else:
            node.when_closed(cb)


class Failed(SwiftnbError):
    """Raised by an evaluation that met a failed node."""

    def __init__(self, error: SwiftError) -> None:
        super().__init__(error.message)
        self.error = error


# ----------------------------------------------------------------------------- nodes


class Node:
    """Base of every value node: state, waiters, and where it sits (for names)."""

    __slots__ = ("state", "waiters", "parent", "key", "error")

    kind = "node"

    def __init__(self, parent: Any = None, key: Any = None) -> None:
        self.state = OPEN
        self.waiters: list[Callback] | None = None
        self.parent = parent  # the composite node it belongs to, or its variable name
        self.key = key
        self.error: SwiftError | None = None

    # -- waiting
    def when_closed(self, cb: Callback) -> None:
        """Run ``cb`` (from the trampoline) once this node is closed or failed."""
        if self.state:
            schedule(cb)
        elif self.waiters is None:
            self.waiters = [cb]
        else:
            self.waiters.append(cb)

    def _fire(self) -> None:
        """This node closed or failed: wake its waiters, and tell the values it is part
        of, up as far as its end completes them (a loop: values may nest deep)."""
        node: Node = self
        while True:
            w = node.waiters
            if w is not None:
                node.waiters = None
                _wake(w)
            p = node.parent
            if p is None or p.__class__ is str or not p._settle(node):
                break
            node = p
        if _active is None:  # inside a drain, that drain runs what was woken
            drain()

    def fail(self, error: SwiftError) -> None:
        """Close this node in error; readers see :class:`Failed`, dependants skip."""
        if self.state:
            return
        self.error = error
        self.state = FAILED
        self._fail_children(error)
        self._fire()

    def _fail_children(self, error: SwiftError) -> None:
        pass

    # -- naming (trace renders `name[0].f`)
    @property
    def name(self) -> str:
        """``a.b[0].c``: the variable, then each member and index down to this node."""
        steps: list[str] = []
        node: Node = self
        while True:
            p = node.parent
            if p is None:
                steps.append("?")
                break
            if p.__class__ is str:
                steps.append(p)
                break
            steps.append(f".{node.key}" if isinstance(p, StructNode) else f"[{node.key}]")
            node = p
        return "".join(reversed(steps))

    def root(self) -> Node:
        node = self
        while node.parent is not None and node.parent.__class__ is not str:
            node = node.parent
        return node

    def describe_wait(self) -> str:
        return self.name


class Cell(Node):
    """A single-assignment primitive value (int, float, string, boolean) or external."""

    __slots__ = ("value",)

    kind = "cell"

    def __init__(self, parent: Any = None, key: Any = None) -> None:
        self.state = OPEN
        self.waiters = None
        self.parent = parent
        self.key = key
        self.error = None
        self.value: Any = None

    def set(self, value: Any) -> None:
        if self.state:
            if self.state == FAILED:
                return
            raise SwiftError(f"variable {self.name} is written to twice")
        self.value = value
        self.state = CLOSED
        w = self.waiters
        if w is not None:
            self.waiters = None
            _wake(w)
        p = self.parent
        if p is not None and p.__class__ is not str and p._settle(self):
            p._fire()
        if _active is None:  # inside a drain, that drain runs what was woken
            drain()

    def get(self) -> Any:
        """The value, or raise :class:`NotReady` / :class:`Failed`."""
        s = self.state
        if s == CLOSED:
            return self.value
        if s == FAILED:
            raise Failed(self.error)  # type: ignore[arg-type]  # FAILED: its error is set
        raise NotReady(self)

    def __repr__(self) -> str:
        st = ("open", "closed", "failed")[self.state]
        return f"<Cell {self.name} {st} {self.value!r}>"


def closed_cell(value: Any, parent: Any = None, key: Any = None) -> Cell:
    c = Cell(parent, key)
    c.value = value
    c.state = CLOSED
    return c


class FileNode(Node):
    """A mapped file.  ``path`` is where the mapper put it (None until known).

    Closed means the file exists (an input found at start, or an output produced by a
    successful app call).  ``value`` is the path, so a file reads like a string.

    A node is two pointers besides :class:`Node`'s (~90 bytes): an element of a mapped
    array is the common node of a run of many calls.  Its name is not kept when its
    mapper makes it from the element's keys alone (:meth:`derive_path`), and the rest
    (:class:`_FileRarities`) only when set.
    """

    __slots__ = ("_path", "_rare")

    kind = "file"

    def __init__(self, parent: Any = None, key: Any = None, path: str | None = None,
                 tname: str = "file") -> None:
        Node.__init__(self, parent, key)
        #: the path; or the mapper that makes it from the steps down to this node
        self._path: str | Mapper | None = path
        self._rare: FileRarities | None = None
        if parent is None or tname != _type_name_from(parent, key):
            self.tname = tname

    @property
    def path(self) -> str | None:
        p = self._path
        if p is None or p.__class__ is str:
            return p
        return p.map(mapped_steps(self)[1])  # type: ignore[union-attr]  # a Mapper here

    @path.setter
    def path(self, value: str | None) -> None:
        self._path = value

    def derive_path(self, mapper: Mapper) -> None:
        """Make the path from ``mapper`` whenever it is read instead of keeping it:
        for a mapper whose names depend on nothing but the steps (``names_again``)."""
        self._path = mapper

    @property
    def named_by(self) -> Mapper | None:
        """The mapper that makes the path again whenever it is read (:meth:`derive_path`),
        else None (the mapping checker finds such a file again by its name)."""
        p = self._path
        return None if p is None or isinstance(p, str) else p

    @property
    def tname(self) -> str:
        """The file type's name (``file``, or a ``type image;`` of the script)."""
        r = self._rare
        if r is not None and r.tname is not None:
            return r.tname
        return _type_name_from(self.parent, self.key)

    @tname.setter
    def tname(self, value: str) -> None:
        rarities(self).tname = value

    #: the mapper, or a Cell holding it while the mapping is evaluated
    mapped_by: Rare[Mapper | Cell | None] = Rare(None)
    #: an unmapped file's tag (its name stem), else False
    temporary: Rare[bool | str] = Rare(False)
    # file garbage collection (see Run.clean_scope): ``gc_temp`` - the path was made by a
    # temporary mapping (concurrent mapper, test_mapper temp="true"), so the file may be
    # deleted once nothing refers to it; ``gc_refs`` - references beyond the first (other
    # variables that share this node or alias its file); ``gc_of`` - for a node that took
    # another's file (``t = f`` into an unmapped or remappable variable), the node that
    # owns that file and counts the references
    gc_temp: Rare[bool] = Rare(False)
    gc_refs: Rare[int] = Rare(0)
    gc_of: Rare[FileNode | None] = Rare(None)

    @property
    def value(self) -> str | None:
        return self.path

    def set(self, value: Any = None) -> None:
        """Mark the file produced (``value``, if given, is its path)."""
        if self.state:
            if self.state == FAILED:
                return
            raise SwiftError(f"file {self.name} is written to twice")
        if value is not None and self.path is None:
            self.path = value
        self.state = CLOSED
        self._fire()

    def get(self) -> str | None:
        s = self.state
        if s == CLOSED:
            return self.path
        if s == FAILED:
            raise Failed(self.error)  # type: ignore[arg-type]  # FAILED: its error is set
        raise NotReady(self)

    def __repr__(self) -> str:
        return f"<File {self.name} {self.path!r} {('open', 'closed', 'failed')[self.state]}>"


class Composite(Node):
    """What arrays and structs share: writer counting and deep-closure tracking."""

    __slots__ = ("writers", "closed", "open_children", "tinfo", "key_waiters", "mapper",
                 "tag")

    def _init_composite(self, tinfo: TypeInfo) -> None:
        self.mapper: Mapper | Cell | None = None  # as FileNode.mapped_by
        self.tag: str | None = None  # stable name stem for unmapped temporaries
        self.writers = 0
        self.closed = False
        self.open_children = 0
        self.tinfo = tinfo
        self.key_waiters: list[Callback] | None = None

    # -- writers: statements that may still add keys / assign members
    def add_writer(self, n: int = 1) -> None:
        self.writers += n

    def remove_writer(self, n: int = 1) -> None:
        self.writers -= n
        if self.writers <= 0 and not self.closed:
            self.close()

    def close(self) -> None:
        """No more keys or members will be assigned: close this and its open parts,
        depth first, with a stack of its own (a value may nest thousands deep)."""
        if self.closed:
            return
        self._close_keys()
        stack = [(self, iter(self._children()))]
        while stack:
            node, parts = stack[-1]
            for child in parts:
                if isinstance(child, Composite):
                    # a part with writers of its own (the output of a procedure still
                    # running: ``a.u = fill(n)``, ``c[0] = ints(n)``) closes when they end
                    if not child.closed and child.writers <= 0:
                        child._close_keys()
                        stack.append((child, iter(child._children())))
                        break
                elif (child.__class__ is Cell and not child.state and child.parent is node
                      and node.__class__ is StructNode):
                    # every writer of the struct has finished: a member still unassigned
                    # never will be; the struct is complete without it (trace shows it)
                    node.open_children -= 1
            else:
                stack.pop()
                node._check_deep()
        if _active is None:  # inside a drain, that drain runs what was woken
            drain()

    def _close_keys(self) -> None:
        """The key set is final: wake who waits for that."""
        self.closed = True
        kw = self.key_waiters
        if kw is not None:
            self.key_waiters = None
            _wake(kw)

    def when_keys_closed(self, cb: Callback) -> None:
        """Run ``cb`` once the key set is final (``length``, ``foreach`` end)."""
        if self.closed or self.state == FAILED:
            schedule(cb)
        elif self.key_waiters is None:
            self.key_waiters = [cb]
        else:
            self.key_waiters.append(cb)

    def _children(self) -> Iterable[Node]:
        return ()

    def _count_child(self, node: Node) -> None:
        """A part just put in: an open one counts until it closes (a shared node, made
        by another composite, is watched: it reports to its own parent), a failed one
        fails this value."""
        if not node.state:
            self.open_children += 1
            if node.parent is not self:
                node.when_closed(lambda: self._child_done(node))
        elif node.state == FAILED:
            self._child_done(node)

    def _child_done(self, child: Node) -> None:
        if self._settle(child):
            self._fire()

    def _settle(self, child: Node) -> bool:
        """Count a part's end; True if that ended this value too (closed or failed),
        whose waiters and parent are then due."""
        if child.state == FAILED and self.state == OPEN:
            # a failed part makes the whole value unusable (dependants are skipped)
            self.error = child.error
            self.state = FAILED
            kw = self.key_waiters
            if kw is not None and not self.closed:
                self.key_waiters = None
                _wake(kw)
            return True
        self.open_children -= 1
        if self.open_children == 0 and self.closed and self.state == OPEN:
            self.state = CLOSED
            return True
        return False

    def _check_deep(self) -> None:
        if self.state == OPEN and self.closed and self.open_children <= 0:
            self.state = CLOSED
            self._fire()

    def _fail_children(self, error: SwiftError) -> None:
        self.closed = True
        kw = self.key_waiters
        if kw is not None:
            self.key_waiters = None
            _wake(kw)


class ArrayNode(Composite):
    """A sparse monotonic array: ``items`` maps key -> element node (or a closed
    primitive element's plain value): a :class:`DenseItems` while the keys have come as
    0, 1, 2, ... (an :class:`OffsetItems` when they came as k, k + 1, ...), a dict from
    the first key that did not.

    ``subscribers`` are called with each new key (``foreach``); ``key_waiters`` once the
    key set is final; ``waiters`` once every element is closed too.
    """

    __slots__ = ("items", "subscribers", "missing", "next_auto")

    kind = "array"

    def __init__(self, tinfo: TypeInfo, parent: Any = None, key: Any = None) -> None:
        Node.__init__(self, parent, key)
        self._init_composite(tinfo)
        elem = tinfo.elem
        self.items: DenseItems | dict[Any, Any] = DenseItems(
            ints=elem is not None and elem.name == "int")
        self.subscribers: list[Callable[[Any, Node], None]] | None = None
        self.missing: dict[Any, list[Callback]] | None = None
        self.next_auto = 0

    def _children(self) -> Iterable[Node]:
        # only composite elements matter to ``close`` (a Cell element of an array is
        # closed by its writer): a list of them, not a walk of a million plain values
        items = self.items
        if isinstance(items, DenseItems) and items.all_plain():
            return ()
        return [x for x in items.values()
                if x.__class__ is ArrayNode or x.__class__ is StructNode]

    def element(self, key: Any) -> Node:
        """The element at ``key`` for writing, created (open) if it is not there yet."""
        node = self.items.get(key)
        if node is None:
            if self.closed:
                raise SwiftError(f"cannot write {self.name}[{key}]: the array is closed")
            node = self.tinfo.elem.make(self, key)  # type: ignore[union-attr]  # an array's elem is set
            self._add(key, node)
        elif not isinstance(node, Node):
            raise SwiftError(f"{self.name}[{_fmt_key(key)}] is written to twice")
        return node

    def _store(self, key: Any, item: Any) -> None:
        """Put a new key's item in: by position while keys come in order (from the
        first key, if that is an int), else in a dict."""
        items = self.items
        if isinstance(items, DenseItems):
            if key.__class__ is int:
                if key == items.next_key():
                    items.append(item)
                    return
                if not items:
                    self.items = items = OffsetItems(items, key)
                    items.append(item)
                    return
            self.items = items = items.to_dict()
        items[key] = item

    def _add(self, key: Any, node: Node) -> None:
        self._store(key, node)
        self._count_child(node)
        if self.subscribers is not None:
            for sub in self.subscribers:
                sub(key, node)
        if self.missing is not None:
            cbs = self.missing.pop(key, None)
            if cbs:
                _wake(cbs)

    def put(self, key: Any, node: Node) -> None:
        """Insert an existing node (array literal, copying) at ``key``."""
        if key in self.items:
            raise SwiftError(f"{self.name}[{key}] is written to twice")
        if not isinstance(node, Node):
            self.set_value(key, node)
            return
        if node.__class__ is Cell and node.state == CLOSED and node.parent is None:
            self.set_value(key, node.value)
            return
        if node.parent is None:
            # an anonymous value becomes this element; named variables keep their name
            # (and their mapping), and report their closing through a callback
            node.parent = self
            node.key = key
        elif node.__class__ is FileNode or (isinstance(node, Composite) and node.tinfo.mapped):
            gc_share(node)  # one more variable refers to these files
        self._add(key, node)

    def set_value(self, key: Any, value: Any) -> None:
        """Assign a primitive element in one step (the common ``a[i] = expr``)."""
        items = self.items
        if items.__class__ is DenseItems:
            vals = items.vals
            if key.__class__ is int and key == len(vals) and not self.closed:
                # the next key in order: the hot path of ``a[i] = expr`` in a foreach
                if vals.__class__ is list or value.__class__ is int:
                    try:
                        vals.append(value)
                    except OverflowError:  # past 64 bits: no longer an array('q')
                        items.append(value)
                else:
                    items.append(value)
                node = None
            else:
                node = items.get(key)
                if node is None:
                    if self.closed:
                        raise SwiftError(f"cannot write {self.name}[{key}]: the array is closed")
                    self._store(key, value)
        else:
            node = items.get(key)
            if node is None:
                if self.closed:
                    raise SwiftError(f"cannot write {self.name}[{key}]: the array is closed")
                # a closed primitive element is stored as the plain value (no Cell)
                self._store(key, value)
        if node is None:
            if self.subscribers is not None:
                for sub in self.subscribers:
                    sub(key, value)
            if self.missing is not None:
                cbs = self.missing.pop(key, None)
                if cbs:
                    _wake(cbs)
                    if _active is None:  # inside a drain, that drain runs what was woken
                        drain()
        elif isinstance(node, Node):
            # an element that is a Node at this point is a Cell or a FileNode
            cast("Cell | FileNode", node).set(value)
        else:
            raise SwiftError(f"{self.name}[{_fmt_key(key)}] is written to twice")

    def append(self, node_or_value: Any, is_node: bool = False) -> Node:
        key = self.next_auto
        self.next_auto += 1
        if is_node:
            self.put(key, node_or_value)
            return node_or_value
        self.set_value(key, node_or_value)
        return node_or_value

    def lookup(self, key: Any) -> Node:
        """The element at ``key`` for reading (a node, or a closed primitive's plain
        value); NotReady until it exists; error if the array closed without it."""
        items = self.items
        if items.__class__ is DenseItems:
            vals = items.vals
            if key.__class__ is int and 0 <= key < len(vals):
                return vals[key]
        node = items.get(key)
        if node is not None:
            return node
        if self.state == FAILED:
            raise Failed(self.error)  # type: ignore[arg-type]  # FAILED: its error is set
        if self.closed:
            raise SwiftError(f"Invalid index [{_fmt_key(key)}] for {self.name}")
        raise NotReady(self, key=key)

    def wait_key(self, key: Any, cb: Callback) -> None:
        """Run ``cb`` when ``key`` appears or the array closes (whichever first)."""
        if key in self.items or self.closed or self.state == FAILED:
            schedule(cb)
            return
        fired = [False]

        def once() -> None:
            if not fired[0]:
                fired[0] = True
                cb()

        if self.missing is None:
            self.missing = {}
        self.missing.setdefault(key, []).append(once)
        self.when_keys_closed(once)

    def subscribe(self, sub: Callable[[Any, Node], None]) -> None:
        """Call ``sub(key, node)`` for every present key and every key that arrives."""
        existing = list(self.items.items())
        if not self.closed:
            if self.subscribers is None:
                self.subscribers = [sub]
            else:
                self.subscribers.append(sub)
        for k, n in existing:
            sub(k, n)

    def unsubscribe(self, sub: Callable[[Any, Node], None]) -> None:
        if self.subscribers and sub in self.subscribers:
            self.subscribers.remove(sub)

    def _close_keys(self) -> None:
        self.subscribers = None
        if self.missing:
            # readers of keys that never came: let them find out (Invalid index)
            for cbs in self.missing.values():
                _wake(cbs)
            self.missing = None
        Composite._close_keys(self)

    def sorted_keys(self) -> list[Any]:
        items = self.items
        if isinstance(items, DenseItems):
            return list(items.keys())  # in order already
        return sort_keys(items.keys())

    def __len__(self) -> int:
        return len(self.items)

    def __repr__(self) -> str:
        return f"<Array {self.name} {len(self.items)} items closed={self.closed} state={self.state}>"


class StructNode(Composite):
    """A struct whose members are independently assigned nodes."""

    __slots__ = ("fields",)

    kind = "struct"

    def __init__(self, tinfo: TypeInfo, parent: Any = None, key: Any = None) -> None:
        Node.__init__(self, parent, key)
        self._init_composite(tinfo)
        self.fields: dict[str, Node] = {}
        for fname, ftinfo in tinfo.fields.items():
            node = ftinfo.make(self, fname)
            self.fields[fname] = node
            if not node.state:
                self.open_children += 1
        # a struct's own key set is fixed; it is "closed" when its writers are done
        if not self.fields:
            self.closed = True
            self.state = CLOSED

    def _children(self) -> Iterable[Node]:
        return self.fields.values()

    def member(self, name: str) -> Node:
        return self.fields[name]

    def put(self, name: str, node: Node) -> None:
        """Make an existing node the member ``name`` (a structure initializer's field
        value), as ArrayNode.put makes one an element."""
        old = self.fields[name]
        if not old.state:
            self.open_children -= 1
        if node.__class__ is Cell and node.state == CLOSED and node.parent is None:
            node = closed_cell(node.value, self, name)
        elif node.parent is None:
            node.parent = self
            node.key = name
        elif node.__class__ is FileNode or (isinstance(node, Composite) and node.tinfo.mapped):
            gc_share(node)
        self.fields[name] = node
        self._count_child(node)

    def __repr__(self) -> str:
        return f"<Struct {self.name} state={self.state}>"


# ----------------------------------------------------------------------------- types at run time


class TypeInfo:
    """How to make a node of one static type (and its elements or fields)."""

    __slots__ = ("name", "kind", "elem", "keytype", "fields", "mapped")

    def __init__(
        self,
        name: str,
        kind: str,
        *,
        elem: TypeInfo | None = None,
        keytype: str = "int",
        fields: dict[str, TypeInfo] | None = None,
    ) -> None:
        self.name = name        # "int", "file", "S", "int[]", ...
        self.kind = kind        # "prim", "file", "external", "array", "struct"
        self.elem = elem
        self.keytype = keytype
        self.fields = fields if fields is not None else {}
        self.mapped: bool = kind == "file" or (
            kind == "array" and elem is not None and elem.mapped
        ) or (kind == "struct" and any(f.mapped for f in self.fields.values()))

    def make(self, parent: Any = None, key: Any = None) -> Node:
        k = self.kind
        if k == "prim" or k == "external":
            return Cell(parent, key)
        if k == "file":
            return FileNode(parent, key, None, self.name)
        if k == "array":
            return ArrayNode(self, parent, key)
        if k == "struct":
            return StructNode(self, parent, key)
        raise ValueError(f"unknown kind {k}")

    def __repr__(self) -> str:
        return f"TypeInfo({self.name})"


# ----------------------------------------------------------------------------- helpers


def sort_keys(keys: Iterable[Any]) -> list[Any]:
    """Key order for iteration and printing: numeric for numbers, lexical for strings,
    false < true."""
    keys = list(keys)
    try:
        return sorted(keys)
    except TypeError:
        return sorted(keys, key=lambda k: (str(type(k)), k))


def _fmt_key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _type_name_from(parent: Any, key: Any) -> str:
    """The file type's name where a node sits: its array's element type, its struct's
    member type; ``file`` elsewhere (a node given another name keeps it itself)."""
    c = parent.__class__
    if c is ArrayNode:
        elem = parent.tinfo.elem
        return elem.name if elem is not None else "file"
    if c is StructNode:
        member = parent.tinfo.fields.get(key)
        return member.name if member is not None else "file"
    return "file"


def mapped_steps(node: Node) -> tuple[Node, tuple[Step, ...]]:
    """The variable ``node`` is part of, and the steps (members and indices) from it
    down to ``node``: what the variable's mapper names a part by."""
    steps: list[Step] = []
    n = node
    while n.parent is not None and n.parent.__class__ is not str:
        p = n.parent
        steps.append(Field(n.key) if p.__class__ is StructNode else Index(n.key))
        n = p
    steps.reverse()
    return n, tuple(steps)


def file_leaves(n: Any) -> list[FileNode]:
    """The file nodes inside a value (itself, array elements, struct members), in key
    order."""
    out: list[FileNode] = []
    stack = [n]
    while stack:
        x = stack.pop()
        c = x.__class__
        if c is FileNode:
            out.append(x)
        elif c is ArrayNode:
            for k in reversed(x.sorted_keys()):
                stack.append(x.items[k])
        elif c is StructNode:
            stack.extend(reversed(list(x.fields.values())))
        elif c is Cell and isinstance(x.value, Node):
            stack.append(x.value)
    return out


def gc_owner(leaf: FileNode) -> FileNode:
    """The node that counts the references to ``leaf``'s file."""
    o = leaf.gc_of
    return leaf if o is None else o


def gc_share(node: Node) -> None:
    """``node`` (a file or a composite of files) is now also referred to by another
    variable: its files must outlive the scope that made them until that one ends too."""
    for leaf in file_leaves(node):
        gc_owner(leaf).gc_refs += 1


def gc_alias(tgt: FileNode, src: FileNode) -> None:
    """``tgt`` took ``src``'s file (no copy): one more reference to that file."""
    owner = gc_owner(src)
    tgt.gc_of = owner
    owner.gc_refs += 1


def deep_ready(node: Node) -> None:
    """Raise NotReady/Failed unless ``node`` is deep-closed."""
    s = node.state
    if s == CLOSED:
        return
    if s == FAILED:
        raise Failed(node.error)  # type: ignore[arg-type]  # FAILED: its error is set
    raise NotReady(node, deep=True)


def as_node(v: Any) -> Node:
    """An array item as a node (closed primitive items are stored as plain values)."""
    return v if isinstance(v, Node) else closed_cell(v)


def to_python(node: Node) -> Any:
    """A closed node as plain Python: scalars, dicts for arrays and structs, paths for
    files.  Open parts come back as None."""
    top: dict[Any, Any] = {}
    stack: list[tuple[Any, dict, Any]] = [(node, top, None)]  # a stack: values nest deep
    while stack:
        n, into, key = stack.pop()
        parts: list[tuple[Any, Any]] = []
        if isinstance(n, Cell):
            v = n.value
        elif isinstance(n, FileNode):
            v = n.path
        elif isinstance(n, ArrayNode):
            v = {}
            parts = [(k, n.items[k]) for k in n.sorted_keys()]
        elif isinstance(n, StructNode):
            v = {}
            parts = list(n.fields.items())
        else:
            v = n
        into[key] = v
        stack.extend((x, v, k) for k, x in reversed(parts))
    return top[None]
