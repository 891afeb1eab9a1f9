"""ContentStore: copies kept by digest come back whole; the least recently used go
first when the store is over its limit; limit 0 keeps nothing."""

from __future__ import annotations

import os

import pytest

from swiftnb.store import RunStore
from swiftnb.store.digests import file_digest

pytestmark = pytest.mark.timeout(60)


def make(path, size: int, fill: bytes) -> tuple[str, str]:
    path.write_bytes(fill * size)
    return str(path), file_digest(str(path))


def test_keep_and_restore_a_file_and_a_tree(tmp_path):
    with RunStore.open(tmp_path / "st") as store:
        path, digest = make(tmp_path / "out.txt", 10, b"x")
        assert store.objects.keep(path, digest)
        assert store.objects.path_of(digest).startswith(str(tmp_path / "st" / "objects"
                                                          / digest[7:9]))
        os.unlink(path)
        assert store.objects.restore(digest, path)
        assert open(path, "rb").read() == b"x" * 10
        assert not store.objects.restore("sha256:" + "0" * 64, path + ".2")
        assert not os.path.exists(path + ".2")
        tree = tmp_path / "tree"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "f").write_bytes(b"f")
        tree_digest = store.digests.digest(str(tree))
        assert store.objects.keep(str(tree), tree_digest)
        (tree / "sub" / "f").write_bytes(b"changed")
        (tree / "extra").write_bytes(b"e")
        assert store.objects.restore(tree_digest, str(tree))
        assert sorted(os.listdir(tree)) == ["sub"]
        assert (tree / "sub" / "f").read_bytes() == b"f"
        leftovers = [n for _, _, names in os.walk(tmp_path) for n in names if n.endswith(".tmp")]
        assert leftovers == []


def test_least_recently_used_copies_are_evicted_under_the_limit(tmp_path):
    with RunStore.open(tmp_path / "st", object_limit=250) as store:
        a = make(tmp_path / "a", 100, b"a")
        b = make(tmp_path / "b", 100, b"b")
        c = make(tmp_path / "c", 100, b"c")
        assert store.objects.keep(*a) and store.objects.keep(*b)
        assert store.objects.restore(a[1], str(tmp_path / "a2"))  # a used after b
        assert store.objects.keep(*c)  # 300 > 250: b goes
        assert b[1] not in store.objects and a[1] in store.objects and c[1] in store.objects
        assert store.objects.used() == 200
        big = make(tmp_path / "big", 300, b"z")
        assert not store.objects.keep(*big)  # larger than the whole limit
        assert store.objects.used() == 200


def test_limit_zero_keeps_nothing(tmp_path):
    with RunStore.open(tmp_path / "st", object_limit=0) as store:
        path, digest = make(tmp_path / "a", 10, b"a")
        assert not store.objects.keep(path, digest)
        assert digest not in store.objects
