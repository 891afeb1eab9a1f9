"""A spare job directory is renamed into place only where nothing is: a rename of a
directory would silently replace an empty one (another job's, just made), so the rename
refuses to replace (renameat2's RENAME_NOREPLACE; where the kernel or file system has
none, a look first, under the spares' lock) and the spare stays in the pool."""

from __future__ import annotations

import pytest

from swiftnb.remote.wrap import sequence
from swiftnb.remote.wrap.spares import SpareDirs, rename_no_replace

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(params=["renameat2", "look-first"])
def rename_kind(request, monkeypatch):
    if request.param == "look-first":
        monkeypatch.setitem(sequence.LIBC, "renameat2", False)
    elif not callable(sequence.libc_function("renameat2")):
        pytest.skip("this libc has no renameat2")
    return request.param


def test_a_rename_onto_an_existing_directory_is_refused(tmp_path, rename_kind):
    src, dst = tmp_path / "spare", tmp_path / "job"
    src.mkdir()
    dst.mkdir()
    (dst / "mine").write_text("x")
    with pytest.raises(FileExistsError):
        rename_no_replace(str(src), str(dst))
    (dst / "mine").unlink()   # an empty one is refused too (os.rename would replace it)
    with pytest.raises(FileExistsError):
        rename_no_replace(str(src), str(dst))
    assert src.is_dir() and dst.is_dir()
    rename_no_replace(str(src), str(tmp_path / "free"))
    assert (tmp_path / "free").is_dir() and not src.exists()


def test_a_missing_parent_says_file_not_found(tmp_path, rename_kind):
    (tmp_path / "spare").mkdir()
    with pytest.raises(FileNotFoundError):
        rename_no_replace(str(tmp_path / "spare"), str(tmp_path / "no" / "job"))


def test_a_spare_taken_onto_a_used_path_stays_in_the_pool(tmp_path, rename_kind):
    pool = SpareDirs()
    spare = tmp_path / "old-job"
    spare.mkdir()
    assert pool.give(str(spare))
    (tmp_path / "busy").mkdir()
    with pool.lock, pytest.raises(FileExistsError):
        pool.take(str(tmp_path / "busy"))
    assert len(pool) == 1
    with pool.lock:
        assert pool.take(str(tmp_path / "new-job")) == frozenset()
    assert (tmp_path / "new-job").is_dir() and not spare.exists() and len(pool) == 0
