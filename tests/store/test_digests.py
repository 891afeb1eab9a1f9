"""DigestCache: an unchanged file is not read again (in this process or the next), a
touched one is read again and keeps its digest, a changed one gets a new digest; a
change that keeps size and mtime_ns is not seen, as with make (documented)."""

from __future__ import annotations

import hashlib
import os

import pytest

from swiftnb.store import RunStore
from swiftnb.store.digests import directory_digest, file_digest

pytestmark = pytest.mark.timeout(60)


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_an_unchanged_file_is_not_read_again_even_by_the_next_process(tmp_path):
    data = tmp_path / "data.txt"
    data.write_bytes(b"hello\n")
    with RunStore.open(tmp_path / "st") as store:
        assert store.digests.digest(str(data)) == sha(b"hello\n")
        assert store.digests.reads == 1
        data.chmod(0)  # unreadable (but to root: the read count proves it either way)
        assert store.digests.digest(str(data)) == sha(b"hello\n")
        assert store.digests.reads == 1
    with RunStore.open(tmp_path / "st") as store:  # remembered in the database
        assert store.digests.digest(str(data)) == sha(b"hello\n")
        assert store.digests.reads == 0
    data.chmod(0o644)


def test_touch_reads_again_and_gives_the_same_digest(tmp_path):
    data = tmp_path / "data.txt"
    data.write_bytes(b"hello\n")
    with RunStore.open(tmp_path / "st") as store:
        first = store.digests.digest(str(data))
        st = data.stat()
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert store.digests.digest(str(data)) == first
        assert store.digests.reads == 2


def test_a_content_change_gives_a_new_digest(tmp_path):
    data = tmp_path / "data.txt"
    data.write_bytes(b"hello\n")
    with RunStore.open(tmp_path / "st") as store:
        store.digests.digest(str(data))
        st = data.stat()
        data.write_bytes(b"HELLO\n")
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        assert store.digests.digest(str(data)) == sha(b"HELLO\n")


def test_a_change_keeping_size_and_mtime_is_not_seen(tmp_path):
    """The documented limit: the stat signature is what is compared, not the bytes."""
    data = tmp_path / "data.txt"
    data.write_bytes(b"hello\n")
    with RunStore.open(tmp_path / "st") as store:
        before = store.digests.digest(str(data))
        st = data.stat()
        with open(data, "r+b") as fh:  # same inode, same size
            fh.write(b"HELLO\n")
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert store.digests.digest(str(data)) == before
        assert file_digest(str(data)) == sha(b"HELLO\n")


def test_a_directory_digest_is_over_its_files_lines(tmp_path):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "b.txt").write_bytes(b"b")
    (tree / "sub" / "a.txt").write_bytes(b"a")
    os.symlink(tree / "b.txt", tree / "link")  # not a regular file: not counted
    lines = f"b.txt\t{sha(b'b')}\nsub/a.txt\t{sha(b'a')}\n"
    expected = sha(lines.encode())
    assert directory_digest(str(tree)) == expected
    with RunStore.open(tmp_path / "st") as store:
        assert store.digests.digest(str(tree)) == expected
        (tree / "sub" / "a.txt").write_bytes(b"A")
        assert store.digests.digest(str(tree)) != expected


def test_a_path_through_a_symlink_is_the_same_file(tmp_path):
    data = tmp_path / "data.txt"
    data.write_bytes(b"hello\n")
    os.symlink(tmp_path, tmp_path / "via")
    with RunStore.open(tmp_path / "st") as store:
        store.digests.digest(str(data))
    with RunStore.open(tmp_path / "st") as store:
        assert store.digests.digest(str(tmp_path / "via" / "data.txt")) == sha(b"hello\n")
        assert store.digests.reads == 0
