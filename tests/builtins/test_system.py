"""``system("cmd")``: the command's output lines as ``string[]`` (Swift/K 0.96 and trunk
alike), through the real ``swiftnb`` command, wherever an expression may stand: in a
mapper's parameters too (``<array_mapper; files=system("find data -type f")>``), at the
top level, in a procedure and in a loop body, and so may a procedure call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")


def _run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "s.swift").write_text(text)
    return subprocess.run([SWIFTNB, "s.swift"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=120)


def _traces(p: subprocess.CompletedProcess) -> list[str]:
    return sorted(ln for ln in p.stdout.split("\n") if ln.startswith("SwiftScript trace:"))


def test_system_in_mapper_parameters(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "data" / f"{name}.txt").write_text(name.upper() + "\n")
    p = _run(tmp_path, """type file;
app (file o) up (file i) { tr "a-z" "A-Z" stdin=i stdout=o; }
file fs[] <array_mapper; files=system("find data -type f -name '*.txt' | sort")>;
foreach f, i in fs { trace(i, @f); }
(string r[]) names() { r[0] = "data/a.txt"; r[1] = "data/b.txt"; }
file two[] <array_mapper; files=names()>;
trace(length(two));
(int n) count() {
  file xs[] <array_mapper; files=system("ls data")>;
  n = length(xs);
}
trace("in a procedure", count());
foreach j in [1:2] {
  file ys[] <array_mapper; files=system("ls data/*.txt | head -n " + j)>;
  trace("in a loop", j, length(ys));
}
file outs[] <array_mapper; files=system("cd data && ls | sed 's/txt$/up/'")>;
foreach f, i in fs { outs[i] = up(f); }
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _traces(p) == [
        "SwiftScript trace: 0, data/a.txt", "SwiftScript trace: 1, data/b.txt",
        "SwiftScript trace: 2", "SwiftScript trace: 2, data/c.txt",
        "SwiftScript trace: in a loop, 1, 1", "SwiftScript trace: in a loop, 2, 2",
        "SwiftScript trace: in a procedure, 3",
    ]
    assert (tmp_path / "b.up").read_text() == "B\n"


def test_system_lines_are_java_reader_lines(tmp_path: Path) -> None:
    # printf makes the bytes: a CR LF b FF c LF LF d
    p = _run(tmp_path, r"""string s[] = system("printf 'a\\r\\nb\\fc\\n\\nd'");
trace(length(s), s[1], s[2], s[3]);
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert _traces(p) == ["SwiftScript trace: 4, b\fc, , d"]
