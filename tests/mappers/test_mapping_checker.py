"""The mapping checker (``mappingCheckerEnabled``, default true): two variables mapped to
one file are an error naming both and their declarations, before the file is written,
whether the names are literals (found before any app runs) or computed while the run
goes (strcat, an app's output, an array_mapper's list).  Reading one file twice, and
anything one variable does with its own file, stays fine.  The real ``swiftnb`` command
with real apps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

SWIFTNB = str(Path(sys.executable).parent / "swiftnb")

APPS = """\
type file;
app (file o) up(file i) { sh "-c" "tr a-z A-Z < $1 > $2" "sh" @i @o; }
app (file o) say(string s) { echo s stdout=@o; }
"""


def _run(work: Path, body: str, *options: str) -> subprocess.CompletedProcess:
    (work / "wf.swift").write_text(APPS + body)
    return subprocess.run([SWIFTNB, *options, "wf.swift"], cwd=work, capture_output=True,
                          text=True, timeout=100, stdin=subprocess.DEVNULL)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "data.txt").write_text("hello\n")
    return tmp_path


def _started(r: subprocess.CompletedProcess, work: Path) -> int:
    """How many apps the run started (JOB_START lines of its log)."""
    logs = list(work.glob("run*/*.log"))
    assert logs, r.stderr
    return sum(line.count(" JOB_START ") for log in logs for line in log.open())


def test_an_output_on_the_input_stops_the_run_before_any_app(work):
    r = _run(work, 'file inp <"data.txt">;\nfile outp <"data.txt">;\noutp = up(inp);\n')
    assert r.returncode == 2, r.stdout + r.stderr
    assert ("outp (wf.swift:5) would write data.txt, which inp (wf.swift:4) reads"
            in r.stderr), r.stderr
    assert (work / "data.txt").read_text() == "hello\n"
    assert _started(r, work) == 0


def test_two_outputs_on_one_file(work):
    r = _run(work, 'file a <"out.txt">;\nfile b <single_file_mapper; file="./out.txt">;\n'
             'a = say("a");\nb = say("b");\n')
    assert r.returncode == 2, r.stdout + r.stderr
    assert ("a (wf.swift:4) and b (wf.swift:5) are both mapped to ./out.txt, and both are "
            "written") in r.stderr, r.stderr
    assert not (work / "out.txt").exists()
    assert _started(r, work) == 0


def test_an_array_mapper_with_a_repeated_output_name(work):
    r = _run(work, 'file o[] <array_mapper; files=["x.txt", "y.txt", "x.txt"]>;\n'
             "foreach i in [0:2] { o[i] = say(toString(i)); }\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "o[0] (wf.swift:4) and o[2] (wf.swift:4) are both mapped to x.txt" in r.stderr
    assert _started(r, work) == 0


def test_an_array_mapper_whose_names_are_computed(work):
    r = _run(work, 'string names[] = [strcat("x", ".txt"), "y.txt", "x.txt"];\n'
             "file o[] <array_mapper; files=names>;\n"
             "foreach i in [0:2] { o[i] = say(toString(i)); }\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("o[0] (wf.swift:5) and o[2] (wf.swift:5) are both mapped to x.txt") == 1
    x = work / "x.txt"
    assert not x.exists() or x.read_text() == "0\n"  # o[2]'s app never wrote it


def test_names_made_by_strcat(work):
    r = _run(work, 'file inp <single_file_mapper; file=strcat("da", "ta.txt")>;\n'
             'file outp <single_file_mapper; file=strcat("data", ".txt")>;\n'
             "outp = up(inp);\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "outp (wf.swift:5) would write data.txt, which inp (wf.swift:4) reads" in r.stderr
    assert (work / "data.txt").read_text() == "hello\n"


def test_a_name_from_an_apps_output_never_overwrites_the_input(work):
    r = _run(work, 'file inp <"data.txt">;\n'
             'string n = readData(say("data.txt"));\n'
             "file outp <single_file_mapper; file=n>;\n"
             "outp = up(inp);\n")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "outp (wf.swift:6) would write data.txt, which inp (wf.swift:4) reads" in r.stderr
    assert (work / "data.txt").read_text() == "hello\n"  # up never ran
    assert _started(r, work) == 1  # only say


def test_the_same_output_declared_in_a_loop(work):
    r = _run(work, 'foreach i in [0:3] { file o <"same.txt">; o = say(toString(i)); }\n',
             "-lazyErrors", "true")
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("are both mapped to same.txt") == 1, r.stderr
    assert _started(r, work) == 1


def test_what_swift_allowed_still_runs(work):
    (work / "sa.txt").write_text("A\n")
    (work / "sb.txt").write_text("B\n")
    r = _run(work, """\
type S { file a; file b; }
app (file o) cat2(file x, file y) { cat @x @y stdout=@o; }
app (file o) cats(S s, file m) { cat @s.a @m stdout=@o; }
file inp <"data.txt">;
file inp2 <"./data.txt">;
file r1 <"r1.txt">;
r1 = cat2(inp, inp);
file r2 <"r2.txt">;
r2 = cat2(inp, inp2);
S s <simple_mapper; prefix="s", suffix=".txt">;
file r3 <"r3.txt">;
r3 = cats(s, s.a);
file mid <"mid.txt">;
mid = up(inp);
file r4 <"r4.txt">;
r4 = up(mid);
file ins[] <array_mapper; files=["data.txt", "data.txt"]>;
file r5 <"r5.txt">;
r5 = cat2(ins[0], ins[1]);
file outs[] <simple_mapper; prefix="out", suffix=".txt">;
foreach i in [0:2] { file t <single_file_mapper; file=strcat("t", i, ".txt")>; t = up(inp);
                     outs[i] = up(t); }
""")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "r2.txt").read_text() == "hello\nhello\n"
    assert (work / "r3.txt").read_text() == "A\nA\n"
    assert (work / "r4.txt").read_text() == "HELLO\n"
    assert (work / "out0002.txt").read_text() == "HELLO\n"
    assert (work / "data.txt").read_text() == "hello\n"


@pytest.mark.parametrize("how", ["option", "swift.conf"])
def test_the_checker_can_be_switched_off(work, how):
    options = ("-mappingCheckerEnabled", "false") if how == "option" else ()
    if how == "swift.conf":
        (work / "swift.conf").write_text("mappingCheckerEnabled: false\n")
    r = _run(work, 'file a <"out.txt">;\nfile b <"out.txt">;\na = say("a");\nb = say("b");\n',
             *options)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (work / "out.txt").read_text() in ("a\n", "b\n")


def test_a_file_that_no_struct_member_stands_for_is_no_crash(work):
    """simple_mapper lists ``s.a.txt`` for a struct input whose member ``a`` maps to
    ``sa.txt``: the listed file is ignored, the member's own file is looked for."""
    (work / "s.a.txt").write_text("A\n")
    r = _run(work, 'type S { file a; }\nS s <simple_mapper; prefix="s", suffix=".txt">;\n'
             'file r <"r.txt">;\nr = up(s.a);\n')
    assert r.returncode == 2, r.stdout + r.stderr
    assert "File not found for variable s.a: sa.txt" in r.stderr, r.stderr
    assert "internal error" not in r.stderr
