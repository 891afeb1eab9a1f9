"""A foreach that assigns the elements of an output array whose mapper fixes its keys
(``file outs[] <array_mapper; files=names>; foreach f in outs { f = app(); }``) runs one
iteration per mapped file wherever it stands.  It used to run none when the block was
started from the trampoline (a branch taken once a value arrived): the foreach let go of
the array before the mapping had made its keys, and the array closed empty."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SWIFTNB = os.path.join(os.path.dirname(sys.executable), "swiftnb")

APP = """type file {}
app (file t) echo (string s) {
  echo s stdout=@filename(t);
}
"""
LOOP = """string names[] = ["one.txt", "two.txt"];
file outs[] <array_mapper; files=names>;
foreach f in outs {
  f = echo("hello");
}
"""

SHAPES = {
    "top level": LOOP,
    "branch taken later": "int n;\nif (n == 1) {\n" + LOOP + "}\nn = 1;\n",
    "procedure body": "(int r) go(int n) {\n" + LOOP + "r = n;\n}\nint x; x = 1; trace(go(x));\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_mapped_element_is_written(tmp_path: Path, shape: str) -> None:
    (tmp_path / "loop.swift").write_text(APP + SHAPES[shape])
    p = subprocess.run([SWIFTNB, "loop.swift"], cwd=tmp_path, text=True,
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "one.txt").read_text() == "hello\n"
    assert (tmp_path / "two.txt").read_text() == "hello\n"
    assert "Finished successfully:2" in p.stderr
