"""How the content store keeps an output (swiftnb/store/objects.py): a hard link on
its own file system, a copy from another one; a kept file is restored only when its
bytes still give its digest; one rewritten in place through its output is made again;
an output changed since its digest was made is not kept.  And the canonical JSON of
keys is json's own text."""

from __future__ import annotations

import json
import os
import tempfile

import pytest

from swiftnb.store import RunStore
from swiftnb.store.canonical import ascii_sorted_text, ascii_text, sorted_text
from swiftnb.store.digests import file_digest
from swiftnb.store.objects import signature

pytestmark = pytest.mark.timeout(60)


def output(path, text: str) -> tuple[str, str]:
    path.write_text(text)
    return str(path), file_digest(str(path))


def test_an_output_is_kept_by_a_hard_link_and_restored_after_it_is_deleted(tmp_path):
    path, digest = output(tmp_path / "out.txt", "made by the call\n")
    with RunStore.open(tmp_path / "st") as store:
        assert store.objects.keep_many([(path, digest)], [signature(os.stat(path))]) == [True]
        assert os.path.samefile(path, store.objects.path_of(digest))
        os.unlink(path)
        assert store.objects.restore(digest, path)
        assert open(path).read() == "made by the call\n"
        assert not os.path.samefile(path, store.objects.path_of(digest))  # a copy back


def test_a_kept_file_rewritten_in_place_is_not_restored_and_is_dropped(tmp_path):
    path, digest = output(tmp_path / "out.txt", "made by the call\n")
    with RunStore.open(tmp_path / "st") as store:
        assert store.objects.keep(path, digest)
        with open(path, "r+") as fh:
            fh.write("M")  # the same size: only the bytes tell
        assert not store.objects.restore(digest, path)
        assert open(path).read() == "Made by the call\n"  # left as it was
        assert digest not in store.objects and store.objects.used() == 0


def test_a_kept_file_of_another_size_is_made_again_from_an_unchanged_output(tmp_path):
    path, digest = output(tmp_path / "out.txt", "made by the call\n")
    with RunStore.open(tmp_path / "st") as store:
        assert store.objects.keep(path, digest)
        with open(path, "a") as fh:
            fh.write("appended in place\n")
        again, digest2 = output(tmp_path / "again.txt", "made by the call\n")
        assert digest2 == digest
        assert store.objects.keep_many([(again, digest)], [signature(os.stat(again))]) == [True]
        assert os.path.samefile(again, store.objects.path_of(digest))
        os.unlink(path)
        os.unlink(again)
        assert store.objects.restore(digest, again)
        assert open(again).read() == "made by the call\n"


def test_an_output_changed_since_its_digest_is_not_kept(tmp_path):
    path, digest = output(tmp_path / "out.txt", "made by the call\n")
    as_made = signature(os.stat(path))
    replacement = tmp_path / "new.txt"
    replacement.write_text("something else entirely\n")
    os.replace(replacement, path)
    with RunStore.open(tmp_path / "st") as store:
        assert store.objects.keep_many([(path, digest)], [as_made]) == [False]
        assert digest not in store.objects


def test_an_output_on_another_file_system_is_copied(tmp_path):
    if not os.path.isdir("/dev/shm") or os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("needs /dev/shm on a file system of its own")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as other:
        path = os.path.join(other, "out.txt")
        with open(path, "w") as fh:
            fh.write("on tmpfs\n")
        digest = file_digest(path)
        with RunStore.open(tmp_path / "st") as store:
            assert store.objects.keep(path, digest)
            kept = store.objects.path_of(digest)
            assert os.stat(kept).st_nlink == 1 and open(kept).read() == "on tmpfs\n"


@pytest.mark.parametrize("value", [
    [["echo", "caf\u00e9", "\udcff"], {"z": 1, "a": [2.5, None, True]}],
    {"input:data/a.txt": "sha256:" + "0" * 64, "app": "x\"y\\"},
    "just a string", [], {},
])
def test_the_canonical_texts_are_json_s_own(value):
    assert sorted_text(value) == json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode(value)
    assert ascii_text(value) == json.JSONEncoder().encode(value)
    assert ascii_sorted_text(value) == json.JSONEncoder(sort_keys=True).encode(value)
