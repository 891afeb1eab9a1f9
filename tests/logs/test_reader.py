"""The reader: compressed and plain files, continuation lines, damage, our own logs."""

from __future__ import annotations

import bz2
import gzip
import io
import warnings

import pandas as pd
import pytest
from ._helpers import DATA, log_text
from .synthetic import record

from swiftnb.logs.frame import LogFrame, events_frame
from swiftnb.logs.reader import LogFormatError, LogWarning, read_events, read_log
from swiftnb.logs.writer import write_events

SMALL = "stampede-exp-020"


@pytest.fixture(scope="module")
def small_text() -> str:
    return log_text(SMALL)


def test_plain_gz_bz2_and_stream_read_alike(tmp_path, small_text):
    plain = tmp_path / "swift.log"
    plain.write_text(small_text)
    gz = tmp_path / "swift.log.gz"
    gz.write_bytes(gzip.compress(small_text.encode()))
    a = read_log(plain)
    pd.testing.assert_frame_equal(a, read_log(gz))
    pd.testing.assert_frame_equal(a, read_log(DATA / SMALL / "swift.log.bz2"))
    pd.testing.assert_frame_equal(a, read_log(io.StringIO(small_text)))


def test_continuation_lines_and_line_numbers(small_text):
    ev = read_log(io.StringIO(small_text))
    lines = small_text.splitlines()
    config = ev[ev["kind"] == "CONFIG"].iloc[0]
    assert config["text"].startswith("[D] /scratch/midway")
    assert "sites: [stampede]" in config["text"]
    source = ev[ev["tag"] == "BEGIN"].iloc[0]
    assert "foreach i in [1:count]" in source["text"]
    for _, row in ev[ev["kind"].isin(["RUN_START", "JOB_END", "RUN_SUCCESS"])].iterrows():
        expected = {"RUN_START": " RUN_START", "JOB_END": " JOB_END jobid=",
                    "RUN_SUCCESS": " Swift finished"}[row["kind"]]
        assert expected in lines[row["line"] - 1]


def test_fields_of_swift_lines(small_text):
    ev = read_log(io.StringIO(small_text))
    start = ev[ev["kind"] == "JOB_START"].iloc[0]
    assert start["arguments"] == "[900]" and start["host"] == "stampede"
    assert start["tmpdir"].startswith("bag_of_tasks-run020/jobs/")
    task = ev[ev["kind"] == "JOB_TASK"].iloc[0]
    assert task["exec"] == "/bin/bash" and task["args"].startswith("_swiftwrap.staging -e sleep")
    req = ev[ev["kind"] == "BLOCK_REQUESTED"].iloc[0]
    assert (req["id"], req["cores"], req["coresPerWorker"], req["walltime"]) == (
        "0124-5309490-000000", "16", "1", "1440")
    st = ev[ev["kind"] == "TASK_STATUS_CHANGE"]
    assert set(st["status"].astype(int)) == {8, 1, 16, 2, 17, 7}
    assert st[st["status"] == 2]["workerid"].notna().all()
    assert ev["time"].is_monotonic_increasing is False or ev["time"].iloc[0] == pytest.approx(1453694014.832)


def test_zone_offsets_give_utc():
    text = ("2016-01-25 01:08:24,537-0500 INFO  Loader RUN_START\n"
            "2016-01-25 06:08:25,000+0000 INFO  Loader Swift finished with errors\n")
    ev = read_log(io.StringIO(text))
    assert ev["time"].tolist() == [pytest.approx(1453702104.537), pytest.approx(1453702105.0)]
    assert ev["kind"].tolist() == ["RUN_START", "RUN_FAILURE"]


def test_not_a_log_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nworld\n")
    with pytest.raises(LogFormatError, match="not a Swift log.*first line: 'hello'"):
        read_log(bad)
    with pytest.raises(FileNotFoundError, match="log file not found"):
        read_log(tmp_path / "missing.log")
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert len(read_log(empty)) == 0


