"""A digest the job wrapper reported for an output is remembered without reading the
file (DigestCache.learn), by the store too, and only while the file is unchanged."""

from __future__ import annotations

import os

import pytest

from swiftnb.store import RunStore
from swiftnb.store.digests import file_digest

pytestmark = pytest.mark.timeout(60)


def test_a_learned_digest_is_used_until_the_file_changes(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("output\n")
    reported = file_digest(str(path))
    with RunStore.open(tmp_path / "st") as store:
        store.digests.learn(str(path), os.stat(path), reported)
        assert store.digests.digest(str(path)) == reported and store.digests.reads == 0
    with RunStore.open(tmp_path / "st") as store:  # from the store's table
        assert store.digests.measure(str(path)) == (reported, 7)
        assert store.digests.reads == 0
        later = os.stat(path).st_mtime + 5
        os.utime(path, (later, later))
        assert store.digests.digest(str(path)) == reported and store.digests.reads == 1
        path.write_text("changed\n")
        assert store.digests.digest(str(path)) == file_digest(str(path)) != reported


def test_a_directory_is_not_learned_as_a_whole(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "f").write_text("f")
    with RunStore.open(tmp_path / "st") as store:
        store.digests.learn(str(tree), os.stat(tree), "sha256:" + "0" * 64)
        assert store.digests.digest(str(tree)) != "sha256:" + "0" * 64
