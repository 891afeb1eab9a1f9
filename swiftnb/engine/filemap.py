"""Mapping a run's variables to files: what a mapper names, inputs found (or missing
until something needs them), and the temporary files a scope leaves behind.

A part of :class:`swiftnb.engine.run.Run` (a mixin, as asyncio's loop is made of
base_events and its helpers): the state it reads is the run's, declared below.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Coroutine, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from swiftnb.engine import data as D
from swiftnb.engine import values as V
from swiftnb.engine.interp import _set_binding
from swiftnb.engine.mapcheck import MappingChecker
from swiftnb.engine.mappers import Mapper, MapperContext, create_mapper, reads_file
from swiftnb.engine.values import (CLOSED, FAILED, ArrayNode, Cell, Composite, Failed,
                                   FileNode, Node, NotReady, StructNode, SwiftError)
from swiftnb.lang import ast as A

if TYPE_CHECKING:
    import asyncio

    from swiftnb.engine.interp import MapExec
    from swiftnb.engine.run import RunSettings, _Context
    from swiftnb.engine.scopes import Sym

__all__ = ["FileMapping", "Parts", "as_plain_data"]

#: the parts of a value to convert next: (key or member name, node or plain value)
Parts = Sequence[tuple[Any, Any]]


def as_plain_data(n: Any, part: Callable[[Any], tuple[Any, Parts]]) -> Any:
    """A value as plain data (dicts for arrays, ``StructValue``, ``FileValue``), with a
    stack of its own: values may nest thousands deep.  ``part(node)`` converts one node
    and names its parts, which go into the returned dict (or struct's fields) in order."""
    top: dict[Any, Any] = {}
    stack: list[tuple[Any, dict, Any]] = [(n, top, None)]
    while stack:
        node, into, key = stack.pop()
        v, parts = part(node)
        into[key] = v
        if parts:
            slots = v.fields if v.__class__ is D.StructValue else v
            stack.extend((x, slots, k) for k, x in reversed(parts))
    return top[None]


def _plain_part(n: Any) -> tuple[Any, Parts]:
    """One closed node as plain data (see ``Run.plain``)."""
    while n.__class__ is Cell and isinstance(n.value, Node):
        n = n.value
    c = n.__class__
    if c is Cell:
        return n.value, ()
    if c is FileNode:
        return D.FileValue(n.name, n.tname, n.path), ()
    if c is ArrayNode:
        return {}, list(n.items.items())
    if c is StructNode:
        return (D.StructValue(n.tinfo.name, n.name, {}),
                [(k, x) for k, x in n.fields.items() if x.state == CLOSED])
    return n, ()


class FileMapping:
    """The run's file mapping: path_of, bind_mapper, demand, clean_scope."""

    settings: RunSettings
    base_dir: str
    run_dir: str
    dry_run: bool
    errors: list[str]
    aborted: bool
    ctx: _Context
    mapcheck: MappingChecker | None
    _temp: itertools.count
    #: while an app call is built (TaskBuilding.build_task), the paths of the file nodes
    #: named so far: a names_again mapper's element would otherwise be named again for
    #: each of its uses in the call (``@o``, the outputs); None between calls
    _call_paths: dict[FileNode, str] | None
    #: mapped inputs whose file was missing when they were mapped: the error is
    #: raised only when something needs the file (see demand)
    _missing: dict[FileNode, tuple[SwiftError, A.Pos | None]]

    if TYPE_CHECKING:  # the run's own, used here
        def runtime_error(self, err: SwiftError, pos: A.Pos | None) -> None:
            ...

        def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
            ...

    # ------------------------------------------------------------------ file GC

    def clean_scope(self, f: list, slots: tuple[int, ...]) -> None:
        """A scope ended: clean its variables' files, as Swift's ``cleanDataset`` did.

        A file is deleted when it was made by a temporary mapping (unmapped variables,
        concurrent_mapper, test_mapper with temp="true") and this was the last variable
        referring to it: a file that another variable took (an alias in an outer array,
        a procedure's output) or that is shared by an outer array lives until that one
        is cleaned too.  Files of user mappings are never deleted.  After an error the
        run cleans nothing more, so that ``-resume`` finds the files of completed calls.
        """
        if self.errors or self.aborted:
            return
        for slot in slots:
            root = f[slot]
            if root is None or root.__class__ is Cell:
                continue
            m = root.mapped_by if root.__class__ is FileNode else root.mapper
            if m.__class__ is Cell:
                m = m.value if m.state == CLOSED else None
                if m is None:
                    continue  # the mapping never resolved: nothing was made
            test = m is not None and m.reports_cleaning  # type: ignore[union-attr]  # a Cell was resolved above
            if m is not None and not test and not m.temp:  # type: ignore[union-attr]  # a Cell was resolved above
                continue  # a user mapping: the files are the script's results
            for leaf in V.file_leaves(root):
                path = leaf.path
                if path is None:
                    continue
                owner = leaf.gc_of or leaf
                temp = owner.gc_temp
                if test:
                    if temp and m.temp:  # type: ignore[union-attr]  # test: m is a Mapper
                        self.ctx.write_stdout(f"Cleaning file {path}\n")
                    else:
                        self.ctx.write_stdout(f"Not cleaning {path} (not temporary)\n")
                if owner.gc_refs > 0:
                    owner.gc_refs -= 1  # another variable still refers to the file
                    continue
                if temp:
                    owner.gc_temp = False  # deleted once
                    try:
                        os.unlink(self.local(path))
                    except OSError:
                        pass

    def remapped(self, node: FileNode, path: str | None) -> None:
        """A remappable mapper's variable took another variable's file."""
        m = node.mapped_by
        if m.__class__ is Cell:
            m = m.value
        if isinstance(m, Mapper) and m.reports_cleaning:
            self.ctx.write_stdout(f"Remapping $ -> {path}\n")

    # ------------------------------------------------------------------ values

    def plain(self, v: Any) -> Any:
        """A value for a builtin: primitives as they are, nodes deep-closed as plain data."""
        if not isinstance(v, Node):
            return v
        V.deep_ready(v)
        return as_plain_data(v, _plain_part)

    def mapping_data(self, n: Any) -> Any:
        """Plain data of a value's *mapping* (paths), without waiting for the files."""
        return as_plain_data(n, self._mapping_part)

    def _mapping_part(self, n: Any) -> tuple[Any, Parts]:
        while n.__class__ is Cell:
            if n.state == CLOSED:
                n = n.value
            elif n.state == FAILED:
                raise Failed(n.error)  # type: ignore[arg-type]  # FAILED: its error is set
            else:
                raise NotReady(n)
        c = n.__class__
        if c is FileNode:
            return D.FileValue(n.name, n.tname, self.path_of(n)), ()
        if c is ArrayNode:
            if not n.closed and not self._fixed_elements(n):
                if n.state == FAILED:
                    raise Failed(n.error)
                raise NotReady(n, keys=True)
            return {}, list(n.items.items())
        if c is StructNode:
            return (D.StructValue(n.tinfo.name, n.name, {}),
                    [(k, x) for k, x in n.fields.items() if not isinstance(x, Cell)])
        return n, ()

    def mapper_param(self, mapper: str, param: str, v: Any, is_input: bool = False) -> Any:
        """A mapper parameter: primitives as they are, files and composites as their
        mapping (paths).  A file the mapper reads is waited for (Swift waited for every
        open parameter): ``<csv_mapper; file=t>`` reads ``t`` once the app making it
        has run; a file whose name is all the mapper takes (regexp's ``source``) is not,
        so it need not exist.  A structured_regexp_mapper source that is still being
        written is passed as a live view, so the mapper can name each element as it
        arrives (the outputs of the same foreach)."""
        if isinstance(v, ArrayNode) and not v.closed and not is_input and (
                mapper.lower().replace("_", "") == "structuredregexpmapper"):
            return _LiveArray(self, v)
        if v.__class__ is FileNode and v.state != V.CLOSED and reads_file(mapper, param):
            self.demand(v)
            if v.state == V.FAILED:
                raise Failed(v.error)  # type: ignore[arg-type]  # FAILED: its error is set
            raise NotReady(v)
        return self.mapping_data(v)

    @staticmethod
    def _fixed_elements(n: ArrayNode) -> bool:
        """Its mapper fixes the elements (they exist already, open): the names are known
        before the array is written, e.g. for ``@filenames(o)`` in the app making o."""
        root: Any = n
        while root.parent is not None and root.parent.__class__ is not str:
            root = root.parent
        m = _now(root.mapper)  # the mapping may still be evaluated
        return m is not None and m.fixed

    def filename_of(self, n: Any) -> str:
        if n.__class__ is FileNode:  # ``@o`` of one file: an app's usual argument
            return self.path_of(n)
        data = self.mapping_data(n)
        if isinstance(data, D.FileValue):
            return data.path or ""
        if isinstance(data, str):
            return data
        return " ".join(fv.path or "" for fv in D.leaf_files(data))

    def local(self, path: str) -> str:
        return path if os.path.isabs(path) else os.path.join(self.base_dir, path)

    def path_of(self, node: Any) -> str:
        """The mapped file name of a file node (asks its root's mapper; unmapped files
        get a unique temporary name, as the concurrent mapper did)."""
        if node.__class__ is FileNode:
            paths = self._call_paths
            if paths is not None:
                known = paths.get(node)
                if known is not None:
                    return known
            path = node.path  # made again from the steps for a names_again mapper
            if path is not None:
                if paths is not None:
                    paths[node] = path
                return path
        n, steps = V.mapped_steps(node)
        var = n if isinstance(n, FileNode) else cast(Composite, n)
        b = _now(var.mapped_by if isinstance(var, FileNode) else var.mapper)
        if b is None:
            tag = var.temporary if isinstance(var, FileNode) else var.tag
            if not isinstance(tag, str):
                root = n.parent if n.parent.__class__ is str else "temp"
                tag = f"{root}-t{next(self._temp)}".replace("?", "tmp")
            suffix = "".join(
                f"-{s.name}" if isinstance(s, D.Field) else f"-{s.key}" for s in steps)
            rel = os.path.relpath(self.run_dir, self.base_dir)
            if rel.startswith(".."):
                rel = self.run_dir
            path = os.path.join(rel, "_concurrent", f"{tag}{suffix}")
            temp = True
        else:
            try:
                path = b.map(steps)
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            temp = b.temp
            if self.mapcheck is not None and node.__class__ is FileNode:
                self.mapcheck.claim(node, path, b)
            if b.names_again and steps and not temp and node.__class__ is FileNode:
                node.derive_path(b)  # made again when read: not kept per element
                if self._call_paths is not None:
                    self._call_paths[node] = path
                return path
        if node.__class__ is FileNode:
            node.path = path
            node.gc_temp = temp
        return path

    def bind_mapper(self, mexec: MapExec, node: Node, sym: Sym, name: str, params: dict,
                    pending: Cell, done: Callable[[], None]) -> None:
        mctx = MapperContext(base_dir=self.base_dir, run_dir=self.run_dir, var_name=sym.name,
                             type=D.as_data_type(sym.ltype),
                             where=f"{os.path.basename(sym.pos.file)}:{sym.pos.line}",
                             writes=not mexec.is_input)

        def refused(e: D.BuiltinError) -> None:
            """The mapper cannot be made or prepared: the variable and its mapping fail."""
            self.runtime_error(SwiftError(e.message), mexec.pos)
            node.fail(SwiftError(e.message, dependency=True))
            pending.fail(SwiftError(e.message, dependency=True))
            done()

        try:
            m = create_mapper(name, params, mctx)
        except D.BuiltinError as e:
            refused(e)
            return
        if m.needs_prepare:
            async def prep() -> None:
                try:
                    await m.prepare()
                except D.BuiltinError as e:
                    refused(e)
                    V.drain()
                    return
                self._bound(mexec, node, sym, m, pending, done)
                V.drain()

            self.spawn(prep())
            return
        self._bound(mexec, node, sym, m, pending, done)

    def _bound(self, mexec: MapExec, node: Node, sym: Sym, m: Mapper, pending: Cell,
               done: Callable[[], None]) -> None:
        _set_binding(node, m)
        try:
            if mexec.is_input:
                self._populate_input(node, sym, m, mexec.pos)
            elif isinstance(node, Composite) and m.fixed:
                # the mapper fixes the elements of an output array: they exist (open)
                # now, so an app producing the whole array stages every one back
                self._create_fixed(node, m)
        except SwiftError as e:
            self.runtime_error(e, mexec.pos)
            node.fail(SwiftError(e.message, dependency=True))
        pending.set(m)  # only now: waiters see the elements the mapping made
        done()

    def _create_fixed(self, node: Composite, m: Mapper) -> None:
        try:
            leaves = m.existing()
        except NotReady:
            return  # a live source: elements are named as they arrive
        except D.BuiltinError as e:
            raise SwiftError(e.message) from None
        for steps, fname in leaves:
            target = _leaf_at(node, steps)
            if isinstance(target, FileNode) and target.path is None:
                if self.mapcheck is not None:
                    self.mapcheck.claim(target, fname, m)
                target.path = fname

    def _found_on_site(self, path: str) -> bool:
        found = self.settings.found_on_site
        return found is not None and found(path)

    def _populate_input(self, node: Node, sym: Sym, m: Mapper, pos: A.Pos | None) -> None:
        if isinstance(node, FileNode):
            try:
                path = m.map(())
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            if self.mapcheck is not None:
                self.mapcheck.claim(node, path, m)
            node.path = path
            self._input_found(node, sym.name, pos)
            return
        if isinstance(node, (ArrayNode, StructNode)):
            try:
                leaves = m.existing()
            except D.BuiltinError as e:
                raise SwiftError(e.message) from None
            for steps, fname in leaves:
                target = _leaf_at(node, steps)
                if isinstance(target, FileNode):
                    if self.mapcheck is not None:
                        self.mapcheck.claim(target, fname, m)
                    target.path = fname
                    if not target.state:
                        target.set()
                elif isinstance(target, Cell) and not target.state:
                    target.set(fname)
            if isinstance(node, StructNode):
                # struct members not listed: map them individually
                for leaf in V.file_leaves(node):
                    if not leaf.state:
                        self.path_of(leaf)
                        self._input_found(leaf, leaf.name, pos)

    def _input_found(self, leaf: FileNode, name: str, pos: A.Pos | None) -> None:
        """Close a mapped input whose file exists.  A missing one stays open and is
        remembered: Swift/K said ``File not found for variable`` only for an input
        something used, so one that only names a file (``@f`` as a mapper's source, an
        app argument string) need not exist."""
        path = leaf.path or ""
        if self.dry_run or os.path.exists(self.local(path)) or self._found_on_site(path):
            leaf.set()
        else:
            self._missing[leaf] = (SwiftError(f"File not found for variable {name}: {path}"), pos)

    def demand(self, leaf: FileNode) -> None:
        """Something needs the file of ``leaf``: if it is a missing input, fail it now
        with its ``File not found`` error (and whatever waits on it, as dependants)."""
        missing = self._missing.pop(leaf, None)
        if missing is None:
            return
        err, pos = missing
        self.runtime_error(err, pos)
        leaf.fail(SwiftError(err.message, dependency=True))

    def _demand_awaited(self) -> None:
        """Fail the missing inputs that something waits on (an app's input, a
        builtin's argument, a struct that holds one)."""
        for leaf in list(self._missing):
            n: Any = leaf
            while n is not None and n.__class__ is not str:
                if n.waiters or (isinstance(n, Composite) and n.key_waiters):
                    self.demand(leaf)
                    break
                n = n.parent

    def _demand_all(self) -> None:
        for leaf in list(self._missing):
            self.demand(leaf)


class _LiveArray(Mapping):
    """A read-only view of an array that may still grow; reading a key that has not
    arrived raises NotReady (the caller waits for it)."""

    def __init__(self, run: FileMapping, node: ArrayNode) -> None:
        self.run = run
        self.node = node

    def __getitem__(self, k: Any) -> Any:
        n = self.node.items.get(k)
        if n is None:
            if self.node.closed:
                raise KeyError(k)
            raise NotReady(self.node, key=k)
        return self.run.mapping_data(n)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.node.items))

    def __len__(self) -> int:
        return len(self.node.items)


def _leaf_at(node: Composite, steps: tuple) -> Node | None:
    """The part of ``node`` at a mapper's path; None when the path does not fit the
    variable's type (a file the mapper listed that no member or element stands for)."""
    target: Node = node
    try:
        for s in steps:
            if isinstance(s, D.Field):
                if not isinstance(target, StructNode):
                    return None
                target = target.fields[s.name]
            elif isinstance(target, ArrayNode):
                target = target.element(s.key)
            else:
                return None
    except (SwiftError, KeyError):
        return None
    return target


def _now(x: Any) -> Any:
    """``x``, or the value of a Cell that has closed; Failed or NotReady (wait for it)
    when the Cell failed or is still open."""
    if x.__class__ is not Cell:
        return x
    if x.state == CLOSED:
        return x.value
    if x.state == FAILED:
        raise Failed(x.error)  # type: ignore[arg-type]  # FAILED: its error is set
    raise NotReady(x)
