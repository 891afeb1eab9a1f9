"""write_atomically / replacing on targets that are no regular file: a device or a FIFO
is written in place (a rename would put a file where the device was), a directory is
refused; a regular file is still replaced whole."""

from __future__ import annotations

import errno
import os
import stat
import threading

import pytest

from swiftnb.atomicfile import write_atomically

pytestmark = pytest.mark.timeout(30)


def test_a_full_device_says_so_and_stays_a_device():
    with pytest.raises(OSError) as caught:
        write_atomically("/dev/full", b"model\n")
    assert caught.value.errno == errno.ENOSPC
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_is_written_into(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write_atomically(str(fifo), b"through the pipe\n")
    reader.join(10)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_directory_is_refused_naming_it(tmp_path):
    with pytest.raises(IsADirectoryError) as caught:
        write_atomically(str(tmp_path), b"x")
    assert caught.value.filename == str(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_regular_file_is_replaced_whole(tmp_path):
    target = tmp_path / "m.json"
    target.write_text("old\n")
    write_atomically(str(target), b"new\n")
    assert target.read_text() == "new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["m.json"]
