"""A file written whole (``atomicfile``) gets the mode any new file gets here (the umask's)
or the one asked for, without a chmod of its path, and leaves no temporary file behind."""

from __future__ import annotations

import os
import stat

import pytest

from swiftnb.atomicfile import replacing, write_atomically

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_a_new_file_has_the_umasks_mode(tmp_path, umask_027):
    target = tmp_path / "out.txt"
    write_atomically(str(target), b"x\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    with replacing(str(tmp_path / "got.txt")) as tmp:
        with open(tmp, "wb") as fh:   # as an SFTP get writes it
            fh.write(b"y\n")
    assert stat.S_IMODE((tmp_path / "got.txt").stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got.txt", "out.txt"]


def test_a_mode_asked_for_is_kept_whatever_the_umask(tmp_path, umask_027):
    target = tmp_path / "run.sh"
    write_atomically(str(target), b"#!/bin/sh\n", mode=0o755)
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert target.read_bytes() == b"#!/bin/sh\n"


def test_a_failed_body_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with replacing(str(target)) as tmp:
            with open(tmp, "wb") as fh:
                fh.write(b"half")
            raise RuntimeError("the copy broke")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_directory_that_cannot_be_written_names_the_target(tmp_path):
    missing = tmp_path / "no" / "such" / "dir" / "f.txt"
    with pytest.raises(FileNotFoundError) as caught:
        write_atomically(str(missing), b"x")
    assert caught.value.filename == str(missing)
