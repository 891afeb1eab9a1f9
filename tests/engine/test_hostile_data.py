"""Data files a script reads that do not fit (issue 24): readData, readStructured,
csv_mapper and filesys_mapper given a wrong header, a ragged row, random bytes, a named
pipe nobody writes, /dev/zero, a huge file, a symlink loop.  Each is the real
``swiftnb run`` in a subprocess: the run fails with exit code 2 and a message naming
the file and the line (or the path), never an empty result, a hang or a traceback."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

EMP = "type Emp { string name; int id; }\n"
READ_EMPS = EMP + 'Emp e[] = readData("emps.txt");\nforeach x, i in e { trace(i, x.name, x.id); }\n'
CSV_EMPS = ("type file;\ntype Row { file name; file id; }\n"
            'Row e[] <csv_mapper; file="emps.txt">;\n'
            "foreach x, i in e { trace(i, filename(x.name), filename(x.id)); }\n")

#: an address space far above what swiftnb needs, far below what reading /dev/zero takes
MEMORY_LIMIT = 3 << 30


def _env(cwd: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("SWIFT_SITE_CONF", None)
    env["HOME"] = str(cwd)
    env["SWIFTNB_NO_CACHE"] = "1"
    return env


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def run(cwd: Path, script: str, timeout: float = 60) -> subprocess.CompletedProcess:
    (cwd / "s.swift").write_text(script)
    r = subprocess.run([sys.executable, "-m", "swiftnb.cli", "run", "s.swift"], cwd=cwd,
                       capture_output=True, text=True, timeout=timeout, env=_env(cwd),
                       preexec_fn=_limit_memory)
    assert "Traceback" not in r.stderr, r.stderr
    assert "internal error" not in r.stderr, r.stderr
    return r


def fails_with(r: subprocess.CompletedProcess, *parts: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    for part in parts:
        assert part in r.stderr, r.stderr
    assert "SwiftScript trace: 0" not in r.stdout  # nothing was read as if it fit


# ---------------------------------------------------------------- 1. not the declared type

@pytest.mark.parametrize("source", [READ_EMPS, CSV_EMPS], ids=["readData", "csv_mapper"])
@pytest.mark.parametrize("content,where", [
    (b"foo bar\nA 1\n", "emps.txt, line 1:"),            # other field names
    (b"name id\nA 1\nB\n", "emps.txt, line 3:"),          # a ragged row
    (b"name id\nA 1 extra\n", "emps.txt, line 2:"),       # a row too long
    (b"name id\xff\xfe\nA 1\n", "emps.txt, line 1:"),     # bytes that are not text
    (b"name id\nA 1\n\x00\x01\x02\n", "emps.txt, line 3:"),
], ids=["header", "ragged", "long-row", "not-utf8", "nul"])
def test_data_file_not_of_the_type(tmp_path, source, content, where):
    (tmp_path / "emps.txt").write_bytes(content)
    fails_with(run(tmp_path, source), where)


@pytest.mark.parametrize("source", [READ_EMPS, CSV_EMPS], ids=["readData", "csv_mapper"])
def test_random_bytes(tmp_path, source):
    (tmp_path / "emps.txt").write_bytes(os.urandom(4096))
    fails_with(run(tmp_path, source), "emps.txt")


def test_matching_files_still_read(tmp_path):
    (tmp_path / "emps.txt").write_text("name id\nA 1\nB 2\n\n")
    for script in (READ_EMPS, CSV_EMPS):
        r = run(tmp_path, script)
        assert r.returncode == 0, r.stderr
        assert "SwiftScript trace: 1, B, 2" in r.stdout


def test_read_structured_names_the_line(tmp_path):
    (tmp_path / "m.txt").write_text("rows[0] = 1\nrows[1] = x\n")
    fails_with(run(tmp_path, 'type M { int rows[]; }\nM m = readStructured("m.txt");\n'
                   "trace(m.rows[0]);\n"), "m.txt: readStructured: line 2:")


def test_int_array_names_the_line(tmp_path):
    (tmp_path / "n.txt").write_text("1\n2\nthree\n")
    fails_with(run(tmp_path, 'int n[] = readData("n.txt");\ntrace(n[0]);\n'),
               "n.txt, line 3: Could not convert value to number: three")


# ---------------------------------------------------------------- 2. a pipe nobody writes

@pytest.mark.parametrize("source", [
    'int n[] = readData("pipe");\ntrace(n[0]);\n',
    'string s = readStructured("pipe");\ntrace(s);\n',
    'int n = extractInt("pipe");\ntrace(n);\n',
    "type file;\ntype Row { file a; }\n"
    'Row r[] <csv_mapper; file="pipe">;\ntrace(filename(r[0].a));\n',
], ids=["readData", "readStructured", "extractInt", "csv_mapper"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
def test_pipe_nobody_writes_still_answers_signals(tmp_path, source, sig):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "s.swift").write_text(source)
    proc = subprocess.Popen([sys.executable, "-m", "swiftnb.cli", "run", "s.swift"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(tmp_path))
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("run001/*.log")):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.05)
        time.sleep(1.0)  # (the run reaches the read; the signal must end it in any case)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    assert "Execution interrupted" in err


def test_pipe_written_later_is_read(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    writer = subprocess.Popen(["sh", "-c", "sleep 1; printf '4\\n5\\n' > pipe"], cwd=tmp_path)
    try:
        r = run(tmp_path, 'int n[] = readData("pipe");\ntrace(n[0] + n[1]);\n')
    finally:
        writer.wait(timeout=30)
    assert r.returncode == 0, r.stderr
    assert "SwiftScript trace: 9" in r.stdout


# ---------------------------------------------------------------- 3. not a data file, bounded

@pytest.mark.parametrize("path,why", [
    ("/dev/zero", "is not a data file (a character device)"),
    (".", "is not a data file (a directory)"),
])
def test_not_a_data_file(tmp_path, path, why):
    fails_with(run(tmp_path, f'string s = readData("{path}");\ntrace(s);\n'), f"{path} {why}")


def test_huge_file_refused_unread(tmp_path):
    with open(tmp_path / "big.txt", "wb") as fh:
        fh.truncate(64 << 30)  # sparse: 64 GiB that take no disk
    fails_with(run(tmp_path, 'string s[] = readData("big.txt");\ntrace(s[0]);\n'),
               "big.txt is 65536 MiB; a data file may be at most 64 MiB")


def test_endless_pipe_refused_in_bounded_memory(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    writer = subprocess.Popen(["sh", "-c", "yes 1 > pipe"], cwd=tmp_path,
                              stderr=subprocess.DEVNULL)
    try:
        r = run(tmp_path, 'int n[] = readData("pipe");\ntrace(n[0]);\n', timeout=120)
    finally:
        writer.kill()
        writer.wait(timeout=30)
    fails_with(r, "pipe: more than 64 MiB")


def test_endless_line_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    writer = subprocess.Popen(["sh", "-c", "tr '\\0' x < /dev/zero > pipe"], cwd=tmp_path,
                              stderr=subprocess.DEVNULL)
    try:
        r = run(tmp_path, 'string s = readData("pipe");\ntrace(s);\n', timeout=120)
    finally:
        writer.kill()
        writer.wait(timeout=30)
    fails_with(r, "pipe, line 1: a line longer than 1 MiB")


# ---------------------------------------------------------------- 4. directory walking

def test_symlink_loop_named(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "loop").symlink_to("loop")
    fails_with(run(tmp_path, 'type file;\nfile f[] <filesys_mapper; location="data", '
                   'pattern="*/*.txt">;\nforeach x in f { trace(filename(x)); }\n'),
               "data/loop", "Too many levels of symbolic links")


def test_symlink_back_up_under_double_star(tmp_path):
    (tmp_path / "data" / "a").mkdir(parents=True)
    (tmp_path / "data" / "a" / "x.txt").write_text("x\n")
    (tmp_path / "data" / "a" / "up").symlink_to("..")
    fails_with(run(tmp_path, 'type file;\nfile f[] <filesys_mapper; location="data", '
                   'pattern="**/*.txt">;\nforeach x in f { trace(filename(x)); }\n'),
               "data/a/up", "loop")


def test_location_that_is_a_loop(tmp_path):
    (tmp_path / "loop").symlink_to("loop")
    fails_with(run(tmp_path, 'type file;\nfile f[] <filesys_mapper; location="loop", '
                   'suffix=".txt">;\nforeach x in f { trace(filename(x)); }\n'),
               "loop: Too many levels of symbolic links")
