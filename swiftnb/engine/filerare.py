"""What few file nodes have: a mapping, a temporary's tag, the references counted for
file collection, a type name their place does not give.

Kept apart from :class:`~swiftnb.engine.values.FileNode`, in one object made only when
one of them is set, so that each of a million mapped elements (the node of every call
of a bag of apps) holds one pointer for all of it (issue 30)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar, overload

if TYPE_CHECKING:
    from swiftnb.engine.mappers.base import Mapper
    from swiftnb.engine.values import Cell, FileNode

__all__ = ["FileRarities", "Rare", "rarities"]

T = TypeVar("T")


class FileRarities:
    """The attributes of a file node that most nodes leave at their defaults."""

    __slots__ = ("tname", "temporary", "mapped_by", "gc_temp", "gc_refs", "gc_of")

    def __init__(self) -> None:
        self.tname: str | None = None
        self.temporary: bool | str = False
        self.mapped_by: Mapper | Cell | None = None
        self.gc_temp = False
        self.gc_refs = 0
        self.gc_of: FileNode | None = None


def rarities(node: FileNode) -> FileRarities:
    """``node``'s rarities, made now if it had none."""
    r = node._rare
    if r is None:
        r = node._rare = FileRarities()
    return r


class Rare(Generic[T]):
    """An attribute of a file node kept in its :class:`FileRarities`: reads its default
    while the node has none; setting the default makes none."""

    def __init__(self, default: T) -> None:
        self.default = default
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, node: None, owner: type) -> Rare[T]: ...

    @overload
    def __get__(self, node: FileNode, owner: type) -> T: ...

    def __get__(self, node: FileNode | None, owner: type) -> T | Rare[T]:
        if node is None:
            return self
        r = node._rare
        if r is None:
            return self.default
        value: T = getattr(r, self.name)
        return value

    def __set__(self, node: FileNode, value: T) -> None:
        r = node._rare
        if r is None:
            if value == self.default and value.__class__ is self.default.__class__:
                return
            r = node._rare = FileRarities()
        setattr(r, self.name, value)