def test_truncated_log_warns_and_keeps_what_is_there(tmp_path, small_text):
    cut = small_text[: len(small_text) // 2]
    path = tmp_path / "cut.log"
    path.write_text("garbage before\n" + cut)
    with pytest.warns(LogWarning) as caught:
        ev = read_log(path)
    messages = " ".join(str(w.message) for w in caught)
    assert "text before the first log record" in messages
    assert "ends in the middle of a line" in messages
    assert 500 < len(ev) < 1000
    with pytest.raises(LogFormatError, match="middle of a line|before the first"):
        read_log(path, strict=True)
    # a truncated bz2 file: the readable part, with a warning
    data = bz2.compress(small_text.encode())
    trunc = tmp_path / "swift.log.bz2"
    trunc.write_bytes(data[: len(data) * 3 // 4])
    with warnings.catch_warnings(record=True) as caught2:
        warnings.simplefilter("always")
        try:
            ev2 = read_log(trunc)
        except LogFormatError as exc:  # bz2 blocks: may hold nothing readable
            assert "compressed file is truncated, before any text" in str(exc)
        else:
            assert any("truncated" in str(w.message) for w in caught2)
            assert len(ev2) > 0


def test_our_log_reads_back_to_the_event_stream(tmp_path):
    """Counts and timings of our own log read back equal those of the event stream."""
    events = record()
    path = tmp_path / "run001" / "swift.log"
    write_events(events, path)
    live = LogFrame.from_events(events)
    back = LogFrame.read(path)
    assert live.run == back.run
    assert live.run["ntasks"] == 7 and live.run["tasks_failed"] == 1
    for table in ("jobs", "tasks", "blocks", "workers"):
        pd.testing.assert_frame_equal(getattr(live, table), getattr(back, table),
                                      check_dtype=False, obj=table)
    pd.testing.assert_frame_equal(live.timings(), back.timings())
    assert set(back.timings()["timing"]) == {"TTC", "Tss", "Tse", "Tw", "Te", "Tsi", "Tso",
                                             "Tq", "Ta", "Tb", "Twe"}


def test_read_events_rewrites_to_the_same_log(tmp_path):
    events = record()
    first = io.StringIO()
    write_events(events, first)
    again = io.StringIO()
    write_events(read_events(io.StringIO(first.getvalue())), again)
    assert again.getvalue() == first.getvalue()
    # and the same for a Swift/K log: records keep their text and fields
    frame = events_frame(read_events(io.StringIO(first.getvalue())))
    assert len(frame) == len(events)


def test_real_swift_log_rewrites_identically(small_text):
    out = io.StringIO()
    write_events(read_events(io.StringIO(small_text)), out)
    assert out.getvalue() == small_text


def test_long_logs_are_parsed_in_pieces_with_the_same_result(monkeypatch):
    import swiftnb.logs.reader as reader

    text = log_text("stampede-exp-017")
    whole = read_log(io.StringIO(text))
    monkeypatch.setattr(reader, "CHUNK_CHARS", 20_000)
    pieces = read_log(io.StringIO(text))
    pd.testing.assert_frame_equal(whole, pieces)


LINE = ("2016-01-25 01:08:24,537+0000 INFO  Execute TASK_STATUS_CHANGE taskid=urn:R-1 "
        "status=2 workerid=B:000000\n")


def test_damaged_text_never_raises_anything_but_log_format_error():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    pieces = st.sampled_from([
        LINE, LINE[:40], "\n", "garbage line\n", "2016-13-45 99:99:99,999+0000 INFO  X Y\n",
        "2016-01-25 01:08:24,537+0000 DEBUG swift JOB_INIT\n",
        "2016-01-25 01:08:24,537-0500 WARN  trace SwiftScript trace: x\n",
        "2016-01-25 01:08:24,537 INFO  Loader RUN_START\n", "\tcontinued\n", "\x00\xff",
        "2016-01-25 01:08:24,537+0000 INFO  RemoteLogHandler BLOCK_REQUESTED id=x, cores=\n",
        "2016-01-25 01:08:24,537+0000 INFO  Execute TASK_STATUS_CHANGE status=5\n",
        "2016-01-25 01:08:24,537+0000 INFO  Execute TASK_STATUS_CHANGE taskid=urn:x status=\n",
        "2016-01-25 01:08:24,537+0000 INFO  Execute JOB_TASK jobid=\n",
        "2016-01-25 01:08:24,537+0000 INFO  RemoteLogHandler WORKER_ACTIVE blockid=b\n",
        "2016-01-25 01:08:24,537+0000 DEBUG swift JOB_END jobid=j-1\n",
        "2016-01-25 01:08:24,537+0000 INFO  Loader Swift finished with errors\n",
    ])

    @settings(max_examples=25, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(pieces, max_size=12), st.text(max_size=30))
    def check(parts, noise):
        text = "".join(parts) + noise
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LogWarning)
            try:
                frame = read_log(io.StringIO(text))
            except LogFormatError:
                return
        lf = LogFrame(frame)
        lf.run  # noqa: B018  the tables build on anything the reader returns
        lf.timings()
        from swiftnb.logs.aimes import durations

        durations(lf)

    check()


@pytest.mark.parametrize("name", ["stampede-exp-020", "stampede-exp-018"])
def test_array_and_regex_front_ends_agree(monkeypatch, name):
    import swiftnb.logs.reader as reader
    from swiftnb.logs.fastparse import front_from_bytes

    text = log_text(name)
    assert front_from_bytes(text.encode()[:-1], 1) is not None  # the array path is used
    fast = read_log(io.StringIO(text))
    monkeypatch.setattr(reader, "USE_FAST_FRONT", False)
    pd.testing.assert_frame_equal(fast, read_log(io.StringIO(text)))


def test_windows_line_endings(tmp_path, small_text):
    path = tmp_path / "crlf.log"
    path.write_bytes(small_text.replace("\n", "\r\n").encode())
    pd.testing.assert_frame_equal(read_log(path), read_log(io.StringIO(small_text)))
