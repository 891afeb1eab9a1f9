"""Mapper parameters as real scripts use them, through the real ``swiftnb`` command:
array_mapper keeps its source's keys (Swift's ArrayFileMapper lists them), a mapper that
reads a file waits for the app making it (csv_mapper), and a mapped input nothing reads
need not exist (its name feeds a regexp_mapper)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")

ECHO = """type file;
app (file o) echo (string s) { echo s stdout=@o; }
"""


def _run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.swift").write_text(text)
    return subprocess.run([SWIFTNB, "s.swift"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)


def _traces(p: subprocess.CompletedProcess) -> list[str]:
    return sorted(ln for ln in p.stdout.splitlines() if ln.startswith("SwiftScript trace:"))


def test_array_mapper_keeps_the_keys_of_its_source(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A\n")
    (tmp_path / "b.txt").write_text("B\n")
    p = _run(tmp_path, ECHO + """
string s[];
s[1] = "a.txt"; s[2] = "b.txt";
file f[] <array_mapper; files=s>;
foreach x, i in f { trace(i, @x); }
string names[string];
names["left"] = "l.out"; names["right"] = "r.out";
file outs[string] <array_mapper; files=names>;
foreach v, k in names { outs[k] = echo(k); }
string sparse[]; sparse[5] = "five.out"; sparse[7] = "seven.out";
file g[] <array_mapper; files=sparse>;
foreach v, k in sparse { g[k] = echo(v); }
trace(@g[7]);
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _traces(p) == ["SwiftScript trace: 1, a.txt", "SwiftScript trace: 2, b.txt",
                          "SwiftScript trace: seven.out"]
    assert (tmp_path / "l.out").read_text() == "left\n"
    assert (tmp_path / "r.out").read_text() == "right\n"
    assert (tmp_path / "seven.out").read_text() == "seven.out\n"


def test_array_mapper_names_a_missing_key(tmp_path: Path) -> None:
    p = _run(tmp_path, ECHO + """
string s[]; s[1] = "a.out";
file f[] <array_mapper; files=s>;
f[0] = echo("x");
""")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "array_mapper: the files array has no element [0]" in p.stderr


def test_csv_mapper_reads_a_file_an_app_makes(tmp_path: Path) -> None:
    p = _run(tmp_path, """type file;
type row { string name; string size; }
app (file o) table () { printf "name size\\\\na.txt 1\\\\nb.txt 2\\\\n" stdout=@o; }
file t <"tmp.csv">;
t = table();
row rows[] <csv_mapper; file=t>;
foreach r in rows { trace(r.name, r.size); }
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _traces(p) == ["SwiftScript trace: a.txt, 1", "SwiftScript trace: b.txt, 2"]


def test_a_csv_mapper_on_a_failed_app_output_fails_as_a_dependant(tmp_path: Path) -> None:
    p = _run(tmp_path, """type file;
type row { string name; }
app (file o) table () { "false" stdout=@o; }
file t <"tmp.csv">;
t = table();
row rows[] <csv_mapper; file=t>;
foreach r in rows { trace(r.name); }
""")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "cannot read tmp.csv" not in p.stderr
    assert "exit code of 1" in p.stderr


def test_an_input_nothing_reads_need_not_exist_one_read_must(tmp_path: Path) -> None:
    p = _run(tmp_path, ECHO + """
file src <"never-staged.txt">;
file out <regexp_mapper; source=@src, match="(.*)txt", transform="\\\\1out">;
out = echo(@src);
file bare <regexp_mapper; source=src, match="(.*)\\\\.txt", transform="\\\\1.bare">;
bare = echo("bare");
type pair { file a; file b; }
pair p <simple_mapper; prefix="p.", suffix=".in">;
trace(@out, @bare, @p.a);
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _traces(p) == ["SwiftScript trace: never-staged.out, never-staged.bare, p.a.in"]
    assert (tmp_path / "never-staged.out").read_text() == "never-staged.txt\n"
    assert (tmp_path / "never-staged.bare").read_text() == "bare\n"
    # one that something reads must exist, as before
    p = _run(tmp_path, 'type file;\nfile f <"nonexistent.txt">;\nstring s = readData(f);\n'
                       'trace(s);\n')
    assert p.returncode == 2, p.stdout + p.stderr
    assert "File not found for variable f: nonexistent.txt" in p.stderr
