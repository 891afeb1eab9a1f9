"""An uncompressed log is read in one piece (reader._read_plain), anything else in chunks:
both give the same text and the same warnings, lines over 1 MiB included, and the first
such line is the one the warning names whichever way the file is read."""

from __future__ import annotations

import gzip
import warnings

import pytest

from swiftnb.logs.reader import MAX_LINE, LogFormatError, read_log

REC = b"2016-01-25 01:08:24,537+0000 INFO  Loader swift.home=/opt/swift\n"
LONG = b"2016-01-25 01:08:25,000+0000 INFO  Loader " + b"x" * (MAX_LINE + 10) + b"\n"


def _read(path) -> tuple[list[int], list[str]]:
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        frame = read_log(path)
    return list(frame["line"]), [str(w.message).split(": ", 1)[0].rsplit(":", 1)[-1] + ": "
                                 + str(w.message).split(": ", 1)[1] for w in seen]


@pytest.mark.parametrize("text", [
    LONG + REC * 3,                                  # the first line too long
    REC + LONG + REC + b"cont\n" + LONG + REC,       # two, between records
    REC * 2 + LONG + b"y" * (MAX_LINE + 5),          # and an unended last line too long
    REC * 2 + b"tail without newline",
], ids=["first", "middle", "last", "unended"])
def test_plain_and_compressed_reads_agree(tmp_path, text):
    plain, packed = tmp_path / "a.log", tmp_path / "a.log.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    assert _read(plain) == _read(packed)


def test_the_first_long_line_is_named(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(REC + LONG + REC + LONG + b"z" * (MAX_LINE + 5))
    lines, messages = _read(path)
    assert lines == [1, 3]
    assert any(m.startswith("2: 3 line(s) longer than 1 MiB skipped") for m in messages)


def test_binary_data_after_the_first_chunk_is_refused(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(REC * ((5 << 20) // len(REC)) + b"\x00")
    with pytest.raises(LogFormatError, match="NUL byte at byte"):
        read_log(path)
